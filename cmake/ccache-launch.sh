#!/usr/bin/env bash
# The compiler launcher (CMAKE_<LANG>_COMPILER_LAUNCHER): ccache, given
# command lines that let one build's results serve another checkout, another
# build folder, another user or another CMake version. ccache keys on the
# command line as written, so:
#  - paths under the source tree become relative to the build folder
#    (CCACHE_BASEDIR): a copy elsewhere, as no_root_check builds, or a
#    worktree, finds the same entries;
#  - CMake 3.25 writes -std=... after the compile options and 4.x before
#    them, and nvcc's -isystem=DIR as -isystem DIR: each written here in
#    3.25's form, so a build with PyPI's newer CMake hits what the system's
#    compiled;
#  - the build folder is left out of the key where no debug info names it
#    (CCACHE_NOHASHDIR): ccache hashed nvcc's always;
#  - precompiled headers need sloppiness (ccache manual, "Precompiled headers").
#
#   ccache-launch.sh SOURCE_DIR CCACHE COMPILER ARGS...
set -euo pipefail
export CCACHE_BASEDIR="$1"
export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
ccache="$2" compiler="$3"
shift 3
nvcc=0
[[ "${compiler##*/}" == nvcc ]] && nvcc=1
std=() rest=()
debug=0
while (($#)); do
  case "$1" in
    -g | -g[0-3] | -ggdb* | -gdwarf* | -G) debug=1 rest+=("$1") ;;
    -std=*) std+=("$1") ;;
    -isystem) if ((nvcc)) && (($# > 1)); then rest+=("-isystem=$2"); shift; else rest+=("$1"); fi ;;
    *) rest+=("$1") ;;
  esac
  shift
done
((debug)) || export CCACHE_NOHASHDIR=1
# -std goes where CMake 3.25 puts it: before the first of these.
args=() placed=0
for arg in "${rest[@]}"; do
  if ((!placed)); then
    case "$arg" in -Winvalid-pch | -include | -MD | -x | -o) args+=(${std[@]+"${std[@]}"}) placed=1 ;; esac
  fi
  args+=("$arg")
done
((placed)) || args+=(${std[@]+"${std[@]}"})
[ -z "${STEPSCOPE_LAUNCH_PRINT:-}" ] || { printf '%s\n' "$compiler ${args[*]}"; exit 0; }
# A precompiled header is made from its header alone: CMake passes it
# -include of itself, so the last build's .gch, still there, would be read
# while making the new one and key the result by that stale file.
for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
  [[ "${args[i]}" == -o && "${args[i + 1]}" == *.gch ]] && rm -f "${args[i + 1]}"
done
exec "$ccache" "$compiler" "${args[@]}"
