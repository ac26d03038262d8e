"""Three fixes for Triton 3.6's interpreter, applied only when it interprets.

1. NumPy 2.4 (triton-lang/triton#9171, fixed upstream by #9172 after 3.6):
   the interpreter holds every scalar as a one-element array and turns it
   into a Python int with int(array) wherever Python needs an index, the
   bound of a `range` loop among them. NumPy 2.4 refuses int() of an array
   with a dimension, so every kernel with a loop over a runtime length
   fails. The fix takes the one element out explicitly, as #9172 does.
2. bfloat16 tl.dot (triton-lang/triton#11584, not supported upstream): the
   interpreter stores bfloat16 as uint16 and multiplies the bit patterns.
   The fix widens bfloat16 operands to fp32 first (exact: bf16 is fp32's
   upper half), which is what a tensor core computes: exact products summed
   in fp32. Other bfloat16 arithmetic stays unsupported by the interpreter.
3. fp32 -> bfloat16 casts: the interpreter truncates (rounds toward zero),
   a GPU rounds to nearest even. Truncation's one-sided error adds up over
   a sum and doubled a correct kernel's bf16 error against float64 (1e-2
   where the GPU's rounding gives 3e-3 to 5e-3); the fix rounds as the GPU.

Neither changes anything for compiled kernels.
"""
import numpy


def numpy_refuses_array_to_int():
    try:
        int(numpy.array([1]))
    except TypeError:
        return True
    return False


def one_element_index(tensor):
    return int(tensor.handle.data.reshape(-1)[0])


def bfloat16_as_float32(data):
    """The interpreter's bfloat16 bits (uint16) as the float32 they stand for."""
    return (data.astype(numpy.uint32) << 16).view(numpy.float32)


def float32_to_bfloat16_nearest_even(data):
    """bfloat16 bits (uint16) of float32 values, rounded to nearest even; NaN stays NaN."""
    bits = numpy.ascontiguousarray(data, dtype=numpy.float32).view(numpy.uint32)
    rounded = (bits + (numpy.uint32(0x7FFF) + ((bits >> 16) & 1))) >> 16
    rounded = numpy.where(numpy.isnan(data), numpy.uint32(0x7FC0), rounded)
    return rounded.astype(numpy.uint16)


def fix_scalar_index(interpreter):
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "stepscope_fix", False) or \
            not numpy_refuses_array_to_int():
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", one_element_index)

    patch_lang_tensor.stepscope_fix = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def fix_bfloat16_dot(interpreter):
    import triton.language as tl

    builder = getattr(interpreter, "InterpreterBuilder", None)
    original = getattr(builder, "create_dot", None)
    if original is None or getattr(original, "stepscope_fix", False):
        return

    def widened(operand):
        if operand.dtype != tl.bfloat16:
            return operand
        return interpreter.TensorHandle(bfloat16_as_float32(operand.data), tl.float32)

    def create_dot(self, a, b, d, *args, **kwargs):
        return original(self, widened(a), widened(b), d, *args, **kwargs)

    create_dot.stepscope_fix = True
    builder.create_dot = create_dot


def fix_bfloat16_rounding(interpreter):
    import triton.language as tl

    builder = getattr(interpreter, "InterpreterBuilder", None)
    original = getattr(builder, "cast_impl", None)
    if original is None or getattr(original, "stepscope_fix", False):
        return

    def cast_impl(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return interpreter.TensorHandle(float32_to_bfloat16_nearest_even(src.data),
                                            tl.bfloat16)
        return original(self, src, dst_type)

    cast_impl.stepscope_fix = True
    builder.cast_impl = cast_impl


def install():
    """Applies the fixes once; each only where this Triton has its hook."""
    from triton.runtime import interpreter

    fix_scalar_index(interpreter)
    fix_bfloat16_dot(interpreter)
    fix_bfloat16_rounding(interpreter)
