"""How a kernel's run-time checks fail: by calling one of these, compiled once and called
by symbol, rather than with a `raise` of their own. Numba lowers every `raise` with the
machinery that builds and hands back the exception, about 25 ms of a kernel's first
compile each (a kernel with a gather in a loop has several); a call costs a branch.

The exception is NumPy's class with the check's code and values as its arguments,
`(code, (value, ...))`; runtime.py names the node and writes TensorFlow's message.
"""

import numpy as np

from . import array_helper


@array_helper
def fail_value(code, values):
    raise ValueError(code, values)


@array_helper
def fail_index(code, values):
    raise IndexError(code, values)


@array_helper
def check_row(code, k, n):
    """Raises IndexError(code, (k, n, 0)) unless 0 <= k < n: a gather's row."""
    if k < 0 or k >= n:
        raise IndexError(code, (np.int64(k), np.int64(n), np.int64(0)))


@array_helper
def checked_position(code, k, n):
    """k as a position among n (a negative k counts from the end), or IndexError(code,
    (k,)): a slice's index."""
    if not -n <= k < n:
        raise IndexError(code, (np.int64(k),))
    return k + n if k < 0 else k
