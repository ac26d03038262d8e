#!/usr/bin/env bash
# The GPU proof as a budgeted plan (docs/gpu-check.md): on the GPU machine,
# build the engine, CLI and tests without the GUI against the machine's own
# PyTorch (2.11, CUDA 13) and run one section after another; every figure
# and every failure lands in $OUT/summary.md, each line stamped with its
# section's seconds, the bulky logs and run files in $OUT/logs.tar.gz.
#
#   here:     scripts/gpu-deps.sh
#             scripts/gpu-check.sh --rehearse first    (CPU build, GPU parts skipped)
#   device:   run(command="scripts/gpu-check.sh first", carry=[".gpu-deps"])
#   then:     run(command="scripts/gpu-check.sh flash levers", carry=[".gpu-deps"]) …
#
# `first` (the default) is the first call on a bare machine and fits in six
# minutes; the others follow as time allows, in later calls on the warm
# machine (build/gpu is kept between them). A rehearsal runs the same steps
# on this machine's build (STEPSCOPE_BUILD_DIR, default build/default): the
# test suites run and skip their GPU parts, every CLI call runs and must fail
# only for want of CUDA (so its flags parse), every other GPU program must
# exist. Exit status: the number of failed steps (0 = all passed).
set -uo pipefail
cd "$(dirname "$0")/.."

rehearse=0
if [ "${1:-}" = --rehearse ]; then
  rehearse=1
  shift
fi
plan=(first suite flash trace memory estimate levers engines bench examples dist)
declare -A expected=(
  [first]="2.5 min from a bare machine (H200, 2026-11-26: 18 s configure, 58 s build, 125 s in all)"
  [suite]="4 min: the whole build, then every CTest suite"
  [flash]="4 min: ptxas use, float64 suite, four sanitizer tools, leaderboard, dQ modes, ncu"
  [trace]="4 min: kernel and operator breakdowns, the tracers' overheads at ctx 128 and 512, fp32 and bf16"
  [memory]="2 min: 2.7B forward peaks, the allocator's history beside ours, the recorder's --snapshot, tracker overhead"
  [estimate]="1 min (H200: 47 s): small to 2.7B, ctx 128 to 1024, fp32 and bf16, against the caching allocator"
  [levers]="2 min (H200: 113 s): checkpointing and the chunked loss, the three AdamW, graph vs eager"
  [engines]="5 min a table (H200: 79 s a model and mode), so ENGINE_TABLES='fp32:128' picks: libtorch, pytorch, pytorch-compile"
  [bench]="8 min: the attention grid and the end-to-end sweep"
  [examples]="3 min (H200: 158 s): resources/examples re-recorded on this GPU"
  [dist]="5 min (not yet timed): 8 strategies on 2 gloo ranks sharing the GPU, the collective benchmark on CUDA tensors to 1 GB, NCCL with 2+ GPUs")
sections="${*:-first}"
for name in $sections; do
  if [ -z "${expected[$name]:-}" ]; then
    echo "gpu-check: unknown section '$name'; allowed: ${plan[*]}" >&2
    exit 2
  fi
done
want() { [[ " $sections " == *" $1 "* ]]; }

out="${OUT:-$PWD/out/gpu-check}"
mkdir -p "$out"
if [ "$rehearse" = 1 ]; then
  build="${STEPSCOPE_BUILD_DIR:-build/default}"
  logs="$out/logs"
else
  build="${STEPSCOPE_BUILD_DIR:-build/gpu}"
  logs="$PWD/build/gpu-logs"  # travels back as one archive
fi
mkdir -p "$logs"
summary="$out/summary.md"
: > "$summary"
examples_dir="$PWD/build/gpu-examples"
# Back from the machine: summary.md, logs.tar.gz, examples.tar.gz (the device
# tool returns a few files of at most 16 MiB: the large run files stay behind,
# named in the summary).
pack() {
  local big
  big="$(cd "$logs" && find . -type f -size +4M)"
  [ -n "$big" ] && echo "left on the machine (over 4 MB): $big" >> "$summary"
  (cd "$logs" && find . -type f -size -4097k | tar czf "$out/logs.tar.gz" -T -) 2> /dev/null
  [ -d "$examples_dir" ] && tar czf "$out/examples.tar.gz" -C "$examples_dir" . 2> /dev/null
}
[ "$rehearse" = 1 ] || trap pack EXIT
python="$(command -v "${STEPSCOPE_PYTHON:-python3}")"  # CMake wants a full path
cli="$build/app/stepscope-cli"
failed="$logs/failed-steps.txt"  # a file: steps fail inside pipelines' subshells too
: > "$failed"
exec 3>&1  # the terminal: where notes go from inside redirected or piped calls

