"""The recorder's command line: the run flags of `stepscope-cli run` that the
PyTorch engines take, made as the CLI makes its own (app/cli/config_flags.cpp)
from the fields' one declaration (config_fields), turned into the run file's
`config` object. A bad flag is an argparse error naming the flag and what
it allows (exit status 2), never a run."""
import argparse
import json
import os
import re
import sys

import torch

from .attention import triton_mode
from .attention.user_attention import load_user_attention
from .config_fields import FIELDS
from .model import DEFAULT_MAX_CONTEXT, DEFAULT_VOCAB, PRESET_LIMITS, PRESETS
from .outcome import Finish
from .run_config import parse_run_config
from .weights_shape import ShapeError, custom_name, weights_shape

PYTHON_TARGET = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
DIM_FLAGS = (("--d-model", "d_model"), ("--d-ff", "d_ff"), ("--layers", "layers"),
             ("--heads", "heads"))
# The flags' groups: a field's section, and its title in --help.
SECTIONS = (("workload", "workload"), ("steps", "steps"), ("trace", "tracing (torch.profiler)"),
            ("engine", "engine"), ("distributed", "distributed (ranks started by torchrun)"),
            ("data", "data"))


def recorder_fields(fields, section=None):
    """The fields that are the recorder's flags: in the run file, taken by the
    worker's engines (not the memory levers), not the model (its own flags)."""
    return [f for f in fields.in_file() if f.type != "model" and fields.worker_takes(f)
            and section in (None, f.section)]


def help_of(field, fields):
    text = field.help.replace("{max}", str(4 * (os.cpu_count() or 1)))
    if field.type in ("integer", "number", "choice"):
        text += f" (default {fields.worker_default(field)})"
    return text


def add_field_flag(group, field, fields):
    """One field's flag, as its declaration says: a whole number, one of the
    values the worker serves, a switch, or a name or path."""
    options = {"dest": field.key, "help": help_of(field, fields)}
    if field.type == "integer":
        options.update(type=int, default=field.default)
    elif field.type == "number":
        options.update(type=float, default=field.default)
    elif field.type == "switch":
        options.update(action="store_true")
    elif field.type == "choice":
        options.update(choices=list(field.served) or None, default=fields.worker_default(field))
    else:
        options.update(default="", metavar=field.value_name or None)
    group.add_argument("--" + field.name, **options)


def build_parser(fields=FIELDS):
    parser = argparse.ArgumentParser(
        prog="stepscope-record", allow_abbrev=False,
        description="Runs a model's steps with PyTorch (eager or torch.compile) and writes a "
                    "StepScope run file, which `stepscope-cli show` and the StepScope app open.")
    model = parser.add_argument_group("model")
    model.add_argument("--model", choices=list(PRESETS),
                       help="preset (default nano; or give the dims)")
    model.add_argument("--d-model", type=int, help="custom model width (with --d-ff --layers "
                       "--heads)")
    model.add_argument("--d-ff", type=int, help="custom MLP width")
    model.add_argument("--layers", type=int, help="custom number of blocks")
    model.add_argument("--heads", type=int, help="custom number of attention heads")
    model.add_argument("--vocab", type=int, help="vocabulary size (default: the preset's)")
    model.add_argument("--max-ctx", type=int, help="the model's maximum context length "
                       "(default: the preset's)")
    for section, title in SECTIONS:
        group = parser.add_argument_group(title)
        for field in recorder_fields(fields, section):
            add_field_flag(group, field, fields)
    data = next(g for g in parser._action_groups if g.title == "data")
    data.add_argument("--config", default="", metavar="FILE", help="the config from a run file "
                      "(its \"config\") or a JSON config object instead of flags")
    data.add_argument("--trust-code", action="store_true", help="run the Python code the "
                      "--config file names (py_model, py_attention, py_path); without it such a "
                      "file is refused, as trust_remote_code does")
    out = parser.add_argument_group("output")
    out.add_argument("--out", default="", metavar="FILE", help="write the run file here")
    out.add_argument("--snapshot", default="", metavar="FILE", help="with --memory on "
                     "--device cuda: also write PyTorch's own memory snapshot of the same run "
                     "(torch.cuda.memory._dump_snapshot) here, to compare with the run file in "
                     "stepscope-cli memory FILE --against SNAPSHOT")
    out.add_argument("--json", action="store_true", help="print the run file's JSON instead of "
                     "the report")
    return parser


