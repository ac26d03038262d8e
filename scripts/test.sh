#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run every test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh ci
export QT_QPA_PLATFORM=offscreen
ctest --preset ci --output-on-failure -j "$(nproc)"
