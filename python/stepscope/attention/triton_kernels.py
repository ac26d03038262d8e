"""FlashAttention-2's forward and backward as Triton kernels.

Tensors are seen as (batch, heads, seq, d) through their strides, so the
model's transposed heads are read in place. One program handles one tile of
rows (queries for the forward and dQ, keys for dK/dV) of one batch·head.
Scores, the online softmax and every accumulator are fp32; P and dS are
rounded to the inputs' dtype only as operands of the tensor-core products,
as FlashAttention-2 does. The head dim is padded to a power of two
(BLOCK_D) and masked, so any head dim from 16 to 128 runs.

Imported only through flash_triton, after triton_mode has chosen between
the compiler and the interpreter (the choice is made here, at decoration).
"""
import triton
import triton.language as tl


@triton.jit
def flash_forward_kernel(
        Q, K, V, O, L,
        stride_qb, stride_qh, stride_qs, stride_qd,
        stride_kb, stride_kh, stride_ks, stride_kd,
        stride_vb, stride_vh, stride_vs, stride_vd,
        stride_ob, stride_oh, stride_os, stride_od,
        heads, seq_q, seq_k, head_dim, scale,
        IS_CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr,
        BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr):
    q_tile = tl.program_id(0)
    batch_head = tl.program_id(1).to(tl.int64)  # offsets past 2**31 elements stay exact
    batch, head = batch_head // heads, batch_head % heads
    rows = q_tile * BLOCK_Q + tl.arange(0, BLOCK_Q)
    columns = tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    row_in = rows < seq_q
    dim_in = dims < head_dim

    q = tl.load(Q + batch * stride_qb + head * stride_qh + rows[:, None] * stride_qs +
                dims[None, :] * stride_qd, mask=row_in[:, None] & dim_in[None, :], other=0.0)
    k_base = K + batch * stride_kb + head * stride_kh
    v_base = V + batch * stride_vb + head * stride_vh
    row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)

    k_stop = seq_k
    if IS_CAUSAL:  # key tiles after this tile's last query are all in the future: skipped
        k_stop = tl.minimum(seq_k, (q_tile + 1) * BLOCK_Q)
    for k_start in range(0, k_stop, BLOCK_K):
        keys = k_start + columns
        key_in = keys < seq_k
        tile_mask = key_in[:, None] & dim_in[None, :]
        k = tl.load(k_base + keys[:, None] * stride_ks + dims[None, :] * stride_kd,
                    mask=tile_mask, other=0.0)
        v = tl.load(v_base + keys[:, None] * stride_vs + dims[None, :] * stride_vd,
                    mask=tile_mask, other=0.0)
        scores = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION) * scale
        visible = key_in[None, :]
        if IS_CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        scores = tl.where(visible, scores, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(scores, axis=1))
        probabilities = tl.exp(scores - new_max[:, None])
        rescale = tl.exp(row_max - new_max)
        row_sum = row_sum * rescale + tl.sum(probabilities, axis=1)
        acc = acc * rescale[:, None] + tl.dot(probabilities.to(v.dtype), v,
                                              input_precision=DOT_PRECISION)
        row_max = new_max

    out = acc / row_sum[:, None]
    tl.store(O + batch * stride_ob + head * stride_oh + rows[:, None] * stride_os +
             dims[None, :] * stride_od, out.to(O.dtype.element_ty),
             mask=row_in[:, None] & dim_in[None, :])
    # L is contiguous (batch, heads, seq_q).
    tl.store(L + batch_head * seq_q + rows, row_max + tl.log(row_sum), mask=row_in)


