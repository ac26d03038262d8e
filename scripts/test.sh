#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh ci
# ctest from PyPI where the bootstrap took cmake there (no root, none on the system).
cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
[ -d "$cache/bin" ] && export PATH="$cache/bin:$PATH"
export QT_QPA_PLATFORM=offscreen
ctest --preset ci --output-on-failure -j "$(nproc)"
