"""`stepscope-record` (and `python -m stepscope`): runs a model's steps with
PyTorch in this process, through the worker's own run command, and writes
an ordinary StepScope run file. Made for a GPU cluster where StepScope's C++
side is not built: record there, open the file at home.

With --ranks N --parallel STRATEGY the worker's run command starts the
ranks with torchrun (stepscope.distributed.launch), as for stepscope-cli.

Exit status as stepscope-cli's: 0 for an ok run, 2 for a bad flag (before
anything runs) or a strategy the correctness gate refused (never timed: no
file), 3 for a run that did not end ok (its file is still written).
"""
import os
import signal
import sys

from .cuda_snapshot import recorded_snapshot
from .events import take_stdout
from .record_flags import named_flag, parse_config
from .run_events import RunEvents
from .run_file import run_document, run_json, utc_now, write_run_file
from .worker import CancelFlag, serve_request

EXIT_OK, EXIT_BAD_INPUT, EXIT_RUN_FAILED = 0, 2, 3


def record(config, cancelled, on_step=None):
    """The run file's object for one run of `config`: in this process, or on
    its ranks (torchrun's processes) for a distributed one."""
    started_at = utc_now()
    events = RunEvents(on_step)
    serve_request({"command": "run", "config": config}, events, cancelled)
    return run_document(config, events, started_at)


def describe(config):
    m = config["model"]
    ranks = config.get("ranks", 1)
    shared = f", {ranks} ranks, {config['parallel']}" if ranks > 1 else ""
    return (f"{m['name']}, batch {config['batch']} × ctx {config['ctx']}, {config['mode']}, "
            f"{config['precision']} on {config['device']} ({config['engine']}{shared})")


def stats_line(label, stats):
    return (f"{label:<10} mean {stats['mean']:10.3f} ms  median {stats['median']:10.3f}  "
            f"std {stats['std']:8.3f}  min {stats['min']:10.3f}  max {stats['max']:10.3f}")


def report(document):
    """A short account of the run; `stepscope-cli show` gives the full report."""
    summary, config = document["summary"], document["config"]
    lines = [f"{describe(config)}: {document['status']}",
             f"steps: {config['warmup']} warm-up, {summary['total_ms']['count']} measured"]
    if document["compile_ms"] is not None:
        lines.append(f"compile: {document['compile_ms']:.1f} ms (not a step)")
    for label, key in (("step", "total_ms"), ("forward", "forward_ms"),
                       ("backward", "backward_ms"), ("comm wait", "comm_wait_ms"),
                       ("optimizer", "optimizer_ms")):
        if summary.get(key) and summary[key]["count"]:
            lines.append(stats_line(label, summary[key]))
    lines.append(f"tokens/s: {summary['tokens_per_second']:.0f}")
    return "\n".join(lines) + "\n"


def print_step(step):
    kind = "warm-up" if step["warmup"] else "step"
    print(f"stepscope-record: {kind} {step['index']}: {step['total_ms']:.2f} ms",
          file=sys.stderr, flush=True)


def check_out_directory(path):
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        print(f"stepscope-record: error: --out: the directory '{directory}' does not exist",
              file=sys.stderr)
        return False
    return True


def write(document, path):
    try:
        write_run_file(document, path)
    except OSError as error:
        print(f"stepscope-record: error: --out: cannot write '{path}': {error}", file=sys.stderr)
        return False
    print(f"stepscope-record: run file written to {path} (open it with stepscope-cli show or "
          "the StepScope app)", file=sys.stderr)
    return True


def main(argv=None):
    config, args = parse_config(argv)
    if args.out and not check_out_directory(args.out):
        return EXIT_BAD_INPUT
    # --json: stdout carries the file alone; a model's prints go to stderr.
    output = take_stdout() if args.json else sys.stdout
    cancelled = CancelFlag().install((signal.SIGTERM, signal.SIGINT))
    print(f"stepscope-record: {describe(config)}", file=sys.stderr, flush=True)
    with recorded_snapshot(args.snapshot):
        document = record(config, cancelled, on_step=print_step)
    if args.snapshot:
        print(f"stepscope-record: PyTorch's memory snapshot written to {args.snapshot} "
              f"(stepscope-cli memory {args.out or 'RUN'} --against {args.snapshot})",
              file=sys.stderr)
    if document["status"] == "incorrect":
        # A strategy the correctness gate refused was never timed: bad input
        # naming it, as stepscope-cli says it, and no file.
        flag, why = named_flag(document["message"])
        print(f"stepscope-record: error: {flag}: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    written = write(document, args.out) if args.out else True
    output.write(run_json(document) if args.json else report(document))
    output.flush()
    if not written:
        return EXIT_BAD_INPUT
    if document["status"] != "ok":
        print(f"stepscope-record: run {document['status']}: {document['message']}",
              file=sys.stderr)
        return EXIT_RUN_FAILED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
