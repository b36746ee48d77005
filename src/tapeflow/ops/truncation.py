"""Rounding toward zero and saturation, composed of the table's ops: tf.truncatediv,
tf.truncatemod and tf.saturate_cast."""

import numpy as np

from .. import dtypes
from . import rules
from .elementwise import (cast, ceil, floor, floordiv, less, logical_and, maximum, minimum,
                          not_equal, operand_pair, subtract, where)


def truncatediv(x, y, name=None):
    """x / y rounded toward zero (tf.truncatediv): -7 / 2 is -3, where floordiv gives -4.

    >>> import tapeflow as tf
    >>> tf.truncatediv(tf.constant([-7, 7]), tf.constant([2, 2])).numpy()
    array([-3,  3], dtype=int32)
    """
    x, y = operand_pair(x, y)
    if x.dtype.is_floating:
        q = x / y
        return where(less(q, 0), ceil(q), floor(q))
    q = floordiv(x, y)
    exact = q * y
    # floor moved one toward zero where the division was inexact and the signs differ
    inexact = not_equal(exact, x)
    opposite = not_equal(less(x, 0), less(y, 0))
    return where(logical_and(inexact, opposite), q + 1, q)


def truncatemod(x, y, name=None):
    """The remainder of truncatediv: x - truncatediv(x, y) * y, the sign of x (C's %)."""
    x, y = operand_pair(x, y)
    return subtract(x, truncatediv(x, y) * y)


def saturate_cast(value, dtype, name=None):
    """`value` cast to `dtype`, values outside its range clipped to its limits first
    (tf.saturate_cast; for a float source, the largest float inside the limits).

    >>> import tapeflow as tf
    >>> tf.saturate_cast(tf.constant([-3.0, 300.0, 1.5]), tf.uint8).numpy()
    array([  0, 255,   1], dtype=uint8)
    """
    value, dtype = rules.as_tensor(value), dtypes.as_dtype(dtype)
    source, target = value.dtype._np, dtype._np
    if target.kind != "b" and source.kind != "b":
        info = np.finfo if target.kind == "f" else np.iinfo
        low, high = info(target).min, info(target).max
        if _range(source)[0] < low:
            value = maximum(value, _inside(low, source, toward=np.inf))
        if _range(source)[1] > high:
            value = minimum(value, _inside(high, source, toward=-np.inf))
    return cast(value, dtype)


def _range(np_dtype):
    info = np.finfo if np_dtype.kind == "f" else np.iinfo
    return info(np_dtype).min, info(np_dtype).max


def _inside(limit, np_dtype, toward):
    """`limit` in `np_dtype`, moved toward `toward` if the conversion rounded past it."""
    value = np.asarray(limit).astype(np_dtype)
    exact = float(value)  # a Python float compares exactly with an int limit
    if np_dtype.kind == "f" and (exact > limit if toward < 0 else exact < limit):
        value = np.nextafter(value, np_dtype.type(toward))
    return value


__all__ = ["truncatediv", "truncatemod", "saturate_cast"]
