#!/bin/sh
# scripts/fuzz.sh TARGET SECONDS [BUILD_DIR]
# A longer libFuzzer run of one reader's target (tests/fuzz/), with ASan and
# UBSan, over the corpus CTest's short runs grow (BUILD_DIR/tests/fuzz/
# corpus/TARGET, seeded from the fixtures). Prints libFuzzer's final figures
# (executions, coverage, corpus) and fails on a crash, whose input is left as
# BUILD_DIR/tests/fuzz/crash-*. Build the target first:
#   cmake --build build/default --target fuzz_TARGET
set -eu
target=${1:?"usage: scripts/fuzz.sh TARGET SECONDS [BUILD_DIR]; TARGET: pickle_reader, run_file, attention_file, collective_file, slurm_array, memory_snapshot, kineto_trace, torch_save, pretrained_config, category_rule"}
seconds=${2:?"give the run's length in seconds"}
build=${3:-build/default}
fuzz="$build/tests/fuzz"
binary="$fuzz/bin/fuzz_$target"
[ -x "$binary" ] || { echo "fuzz.sh: $binary is not built (cmake --build $build --target fuzz_$target)" >&2; exit 2; }
mkdir -p "$fuzz/corpus/$target"
cd "$fuzz"
dict=
[ -f "$OLDPWD/tests/fuzz/fuzz_$target.dict" ] && dict="-dict=$OLDPWD/tests/fuzz/fuzz_$target.dict"
# Leaks of the libraries below a reader (named in fuzz_TARGET.lsan) are not its own.
[ -f "$OLDPWD/tests/fuzz/fuzz_$target.lsan" ] &&
  export LSAN_OPTIONS="suppressions=$OLDPWD/tests/fuzz/fuzz_$target.lsan"
# shellcheck disable=SC2086
exec "./bin/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 $dict "corpus/$target"
