"""A user's Python object named as MODULE:NAME (py_model, py_attention).

MODULE is imported with an optional directory first on sys.path; NAME may
be dotted (a class's attribute). Each way this fails is a failed run whose
first line starts with the config field, so the C++ client can name its flag.
"""
import importlib
import sys

from .outcome import failed


def find_object(target, py_path, field, what):
    """The object `target` (MODULE:NAME) names; `what` says what NAME stands for."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise failed(f"{field}: '{target}' is not MODULE:{what}")
    if py_path and py_path not in sys.path:
        sys.path.insert(0, py_path)
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # an import error, or anything the module raises at import
        raise failed(f"{field}: cannot import module '{module_name}': "
                     f"{type(error).__name__}: {error}", error) from error
    found = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise failed(f"{field}: module '{module_name}' has no attribute '{attribute}'")
        found = getattr(found, part)
    return found
