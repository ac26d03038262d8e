#!/usr/bin/env bash
# On the GPU machine, in one call: build the engine and CLI without the GUI
# against the machine's own PyTorch (2.11, CUDA 13), run the test suites (the
# GPU ones among them) and the benchmarks; everything lands under $OUT.
#
#   here:   scripts/gpu-deps.sh
#   device: run(command="scripts/gpu-check.sh [SECTION...]", carry=[".gpu-deps"])
#
# Sections (all when none is named): tests, flash (our FlashAttention-2
# kernels: ptxas resource use, the float64-reference suite, compute-sanitizer
# memcheck/racecheck/initcheck/synccheck, the leaderboard shape beside sdpa
# and ncu where it runs), trace (where the time goes: kernel and operator
# breakdowns, tracer overheads), memory (peaks against the estimator), bench
# (sweep, attention grid with compiled, the three engines).
set -uo pipefail
cd "$(dirname "$0")/.."
sections="${*:-tests flash trace memory bench}"
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

if want flash; then
  nvcc="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
  log "flash attention: ptxas resource use per kernel, sm_90 (regs, static smem, stack, spills)"
  echo "dynamic shared memory per kernel: the dispatch table (kernels/src/flash_attention_config.h)" \
    | tee -a "$out/summary.md"
  for part in fwd bwd; do
    "$nvcc" -std=c++17 -O3 -DNDEBUG --expt-relaxed-constexpr -gencode arch=compute_90,code=sm_90 \
      -Ikernels/include -Xptxas -v -c "kernels/src/flash_attention_$part.cu" -o /dev/null 2>&1
  done | tee "$logs/ptxas.log" | awk '
    /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2) }
    /bytes stack frame/ { stack = $1; spillStores = $5; spillLoads = $9 }
    /Used [0-9]+ registers/ {
      regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
      smem = "0"; if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ bytes smem/, "", smem) }
      printf "%4s regs %6s B smem %3s B stack %3s/%-3s B spill st/ld  %s\n", regs, smem, stack, spillStores, spillLoads, name
    }' | { command -v c++filt > /dev/null && c++filt || cat; } | sed -E 's/stepscope::kernels::flash::\(anonymous namespace\)::|stepscope::kernels:://g' \
    | tee -a "$out/summary.md"

  if [ -x build/gpu/tests/tst_flash_attention ]; then
    log "flash attention: against float64 (every head dim, dtype, causal/full, ragged/unequal)"
    build/gpu/tests/tst_flash_attention 2>&1 | tee "$logs/flash-tests.log" \
      | grep -E "^(FAIL|PASS|SKIP|QWARN|QINFO)|Totals" | grep -vE "^PASS" | tail -60 | tee -a "$out/summary.md"
  else
    log "tst_flash_attention was not built (no Qt Test): the smoke driver below still runs"
  fi
  smoke=build/gpu/kernels/flash_attention_smoke
  log "flash attention: smoke driver (all dtypes and head dims, outputs poisoned)"
  "$smoke" 2>&1 | tail -40 | tee -a "$out/summary.md"
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  if [ -x "$sanitizer" ]; then
    for tool in memcheck racecheck initcheck synccheck; do
      for d in 16 64 128; do
        [ "$tool" = memcheck ] || [ "$d" = 64 ] || continue  # the slow tools on d 64 only
        log "compute-sanitizer --tool $tool, smoke driver, head dim $d"
        "$sanitizer" --tool "$tool" --error-exitcode 3 "$smoke" "$d" > "$logs/sanitizer-$tool-$d.log" 2>&1
        echo "exit $? ($tool, d $d; 0 = clean)" | tee -a "$out/summary.md"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" "$logs/sanitizer-$tool-$d.log" \
          | head -8 | tee -a "$out/summary.md"
      done
    done
  else
    log "compute-sanitizer not found: memcheck and racecheck not run"
  fi

  log "flash attention: course leaderboard shape (batch 1, 16 heads, seq 16384, d 64, causal, bf16)"
  "$cli" attention --device cuda --backends sdpa-flash,sdpa-cudnn,cuda-flash,tiled --d 64 \
    --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 3 --repeats 10 \
    --out "$logs/flash-leaderboard" 2> "$logs/flash-leaderboard.log" | tee -a "$out/summary.md"
  for dq in atomics pass; do
    log "flash attention: leaderboard shape, cuda-flash with dQ by $dq (STEPSCOPE_FLASH_DQ=$dq)"
    STEPSCOPE_FLASH_DQ=$dq "$cli" attention --device cuda --backends cuda-flash --d 64 \
      --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 3 --repeats 10 \
      2>> "$logs/flash-leaderboard.log" | tee -a "$out/summary.md"
  done
  # >>> issue 32 (branch i32-attention): our Python FlashAttention-2 at the leaderboard shape,
  # in the Python worker (each gated against float64 first; an incorrect one is not timed).
  log "flash attention: leaderboard shape, flash-triton and flash-pytorch (Python worker)"
  "$cli" attention --device cuda --backends flash-triton,flash-pytorch --python "$python" --d 64 \
    --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 3 --repeats 10 \
    --out "$logs/flash-leaderboard-python" 2>> "$logs/flash-leaderboard.log" | tee -a "$out/summary.md"
  # <<< issue 32
  log "flash attention: the end-to-end train step of small and medium, ctx 512 and 1024, bf16"
  "$cli" sweep --model small,medium --ctx 512,1024 --mode train-step --precision bf16 \
    --attention naive,sdpa,cuda-flash --device cuda --warmup 2 --steps 10 \
    --out "$logs/flash-sweep" 2> "$logs/flash-sweep.log" | tee -a "$out/summary.md"
  if command -v ncu > /dev/null; then
    log "ncu: what limits the forward and the backward kernel at that shape"
    ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      -k regex:TensorCoreKernel -c 2 "$cli" attention --device cuda --backends cuda-flash --d 64 \
      --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 0 --repeats 1 \
      > "$logs/ncu-flash.log" 2>&1
    grep -E "TensorCoreKernel|Duration|Throughput|Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|SOL" \
      "$logs/ncu-flash.log" | head -60 | tee -a "$out/summary.md"
  else
    log "ncu not found: no profile"
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
