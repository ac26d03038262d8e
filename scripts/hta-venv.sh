#!/usr/bin/env bash
# A virtual environment holding Holistic Trace Analysis (HTA), the oracle the
# Kineto trace tests hold StepScope's analyses against. Kept apart from the
# project's venv: HTA brings pandas and plotly, which StepScope itself never
# needs. Idempotent: a second run only checks the pinned version (seconds).
#
#   scripts/hta-venv.sh          # prints the venv's python on its last line
#
# Cached under ${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}/hta-venv.
set -euo pipefail

hta_version="0.5.0"
cache="${STEPSCOPE_CACHE:-$HOME/.cache/stepscope}"
venv="$cache/hta-venv"
say() { echo "hta-venv: $*" >&2; }

installed_version() {
  "$venv/bin/python" - <<'EOF' 2>/dev/null
import importlib.metadata as m
print(m.version("holistictraceanalysis"))
EOF
}

if [ -x "$venv/bin/python" ] && [ "$(installed_version || true)" = "$hta_version" ]; then
  echo "$venv/bin/python"
  exit 0
fi

mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  python3 -m venv "$venv"
fi
say "installing holistictraceanalysis==$hta_version"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "holistictraceanalysis==$hta_version" >&2
"$venv/bin/python" -c "import hta.trace_analysis" >&2
echo "$venv/bin/python"
