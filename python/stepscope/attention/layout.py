"""The calling convention's two layouts, (batch, seq, d) and (batch, heads,
seq, d), seen by our kernels as one: four dimensions, heads 1 for three.

Viewing (never copying) keeps the strides of the model's transposed heads,
so a kernel reads q, k and v where they lie.
"""


def as_four_dims(tensor):
    """(batch, seq, d) -> (batch, 1, seq, d) as a view; 4-D tensors as they are."""
    if tensor.dim() == 3:
        return tensor.unsqueeze(1)
    if tensor.dim() == 4:
        return tensor
    raise ValueError(f"attention takes (batch, seq, d) or (batch, heads, seq, d) tensors, "
                     f"got {tuple(tensor.shape)}")


def check_inputs(q, k, v):
    """Raises ValueError unless q, k, v fit one attention call."""
    if not (q.dim() == k.dim() == v.dim()):
        raise ValueError(f"q, k and v must have the same number of dimensions, got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    as_four_dims(q)
    if k.shape != v.shape:
        raise ValueError(f"k and v must have one shape, got {tuple(k.shape)} and "
                         f"{tuple(v.shape)}")
    if q.shape[:-2] != k.shape[:-2] or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q {tuple(q.shape)} and k {tuple(k.shape)} must agree in batch, heads "
                         "and head dim")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k and v must have one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError("q, k and v must be on one device")


def logsumexp_shape(q):
    """The saved logsumexp's shape: q's without the head dim, (batch[, heads], seq_q)."""
    return tuple(q.shape[:-1])
