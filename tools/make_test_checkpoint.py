"""Writes a test fixture from the reference model: a checkpoint (plain state
dict, or a training checkpoint under "model" with torch.compile's
"_orig_mod." prefix), token ids, the reference logits and the loss.

    python make_test_checkpoint.py OUT_DIR --model nano --vocab 97 --seed 3
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from stepscope import model as reference_model  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--model", default="nano")
    parser.add_argument("--vocab", type=int, default=97)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=17)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    model = reference_model.from_preset(args.model, vocab=args.vocab)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq), dtype=torch.long)
    with torch.no_grad():
        logits = model(tokens[:, :-1])
        loss = reference_model.next_token_loss(model, tokens).item()

    os.makedirs(args.out_dir, exist_ok=True)
    state = model.state_dict()
    torch.save(state, os.path.join(args.out_dir, "state_dict.pt"))
    compiled = {"_orig_mod." + k: v for k, v in state.items()}
    torch.save({"model": compiled, "iteration": 100, "optimizer": {"lr": 1e-3}},
               os.path.join(args.out_dir, "training_checkpoint.pt"))
    torch.save({"model_state_dict": state, "epoch": 3},
               os.path.join(args.out_dir, "model_state_dict_checkpoint.pt"))
    torch.save(tokens, os.path.join(args.out_dir, "tokens.pt"))
    torch.save(logits, os.path.join(args.out_dir, "logits.pt"))
    with open(os.path.join(args.out_dir, "expected.json"), "w") as f:
        json.dump({"loss": loss, "vocab": args.vocab, "model": args.model}, f)


if __name__ == "__main__":
    main()
