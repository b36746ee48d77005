"""Samplers and error cases for ops/sorting.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import sorting

from .common import Case, floats, ints, shapes
from .common import constant as _c


def _top_k(draw):
    """Rows of distinct floats at least 0.05 apart (finite differences never reorder them),
    or small ints with ties (values only: equal values go in index order)."""
    shape = shapes(draw, min_dims=1)
    k = draw(st.integers(0, shape[-1]))
    attrs = {"k": k, "sorted": True,
             "index_type": draw(st.sampled_from([tf.int32, tf.int64]))}
    if draw(st.integers(0, 3)) == 0:
        return Case([ints(draw, shape, -2, 2)], attrs, wrt=())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ranks = np.argsort(rng.random(shape), axis=-1)
    noise = floats(draw, shape, (0.0, 0.04))
    return Case([ranks * 0.1 + noise + floats(draw, (), (-1.0, 1.0))], attrs, outputs=(0,))


SAMPLES = {"TopKV2": _top_k}

ERRORS = [
    (lambda: sorting.top_k(_c([1.0, 2.0]), 3), InvalidArgumentError,
     r"input must have at least k columns. Had 2, needed 3 \[Op:TopKV2\]"),
    (lambda: sorting.top_k(_c([1.0, 2.0]), -1), InvalidArgumentError,
     r"Need k >= 0, got -1 \[Op:TopKV2\]"),
    (lambda: sorting.top_k(_c(1.0), 1), InvalidArgumentError,
     r"input must be >= 1-D, got shape \[\] \[Op:TopKV2\]"),
    (lambda: sorting.top_k(_c([True]), 1), InvalidArgumentError, r"bool.*\[Op:TopKV2\]"),
    (lambda: sorting.sort(_c([1.0]), direction="UP"), ValueError,
     "should be one of ASCENDING, DESCENDING"),
]
