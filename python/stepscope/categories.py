"""The category of an operator or kernel row, as the C++ engine names it
(core/profile/operator_tracer.cpp operatorCategory, kernelCategory), so the
Breakdown tab groups a recorder's rows like the engine's own. The C++ reader
keeps what the file says; tst_recorder holds these against the C++ functions.
"""

# (category, name parts), tried in order; the first that matches wins.
OPERATOR_RULES = (
    ("attention core", ("scaled_dot_product", "flash_attention", "efficient_attention",
                        "TiledAttention", "ScaledDotProduct")),
    ("matmul", ("linear", "matmul", "aten::mm", "addmm", "bmm", "MmBackward", "AddmmBackward",
                "BmmBackward", "LinearBackward")),
    # The loss (log-softmax + NLL) is a reduction over the vocabulary, not attention's softmax.
    ("reduction", ("cross_entropy", "nll_loss", "NllLoss", "log_softmax", "LogSoftmax",
                   "aten::sum", "SumBackward", "aten::mean", "MeanBackward", "aten::max",
                   "MaxBackward", "aten::amax")),
    ("softmax", ("softmax", "Softmax")),
    ("normalisation", ("rsqrt", "Rsqrt", "norm", "Norm")),
    ("copy/cast", ("aten::to", "aten::_to_copy", "ToCopyBackward", "copy_", "clone", "Clone",
                   "contiguous", "aten::empty", "zero_", "ones_like", "AccumulateGrad")),
    ("elementwise", ("add", "Add", "mul", "Mul", "sub", "Sub", "div", "Div", "silu", "Silu",
                     "exp", "Exp", "pow", "Pow", "masked_fill", "MaskedFill", "cos", "sin",
                     "neg", "Neg", "where", "Where", "stack", "Stack", "cat", "Cat", "embedding",
                     "Embedding", "index", "Index")),
)


def contains_any(name, parts):
    return any(part in name for part in parts)


def operator_category(name, phase):
    if phase == "optimizer":
        return "optimizer"
    for category, parts in OPERATOR_RULES:
        if contains_any(name, parts):
            return category
    return "other"


def kernel_category(kernel, op_category, phase):
    """A kernel's category from its name, falling back to its launching operator's."""
    if kernel.startswith("memcpy") or kernel == "memset":
        return "copy/cast"
    if phase == "optimizer":
        return "optimizer"
    # cuBLAS, cuBLASLt (nvjet) and CUTLASS GEMMs, whoever launched them.
    if contains_any(kernel, ("gemm", "Gemm", "GEMM", "cutlass", "nvjet", "xmma", "cublas")):
        return "matmul"
    if contains_any(kernel, ("flash", "fmha", "attention", "Attention")):
        return "attention core"
    # Softmax kernels also serve the loss's log-softmax; the operator knows which.
    if contains_any(kernel, ("softmax", "SoftMax", "Softmax")):
        return "reduction" if op_category == "reduction" else "softmax"
    if op_category in ("normalisation", "softmax", "attention core"):
        return op_category
    if contains_any(kernel, ("reduce_kernel", "Reduce", "reduction")):
        return "reduction"
    if contains_any(kernel, ("elementwise", "Elementwise")):
        return "elementwise"
    return op_category or "other"


def with_categories(rows, kernels):
    """The worker's rows with the category the C++ client gives them (a
    kernel row knows no launching operator there either)."""
    return [dict(row, category=kernel_category(row["name"], "", row["phase"]) if kernels
                 else operator_category(row["name"], row["phase"])) for row in rows]
