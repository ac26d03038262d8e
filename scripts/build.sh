#!/usr/bin/env bash
# Installs what is missing (scripts/bootstrap.sh), then configures and builds
# one CMake preset. Incremental: a second run rebuilds only what changed.
#
#   scripts/build.sh [PRESET]     # default, ci, dev-asan or server (no Qt)
set -euo pipefail
cd "$(dirname "$0")/.."

preset="${1:-default}"
case "$preset" in
  default|ci|dev-asan) scripts/bootstrap.sh ;;
  server) scripts/bootstrap.sh --no-gui --no-slurm ;;
  *) echo "build: unknown preset '$preset' (allowed: default, ci, dev-asan, server)" >&2; exit 2 ;;
esac

if [ ! -f "build/$preset/build.ninja" ]; then
  cmake --preset "$preset" >&2
fi
cmake --build --preset "$preset" >&2
