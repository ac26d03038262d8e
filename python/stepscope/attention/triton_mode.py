"""Where Triton kernels run: compiled for a GPU, or in Triton's interpreter.

Triton decides when a kernel is decorated (`@triton.jit`, at the import of
the module that holds it) whether it is compiled or interpreted, from the
environment variable TRITON_INTERPRET. The interpreter runs a kernel's
programs one by one in NumPy on CPU tensors: slow, but exact enough to
check a kernel's correctness on a machine without a GPU. So the variable is
set before any module with Triton kernels is imported: by the worker when
its request runs on the CPU (`prepare_for`), and by our own kernel module
when this torch sees no CUDA device at all. Once set it holds for the whole
process: a process that interprets runs no compiled kernels.
"""
import contextlib
import importlib.util
import os
import sys

INTERPRET_VARIABLE = "TRITON_INTERPRET"
NOT_TIMED_ON_CPU = ("Triton on CPU runs in its interpreter: correctness checked (gate ok), "
                    "not timed")


def triton_installed():
    return importlib.util.find_spec("triton") is not None


def interpreting():
    """Whether kernels decorated from now on run in Triton's interpreter."""
    return os.environ.get(INTERPRET_VARIABLE, "0").strip().lower() in ("1", "true", "on", "yes")


def use_interpreter():
    """Kernels decorated from now on (ours, a user's) run in the interpreter."""
    os.environ[INTERPRET_VARIABLE] = "1"
    fix_interpreter()


def fix_interpreter():
    """The interpreter's fixes this Triton and NumPy need (interpreter_fix)."""
    if interpreting() and triton_installed():
        from . import interpreter_fix

        interpreter_fix.install()


def prepare_for(device):
    """Call before importing Triton kernels that will run on `device`."""
    if device == "cpu":
        use_interpreter()


def check_interpreter_ready():
    """Raises RuntimeError where the interpreter is asked for too late: Triton's
    own helpers (tl.max's combine function, ...) are decorated when
    triton.language is imported, and the interpreter cannot call them compiled.
    torch.utils.flop_counter and torch.compile import Triton, for example."""
    if not interpreting() or "triton.language" not in sys.modules:
        return
    from triton.language import standard
    from triton.runtime.interpreter import InterpretedFunction

    if not isinstance(standard.cdiv, InterpretedFunction):
        raise RuntimeError(
            f"Triton was imported before {INTERPRET_VARIABLE}=1 was set, so its own helpers "
            "are compiled and its interpreter cannot run kernels on the CPU; set "
            f"{INTERPRET_VARIABLE}=1 before anything imports Triton (torch.utils.flop_counter "
            "and torch.compile do)")


class LaunchCount:
    def __init__(self):
        self.launches = 0


@contextlib.contextmanager
def counting_interpreted_launches():
    """Counts the Triton kernels launched in the interpreter inside the block:
    how the gate finds out that a user's backend runs Triton kernels."""
    count = LaunchCount()
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if not interpreting() or interpreter is None:
        yield count
        return
    interpreted = interpreter.InterpretedFunction
    original = interpreted.run

    def run(self, *args, **kwargs):
        count.launches += 1
        return original(self, *args, **kwargs)

    interpreted.run = run
    try:
        yield count
    finally:
        interpreted.run = original
