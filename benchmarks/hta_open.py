#!/usr/bin/env python3
"""What a trace costs Holistic Trace Analysis to load, beside stepscope-trace-bench.

  hta-venv/bin/python benchmarks/hta_open.py FOLDER

Times TraceAnalysis(trace_dir=FOLDER) (HTA parses every rank's trace into
pandas frames) and one analysis on it (the temporal breakdown), and prints
the peak resident set of the process, as a Markdown row.
"""
import io
import logging
import os
import resource
import sys
import time
from contextlib import redirect_stdout


def main():
    folder = os.path.abspath(sys.argv[1])
    logging.disable(logging.CRITICAL)
    with redirect_stdout(io.StringIO()):
        from hta.trace_analysis import TraceAnalysis
        start = time.perf_counter()
        analyzer = TraceAnalysis(trace_dir=folder)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        analyzer.get_temporal_breakdown(visualize=False)
        analysed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("| HTA 0.5.0 | %.2f | %.2f | %.0f |" % (loaded, analysed, peak))


if __name__ == "__main__":
    sys.exit(main())
