#!/usr/bin/env bash
# Installs what is missing (scripts/bootstrap.sh), then configures and builds
# one CMake preset. Incremental: a second run rebuilds only what changed.
#
#   scripts/build.sh [PRESET]     # default, ci (the same), dev-asan, dev-ubsan or server (no Qt)
#
# Where the bootstrap took cmake and ninja from PyPI (no root, none on the
# system), they are in $STEPSCOPE_CACHE/bin, which goes first on PATH here;
# headers unpacked without root under $STEPSCOPE_CACHE/deps are found too.
set -euo pipefail
cd "$(dirname "$0")/.."

preset="${1:-default}"
case "$preset" in
  default|ci|dev-asan|dev-ubsan) scripts/bootstrap.sh ;;
  server) scripts/bootstrap.sh --no-gui --no-slurm ;;
  *) echo "build: unknown preset '$preset' (allowed: default, ci, dev-asan, dev-ubsan, server)" >&2; exit 2 ;;
esac

cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
[ -d "$cache/bin" ] && export PATH="$cache/bin:$PATH"
[ -d "$cache/deps/usr" ] && export CMAKE_PREFIX_PATH="$cache/deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"

# Configured afresh where the folder is new, or was made before warnings
# were errors in every preset (its cache would keep them off).
binary="build/$preset"
[ "$preset" = ci ] && binary=build/default  # ci names the default build
if [ ! -f "$binary/build.ninja" ] ||
  ! grep -q '^STEPSCOPE_WARNINGS_AS_ERRORS:BOOL=ON' "$binary/CMakeCache.txt"; then
  cmake --preset "$preset" >&2
fi
cmake --build --preset "$preset" >&2
