#!/usr/bin/env bash
# On the GPU machine, in one call: build the engine and CLI without the GUI
# against the machine's own PyTorch (2.11, CUDA 13), run the test suites (the
# GPU ones among them) and the benchmarks; everything lands under $OUT.
#
#   here:   scripts/gpu-deps.sh
#   device: run(command="scripts/gpu-check.sh [SECTION...]", carry=[".gpu-deps"])
#
# Sections (all when none is named): tests, trace (where the time goes:
# kernel and operator breakdowns, tracer overheads), memory (peaks against
# the estimator), bench (sweep, attention grid with compiled, the three engines).
set -uo pipefail
cd "$(dirname "$0")/.."
sections="${*:-tests trace memory bench}"
want() { [[ " $sections " == *" $1 "* ]]; }
out="${OUT:-$PWD/out/gpu-check}"
logs="$PWD/build/gpu-logs"  # bulky logs and run files travel back as one archive
mkdir -p "$out" "$logs"
trap 'tar czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null' EXIT
python="$(command -v "${STEPSCOPE_PYTHON:-python3}")"  # CMake wants a full path
log() { echo "== $*" | tee -a "$out/summary.md"; }
# Files under $OUT: summary.md (every figure) and logs.tar.gz (logs, run files).

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
} 2>&1 | tee "$out/summary.md"

# Build dependencies carried as .deb files (scripts/gpu-deps.sh).
prefix="$PWD/.gpu-deps/root"
if compgen -G ".gpu-deps/*.deb" >/dev/null; then
  for deb in .gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
