"""The run configuration's fields as StepScope declares them, once, in the C++
table (core/config/run_config_fields.cpp).

config_fields.json beside this file is that table written out; the C++
suite's tst_config_fields fails when the two differ, and rewrites the file
when asked (STEPSCOPE_WRITE_CONFIG_FIELDS=1). The package reads the file and
never needs the C++ build: a pip-installed recorder on a cluster has it too.
The worker's parsing of a run's config (run_config) and the recorder's flags
(record_flags) are made from it, so a field added to the table reaches Python
without a line written here.
"""
import json
import os
from dataclasses import dataclass

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config_fields.json")
FORMAT, VERSION = "stepscope-config-fields", 1


@dataclass(frozen=True)
class Field:
    """One field: `key` in the run file (None: not in it), `name` as the flag."""
    name: str
    key: object
    type: str  # integer, number, choice, switch, text, path, model
    section: str
    help: str
    label: str
    value_name: str
    engines: tuple
    sweep: bool
    required: bool
    written_when_default: bool
    names_code: bool  # a module, a folder imported from, an interpreter: runs code
    default: object
    min: object = None
    max: object = None  # None: no maximum, or this machine's (the threads)
    values: tuple = ()
    worker_values: tuple = ()
    allowed: str = ""
    any_text: bool = False

    @property
    def served(self):
        """The values the worker takes; empty: any."""
        return self.worker_values or self.values

    def text(self, value):
        """The value as the CLI spells it ("on", "8", "sdpa")."""
        if self.type == "switch":
            return "on" if value else "off"
        return str(value)


class Fields:
    """The table: its fields in order, and which engines run in the worker."""

    def __init__(self, document):
        if document.get("format") != FORMAT or document.get("version") != VERSION:
            raise ValueError(f"not a {FORMAT} version {VERSION} document")
        self.worker_engines = tuple(e["name"] for e in document["engines"] if e["worker"])
        self.fields = tuple(field_of(f) for f in document["fields"])

    def __iter__(self):
        return iter(self.fields)

    def named(self, name):
        return next(field for field in self.fields if field.name == name)

    def named_code(self, config):
        """(key, value) of each field of `config` that names code and is set:
        what a --config file may run only with --trust-code."""
        return [(field.key, config[field.key]) for field in self.fields
                if field.names_code and field.key and config.get(field.key, field.default)
                != field.default]

    def in_file(self):
        """The fields a run file's config holds, in the table's order."""
        return [field for field in self.fields if field.key]

    def worker_takes(self, field):
        """Whether a worker engine takes a value of `field` other than its default."""
        return any(engine in self.worker_engines for engine in field.engines)

    def worker_default(self, field):
        """The default, or the first value the worker serves where it does not
        serve the default (the engine: pytorch, not libtorch)."""
        if field.type == "choice" and field.served and field.default not in field.served:
            return field.served[0]
        return field.default


def field_of(entry):
    entry = dict(entry)
    for key in ("engines", "values", "worker_values"):
        entry[key] = tuple(entry.get(key) or ())
    return Field(**entry)


def load(path=SCHEMA):
    with open(path, encoding="utf-8") as file:
        return Fields(json.load(file))


FIELDS = load()
