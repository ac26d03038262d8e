#!/usr/bin/env bash
# The recorder as a user on a GPU cluster meets it: a fresh venv that holds
# torch and nothing else, `pip install ./python`, a recorder run of nano on
# the CPU, then `stepscope-cli show` of its file and the app opening it
# (offscreen). Run by CTest as recorder_check; alone:
#
#   scripts/recorder-check.sh [PYTHON [CLI [APP]]]
#
# PYTHON: the bootstrap's venv Python, whose torch the fresh venv is given
# (default ~/.cache/stepscope/venv/bin/python); CLI and APP default to
# build/default's; without the app (or with APP "none") that step is skipped.
#
# The torch wheel is not installed a second time (with its CUDA libraries it
# is several GB): the fresh venv sees torch and its own requirements, and
# nothing else of PYTHON's venv, through a .pth file naming a folder of
# links to just those distributions. pip then finds torch installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
python="${1:-$cache/venv/bin/python}"
cli="${2:-build/default/app/stepscope-cli}"
app="${3:-build/default/app/stepscope}"
for tool in "$python" "$cli"; do
  [ -x "$tool" ] || { echo "recorder-check: '$tool' is missing (scripts/build.sh makes it)" >&2; exit 2; }
done
cli="$(realpath "$cli")"
[ -x "$app" ] && app="$(realpath "$app")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say() { echo "recorder-check: [${SECONDS}s] $*" >&2; }

# Links to torch and the distributions it requires, found in PYTHON's venv.
say "a fresh venv whose only package is torch ($("$python" -c 'from importlib.metadata import version; print(version("torch"))'))"
"$python" "$root/scripts/link-torch.py" "$work/torch-only"
"$python" -m venv "$work/venv"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$work/torch-only" > "$site/torch-only.pth"

# pip builds the package with setuptools in an isolated environment; its
# wheel is kept under the cache, so later checks need no network, and
# --no-index proves that torch came from nowhere but the venv.
wheels="$cache/wheels"
if ! compgen -G "$wheels/setuptools-*.whl" >/dev/null; then
  say "keeping a setuptools wheel in $wheels (first time only)"
  "$python" -m pip download -q --disable-pip-version-check -d "$wheels" "setuptools>=61"
fi
say "pip install ./python"
"$work/venv/bin/python" -m pip install -q --disable-pip-version-check --no-index \
  --find-links "$wheels" "$root/python"
# The installed package, not the source tree, from a folder outside it.
cd "$work"
"$work/venv/bin/python" - <<'EOF'
from importlib.metadata import distributions
names = sorted(d.metadata["Name"].lower() for d in distributions())
assert "numpy" not in names and "pytest" not in names, names  # nothing else of the cache venv
import stepscope
assert "site-packages" in stepscope.__file__, stepscope.__file__
EOF

say "stepscope-record of nano on the CPU"
"$work/venv/bin/stepscope-record" --model nano --ctx 32 --batch 2 --warmup 1 --steps 2 \
  --threads 1 --ops --memory --out "$work/nano.json" >/dev/null
"$work/venv/bin/python" -m stepscope --help >/dev/null

say "stepscope-cli show"
"$cli" show "$work/nano.json" >/dev/null

if [ -x "$app" ]; then
  say "the app opens it (offscreen)"
  export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/runtime"
  mkdir -m 700 "$XDG_RUNTIME_DIR"
  "$app" "$work/nano.json" --screenshot "$work/nano.png" 2>/dev/null
  [ -s "$work/nano.png" ] || { say "the app saved no picture of the run"; exit 1; }
else
  say "no app at '$app': its step is skipped"
fi
say "ok"
