#!/usr/bin/env bash
# On the GPU machine, in one call: build the engine and CLI without the GUI
# against the machine's own PyTorch (2.11, CUDA 13), run the GPU tests where
# Qt Test is present, and the benchmarks; everything lands under $OUT.
#
#   here:   scripts/gpu-deps.sh
#   device: run(command="scripts/gpu-check.sh", carry=[".gpu-deps"])
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/out/gpu-check}"
logs="$PWD/build/gpu-logs"  # bulky logs travel back as one archive
mkdir -p "$out" "$logs"
trap 'tar czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null' EXIT
python="${STEPSCOPE_PYTHON:-python3}"
log() { echo "== $*" | tee -a "$out/summary.md"; }
# Files under $OUT: summary.md (every figure) and logs.tar.gz (logs, sweep run files).

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
} 2>&1 | tee "$out/summary.md"

# Header-only dependencies carried as .deb files (scripts/gpu-deps.sh).
prefix="$PWD/.gpu-deps/root"
if compgen -G ".gpu-deps/*.deb" >/dev/null; then
  for deb in .gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
fi

with_tests=OFF
if compgen -G "/usr/lib/*/cmake/Qt6Test" >/dev/null || compgen -G "$prefix/usr/lib/*/cmake/Qt6Test" >/dev/null; then
  with_tests=ON
fi

log "configure (tests: $with_tests)"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSTEPSCOPE_BUILD_GUI=OFF -DSTEPSCOPE_BUILD_TESTS="$with_tests" \
  -DSTEPSCOPE_PYTHON="$python" -DCMAKE_PREFIX_PATH="$prefix/usr" \
  -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
log "build"
cmake --build build/gpu -j "$(nproc)" > "$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }

cli=build/gpu/app/stepscope-cli
"$cli" info | tee -a "$out/summary.md"

if [ "$with_tests" = ON ]; then
  log "tests"
  ctest --test-dir build/gpu --output-on-failure 2>&1 | tee "$logs/tests.log" | tail -15
else
  log "tests skipped: Qt Test is not installed on this machine"
fi

log "end-to-end step benchmark (bf16 and fp32, small and medium, ctx 128..1024)"
"$cli" sweep --model small,medium --ctx 128,256,512,1024 --mode forward,train-step \
  --precision fp32,bf16 --device cuda --warmup 2 --steps 10 \
  --out "$logs/sweep" 2> "$logs/sweep.log" | tee -a "$out/summary.md"

log "attention grid on the GPU: naive, tiled, sdpa and each of its kernels, bf16 and fp32"
"$cli" attention --device cuda \
  --backends naive,tiled,sdpa,sdpa-flash,sdpa-efficient,sdpa-math,sdpa-cudnn,cuda-flash \
  --precision bf16,fp32 --out "$logs" 2> "$logs/attention.log" | tee -a "$out/summary.md"

log "Python eager vs StepScope on the GPU"
"$python" benchmarks/eager_vs_stepscope.py --cli "$cli" --device cuda \
  --models small,medium --modes forward,train-step --steps 10 --rounds 2 \
  | tee -a "$out/summary.md"
