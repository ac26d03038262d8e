#!/usr/bin/env bash
# Takes docs/screenshot.png: the desktop app under Xvfb after a real run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh default
out="${1:-docs/screenshot.png}"
mkdir -p "$(dirname "$out")"
# A private settings folder, so the screenshot does not depend on (or change) yours.
export XDG_CONFIG_HOME="$(mktemp -d)"
xvfb-run -a -s "-screen 0 1600x1000x24" \
  build/default/app/stepscope --run --model tiny --ctx 128 --mode train-step \
  --warmup 3 --steps 12 --screenshot "$out"
echo "screenshot: $out"
