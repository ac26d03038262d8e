"""stepscope.distributed on 2 gloo ranks started by torchrun: each strategy,
ours, torch's and a student's, passes the gate (its parameters match
single-process training on the whole batch) or is refused by it;
distributed_program runs them all in one launch, these tests read what each
rank found."""
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


@pytest.mark.parametrize("check", [
    "naive", "flat", "overlap", "bucketed", "bucketed-small", "sharded-optimizer", "fsdp",
    "fsdp-course-model", "torch-ddp-course-model", "torch-fsdp-course-model",
    "student-AveragingDDP"])
def test_fp32_strategy_matches_single_process_training(ranks, check):
    for rank in ranks:
        gate = rank["gates"][check]
        assert gate["ok"] and gate["error"] <= 1e-5 and gate["tolerance"] == 1e-5, gate


@pytest.mark.parametrize("check,tolerance", [
    ("fsdp-bf16", 1e-2), ("fsdp-fp16", 1e-3), ("torch-fsdp-bf16-course-model", 1e-2)])
def test_compute_dtype_matches_a_model_cast_the_same_way(ranks, check, tolerance):
    for rank in ranks:
        gate = rank["gates"][check]
        assert gate["ok"] and gate["error"] <= tolerance == gate["tolerance"], gate


def test_a_wrong_strategy_is_refused_naming_a_parameter(ranks):
    # Gradients summed over 2 ranks, not averaged: twice the step, far out.
    for rank in ranks:
        gate = rank["gates"]["student-SummingDDP"]
        assert not gate["ok"] and gate["error"] > 0.1, gate
        assert gate["worst"] in ("embed.weight", "hidden.weight", "hidden.bias", "norm.weight",
                                 "norm.bias", "head.weight"), gate


def test_a_strategy_that_raises_gives_its_message(ranks):
    for rank in ranks:
        assert rank["gates"]["student-RaisingDDP"] == {
            "raised": "RuntimeError: my all-reduce is not written yet"}


def test_every_rank_reaches_the_same_verdicts(ranks):
    assert ranks[0]["gates"] == ranks[1]["gates"]


def test_the_sharded_optimizer_alone_is_adamw_split_across_ranks(ranks):
    # TiedModel's 8 parameters (the tied weight once), dealt by bytes: the
    # unused 3 floats to rank 0, the 48x16 embedding to rank 1, the rest to
    # rank 0 (2304 bytes against 3072).
    assert [rank["sharded_optimizer_alone"]["owned_parameters"] for rank in ranks] == [7, 1]
    for rank in ranks:
        assert rank["sharded_optimizer_alone"]["error"] <= 1e-6


def test_buckets_fill_in_reverse_order_up_to_their_size(ranks):
    # 0.001 MB = 1048 bytes over the trained parameters in reverse: the
    # norm's bias and weight and the hidden bias (64 bytes each), then the
    # hidden weight (1024 bytes: its own), the embedding (3072), the unused.
    assert ranks[0]["bucket_sizes"] == [3, 1, 1, 1]


def test_each_rank_holds_its_share_of_the_sharded_weights(ranks):
    for rank in ranks:
        assert rank["fsdp_share_held"] == pytest.approx(1 / RANKS)
