"""The config fields' table as the package reads it (stepscope/config_fields.json,
which the C++ suite's tst_config_fields holds equal to the C++ table), and the
worker's parsing and the recorder's flags made from it."""
import copy
import json

import pytest

from conftest import run_config
from stepscope import config_fields, model, record_flags
from stepscope import run_config as worker_config
from stepscope.outcome import Finish


def test_the_worker_serves_the_attention_its_model_has():
    assert config_fields.FIELDS.named("attention").served == model.ATTENTIONS


def test_the_worker_engines_are_the_ones_that_run_in_it():
    assert config_fields.FIELDS.worker_engines == ("pytorch", "pytorch-compile")
    assert worker_config.ENGINES == ("pytorch", "pytorch-compile")


def test_the_recorder_writes_every_key_the_table_writes():
    config, _ = record_flags.parse_config(["--model", "nano"])
    written = {f.key for f in config_fields.FIELDS.in_file() if f.written_when_default}
    assert set(config) == written
    # What the worker's engines do not take is its default: the levers off.
    assert (config["activation_checkpoint"], config["loss"], config["loss_chunk"],
            config["optimizer"], config["cuda_graph"]) == ("off", "full", 1024, "adamw", False)


def test_a_lever_the_worker_does_not_take_is_unavailable_naming_it():
    with pytest.raises(Finish) as finished:
        worker_config.parse_run_config(run_config(loss="chunked"))
    assert finished.value.status == "unavailable"
    assert finished.value.message == ("loss: 'chunked' is not served by the PyTorch worker; "
                                      "allowed: full")


def test_a_key_every_run_file_has_must_be_there():
    config = run_config()
    del config["warmup"]
    with pytest.raises(Finish) as finished:
        worker_config.parse_run_config(config)
    assert finished.value.status == "failed"
    assert "KeyError: 'warmup'" in finished.value.message


def added_field_table():
    """The package's table with one field more, as the C++ table would write it."""
    with open(config_fields.SCHEMA, encoding="utf-8") as file:
        document = json.load(file)
    replicas = copy.deepcopy(next(f for f in document["fields"] if f["name"] == "threads"))
    replicas.update(name="replicas", key="replicas", help="copies of the model",
                 label="Replicas", section="engine", engines=["pytorch", "pytorch-compile"],
                 required=False, default=1, min=1, max=64)
    document["fields"].append(replicas)
    return config_fields.Fields(document)


def test_a_field_added_to_the_table_is_parsed_and_flagged():
    fields = added_field_table()
    spec = worker_config.parse_run_config(run_config(replicas=4), fields)
    assert spec.replicas == 4
    assert worker_config.parse_run_config(run_config(), fields).replicas == 1  # an older file
    parser = record_flags.build_parser(fields)
    assert "--replicas" in parser.format_help()
    args = parser.parse_args(["--replicas", "8"])
    config = record_flags.config_from_flags(args, parser, fields)
    assert config["replicas"] == 8
    assert record_flags.range_problems({**config, "replicas": 99}, [], fields) == [
        ("--replicas", "must be ≤ 64, got 99; allowed: 1..64")]