fi
for dir in "$prefix"/usr/lib/*-linux-gnu; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

# pytest, from the carried wheels, for the Python worker's suite.
if ! "$python" -m pytest --version >/dev/null 2>&1 && compgen -G ".gpu-deps/wheels/*.whl" >/dev/null; then
  "$python" -m pip install -q --no-index --find-links .gpu-deps/wheels --target "$prefix/pylib" pytest \
    > "$logs/pytest-install.log" 2>&1
  export PYTHONPATH="$prefix/pylib${PYTHONPATH:+:$PYTHONPATH}"
fi

with_tests=OFF
if compgen -G "/usr/lib/*/cmake/Qt6Test" >/dev/null || compgen -G "$prefix/usr/lib/*/cmake/Qt6Test" >/dev/null; then
  with_tests=ON
fi

configure() {
  cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTEPSCOPE_BUILD_GUI=OFF -DSTEPSCOPE_BUILD_TESTS="$1" \
    -DSTEPSCOPE_PYTHON="$python" -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure.log" 2>&1
}
log "configure (tests: $with_tests)"
if ! configure "$with_tests"; then
  tail -20 "$logs/configure.log"
  [ "$with_tests" = ON ] || exit 1
  # pytest, from the carried wheels, for the Python worker's suite.
if ! "$python" -m pytest --version >/dev/null 2>&1 && compgen -G ".gpu-deps/wheels/*.whl" >/dev/null; then
  "$python" -m pip install -q --no-index --find-links .gpu-deps/wheels --target "$prefix/pylib" pytest \
    > "$logs/pytest-install.log" 2>&1
  export PYTHONPATH="$prefix/pylib${PYTHONPATH:+:$PYTHONPATH}"
fi

with_tests=OFF
  log "configure with tests failed; again without them"
  rm -rf build/gpu
  configure OFF || { tail -30 "$logs/configure.log"; exit 1; }
fi
grep -E "CUPTI|LibTorch" "$logs/configure.log" | tee -a "$out/summary.md"
log "build"
cmake --build build/gpu -j "$(nproc)" > "$logs/build.log" 2>&1 || { tail -40 "$logs/build.log"; exit 1; }

cli=build/gpu/app/stepscope-cli
"$cli" info | tee -a "$out/summary.md"

if want tests; then
  if [ "$with_tests" = ON ]; then
    log "tests"
    ctest --test-dir build/gpu --output-on-failure -j 4 2>&1 | tee "$logs/tests.log" | tail -20
    log "GPU suite, verbose"
    build/gpu/tests/tst_gpu 2>&1 | tee -a "$out/summary.md" | tail -25
  else
    log "tests skipped: Qt Test is not available on this machine"
  fi
fi

if want trace; then
  runs="$logs/trace"
  mkdir -p "$runs"
  log "where the time goes: small, ctx 128 and 512, forward and train-step, fp32 and bf16 (--kernels)"
  for precision in fp32 bf16; do
    for ctx in 128 512; do
      for mode in forward train-step; do
        "$cli" run --model small --ctx "$ctx" --mode "$mode" --precision "$precision" --device cuda \
          --warmup 3 --steps 10 --kernels --out "$runs/small-$ctx-$mode-$precision.json" \
          > /dev/null 2>> "$logs/trace.log"
      done
    done
    "$python" benchmarks/where_time_goes.py "$runs"/small-*-"$precision".json | tee -a "$out/summary.md"
  done
  for ctx in 128 512; do
    log "top kernels, small ctx $ctx train-step fp32"
    "$cli" breakdown "$runs/small-$ctx-train-step-fp32.json" --by kernel | head -12 | tee -a "$out/summary.md"
    "$cli" breakdown "$runs/small-$ctx-train-step-fp32.json" --by category | tee -a "$out/summary.md"
  done
  "$cli" export "$runs/small-128-train-step-fp32.json" --chrome-trace "$runs/small-128-train-step-fp32.trace.json"

  log "tracer overhead: small ctx 128 train-step fp32, none / --ops / --kernels, alternating, twice"
  for round in 1 2; do
    for flags in "" "--ops" "--kernels"; do
      "$cli" run --model small --ctx 128 --mode train-step --device cuda --warmup 5 --steps 30 \
        $flags --json 2>/dev/null | "$python" -c "
import json, sys; r = json.load(sys.stdin); s = r['summary']
print(f\"round $round ${flags:-(none)}: median step {s['total_ms']['median']:.3f} ms, \"
      f\"forward {s['forward_ms']['median']:.3f}, backward {s['backward_ms']['median']:.3f}, \"
      f\"optimizer {s['optimizer_ms']['median']:.3f}\")" | tee -a "$out/summary.md"
    done
  done
fi

if want memory; then
  runs="$logs/memory"
  mkdir -p "$runs"
  log "memory: peak forward and train-step memory of 2.7B, ctx 128/256/512, fp32 and bf16, with the estimator"
  "$cli" sweep --model 2.7B --ctx 128,256,512 --mode forward,train-step --precision fp32,bf16 \
    --device cuda --memory --warmup 1 --steps 2 --out "$runs/2.7B" 2> "$logs/memory-sweep.log" \
    | tee -a "$out/summary.md"
  "$cli" memory "$runs/2.7B/"*ctx512*train-step*fp32*.json 2>&1 | head -24 | tee -a "$out/summary.md"

  log "memory: the caching allocator's own history beside ours (small, ctx 128, train-step)"
  "$cli" run --model small --ctx 128 --mode train-step --device cuda --warmup 1 --steps 2 \
    --memory --cuda-snapshot "$runs/small-allocator.pickle" --out "$runs/small-memory.json" > /dev/null 2>> "$logs/memory.log"
  "$cli" export "$runs/small-memory.json" --memviz "$runs/small-memviz.pickle"
  "$python" - "$runs/small-allocator.pickle" "$runs/small-memviz.pickle" "$runs/small-memory.json" <<'PY' | tee -a "$out/summary.md"
import json, pickle, sys
native = pickle.load(open(sys.argv[1], "rb"))
ours = pickle.load(open(sys.argv[2], "rb"))
run = json.load(open(sys.argv[3]))["memory"]
print("native snapshot:", sorted(native.keys()), "trace entries", sum(len(t) for t in native["device_traces"]))
print("our memviz:", len(ours["device_traces"][0]), "entries; categories",
      sorted({e.get("category") for e in ours["device_traces"][0]}))
print("allocator peak allocated", run["device_peak_allocated"], "reserved", run["device_peak_reserved"])
from torch.cuda import _memory_viz
print("memory_viz trace_plot html bytes:", len(_memory_viz.trace_plot(ours)))
PY
  "$cli" memory "$runs/small-memory.json" --json | "$python" -c "
import json, sys; m = json.load(sys.stdin)
print('ours: peak', m['peak_bytes'], 'in', m['peak_phase'], '; allocator peak allocated', m['device_peak_allocated'])" | tee -a "$out/summary.md"

  log "memory tracker overhead: small ctx 128 train-step fp32 on the GPU, off / on, alternating, twice"
  for round in 1 2; do
    for flags in "" "--memory"; do
      "$cli" run --model small --ctx 128 --mode train-step --device cuda --warmup 5 --steps 30 \
        $flags --json 2>/dev/null | "$python" -c "
import json, sys; r = json.load(sys.stdin); s = r['summary']
print(f\"round $round ${flags:-(off)}: median step {s['total_ms']['median']:.3f} ms\")" | tee -a "$out/summary.md"
    done
  done
fi

if want bench; then
  log "engines side by side on the GPU: libtorch, pytorch eager, pytorch-compile (compile time apart)"
  for precision in fp32 bf16; do
    for ctx in 128 512; do
      "$python" benchmarks/compare_engines.py --cli "$cli" --device cuda --precision "$precision" \
        --ctx "$ctx" --models small,medium --modes forward,train-step --warmup 3 --steps 10 \
        --rounds 2 --threads 16 | tee -a "$out/summary.md"
    done
  done

  log "attention grid on the GPU: naive, tiled, sdpa and each of its kernels, bf16 and fp32"
  "$cli" attention --device cuda \
    --backends naive,tiled,sdpa,sdpa-flash,sdpa-efficient,sdpa-math,sdpa-cudnn,cuda-flash,compiled \
    --d 64,128 --seq 1024,4096,16384 --precision bf16,fp32 --batch 8 --repeats 3 \
    --out "$logs" 2> "$logs/attention.log" | tee -a "$out/summary.md"

  log "end-to-end step benchmark (bf16 and fp32, small and medium, ctx 128..1024)"
  "$cli" sweep --model small,medium --ctx 128,256,512,1024 --mode forward,train-step \
    --precision fp32,bf16 --device cuda --warmup 2 --steps 10 \
    --out "$logs/sweep" 2> "$logs/sweep.log" | tee -a "$out/summary.md"
fi
