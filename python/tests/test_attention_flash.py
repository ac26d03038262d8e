"""Our FlashAttention-2 classes against attention in float64, forward and
backward, with the course's saved-tensor convention; the Triton one runs in
Triton's interpreter where there is no GPU. Shapes are small: lengths that
are no multiple of the tiles (so the last tile is ragged and a row spans
several tiles), seq_q != seq_k, head dims 16 to 128, both layouts."""
import math

import pytest
import torch

from conftest import NANO
from stepscope import model as reference_model
from stepscope.attention import FlashAttentionPyTorch, triton_mode
from stepscope.attention.gate import TOLERANCES, relative_error
from stepscope.attention.reference import reference_attention

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@pytest.fixture(scope="module")
def flash_triton(monkeypatch_module):
    """FlashAttentionTriton, its kernels interpreted on the CPU (TRITON_INTERPRET
    set for the import only: the decorated kernels keep the choice)."""
    if not triton_mode.triton_installed():
        pytest.skip("Triton is not installed")
    if DEVICE == "cpu":
        monkeypatch_module.setenv(triton_mode.INTERPRET_VARIABLE, "1")
    from stepscope.attention.flash_triton import FlashAttentionTriton

    return FlashAttentionTriton


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture
def small_tiles(monkeypatch):
    """FlashAttentionPyTorch with 16-row tiles, so short lengths span several."""
    monkeypatch.setattr(FlashAttentionPyTorch, "Q_TILE", 16)
    monkeypatch.setattr(FlashAttentionPyTorch, "K_TILE", 16)


def inputs(q_shape, seq_k, dtype, seed=0):
    generator = torch.Generator().manual_seed(seed)
    k_shape = q_shape[:-2] + (seq_k, q_shape[-1])
    q, k, v = (torch.randn(shape, generator=generator).to(DEVICE, dtype)
               for shape in (q_shape, k_shape, k_shape))
    grad_out = torch.randn(q_shape, generator=generator).to(DEVICE, dtype)
    return [t.requires_grad_() for t in (q, k, v)], grad_out


def check_against_float64(function, q_shape, seq_k, precision, causal):
    """Runs forward and backward; returns {tensor: relative error} and the saved tensors."""
    (q, k, v), grad_out = inputs(q_shape, seq_k, DTYPES[precision])
    out = function.apply(q, k, v, causal)
    saved = out.grad_fn.saved_tensors  # before backward frees them
    out.backward(grad_out)
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    out64, lse64 = reference_attention(q64, k64, v64, causal)
    out64.backward(grad_out.double())
    logsumexps = [t for t in saved if tuple(t.shape) == tuple(q_shape[:-1])]
    assert len(logsumexps) == 1, [tuple(t.shape) for t in saved]
    assert out.dtype == q.dtype and q.grad.dtype == q.dtype
    errors = {"O": relative_error(out, out64.detach()),
              "L": relative_error(logsumexps[0], lse64.detach()),
              "dQ": relative_error(q.grad, q64.grad), "dK": relative_error(k.grad, k64.grad),
              "dV": relative_error(v.grad, v64.grad)}
    return errors, saved, (q, k, v, out)


def assert_saves_the_convention(saved, tensors):
    """Saved: exactly O, Q, K, V (the very tensors) and one logsumexp."""
    q, k, v, out = tensors
    assert len(saved) == 5
    for tensor in (q, k, v, out):
        assert any(s.data_ptr() == tensor.data_ptr() and s.shape == tensor.shape
                   for s in saved)


SHAPES = [  # (q shape, seq_k, causal)
    ((2, 3, 37, 16), 37, True),  # (batch, heads, seq, d)
    ((3, 37, 32), 37, False),  # (batch, seq, d)
    ((2, 20, 24), 45, False),  # seq_q != seq_k, a head dim no power of two
]


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("q_shape, seq_k, causal", SHAPES)
def test_flash_pytorch_matches_float64(small_tiles, q_shape, seq_k, causal, precision):
    errors, saved, tensors = check_against_float64(FlashAttentionPyTorch, q_shape, seq_k,
                                                   precision, causal)
    assert max(errors.values()) <= TOLERANCES[precision] / 2, errors
    assert_saves_the_convention(saved, tensors)


TRITON_SHAPES = [  # tiles are 64 rows: 70 and 80 span two, neither is a multiple
    ((1, 2, 70, 16), 70, True),
    ((2, 80, 32), 80, False),
    ((1, 1, 20, 128), 33, False),  # seq_q != seq_k, the largest head dim
]


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("q_shape, seq_k, causal", TRITON_SHAPES)
def test_flash_triton_matches_float64(flash_triton, q_shape, seq_k, causal, precision):
    errors, saved, tensors = check_against_float64(flash_triton, q_shape, seq_k, precision,
                                                   causal)
    assert max(errors.values()) <= TOLERANCES[precision] / 2, errors
    assert_saves_the_convention(saved, tensors)


def test_flash_triton_reads_the_models_transposed_heads_in_place(flash_triton):
    """q, k, v as the model makes them: (batch, seq, heads, d) transposed to
    (batch, heads, seq, d), not contiguous; the output and gradients match."""
    generator = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 19, 2, 16, generator=generator).to(DEVICE).transpose(1, 2)
               .requires_grad_() for _ in range(3))
    assert not q.is_contiguous()
    out = flash_triton.apply(q, k, v, True)
    out.sum().backward()
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    out64, _ = reference_attention(q64, k64, v64, True)
    out64.sum().backward()
    for value, expected in ((out, out64), (q.grad, q64.grad), (k.grad, k64.grad),
                            (v.grad, v64.grad)):
        assert relative_error(value, expected.detach()) < 1e-5


def test_flash_triton_refuses_head_dims_beyond_its_tiles(flash_triton):
    q = torch.randn(1, 8, 256, device=DEVICE)
    with pytest.raises(ValueError, match="head dims 16 to 128, got 256"):
        flash_triton.apply(q, q, q, False)


def test_the_reference_model_gives_the_same_loss_and_gradients_with_our_flash(flash_triton):
    torch.manual_seed(0)
    tokens = torch.randint(0, NANO["vocab"], (2, 17), device=DEVICE)
    results = {}
    for attention in ("naive", "flash-pytorch", "flash-triton"):
        torch.manual_seed(5)
        model = reference_model.TransformerLM(NANO["vocab"], NANO["d_model"], NANO["d_ff"],
                                              NANO["layers"], NANO["heads"],
                                              NANO["max_context"],
                                              attention=attention).to(DEVICE)
        loss = reference_model.next_token_loss(model, tokens)
        loss.backward()
        results[attention] = (loss.item(), model.layers[0].attn.q_proj.weight.grad)
    naive_loss, naive_grad = results["naive"]
    for attention in ("flash-pytorch", "flash-triton"):
        loss, grad = results[attention]
        assert loss == pytest.approx(naive_loss, abs=1e-5), attention
        assert relative_error(grad, naive_grad.double()) < 1e-4, attention


def test_relative_error_is_against_the_references_largest_entry():
    reference = torch.tensor([4.0, -2.0, 0.0], dtype=torch.float64)
    assert relative_error(torch.tensor([4.0, -2.0, 0.5]), reference) == 0.5 / 4
    assert relative_error(torch.tensor([4.0, math.nan, 0.0]), reference) == math.inf
    assert TOLERANCES == {"fp32": 1e-4, "bf16": 2e-2, "fp16": 2e-2}
