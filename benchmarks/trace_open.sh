#!/usr/bin/env bash
# The open time and memory of a large PyTorch profiler trace in StepScope and
# in Holistic Trace Analysis, side by side on one file (docs/perf/trace-open.md).
#
#   benchmarks/trace_open.sh [MB]     # default 100; needs build/default and scripts/hta-venv.sh
set -euo pipefail
cd "$(dirname "$0")/.."
megabytes="${1:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/trace"
trace="$work/trace/large.pt.trace.json"
~/.cache/stepscope/venv/bin/python tests/data/make_kineto_traces.py large "$trace" "$megabytes"
hta_python="$(scripts/hta-venv.sh | tail -1)"
echo "$(date -u +%Y-%m-%dT%H:%MZ) $(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
echo
build/default/benchmarks/stepscope-trace-bench "$trace"
echo
echo "| tool | load s | temporal breakdown s | peak RSS MiB |"
echo "|---|---:|---:|---:|"
"$hta_python" benchmarks/hta_open.py "$work/trace"
