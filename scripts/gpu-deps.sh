#!/usr/bin/env bash
# Run here (where the Debian registry is reachable), before a GPU check: puts
# the header-only build dependencies the GPU machine lacks (nlohmann-json,
# CLI11) as .deb files into .gpu-deps/, which git ignores and the device call
# carries. The GPU machine has CMake, Ninja, nvcc and PyTorch of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps
grep -qx '/.gpu-deps/' .git/info/exclude 2>/dev/null || echo '/.gpu-deps/' >> .git/info/exclude
cd .gpu-deps
for package in nlohmann-json3-dev libcli11-dev; do
  ls "${package}"_*.deb >/dev/null 2>&1 || apt-get download "$package"
done
ls -la
