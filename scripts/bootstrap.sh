#!/usr/bin/env bash
# Installs what StepScope needs and is missing, and nothing else. Idempotent:
# a second run only checks and takes seconds. Caches live outside the source
# tree (STEPSCOPE_CACHE, default ~/.cache/stepscope).
#
#   scripts/bootstrap.sh            # everything (GUI dependencies included)
#   scripts/bootstrap.sh --no-gui   # a GPU server without Qt
#   scripts/bootstrap.sh --no-slurm # without the Slurm daemons tst_slurm starts
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
torch_version="2.11.0"
mkdir -p "$cache"

# --- Debian packages -------------------------------------------------------
debs=(ninja-build ccache nlohmann-json3-dev libcli11-dev libsimdjson-dev)
command -v cmake >/dev/null || debs+=(cmake)
command -v g++ >/dev/null || debs+=(g++)
command -v python3 >/dev/null || debs+=(python3)
python3 -c "import venv, ensurepip" 2>/dev/null || debs+=(python3-venv)
if [ "$want_gui" = 1 ]; then
  debs+=(qt6-base-dev libqcustomplot-dev libgl-dev xvfb xauth)
fi
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A throwaway single-node Slurm cluster for the cluster path's test (tst_slurm).
if [ "$want_slurm" = 1 ]; then
  "$(dirname "$0")/slurm-test-cluster.sh" install
fi

# --- Python venv holding the LibTorch we build against ---------------------
if [ ! -x "$venv/bin/python" ]; then
  echo "bootstrap: creating the virtual environment $venv" >&2
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(0 if torch.__version__.split('+')[0] == '$torch_version' else 1)" 2>/dev/null; then
  echo "bootstrap: installing torch==$torch_version into $venv (a few GB, first time only)" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "torch==$torch_version" numpy
fi
"$venv/bin/python" -c "import numpy" 2>/dev/null || "$venv/bin/python" -m pip install -q numpy
# The Python worker's tests (python/tests, run by CTest as python_worker).
"$venv/bin/python" -c "import pytest" 2>/dev/null || "$venv/bin/python" -m pip install -q pytest

echo "bootstrap: ready (venv $venv)" >&2
