"""What each block of the Python reference model saves for backward, counted
with PyTorch's own saved_tensors_hooks: the distinct storages autograd keeps,
each counted once, with the block that saved it first. Parameters are counted
apart (autograd keeps them too, but the forward did not make them).

    python saved_for_backward_reference.py --d-model 768 --d-ff 3072 --layers 12 \
        --heads 12 --vocab 10000 --ctx 128 --batch 4 [--attention naive]

Prints JSON: {"blocks": [{"module", "bytes", "tensors", "parameter_bytes"}]}.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from stepscope import model as reference_model  # noqa: E402


def saved_per_block(model, tokens):
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    current = [None]  # the block whose forward is running
    seen = set()
    blocks = [{"module": f"layers.{i}", "bytes": 0, "tensors": 0, "parameter_bytes": 0}
              for i in range(len(model.layers))]

    def pack(tensor):
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if current[0] is not None and key not in seen:
            seen.add(key)
            entry = blocks[current[0]]
            if key in parameters:
                entry["parameter_bytes"] += storage.nbytes()
            else:
                entry["bytes"] += storage.nbytes()
                entry["tensors"] += 1
        return tensor

    def enter(index):
        return lambda module, args: current.__setitem__(0, index)

    def leave(module, args, output):
        current[0] = None

    for index, layer in enumerate(model.layers):
        layer.register_forward_pre_hook(enter(index))
        layer.register_forward_hook(leave)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = reference_model.next_token_loss(model, tokens)
    del loss
    return blocks


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--d-model", "--d-ff", "--layers", "--heads", "--vocab", "--ctx", "--batch"):
        parser.add_argument(flag, type=int, required=True)
    parser.add_argument("--attention", default="naive")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = reference_model.TransformerLM(args.vocab, args.d_model, args.d_ff, args.layers,
                                          args.heads, max_context=max(2048, args.ctx),
                                          attention=args.attention)
    tokens = torch.randint(0, args.vocab, (args.batch, args.ctx + 1))
    print(json.dumps({"blocks": saved_per_block(model, tokens)}))


if __name__ == "__main__":
    main()