def model_object(args, parser):
    """(the config's model object, the weights file to load)."""
    dims = {key: getattr(args, key) for _, key in DIM_FLAGS}
    given = [flag for flag, key in DIM_FLAGS if dims[key] is not None]
    if args.weights and not args.model and given in ([], ["--heads"]):
        return model_of_weights(args, parser)
    if given and len(given) < len(DIM_FLAGS):
        missing = ", ".join(flag for flag, key in DIM_FLAGS if dims[key] is None)
        parser.error(f"--model: custom dims need --d-model, --d-ff, --layers and --heads "
                     f"together; {missing} missing (or use --model NAME alone)")
    if given:
        name = custom_name(dims)
        vocab, max_context = DEFAULT_VOCAB, DEFAULT_MAX_CONTEXT
    else:
        name = args.model or "nano"
        dims = dict(zip(("d_model", "d_ff", "layers", "heads"), PRESETS[name]))
        vocab, max_context = PRESET_LIMITS.get(name, (DEFAULT_VOCAB, DEFAULT_MAX_CONTEXT))
    model = {"name": name, **dims, "vocab": vocab if args.vocab is None else args.vocab,
             "max_context": max_context if args.max_ctx is None else args.max_ctx,
             "rope_theta": 10000.0}
    return model, args.weights


def model_of_weights(args, parser):
    """(the shape --weights gives, the file to load: a from_pretrained folder's model.pt)."""
    try:
        model, weights = weights_shape(args.weights, args.heads)
    except ShapeError as error:
        parser.error(f"--weights: {error}")
    model.setdefault("max_context", DEFAULT_MAX_CONTEXT)
    model.setdefault("rope_theta", 10000.0)
    if args.vocab is not None:
        model["vocab"] = args.vocab
    if args.max_ctx is not None:
        model["max_context"] = args.max_ctx
    return model, weights


def token_batch_shape(path, parser):
    """(batch, ctx) of a --tokens file."""
    try:
        tokens = torch.load(path, map_location="cpu")
    except Exception as error:
        parser.error(f"--tokens: cannot read '{path}': {error}")
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[1] < 2:
        parser.error(f"--tokens: '{path}' holds no 2-D tensor of token ids (batch, ctx + 1)")
    return int(tokens.shape[0]), int(tokens.shape[1]) - 1


def config_from_flags(args, parser, fields=FIELDS):
    """Every key of the run file's config: the flags' values, and the
    defaults of what the worker's engines do not take (the memory levers
    off, AdamW's loop)."""
    model, weights = model_object(args, parser)
    config = {"model": model}
    flagged = {field.key for field in recorder_fields(fields)}
    for field in fields.in_file():
        if field.type == "model":
            continue
        value = getattr(args, field.key) if field.key in flagged else field.default
        if field.written_when_default or value != field.default:
            config[field.key] = value
    config["weights"] = weights
    if args.tokens:
        config["batch"], config["ctx"] = token_batch_shape(args.tokens, parser)
    return config


