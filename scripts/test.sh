#!/usr/bin/env bash
# Install what is missing, build, run every test suite. The build is the one
# scripts/start.sh makes (build/default, warnings as errors): run after it,
# this compiles nothing again, and the other way round.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh default
# ctest from PyPI where the bootstrap took cmake there (no root, none on the system).
cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
[ -d "$cache/bin" ] && export PATH="$cache/bin:$PATH"
export QT_QPA_PLATFORM=offscreen
ctest --preset default --output-on-failure -j "$(nproc)"
