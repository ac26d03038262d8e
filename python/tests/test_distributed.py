"""stepscope.distributed on 2 gloo ranks started by torchrun: each strategy
trains a small model to the parameters single-process training reaches on
the whole batch (distributed_program computes both, on every rank)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parent / "distributed_program.py"
PYTHON_DIR = PROGRAM.parents[1]
RANKS = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("ranks")
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), OMP_NUM_THREADS="1")
    # --standalone: a rendezvous on a free local port, never a fixed one.
    launched = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone",
         f"--nproc-per-node={RANKS}", str(PROGRAM), str(out)],
        env=env, capture_output=True, text=True, timeout=240)
    assert launched.returncode == 0, launched.stdout[-4000:] + launched.stderr[-4000:]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(RANKS)]


@pytest.mark.parametrize("strategy", ["naive", "flat", "overlap", "bucketed", "sharded-optimizer",
                                      "fsdp", "fsdp-course-classes", "sharded-optimizer-alone"])
def test_fp32_strategy_matches_single_process_training(ranks, strategy):
    for rank in ranks:
        assert rank["errors"][strategy] <= 1e-5, (strategy, rank["errors"][strategy])


@pytest.mark.parametrize("strategy,tolerance", [("fsdp-bf16", 1e-2), ("fsdp-fp16", 1e-3)])
def test_compute_dtype_matches_a_model_cast_the_same_way(ranks, strategy, tolerance):
    # One step, relative to the largest weight: about bf16's (2^-8) and
    # fp16's (2^-11) rounding of a gradient, not more.
    for rank in ranks:
        assert rank["errors"][strategy] <= tolerance, (strategy, rank["errors"][strategy])


def test_a_wrong_strategy_is_told_apart(ranks):
    # Gradients summed over 2 ranks, not averaged: twice the step. The
    # comparison that passes the others must fail this one.
    for rank in ranks:
        assert rank["errors"]["summing-not-averaging"] > 0.1


def test_every_rank_ends_with_the_same_model(ranks):
    assert ranks[0]["errors"] == ranks[1]["errors"]


def test_the_optimizer_state_is_split_across_ranks(ranks):
    # TiedModel's 8 parameters (the tied weight once), dealt by size: the
    # 48x16 embedding to one rank, the 7 smaller ones (2316 bytes in all) to the other.
    assert sorted(rank["owned_parameters"] for rank in ranks) == [1, 7]


def test_buckets_fill_in_reverse_order_up_to_their_size(ranks):
    # 0.001 MB = 1048 bytes over the trained parameters in reverse: the
    # norm's bias and weight and the hidden bias (64 bytes each), then the
    # hidden weight (1024 bytes: its own), the embedding (3072), the unused.
    assert ranks[0]["bucket_sizes"] == [3, 1, 1, 1]


def test_each_rank_holds_its_share_of_the_sharded_weights(ranks):
    for rank in ranks:
        assert rank["fsdp_share_held"] == pytest.approx(1 / RANKS)
