"""Samplers and error cases for ops/searching.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import searching

from .common import Case, ints, shapes
from .common import constant as _c


def _bound(draw):
    """Sorted rows of small ints (ties included; sometimes as floats) and values around
    and inside them."""
    lead = shapes(draw, max_dims=2)
    n, m = draw(st.integers(1, 5)), draw(st.integers(0, 4))
    rows = np.sort(ints(draw, lead + (n,), -3, 3), axis=-1)
    values = ints(draw, lead + (m,), -4, 4)
    if draw(st.booleans()):
        rows, values = rows.astype(np.float64), values.astype(np.float64) + 0.5 * (
            ints(draw, lead + (m,), 0, 2))
    return Case([rows, values], {"out_type": draw(st.sampled_from([tf.int32, tf.int64]))})


def _unique(draw):
    n = draw(st.integers(0, 8))
    x = ints(draw, (n,), -2, 2)
    if draw(st.booleans()):
        x = np.where(ints(draw, (n,), 0, 4) == 0, np.nan, x.astype(np.float64))
    return Case([x], {"out_idx": draw(st.sampled_from([tf.int32, tf.int64]))})


SAMPLES = {"LowerBound": _bound, "UpperBound": _bound, "Unique": _unique,
           "UniqueWithCounts": _unique}

ERRORS = [
    (lambda: searching.searchsorted(_c([[1.0, 2.0]]), _c([[1.0], [2.0]])),
     InvalidArgumentError, r"Leading dim_size of both tensors must match. \[Op:LowerBound\]"),
    (lambda: searching.searchsorted(_c([1.0]), _c([1.0]), side="mid"), ValueError,
     "must be either 'right' or 'left'"),
    (lambda: searching.unique(_c([[1, 2]])), InvalidArgumentError,
     r"unique expects a 1D vector. \[Op:Unique\]"),
]
