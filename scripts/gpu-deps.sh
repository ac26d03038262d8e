#!/usr/bin/env bash
# Run here (where the Debian registry is reachable), before a GPU check: puts
# the build dependencies the GPU machine lacks as .deb files into .gpu-deps/,
# which git ignores and the device call carries: the header-only nlohmann-json
# and CLI11, and Qt 6 Core + Test with the libraries they load (about 14 MB),
# so the Qt Test suites, the GPU ones among them, run there. The GPU machine
# has CMake, Ninja, nvcc and PyTorch of its own. simdjson and zlib (with its
# runtime, so the .so link resolves inside the extracted tree) for the trace
# reader.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps
exclude="$(git rev-parse --git-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu-deps/' "$exclude" 2>/dev/null || echo '/.gpu-deps/' >> "$exclude"
cd .gpu-deps
for package in nlohmann-json3-dev libcli11-dev qt6-base-dev qt6-base-dev-tools libqt6core6 \
  libqt6test6 qmake6 qmake6-bin libglib2.0-0 libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 libmd4c0 \
  libsimdjson-dev libsimdjson14 zlib1g-dev zlib1g; do
  ls "${package}"_*.deb >/dev/null 2>&1 || apt-get download "$package"
done
# pytest for the Python worker's suite (pure-Python wheels; the GPU machine
# has no registry).
python3 -m pip download -q --disable-pip-version-check -d wheels pytest
ls -la
