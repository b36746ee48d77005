"""Samplers and error cases for ops/lu.py: matrices whose pivots are far from ties (a
row permutation of a matrix with a dominant diagonal), so that the permutation stays
put under finite differences."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import lu

from .common import Case, floats, seed
from .common import constant as _c


def _lu(draw):
    rng = np.random.default_rng(seed(draw))
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    n = draw(st.integers(1, 4))
    a = floats(draw, batch + (n, n), (-0.3, 0.3)) + np.eye(n) * (2.0 + rng.uniform(0, 1, n))
    a = a[..., rng.permutation(n), :]
    return Case([a], {"output_idx_type": draw(st.sampled_from([tf.int32, tf.int64]))})


SAMPLES = {"Lu": _lu}

ERRORS = [
    (lambda: lu.lu(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square. \[Op:Lu\]"),
    (lambda: lu.lu(tf.ones([3])), InvalidArgumentError,
     r"Input tensor must have rank >= 2, got 1 \[Op:Lu\]"),
    (lambda: lu.lu(_c([[1]])), InvalidArgumentError, r"int32.*\[Op:Lu\]"),
    (lambda: lu.lu(tf.zeros([3, 3])), InvalidArgumentError,
     r"Input is not invertible. \[Op:Lu\]"),
    (lambda: lu.lu(tf.ones([2, 2], tf.float16)), tf.errors.NotFoundError,
     (r"Could not find device for node: \{\{node Lu\}\} = Lu\[T=DT_HALF, "
      r"output_idx_type=DT_INT32\] \[Op:Lu\]")),
]