# --- what every line of the summary goes through -----------------------------
section=setup
section_start=$SECONDS
stamp() {
  while IFS= read -r line; do
    printf '[%s +%ds] %s\n' "$section" $((SECONDS - section_start)) "$line"
  done | tee -a "$summary"
}
log() { echo "== $*" | stamp; }
fail() {
  echo "$*" >> "$failed"
  echo "FAILED: $*" | stamp >&3
}
failures() { wc -l < "$failed"; }
begin() {
  section=$1
  section_start=$SECONDS
  echo >> "$summary"
  log "section $1 (expected ${expected[$1]})"
}

# A CLI call that needs the GPU. In a rehearsal it runs all the same and must
# be refused for want of CUDA and nothing else, so a misspelt flag or backend
# never costs GPU time. The collective benchmark checks its flags itself, then
# starts its ranks, which refuse CUDA (exit 3, torchrun's report after).
cuda_cli() {
  if [ "$rehearse" = 0 ]; then
    "$cli" "$@"
    return
  fi
  "$cli" "$@" > /dev/null 2> "$logs/rehearsal.err"
  local status=$?
  local refusal="no CUDA device is available here" refused=2
  if [ "$1" = collective ]; then
    refusal="collective benchmark on [0-9]+ ranks: device: cuda is not available here"
    refused=3
  fi
  local other
  other="$(grep -v -E -e "invalid configuration:" -e "$refusal" -e "^stepscope: " \
    -e "^stepscope-cli: collective rows written to " -e "^\[[0-9]+\]:$" -e "^=+$" \
    -e "^  (time|host|rank|exitcode|error_file|traceback) *:" "$logs/rehearsal.err" | head -c 400)"
  if [ "$status" = "$refused" ] && grep -q -E "$refusal" "$logs/rehearsal.err" \
    && [ -z "$other" ]; then
    echo "rehearsed: stepscope-cli $1 … (flags parse; refused only for want of CUDA)" | stamp >&3
    return 0
  fi
  fail "stepscope-cli $* (exit $status): $(head -c 400 "$logs/rehearsal.err")"
  return 1
}

