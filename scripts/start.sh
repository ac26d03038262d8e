#!/usr/bin/env bash
# The main job: install what is missing, build, and run StepScope. With a
# display this starts the desktop app once it exists; without one (or until
# then) it makes a short headless run and prints its report.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh default
app=build/default/app/stepscope
if [ -x "$app" ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$app" "$@"
fi
echo "stepscope: no display (or no desktop app built); a short headless run:" >&2
exec build/default/app/stepscope-cli run --model tiny --ctx 128 --mode train-step \
  --warmup 2 --steps 5 "$@"
