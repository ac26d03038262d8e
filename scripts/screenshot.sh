#!/usr/bin/env bash
# Takes the README's gallery: one screenshot per tab of the desktop app under
# Xvfb, each showing real runs made with the CLI first (small presets on the
# CPU, a few minutes in all), into docs/images/ (or DIR).
#
#   scripts/screenshot.sh [DIR]     # PRESET=dev-asan takes build/dev-asan's binaries
#
# Each picture is the app as opened with `stepscope FILES --tab NAME
# --screenshot PNG`, reduced to 256 colours without dithering (ImageMagick,
# when present): the same to the eye, and about 50 KB instead of 150.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${PRESET:-default}"
scripts/build.sh "$preset"
out="${1:-docs/images}"
mkdir -p "$out"
bin="build/$preset/app"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A private settings folder, so the pictures do not depend on (or change) yours.
export XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/runtime"
mkdir -m 700 "$XDG_RUNTIME_DIR"

cli() {
  echo "screenshot: stepscope-cli $*" >&2
  "$bin/stepscope-cli" "$@" >/dev/null
}
tiny=(--model tiny --ctx 256 --mode train-step --warmup 3 --steps 12)
cli run "${tiny[@]}" --attention naive --out "$work/naive.json"
cli run "${tiny[@]}" --attention sdpa --out "$work/sdpa.json"
cli run --model tiny --ctx 128 --mode train-step --warmup 1 --steps 3 --ops --memory \
  --out "$work/traced.json"
cli sweep --model nano,tiny --ctx 32,64,128,256 --mode forward,train-step --warmup 2 --steps 5 \
  --out "$work/sweep"
cli run --engine pytorch --model nano --ctx 32 --batch 4 --warmup 1 --steps 3 --ranks 2 \
  --parallel bucketed --bucket-mb 0.5 --threads 1 --out "$work/ranks.json"
cli attention --backends naive,tiled,sdpa --d 16,32,64,128 --seq 128,256,512,1024 --batch 4 \
  --out "$work/attention"

shot() {  # NAME TAB [APP ARGUMENTS…]
  local name="$1" tab="$2"
  shift 2
  echo "screenshot: $out/$name.png ($tab)" >&2
  xvfb-run -a -s "-screen 0 1600x1000x24" \
    "$bin/stepscope" --tab "$tab" --screenshot "$work/$name.png" "$@"
  if command -v convert >/dev/null; then
    convert "$work/$name.png" -strip +dither -colors 256 "PNG8:$out/$name.png"
  else
    cp "$work/$name.png" "$out/$name.png"
  fi
}
shot step-timing "Step timing" "$work/naive.json"
shot breakdown Breakdown "$work/traced.json"
shot timeline Timeline "$work/traced.json"
shot memory Memory "$work/traced.json"
shot ranks Ranks "$work/ranks.json"
shot compare Compare --compare "$work/naive.json" "$work/sdpa.json"
shot sweep Sweep "$work/sweep"
shot attention Attention "$work/attention"
shot precision Precision --precision-tools
ls -l "$out"/*.png