# Any other program that needs the GPU. In a rehearsal, what this build makes
# must exist; a tool of the GPU machine's toolkit (compute-sanitizer, ncu) is
# only noted where this machine lacks it.
cuda_program() {
  if [ "$rehearse" = 0 ]; then
    "$@"
    return
  fi
  local program=$1
  shift
  for word in "$@"; do
    if [[ "$word" == "$build"/* ]] && [ ! -x "$word" ]; then
      fail "$word was not built"
      return 0
    fi
  done
  if command -v "$program" > /dev/null || [ -x "$program" ]; then
    echo "rehearsed: $program exists (runs on the GPU only)" | stamp >&3
  elif [[ "$program" == "$build"/* ]]; then
    fail "$program was not built"
  else
    echo "rehearsed: $program is not on this machine (the GPU machine's toolkit has it)" | stamp >&3
  fi
  return 0
}

# A Python benchmark that drives the CLI on the GPU: in a rehearsal, its
# imports and its --help.
cuda_python() {
  if [ "$rehearse" = 0 ]; then
    "$python" "$@"
    return
  fi
  if "$python" "$1" --help > /dev/null 2> "$logs/rehearsal.err"; then
    echo "rehearsed: $1 --help" | stamp >&3
  else
    fail "$1 --help: $(tail -c 400 "$logs/rehearsal.err")"
  fi
}

# A Qt Test suite: its failures and skips go to the summary, all of it to logs.
suite() {
  local name=$1
  local binary="$build/tests/$name"
  if [ ! -x "$binary" ]; then
    fail "$name was not built"
    return
  fi
  "$binary" > "$logs/$name.log" 2>&1
  local status=$?
  # A skip here is expected; on the GPU each one is news.
  local shown="^(FAIL|QWARN)|Totals"
  [ "$rehearse" = 1 ] || shown="^(FAIL|SKIP|QWARN)|Totals"
  grep -E "$shown" "$logs/$name.log" | tail -40 | stamp
  [ "$status" = 0 ] || fail "$name exit $status (logs/$name.log)"
}

# The same run in several variants (VARIANTS: flag sets separated by ";", an
# empty one meaning none), alternating, twice: each round's median step,
# then each variant's median of rounds and its ratio to the first variant.
alternate() {
  local label=$1 variants=$2
  shift 2
  local medians="$logs/alternate-medians.txt"
  : > "$medians"
  IFS=';' read -r -a list <<< "$variants"
  [[ "$variants" == *";" ]] && list+=("")
  for round in 1 2; do
    for variant in "${list[@]}"; do
      # shellcheck disable=SC2086  # a variant is words
      cuda_cli run "$@" $variant --json 2> "$logs/alternate.err" > "$logs/alternate.json" \
        || { [ "$rehearse" = 1 ] || fail "$label, ${variant:-(none)}: $(tail -c 300 "$logs/alternate.err")"; continue; }
      [ "$rehearse" = 1 ] && continue
      "$python" - "$logs/alternate.json" "$round" "${variant:-(none)}" "$medians" <<'PY' | stamp
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
phases = ", ".join(f"{p} {s[p + '_ms']['median']:.3f}" for p in ("forward", "backward", "optimizer")
                   if s.get(p + "_ms"))
print(f"round {sys.argv[2]} {sys.argv[3]}: median step {s['total_ms']['median']:.3f} ms ({phases})")
with open(sys.argv[4], "a") as out:
    out.write(f"{sys.argv[3]}\t{s['total_ms']['median']}\n")
PY
    done
  done
  [ "$rehearse" = 1 ] && return
  "$python" - "$medians" "$label" <<'PY' | stamp
import statistics, sys
by_variant = {}
for line in open(sys.argv[1]):
    name, ms = line.rstrip("\n").split("\t")
    by_variant.setdefault(name, []).append(float(ms))
first = None
for name, values in by_variant.items():
    median = statistics.median(values)
    first = first or median
    print(f"{sys.argv[2]}: {name} median {median:.3f} ms, ratio {median / first:.3f}")
PY
}

# Each data-parallel strategy (dist) as one run on its ranks: TAG names the
# files in $runs (the run file, its report, its stderr), the rest are the run's
# flags. One line a strategy: rank 0's median step and comm wait, each rank's
# exposed communication and overlap per measured step and its peak memory, the
# gate's verdict. In a rehearsal a CUDA run is only rehearsed (cuda_cli).
dist_strategies() {
  local tag=$1
  shift
  local strategy file status
  for strategy in naive flat overlap bucketed sharded-optimizer fsdp torch-ddp torch-fsdp; do
    file="$runs/$tag-$strategy.json"
    rm -f "$file"  # build/gpu-logs outlives a call: no stale file read as this one's
    if [ "$rehearse" = 1 ] && [[ " $* " == *" --device cuda "* ]]; then
      cuda_cli run "$@" --parallel "$strategy" --out "$file"
      continue
    fi
    "$cli" run "$@" --parallel "$strategy" --out "$file" > "${file%.json}.txt" 2> "${file%.json}.err"
    status=$?
    if [ -f "$file" ]; then
      "$python" - "$file" "$strategy" <<'PY' | stamp
import json, sys
run = json.load(open(sys.argv[1]))
if run.get("status") != "ok":
    print(f"{sys.argv[2]}: {run.get('status')}: {(run.get('message') or '').partition(chr(10))[0]}")
    sys.exit()
median = lambda key: (run["summary"].get(key) or {}).get("median") or 0.0
ranks = []
for rank in run.get("ranks") or []:
    measured = max(1, sum(not step["warmup"] for step in rank["steps"]))
    c, m = rank["communication"], rank["memory"]
    ranks.append((c["exposed_us"] / 1e3 / measured, c["overlap_pct"], (m["peak_bytes"] or 0) / 2**20))
cells = lambda form, i: " / ".join(form.format(r[i]) for r in ranks)
gate = run.get("gate") or {}
print(f"{sys.argv[2]}: step {median('total_ms'):.2f} ms, comm wait {median('comm_wait_ms'):.2f} ms; "
      f"rank {' / '.join(str(i) for i in range(len(ranks)))}: exposed {cells('{:.2f}', 0)} ms, "
      f"overlap {cells('{:.0f}%', 1)}, peak {cells('{:.1f}', 2)} MiB; "
      f"gate {'passed' if gate.get('ok') else 'REFUSED'} (max rel. error "
      f"{gate.get('max_rel_error') or 0:.1e}, tolerance {gate.get('tolerance') or 0:.0e})")
PY
    fi
    [ "$status" = 0 ] \
      || fail "$tag $strategy exit $status: $(tail -c 300 "${file%.json}.err") (logs/dist/$tag-$strategy.err)"
  done
}

# The collective benchmark (dist): TAG names its files in $runs (the rows, the
# table, stderr), the rest are its flags. One line a row: op, size, the
# slowest rank's median time, algbw, busbw.
dist_collective() {
  local tag=$1
  shift
  local file="$runs/collective-$tag.json"
  rm -f "$file"
  if [ "$rehearse" = 1 ] && [[ " $* " == *" --device cuda "* ]]; then
    cuda_cli collective "$@" --out "$file"
    return
  fi
  "$cli" collective "$@" --out "$file" > "${file%.json}.txt" 2> "${file%.json}.err"
  local status=$?
  if [ -f "$file" ]; then
    "$python" - "$file" <<'PY' | stamp
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for row in rows:
    size = row["size_bytes"]
    size = f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"
    name = f"{row['op']} {size} ({row['ranks']} ranks, {row['backend']}, {row['device']})"
    if row["status"] != "ok":
        print(f"{name}: {row['status']}: {row['message'].partition(chr(10))[0]}")
        continue
    note = "; gloo runs it as an all-reduce of the whole input" if row.get("emulated") else ""
    print(f"{name}: {row['time_us'] / 1e3:.3f} ms, algbw {row['algbw_gbps']:.2f} GB/s, "
          f"busbw {row['busbw_gbps']:.2f} GB/s{note}")
print("no rows" if not rows else f"{len(rows)} rows, {sum(r['status'] == 'ok' for r in rows)} ok")
sys.exit(not rows or any(row["status"] != "ok" for row in rows))
PY
    [ "${PIPESTATUS[0]}" = 0 ] || fail "collective $tag: a row not ok (logs/dist/collective-$tag.json)"
  fi
  [ "$status" = 0 ] \
    || fail "collective $tag exit $status: $(tail -c 300 "${file%.json}.err") (logs/dist/collective-$tag.err)"
}

# The GPU's short name (h100, h200), as resources/examples and docs/perf name
# files; "gpu" where nvidia-smi names none.
gpu_slug() {
  local gpu
  gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
    | grep -oiE 'h[0-9]+|a[0-9]+|l[0-9]+' | head -1 | tr 'A-Z' 'a-z')"
  echo "${gpu:-gpu}"
}

# The headline figures as JSON beside the summary ($out/DATE-DEVICE-gpu.json,
# for docs/perf): flash's speed ratios (sdpa-flash's time over ours, at the
# leaderboard shape), the kernel tracer's overhead in percent per
# configuration, the device and the commit (git's, else $STEPSCOPE_COMMIT,
# for a copy of the tree without its history). A figure no section of any
# call measured this time is null; a rehearsal writes rehearsal-gpu.json.
headline_json() {
  local device name
  if [ "$rehearse" = 1 ]; then
    device=rehearsal
    name=rehearsal
  else
    device="$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)"
    name="$(date -u +%F)-$(gpu_slug)"
  fi
  local commit
  commit="$(git rev-parse HEAD 2> /dev/null || echo "${STEPSCOPE_COMMIT:-unknown}")"
  "$python" - "$logs" "$device" "$commit" > "$out/$name-gpu.json" <<'PY'
import glob, json, os, statistics, sys
logs, device, commit = sys.argv[1:4]

def times(path):
    """backend -> (forward_ms, backward_ms) of an attention file's ok points."""
    try:
        points = json.load(open(path))["points"]
    except (OSError, ValueError, KeyError):
        return {}
    return {p["backend"]: (p.get("forward_ms"), p.get("backward_ms"))
            for p in points if p.get("status") == "ok"}

board = {**times(os.path.join(logs, "leaderboard-cuda.json")),
         **times(os.path.join(logs, "leaderboard-python.json"))}

def ratio(ours, phase):
    base, mine = board.get("sdpa-flash", (None, None))[phase], board.get(ours, (None, None))[phase]
    return round(base / mine, 3) if base and mine else None

overhead = {}
for path in sorted(glob.glob(os.path.join(logs, "tracer-*.txt"))):
    runs = {}
    for line in open(path):
        variant, ms = line.rstrip("\n").split("\t")
        runs.setdefault(variant, []).append(float(ms))
    if "(none)" in runs and "--kernels" in runs:
        none = statistics.median(runs["(none)"])
        kernels = statistics.median(runs["--kernels"])
        overhead[os.path.basename(path)[len("tracer-"):-len(".txt")]] = round(
            100 * (kernels - none) / none, 1)
json.dump({"flash": {"fwd_vs_sdpa_flash": ratio("cuda-flash", 0),
                     "bwd_vs_sdpa_flash": ratio("cuda-flash", 1),
                     "triton_bwd_vs_sdpa_flash": ratio("flash-triton", 1)},
           "tracer_overhead_pct": overhead or None, "device": device, "commit": commit},
          sys.stdout, indent=2)
print()
PY
  log "headline figures: $out/$name-gpu.json ($(tr -d ' \n' < "$out/$name-gpu.json" | head -c 300))"
}

# --- the machine, the dependencies, the build ---------------------------------
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  if [ "$rehearse" = 1 ]; then
    echo "rehearsal on $(hostname): the CPU build in $build, GPU parts skipped"
  else
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  fi
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  echo "plan (expected durations; those with a figure in brackets were measured):"
  for name in "${plan[@]}"; do
    mark=" "
    want "$name" && mark="*"
    echo " $mark $name: ${expected[$name]}"
  done
} 2>&1 | stamp

# Build dependencies carried as .deb files and wheels (scripts/gpu-deps.sh).
prefix="$PWD/.gpu-deps/root"
if [ "$rehearse" = 0 ]; then
  if compgen -G ".gpu-deps/*.deb" > /dev/null; then
    for deb in .gpu-deps/*.deb; do dpkg -x "$deb" "$prefix"; done
  fi
  for dir in "$prefix"/usr/lib/*-linux-gnu; do
    [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  done
  if ! "$python" -m pytest --version > /dev/null 2>&1 \
    && compgen -G ".gpu-deps/wheels/*.whl" > /dev/null; then
    "$python" -m pip install -q --no-index --find-links .gpu-deps/wheels \
      --target "$prefix/pylib" pytest > "$logs/pytest-install.log" 2>&1
    export PYTHONPATH="$prefix/pylib${PYTHONPATH:+:$PYTHONPATH}"
  fi
fi

with_tests=OFF
if compgen -G "/usr/lib/*/cmake/Qt6Test" > /dev/null \
  || compgen -G "$prefix/usr/lib/*/cmake/Qt6Test" > /dev/null; then
  with_tests=ON
fi
configure() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTEPSCOPE_BUILD_GUI=OFF -DSTEPSCOPE_BUILD_TESTS="$1" \
    -DSTEPSCOPE_PYTHON="$python" -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DCMAKE_CUDA_ARCHITECTURES=90 > "$logs/configure.log" 2>&1
}
if [ "$rehearse" = 1 ]; then
  [ -f "$build/CMakeCache.txt" ] || { fail "no build in $build to rehearse on"; exit "$(failures)"; }
  grep -q "STEPSCOPE_BUILD_TESTS:BOOL=ON" "$build/CMakeCache.txt" && with_tests=ON
elif [ ! -f "$build/build.ninja" ]; then
  log "configure (tests: $with_tests)"
  if ! configure "$with_tests"; then
    tail -20 "$logs/configure.log" | stamp
    [ "$with_tests" = ON ] || { fail "configure"; exit "$(failures)"; }
    log "configure with tests failed; again without them"
    with_tests=OFF
    rm -rf "$build"
    configure OFF || { tail -30 "$logs/configure.log" | stamp; fail "configure"; exit "$(failures)"; }
  fi
  grep -E "CUPTI|LibTorch" "$logs/configure.log" | stamp
else
  grep -q "STEPSCOPE_BUILD_TESTS:BOOL=ON" "$build/CMakeCache.txt" || with_tests=OFF
fi

# Builds TARGETS (all when none): what a section needs, no more.
build_targets() {
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  log "build ${*:-everything}"
  if ! cmake --build "$build" -j "$(nproc)" "${targets[@]}" > "$logs/build.log" 2>&1; then
    tail -40 "$logs/build.log" | stamp
    fail "build ${*:-everything} (logs/build.log)"
    return 1
  fi
}

# --- first: every answer of the first call (H200: 125 s from a bare machine) ---
if want first; then
  begin first
  targets=(stepscope-cli flash_attention_smoke)
  [ "$with_tests" = ON ] && targets+=(tst_flash_attention tst_gpu tst_cuda_graph)
  build_targets "${targets[@]}"
  "$cli" info 2>&1 | stamp
  if [ "$with_tests" = ON ]; then
    log "our FlashAttention-2 against float64 (every head dim, dtype, causal/full, ragged)"
    suite tst_flash_attention
    log "the GPU suite: engine, tracers, optimizers, CUDA paths"
    suite tst_gpu
    log "CUDA graphs: 20 replayed steps against eager, CUPTI kernels per replay"
    suite tst_cuda_graph
  else
    fail "no Qt Test on this machine: the suites did not run (scripts/gpu-deps.sh carries it)"
  fi
  log "the smoke driver under compute-sanitizer memcheck, head dim 64"
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  cuda_program "$sanitizer" --tool memcheck --error-exitcode 3 "$build/kernels/flash_attention_smoke" 64 \
    > "$logs/memcheck-first.log" 2>&1
  memcheck=$?
  [ "$rehearse" = 0 ] && grep -E "ERROR SUMMARY|Invalid" "$logs/memcheck-first.log" | head -8 | stamp
  [ "$memcheck" = 0 ] || fail "memcheck exit $memcheck (logs/memcheck-first.log)"
  log "the leaderboard shape: batch 1, 16 heads, seq 16384, d 64, causal, bf16, forward and backward"
  cuda_cli attention --device cuda --backends sdpa-flash,sdpa-cudnn,cuda-flash --d 64 \
    --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 3 --repeats 10 \
    --out-file "$logs/leaderboard-cuda.json" 2> "$logs/leaderboard-first.log" | stamp
  log "the same shape, our FlashAttention-2 in PyTorch and in Triton (Python worker, gated first)"
  cuda_cli attention --device cuda --engine pytorch --backends flash-triton,flash-pytorch \
    --python "$python" --d 64 --seq 16384 --batch 1 --heads 16 --precision bf16 --causal \
    --warmup 3 --repeats 10 --out-file "$logs/leaderboard-python.json" \
    2>> "$logs/leaderboard-first.log" | stamp
  log "graph vs eager: small ctx 128 fp32 train step, adamw-fused (goal: graph <= 0.5x eager)"
  alternate "graph vs eager" ";--cuda-graph" --model small --ctx 128 --mode train-step \
    --precision fp32 --optimizer adamw-fused --device cuda --warmup 5 --steps 30
fi

# --- the sections for later calls -------------------------------------------
if want suite; then
  begin suite
  build_targets
  if [ "$with_tests" = ON ]; then
    ctest --test-dir "$build" --output-on-failure -j 4 > "$logs/suite.log" 2>&1 \
      || fail "ctest (logs/suite.log)"
    grep -E "tests passed|Failed|\*\*\*" "$logs/suite.log" | tail -30 | stamp
  else
    fail "no Qt Test on this machine: no suites"
  fi
fi

if want flash; then
  begin flash
  build_targets stepscope-cli flash_attention_smoke
  nvcc="${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
  log "ptxas resource use per kernel, sm_90 (regs, static smem, stack, spills)"
  echo "dynamic shared memory per kernel: the dispatch table (kernels/src/flash_attention_config.h)" | stamp
  if [ "$rehearse" = 1 ]; then
    cuda_program "$nvcc"
  else
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
      }' | { command -v c++filt > /dev/null && c++filt || cat; } \
      | sed -E 's/stepscope::kernels::flash::\(anonymous namespace\)::|stepscope::kernels:://g' | stamp
  fi
  smoke="$build/kernels/flash_attention_smoke"
  log "the smoke driver (all dtypes and head dims, outputs poisoned)"
  cuda_program "$smoke" 2>&1 | tail -40 | stamp
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  for tool in memcheck racecheck initcheck synccheck; do
    for d in 16 64 128; do
      [ "$tool" = memcheck ] || [ "$d" = 64 ] || continue  # the slow tools on d 64 only
      log "compute-sanitizer --tool $tool, smoke driver, head dim $d"
      cuda_program "$sanitizer" --tool "$tool" --error-exitcode 3 "$smoke" "$d" \
        > "$logs/sanitizer-$tool-$d.log" 2>&1
      status=$?
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|hazard" "$logs/sanitizer-$tool-$d.log" \
        | head -8 | stamp
      [ "$status" = 0 ] || fail "$tool d $d exit $status (logs/sanitizer-$tool-$d.log)"
    done
  done
  for dq in atomics pass; do
    log "leaderboard shape, cuda-flash with dQ by $dq (STEPSCOPE_FLASH_DQ=$dq)"
    STEPSCOPE_FLASH_DQ=$dq cuda_cli attention --device cuda --backends cuda-flash --d 64 \
      --seq 16384 --batch 1 --heads 16 --precision bf16 --causal --warmup 3 --repeats 10 \
      2>> "$logs/flash-leaderboard.log" | stamp
  done
  log "the end-to-end train step of small and medium, ctx 512 and 1024, bf16"
  cuda_cli sweep --model small,medium --ctx 512,1024 --mode train-step --precision bf16 \
    --attention naive,sdpa,cuda-flash --device cuda --warmup 2 --steps 10 \
    --out "$logs/flash-sweep" 2> "$logs/flash-sweep.log" | stamp
  log "ncu: what limits the forward and the backward kernel at that shape"
  cuda_program ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis -k regex:TensorCoreKernel -c 2 "$cli" attention \
    --device cuda --backends cuda-flash --d 64 --seq 16384 --batch 1 --heads 16 \
    --precision bf16 --causal --warmup 0 --repeats 1 > "$logs/ncu-flash.log" 2>&1
  grep -E "TensorCoreKernel|Duration|Throughput|Registers|Occupancy|Block Limit|SOL" \
    "$logs/ncu-flash.log" | head -60 | stamp
fi

if want trace; then
  begin trace
  build_targets stepscope-cli
  runs="$logs/trace"
  mkdir -p "$runs"
  log "where the time goes: small, ctx 128 and 512, forward and train-step, fp32 and bf16 (--kernels)"
  for precision in fp32 bf16; do
    for ctx in 128 512; do
      for mode in forward train-step; do
        cuda_cli run --model small --ctx "$ctx" --mode "$mode" --precision "$precision" --device cuda \
          --warmup 3 --steps 10 --kernels --out "$runs/small-$ctx-$mode-$precision.json" \
          > /dev/null 2>> "$logs/trace.log"
      done
    done
    [ "$rehearse" = 1 ] || "$python" benchmarks/where_time_goes.py "$runs"/small-*-"$precision".json | stamp
  done
  if [ "$rehearse" = 0 ]; then
    for ctx in 128 512; do
      log "top kernels, small ctx $ctx train-step fp32"
      "$cli" breakdown "$runs/small-$ctx-train-step-fp32.json" --by kernel | head -12 | stamp
      "$cli" breakdown "$runs/small-$ctx-train-step-fp32.json" --by category | stamp
    done
    "$cli" export "$runs/small-128-train-step-fp32.json" --chrome-trace "$runs/small-128-train-step-fp32.trace.json"
  fi
  for precision in fp32 bf16; do
    for ctx in 128 512; do
      log "tracer overhead: small ctx $ctx train-step $precision, none / --ops / --kernels (goal: --kernels < 10%)"
      alternate "tracer overhead" ";--ops;--kernels" --model small --ctx "$ctx" --mode train-step \
        --precision "$precision" --device cuda --warmup 5 --steps 30
      [ "$rehearse" = 1 ] || cp "$logs/alternate-medians.txt" "$logs/tracer-small-$ctx-$precision.txt"
    done
  done
fi

if want memory; then
  begin memory
  build_targets stepscope-cli
  runs="$logs/memory"
  mkdir -p "$runs"
  # The train steps' peaks are the estimate section's sweep: not run twice.
  log "peak forward memory of 2.7B, ctx 128/256/512, fp32 and bf16"
  cuda_cli sweep --model 2.7B --ctx 128,256,512 --mode forward --precision fp32,bf16 \
    --device cuda --memory --warmup 1 --steps 2 --out "$runs/2.7B" 2> "$logs/memory-sweep.log" | stamp
  log "the caching allocator's own history beside ours (small, ctx 128, train-step)"
  cuda_cli run --model small --ctx 128 --mode train-step --device cuda --warmup 1 --steps 2 \
    --memory --cuda-snapshot "$runs/small-allocator.pickle" --out "$runs/small-memory.json" \
    > /dev/null 2>> "$logs/memory.log"
  if [ "$rehearse" = 0 ]; then
    "$cli" export "$runs/small-memory.json" --memviz "$runs/small-memviz.pickle"
    "$python" - "$runs/small-allocator.pickle" "$runs/small-memviz.pickle" "$runs/small-memory.json" <<'PY' | stamp
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
    log "stepscope-record --snapshot: PyTorch's own snapshot of the recorder's run, against its run file"
    PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" "$python" -m stepscope --model small \
      --ctx 128 --mode train-step --device cuda --warmup 1 --steps 2 --memory \
      --out "$runs/recorded.json" --snapshot "$runs/recorded.pickle" > /dev/null 2>> "$logs/memory.log"
    "$cli" memory "$runs/recorded.json" --against "$runs/recorded.pickle" | stamp
    (cd python && "$python" -m pytest -q tests/test_recorder.py -k snapshot) 2>&1 | tail -3 | stamp
  fi
  log "memory tracker overhead: small ctx 128 train-step fp32, off / on"
  alternate "memory tracker overhead" ";--memory" --model small --ctx 128 --mode train-step \
    --device cuda --warmup 5 --steps 30
fi

if want estimate; then
  begin estimate
  build_targets stepscope-cli
  runs="$logs/estimate"
  log "train steps of small to 2.7B, ctx 128 to 1024, fp32 and bf16, with the memory tracker"
  cuda_cli sweep --model small,medium,large,2.7B --ctx 128,256,512,1024 --mode train-step \
    --precision fp32,bf16 --device cuda --memory --warmup 1 --steps 1 --out "$runs" \
    2> "$logs/estimate-sweep.log" | tail -5 | stamp
  log "the estimate against the caching allocator's peak (goal: within 10%)"
  if [ "$rehearse" = 1 ]; then
    cuda_python benchmarks/estimate_vs_allocator.py
  else
    "$python" benchmarks/estimate_vs_allocator.py --cli "$cli" "$runs"/*.json | stamp \
      || fail "estimate outside 10% (table above)"
  fi
fi

if want levers; then
  begin levers
  build_targets stepscope-cli
  log "memory levers on the GPU: small ctx 512, checkpointing and the chunked loss"
  cuda_python benchmarks/memory_levers.py --cli "$cli" --model small --ctx 512 --batch 4 \
    --device cuda --out "$logs/levers" 2> "$logs/levers.log" | stamp
  log "the three AdamW: small ctx 128 fp32 train step"
  alternate "the three AdamW" "--optimizer adamw;--optimizer adamw-foreach;--optimizer adamw-fused" \
    --model small --ctx 128 --mode train-step --device cuda --warmup 5 --steps 30
  log "graph vs eager, small and medium, ctx 128 and 512"
  for model in small medium; do
    for ctx in 128 512; do
      alternate "graph vs eager, $model ctx $ctx" ";--cuda-graph" --model "$model" --ctx "$ctx" \
        --mode train-step --optimizer adamw-fused --device cuda --warmup 5 --steps 30
    done
  done
fi

if want engines; then
  begin engines
  build_targets stepscope-cli
  log "engines side by side: libtorch, pytorch eager, pytorch-compile (compile time apart)"
  # Four tables of about 5 minutes each (pytorch-compile compiles for 20 s a
  # run): a 10-minute call holds one or two, chosen by ENGINE_TABLES.
  for table in ${ENGINE_TABLES:-fp32:128 fp32:512 bf16:128 bf16:512}; do
    precision="${table%%:*}" ctx="${table##*:}"
    cuda_python benchmarks/compare_engines.py --cli "$cli" --device cuda --precision "$precision" \
      --ctx "$ctx" --models small,medium --modes forward,train-step --warmup 3 --steps 10 \
      --rounds 2 --threads 16 | stamp
  done
fi

if want bench; then
  begin bench
  build_targets stepscope-cli
  log "attention grid: naive, tiled, sdpa and each of its kernels, ours, compiled; bf16 and fp32"
  cuda_cli attention --device cuda \
    --backends naive,tiled,sdpa,sdpa-flash,sdpa-efficient,sdpa-math,sdpa-cudnn,cuda-flash,compiled \
    --d 64,128 --seq 1024,4096,16384 --precision bf16,fp32 --batch 8 --repeats 3 \
    --out "$logs" 2> "$logs/attention.log" | stamp
  log "end-to-end step benchmark (bf16 and fp32, small and medium, ctx 128 to 1024)"
  cuda_cli sweep --model small,medium --ctx 128,256,512,1024 --mode forward,train-step \
    --precision fp32,bf16 --device cuda --warmup 2 --steps 10 \
    --out "$logs/sweep" 2> "$logs/sweep.log" | stamp
fi

if want examples; then
  begin examples
  build_targets stepscope-cli
  examples="$examples_dir"  # comes back as examples.tar.gz
  [ "$rehearse" = 1 ] && examples="$logs/examples"
  mkdir -p "$examples"
  gpu="$(gpu_slug)"
  log "resources/examples on this GPU (the commands of resources/examples/README.md)"
  cuda_cli run --model small --ctx 256 --batch 4 --mode train-step --warmup 1 --steps 3 \
    --ops --kernels --memory --device cuda --out "$examples/train-step-small-$gpu.json" | tail -3 | stamp
  cuda_cli attention --backends naive,tiled,sdpa,cuda-flash --d 16,32,64,128 \
    --seq 256,1024,4096,8192,16384 --precision fp32,bf16 --device cuda \
    --out-file "$examples/attention-$gpu.json" | tail -3 | stamp
  cuda_cli sweep --model small,medium,large --ctx 128,256,512,1024 --mode forward,train-step \
    --precision fp32,bf16 --warmup 2 --steps 5 --device cuda --out "$examples/sweep-$gpu" | tail -3 | stamp
  [ "$rehearse" = 1 ] || du -sh "$examples"/* | stamp
fi

if want dist; then
  begin dist
  build_targets stepscope-cli
  runs="$logs/dist"
  mkdir -p "$runs"
  log "the strategies on 2 gloo ranks sharing the GPU (the course's test setup): small, ctx 512, global batch 8, 1 warm-up + 3 measured steps, buckets of 25 MB"
  dist_strategies gloo-cuda --engine pytorch --model small --ctx 512 --batch 8 --warmup 1 \
    --steps 3 --ranks 2 --device cuda --backend gloo
  if [ "$rehearse" = 1 ]; then
    log "rehearsal: the same on this CPU, nano, ctx 32, global batch 4, buckets of 0.5 MB"
    dist_strategies gloo-cpu --engine pytorch --model nano --ctx 32 --batch 4 --warmup 1 \
      --steps 3 --ranks 2 --threads 1 --bucket-mb 0.5
  fi
  log "the collective benchmark on CUDA tensors: 2 gloo ranks on the GPU, 1 MB to 1 GB, 2 warm-up and 10 timed calls a row"
  dist_collective gloo-cuda --op all_reduce,all_gather,reduce_scatter,broadcast \
    --sizes 1MB,10MB,100MB,1GB --ranks 2 --backend gloo --device cuda --warmup 2 --repeats 10
  if [ "$rehearse" = 1 ]; then
    log "rehearsal: the same on this CPU, 1 MB and 10 MB"
    dist_collective gloo-cpu --op all_reduce,all_gather,reduce_scatter,broadcast \
      --sizes 1MB,10MB --ranks 2 --backend gloo --device cpu --warmup 2 --repeats 10
  fi
  # NCCL takes a GPU per rank (a MIG instance is listed under its GPU's line).
  gpus="$(nvidia-smi -L 2> /dev/null | grep -c "^GPU ")"
  if [ "${gpus:-0}" -lt 2 ]; then
    log "NCCL skipped: ${gpus:-0} GPU(s) here (nvidia-smi -L), and NCCL takes one per rank$([ "$rehearse" = 1 ] && echo "; its calls rehearsed all the same")"
  fi
  if [ "${gpus:-0}" -ge 2 ] || [ "$rehearse" = 1 ]; then
    log "NCCL: the strategies and the collective benchmark on 2 ranks, a GPU each"
    dist_strategies nccl-cuda --engine pytorch --model small --ctx 512 --batch 8 --warmup 1 \
      --steps 3 --ranks 2 --device cuda --backend nccl
    dist_collective nccl-cuda --op all_reduce,all_gather,reduce_scatter,broadcast \
      --sizes 1MB,10MB,100MB,1GB --ranks 2 --backend nccl --device cuda --warmup 2 --repeats 10
  fi
fi

section=end
section_start=$SECONDS
headline_json
echo >> "$summary"
log "$(failures) failed step(s) in: $sections$([ "$rehearse" = 1 ] && echo " (rehearsal)")"
exit "$(failures)"
