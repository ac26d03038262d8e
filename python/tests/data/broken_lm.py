"""A user's module that cannot be imported."""
import torch  # noqa: F401
import stepscope_no_such_module  # noqa: F401
