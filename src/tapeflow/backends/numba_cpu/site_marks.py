"""Which generated code needs the kernel's `W[0] = k` store before it (generator.mark).

The store tells an error that no check of ours raises (an allocation too big, a singular
matrix, a helper's own error) which node was running. Each store costs Numba about 1.4 ms
to compile, and most nodes cannot fail that way: scalar arithmetic, conversions and math,
views of arrays, indexing (unchecked) and the checks, which name their node themselves.
A store followed only by such code gives its place to the next node's store.
"""

import re

import numpy as np

from .text import SUPPORTED_DTYPES, np_name

_CALL = re.compile(r"([A-Za-z_][\w.]*)\s*\(")

# Calls that raise nothing, or only the coded errors of kernels/failures.py.
_QUIET = frozenset({"range", "min", "max", "abs", "len", "int", "float", "bool",
                    "flat_view", "reshaped", "check_row", "checked_position", "fail_value",
                    "fail_index", *(np_name(np.dtype(d)) for d in SUPPORTED_DTYPES)})
# Helper modules of kernels/ whose functions are scalar math, which cannot raise.
_SCALAR_MODULES = ("scalar_math", "special_math")


def may_fail(line):
    """Whether `line` (generated code) may raise an error that names no node."""
    if "(" not in line:  # no call (most lines: reads, stores, arithmetic)
        return False
    stripped = line.lstrip()
    if stripped.startswith("#"):
        return False
    return any(not _quiet(name) for name in _CALL.findall(stripped))


def _quiet(name):
    return name in _QUIET or name.startswith("math.") or name in _scalar_helpers()


# (the helper_names() dict it was made from, the scalar helpers' names): made once, not
# per line (an unrolled loop of 1,000 steps asks 8,000 times)
_scalar = (None, frozenset())


def _scalar_helpers():
    global _scalar
    from . import cache
    names = cache.helper_names()
    if _scalar[0] is not names:
        _scalar = (names, frozenset(name for name, module in names.items()
                                    if module.rpartition(".")[2] in _SCALAR_MODULES))
    return _scalar[1]