@triton.jit
def flash_backward_dkdv_kernel(
        Q, K, V, DO, L, DELTA, DK, DV,
        stride_qb, stride_qh, stride_qs, stride_qd,
        stride_kb, stride_kh, stride_ks, stride_kd,
        stride_vb, stride_vh, stride_vs, stride_vd,
        stride_dob, stride_doh, stride_dos, stride_dod,
        heads, seq_q, seq_k, head_dim, scale,
        IS_CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr,
        BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr):
    """dK and dV of one key tile: the loop runs over query tiles, so the tile's
    sums stay in registers and no two programs write one row (no atomics)."""
    k_tile = tl.program_id(0)
    batch_head = tl.program_id(1).to(tl.int64)  # offsets past 2**31 elements stay exact
    batch, head = batch_head // heads, batch_head % heads
    keys = k_tile * BLOCK_K + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    key_in = keys < seq_k
    dim_in = dims < head_dim
    key_mask = key_in[:, None] & dim_in[None, :]

    k = tl.load(K + batch * stride_kb + head * stride_kh + keys[:, None] * stride_ks +
                dims[None, :] * stride_kd, mask=key_mask, other=0.0)
    v = tl.load(V + batch * stride_vb + head * stride_vh + keys[:, None] * stride_vs +
                dims[None, :] * stride_vd, mask=key_mask, other=0.0)
    q_base = Q + batch * stride_qb + head * stride_qh
    do_base = DO + batch * stride_dob + head * stride_doh
    grad_k = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    grad_v = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)

    q_start_first = 0
    if IS_CAUSAL:  # queries before this tile's first key see none of it
        q_start_first = (k_tile * BLOCK_K // BLOCK_Q) * BLOCK_Q
    for q_start in range(q_start_first, seq_q, BLOCK_Q):
        rows = q_start + tl.arange(0, BLOCK_Q)
        row_in = rows < seq_q
        row_mask = row_in[:, None] & dim_in[None, :]
        q = tl.load(q_base + rows[:, None] * stride_qs + dims[None, :] * stride_qd,
                    mask=row_mask, other=0.0)
        grad_o = tl.load(do_base + rows[:, None] * stride_dos + dims[None, :] * stride_dod,
                         mask=row_mask, other=0.0)
        logsumexp = tl.load(L + batch_head * seq_q + rows, mask=row_in, other=0.0)
        delta = tl.load(DELTA + batch_head * seq_q + rows, mask=row_in, other=0.0)
        scores = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION) * scale
        visible = row_in[:, None] & key_in[None, :]
        if IS_CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        probabilities = tl.where(visible, tl.exp(scores - logsumexp[:, None]), 0.0)
        grad_v += tl.dot(tl.trans(probabilities.to(grad_o.dtype)), grad_o,
                         input_precision=DOT_PRECISION)
        grad_p = tl.dot(grad_o, tl.trans(v), input_precision=DOT_PRECISION)
        grad_s = probabilities * (grad_p - delta[:, None])
        grad_k += tl.dot(tl.trans(grad_s.to(q.dtype)), q, input_precision=DOT_PRECISION)

    # DK and DV are contiguous like K's (batch, heads, seq_k, d) shape.
    offsets = batch_head * seq_k * head_dim + keys[:, None] * head_dim + dims[None, :]
    tl.store(DK + offsets, (grad_k * scale).to(DK.dtype.element_ty), mask=key_mask)
    tl.store(DV + offsets, grad_v.to(DV.dtype.element_ty), mask=key_mask)


@triton.jit
def flash_backward_dq_kernel(
        Q, K, V, DO, L, DELTA, DQ,
        stride_qb, stride_qh, stride_qs, stride_qd,
        stride_kb, stride_kh, stride_ks, stride_kd,
        stride_vb, stride_vh, stride_vs, stride_vd,
        stride_dob, stride_doh, stride_dos, stride_dod,
        heads, seq_q, seq_k, head_dim, scale,
        IS_CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr,
        BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr):
    """dQ of one query tile, the scores recomputed a second time: a separate
    pass instead of atomic adds from the dK/dV programs."""
    q_tile = tl.program_id(0)
    batch_head = tl.program_id(1).to(tl.int64)  # offsets past 2**31 elements stay exact
    batch, head = batch_head // heads, batch_head % heads
    rows = q_tile * BLOCK_Q + tl.arange(0, BLOCK_Q)
    columns = tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    row_in = rows < seq_q
    dim_in = dims < head_dim
    row_mask = row_in[:, None] & dim_in[None, :]

    q = tl.load(Q + batch * stride_qb + head * stride_qh + rows[:, None] * stride_qs +
                dims[None, :] * stride_qd, mask=row_mask, other=0.0)
    grad_o = tl.load(DO + batch * stride_dob + head * stride_doh + rows[:, None] * stride_dos +
                     dims[None, :] * stride_dod, mask=row_mask, other=0.0)
    logsumexp = tl.load(L + batch_head * seq_q + rows, mask=row_in, other=0.0)
    delta = tl.load(DELTA + batch_head * seq_q + rows, mask=row_in, other=0.0)
    k_base = K + batch * stride_kb + head * stride_kh
    v_base = V + batch * stride_vb + head * stride_vh
    grad_q = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)

    k_stop = seq_k
    if IS_CAUSAL:
        k_stop = tl.minimum(seq_k, (q_tile + 1) * BLOCK_Q)
    for k_start in range(0, k_stop, BLOCK_K):
        keys = k_start + columns
        key_in = keys < seq_k
        tile_mask = key_in[:, None] & dim_in[None, :]
        k = tl.load(k_base + keys[:, None] * stride_ks + dims[None, :] * stride_kd,
                    mask=tile_mask, other=0.0)
        v = tl.load(v_base + keys[:, None] * stride_vs + dims[None, :] * stride_vd,
                    mask=tile_mask, other=0.0)
        scores = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION) * scale
        visible = row_in[:, None] & key_in[None, :]
        if IS_CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        probabilities = tl.where(visible, tl.exp(scores - logsumexp[:, None]), 0.0)
        grad_p = tl.dot(grad_o, tl.trans(v), input_precision=DOT_PRECISION)
        grad_s = probabilities * (grad_p - delta[:, None])
        grad_q += tl.dot(grad_s.to(k.dtype), k, input_precision=DOT_PRECISION)

    # DQ is contiguous like Q's (batch, heads, seq_q, d) shape.
    offsets = batch_head * seq_q * head_dim + rows[:, None] * head_dim + dims[None, :]
    tl.store(DQ + offsets, (grad_q * scale).to(DQ.dtype.element_ty), mask=row_mask)
