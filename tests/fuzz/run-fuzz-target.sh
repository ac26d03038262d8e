#!/bin/sh
# run-fuzz-target.sh TARGET CORPUS_DIR "SEED;SEED..." [libFuzzer options]
# Seeds CORPUS_DIR from the fixtures (files, or every file of a directory)
# the first time, then fuzzes TARGET over it; the corpus grows between runs.
# A crash leaves crash-* in the corpus's parent folder and fails.
set -eu
target=$1 corpus=$2 seeds=$3
shift 3
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  old_ifs=$IFS IFS=';'
  for seed in $seeds; do
    if [ -d "$seed" ]; then
      find "$seed" -maxdepth 1 -type f -size -512k -exec cp {} "$corpus"/ \;
    elif [ -f "$seed" ]; then
      cp "$seed" "$corpus"/
    fi
  done
  IFS=$old_ifs
fi
cd "$(dirname "$corpus")"
exec "$target" "$@" "$corpus"