def config_from_file(path, parser):
    """A run file's config, or a config object, completed with the defaults."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except (OSError, ValueError) as error:
        parser.error(f"--config: cannot read '{path}': {error}")
    if not isinstance(document, dict) or not isinstance(document.get("config", document), dict):
        parser.error(f"--config: '{path}' is not a JSON object")
    defaults = config_from_flags(parser.parse_args([]), parser)
    config = {**defaults, **document.get("config", document)}
    config["model"] = {**defaults["model"], **config["model"]}
    return config


def problems(config):
    """(flag, message) for each value this run cannot take, as stepscope-cli's validate."""
    m = config["model"]
    found = []
    for flag, key in (("--d-model", "d_model"), ("--d-ff", "d_ff"), ("--layers", "layers"),
                      ("--heads", "heads"), ("--vocab", "vocab"), ("--max-ctx", "max_context")):
        if m[key] <= 0:
            found.append((flag, f"must be a positive integer, got {m[key]}"))
    if m["heads"] > 0 and m["d_model"] % m["heads"]:
        found.append(("--heads", f"d_model {m['d_model']} is not divisible by heads "
                                 f"{m['heads']}; allowed: a divisor of d_model"))
    elif m["heads"] > 0 and (m["d_model"] // m["heads"]) % 2:
        found.append(("--heads", f"head dimension d_model/heads = {m['d_model'] // m['heads']} "
                                 "is odd; RoPE rotates pairs, so it must be even"))
    if config["ctx"] <= 0:
        found.append(("--ctx", f"must be a positive integer, got {config['ctx']}"))
    elif config["ctx"] > m["max_context"] > 0:
        found.append(("--ctx", f"context length {config['ctx']} exceeds the model's maximum "
                               f"context {m['max_context']}; allowed: 1..{m['max_context']} "
                               "(raise it with --max-ctx)"))
    if config["batch"] <= 0:
        found.append(("--batch", f"must be a positive integer, got {config['batch']}"))
    if config["warmup"] < 0:
        found.append(("--warmup", f"must be 0 or more, got {config['warmup']}"))
    if config["steps"] < 1:
        found.append(("--steps", f"must be at least 1, got {config['steps']}"))
    if config["threads"] < 0:
        found.append(("--threads", f"must be 0 (torch's default) or more, got "
                                   f"{config['threads']}"))
    if config["device"] == "cuda" and not torch.cuda.is_available():
        found.append(("--device", f"'cuda' was asked for, but this torch ({torch.__version__}) "
                                  "sees no CUDA device; allowed: cpu"))
    if config["tf32"] and config["device"] != "cuda":
        found.append(("--tf32", "TF32 is a CUDA tensor-core mode; allowed only with "
                                "--device cuda"))
    if config["trace_kernels"] and config["device"] != "cuda":
        found.append(("--kernels", "CUDA kernels are traced on a GPU; allowed only with "
                                   "--device cuda (use --ops for operators on the CPU)"))
    if config["compile_mode"] != "default" and config["engine"] != "pytorch-compile":
        found.append(("--compile-mode", "applies to torch.compile; allowed only with "
                                        "--engine pytorch-compile"))
    if config["py_model"] and not PYTHON_TARGET.match(config["py_model"]):
        found.append(("--py-model", f"'{config['py_model']}' is not MODULE:CALLABLE with Python "
                                    "names (for example my_model:build; a file my-model.py "
                                    "cannot be imported)"))
    found += py_attention_problems(config)
    found += range_problems(config, found)
    return found or distributed_problems(config)


def distributed_problems(config):
    """The distributed keys checked as the worker checks them
    (run_config.check_distributed), before torchrun starts anything: a
    batch the ranks cannot split is a bad flag, not a failed run."""
    ranks, parallel = config.get("ranks", 1), config.get("parallel", "none")
    if ranks == 1:  # one rank with a strategy: the worker would run it; stepscope-cli refuses it
        return [] if parallel == "none" else [
            ("--parallel", f"'{parallel}' shares the step between ranks: give --ranks 2 or more")]
    try:
        parse_run_config(config)
    except Finish as error:
        return [named_flag(error.message)]
    return []


def named_flag(message, fields=FIELDS):
    """(flag, the rest of its first line) of a worker's message that begins
    with the config key it is about ("py_ddp: 'students:SummingDDP' fails
    …"); a message that names none is about --parallel."""
    line = message.splitlines()[0] if message else ""
    key, _, rest = line.partition(": ")
    field = next((f for f in fields.in_file() if f.key == key), None)
    return ("--" + field.name, rest) if field and rest else ("--parallel", line)


def range_problems(config, found, fields=FIELDS):
    """Each whole number within its declared range, as stepscope-cli says it,
    where no message above has named its flag yet."""
    named = {flag for flag, _ in found}
    problems_found = []
    for field in recorder_fields(fields):
        flag, value = "--" + field.name, config.get(field.key)
        if field.type != "integer" or flag in named or not isinstance(value, int):
            continue
        low, high = field.min, field.max
        if value < low or (high is not None and value > high):
            bound = f"≥ {low}" if value < low else f"≤ {high}"
            allowed = f"{low}..{high}" if high is not None else f"{low} or more"
            problems_found.append((flag, f"must be {bound}, got {value}; allowed: {allowed}"))
    return problems_found


def py_attention_problems(config):
    """--py-attention must name something the worker can load: checked here,
    before anything runs, so that a typo is a bad flag (exit 2), not a run."""
    target = config.get("py_attention", "")
    if not target:
        return []
    if not PYTHON_TARGET.match(target):
        return [("--py-attention", f"'{target}' is not MODULE:NAME with Python names (for "
                                   "example my_flash:FlashAttention)")]
    if config["py_model"]:
        return [("--py-attention", "calls your attention in the reference model; --py-model "
                                   "brings its own attention (give one of the two)")]
    triton_mode.prepare_for(config["device"])  # before the user's Triton kernels are decorated
    try:
        load_user_attention(target, config["py_path"])
    except Finish as error:
        return [("--py-attention", error.message.splitlines()[0].removeprefix("py_attention: "))]
    return []


def snapshot_problems(config, snapshot, out=""):
    """--snapshot records the CUDA caching allocator's history: it needs the
    GPU, --memory beside it (the run file's view of the same step), and a
    folder to write into."""
    if not snapshot:
        return []
    if config["device"] != "cuda" or not config["trace_memory"]:
        return [("--snapshot", "PyTorch's memory snapshot records the CUDA caching allocator; "
                               "allowed only with --device cuda and --memory")]
    directory = os.path.dirname(os.path.abspath(snapshot))
    if not os.path.isdir(directory):
        return [("--snapshot", f"the directory '{directory}' does not exist")]
    if out and os.path.abspath(out) == os.path.abspath(snapshot):
        return [("--snapshot", "names the same file as --out: the run file would be written "
                               "over the snapshot")]
    return []


CONFIG_FLAGS = {"--config", "--out", "--json", "--snapshot", "--trust-code"}


def refuse_untrusted_code(config, args, parser):
    """A file never decides to run code: the modules and folders a --config
    file names are imported only with --trust-code (flags the user types are
    the user's say-so already)."""
    named = FIELDS.named_code(config)
    if named and not args.trust_code:
        listed = ", ".join(f"{key} '{value}'" for key, value in named)
        parser.error(f"--config: '{args.config}' names Python code that would run: {listed}; "
                     "code a file names runs only with your say-so: read it, then pass "
                     "--trust-code")


def parse_config(argv=None):
    """(config, args) from the command line; exits 2 on a bad flag."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.config:
        # The file is the whole config: a flag beside it would be ignored.
        others = [flag for flag in given_flags(parser, argv) if flag not in CONFIG_FLAGS]
        if others:
            parser.error(f"{others[0]}: cannot be given with --config; the file holds the whole "
                         "config (allowed beside it: --out, --json)")
        config = config_from_file(args.config, parser)
        refuse_untrusted_code(config, args, parser)
    else:
        config = config_from_flags(args, parser)
    try:
        found = problems(config) + snapshot_problems(config, args.snapshot, args.out)
    except (KeyError, TypeError) as error:  # a hand-written --config file
        parser.error(f"--config: a field is missing or of the wrong type ({error!r})")
    if found:
        parser.error("\n".join(f"{flag}: {message}" for flag, message in found))
    return config, args


def given_flags(parser, argv):
    """The long flags on the command line, as the parser knows them."""
    known = {option for action in parser._actions for option in action.option_strings}
    given = []
    for word in sys.argv[1:] if argv is None else argv:
        flag = word.split("=", 1)[0]
        if flag in known:
            given.append(flag)
    return given
