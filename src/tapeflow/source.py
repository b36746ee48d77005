"""The user's code as tapeflow reports it: the innermost caller outside the package,
named by warnings and by the errors raised while tracing."""

import linecache
import os
import sys
import warnings

from . import context
from .errors import InvalidArgumentError, OpError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


_ours = {}  # file name -> whether it is tapeflow's (or the import system's)


def _user_frame():
    # Every traced op asks, through a dozen frames: a lookup per frame, not two
    # string comparisons.
    frame = sys._getframe(1)
    ours = _ours
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = ours.get(filename)
        if inside is None:
            inside = ours[filename] = filename.startswith((_PACKAGE_DIR, "<frozen"))
        if not inside:
            return frame
        frame = frame.f_back
    return None


def user_source():
    """(filename, lineno) of the innermost caller outside tapeflow, or None."""
    frame = _user_frame()
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def user_location():
    frame = _user_frame()
    if frame is None:
        return "<unknown>"
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return f"{where} ({text})" if text else where


def warn(message, category=RuntimeWarning):
    """A warning attributed to the user's innermost line: tapeflow's own modules are
    filtered out of RuntimeWarnings (NumPy's inf/nan warnings, registry.py)."""
    filename, lineno = user_source() or ("<tapeflow>", 0)
    warnings.warn_explicit(message, category, filename, lineno)


def raised_while_tracing(error):
    """`error`, raised while building a graph, as TensorFlow raises it there, naming the
    user's line."""
    message = f"{error}\n  raised while tracing tf.function, at {user_location()}"
    if type(error) is InvalidArgumentError and (
            getattr(error, "about_dtype", False) or not context.shapes_known_at_run_time.get()):
        # Building a graph, TensorFlow raises these as TypeError (a dtype) or ValueError
        # (a shape, an attribute); InvalidArgumentError is for values when it runs.
        return (TypeError if getattr(error, "about_dtype", False) else ValueError)(message)
    if isinstance(error, OpError):
        return type(error)(message, op=error.op)
    try:
        return type(error)(message)
    except TypeError:
        return InvalidArgumentError(message)
