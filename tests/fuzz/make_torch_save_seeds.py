"""Seeds for the torch.save fuzz target (tests/fuzz/fuzz_torch_save.cpp):
files torch.save writes for what StepScope reads (a state dict, a training
checkpoint, token tensors, hostile ones among them, nested containers), each as the file itself and
as its data.pkl alone (the target wraps a bare pickle in an archive). They
are checked in under tests/fuzz/seeds/torch_save; write them again there
after changing what is saved:

    python tests/fuzz/make_torch_save_seeds.py tests/fuzz/seeds/torch_save
"""
import collections
import io
import sys
import zipfile
from pathlib import Path

import torch


def objects():
    torch.manual_seed(0)
    state = collections.OrderedDict(
        (name, torch.randn(shape)) for name, shape in
        [("embed.weight", (8, 4)), ("layers.0.w", (4, 4)), ("norm.weight", (4,))])
    yield "state_dict", state
    yield "checkpoint", {"model": state, "iteration": 7, "args": {"lr": 3e-4, "name": "nano"}}
    yield "tokens", torch.randint(0, 97, (3, 9), dtype=torch.int64)
    yield "strided", torch.arange(24, dtype=torch.float32).reshape(4, 6).t()
    yield "bf16", torch.randn(5, 3).to(torch.bfloat16)
    yield "nested", [[1, 2.5, "three", None, True], (4, [5, {"six": 6}])]
    yield "shared", {"a": state["norm.weight"], "b": state["norm.weight"][1:]}
    # Token batches as a hostile file writes them (issue 45): one stored id
    # viewed through strides of 0, rows that overlap, a batch sliced from a
    # longer one. Last, so that the seeds above keep their bytes.
    yield "tokens_zero_stride", torch.zeros(1, dtype=torch.int64).expand(4, 9)
    yield "tokens_overlap", torch.arange(32, dtype=torch.int64).as_strided((4, 9), (3, 1))
    yield "tokens_sliced", torch.randint(0, 97, (4, 17), dtype=torch.int64)[1:3, 2:11]


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, value in objects():
        buffer = io.BytesIO()
        torch.save(value, buffer)
        (out / f"{name}.pt").write_bytes(buffer.getvalue())
        with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
            pickle = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
            (out / f"{name}.pkl").write_bytes(archive.read(pickle))


if __name__ == "__main__":
    main()
