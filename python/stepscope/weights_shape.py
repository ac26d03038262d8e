"""The model's shape from --weights alone (no --model, no dims), as
stepscope-cli reads it (core/model/checkpoint.cpp weightsShape): the
course's from_pretrained folder (model_config.json beside model.pt), or a
state dict's tensors, whose heads come from --heads or a preset that fits."""
import json
import os

import torch

from .model import PRESETS
from .outcome import Finish
from .run_state import state_dict_in

FOLDER_FILES = ("model_config.json", "model.pt")
COURSE_KEYS = {"vocab": "vocab_size", "max_context": "context_length", "d_model": "d_model",
               "layers": "num_layers", "heads": "num_heads", "d_ff": "d_ff"}


class ShapeError(ValueError):
    pass


def custom_name(dims):
    return "custom-d{d_model}-ff{d_ff}-l{layers}-h{heads}".format(**dims)


def folder_shape(folder, heads):
    """(model object, the weights file) of a from_pretrained folder."""
    config_file, weights_file = (os.path.join(folder, name) for name in FOLDER_FILES)
    try:
        with open(config_file, encoding="utf-8") as file:
            config = json.load(file)
        dims = {key: int(config[course]) for key, course in COURSE_KEYS.items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ShapeError(f"'{config_file}' gives no model shape: {error!r}") from error
    if heads:
        dims["heads"] = heads
    return {"name": custom_name(dims), **dims,
            "rope_theta": float(config.get("rope_theta", 10000.0))}, weights_file


def state_dict_shape(path, heads):
    try:
        state = state_dict_in(torch.load(path, map_location="cpu"), path)
    except Finish as error:
        raise ShapeError(error.message) from error
    except Exception as error:
        raise ShapeError(f"cannot read '{path}': {error}") from error
    for name in ("token_embeddings.weight", "layers.0.ffn.w1.weight"):
        if name not in state:
            raise ShapeError(f"'{path}' has no tensor '{name}': give --model or the dims")
    vocab, d_model = state["token_embeddings.weight"].shape
    layers = 0
    while f"layers.{layers}.ln1.weight" in state:
        layers += 1
    dims = {"d_model": int(d_model), "d_ff": int(state["layers.0.ffn.w1.weight"].shape[0]),
            "layers": layers, "heads": heads or 0}
    name = None
    for preset, (p_model, p_ff, p_layers, p_heads) in PRESETS.items():
        if (p_model, p_ff, p_layers) == (dims["d_model"], dims["d_ff"], layers) and \
                heads in (None, 0, p_heads):
            name, dims["heads"] = preset, p_heads
    if dims["heads"] <= 0:
        raise ShapeError(f"'{path}' gives d_model {dims['d_model']}, d_ff {dims['d_ff']}, "
                         f"{layers} layers and vocab {vocab}, but a state dict does not say "
                         "the number of heads; give --heads")
    return {"name": name or custom_name(dims), **dims, "vocab": int(vocab)}


def weights_shape(path, heads):
    """(model object without the limits a state dict does not give, the file to load)."""
    if os.path.isdir(path):
        return folder_shape(path, heads)
    return state_dict_shape(path, heads), path
