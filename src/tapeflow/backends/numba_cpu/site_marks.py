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


def quiet_names():
    """The names of the calls that cannot fail unnamed: the calls above and the scalar
    helpers of kernels/ (from cache.helper_names). Made once per kernel, not per line: an
    unrolled loop of 1,000 steps has 80,000 lines, and looking the helpers' names up for
    each took 0.1 s more of its source generation."""
    from . import cache
    return _QUIET | frozenset(name for name, module in cache.helper_names().items()
                              if module.rpartition(".")[2] in _SCALAR_MODULES)


def may_fail(line, quiet):
    """Whether `line` (generated code) may raise an error that names no node; `quiet` is
    quiet_names()."""
    if "(" not in line:  # no call (most lines: reads, stores, arithmetic)
        return False
    stripped = line.lstrip()
    if stripped.startswith("#"):
        return False
    return any(name not in quiet and not name.startswith("math.")
               for name in _CALL.findall(stripped))
