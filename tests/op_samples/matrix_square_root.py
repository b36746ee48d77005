"""Samplers and error cases for ops/matrix_square_root.py: matrices near a positive
multiple of the identity (eigenvalues well inside the right half plane), not symmetric."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import matrix_square_root as msr

from .common import Case, floats
from .common import constant as _c


def _sqrtm(draw):
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    n = draw(st.integers(1, 4))
    return Case([floats(draw, batch + (n, n), (-0.4, 0.4)) + 2.0 * np.eye(n)])


SAMPLES = {"MatrixSquareRoot": _sqrtm}

ERRORS = [
    (lambda: msr.sqrtm(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square. \[Op:MatrixSquareRoot\]"),
    (lambda: msr.sqrtm(_c([[1]])), InvalidArgumentError, r"int32.*\[Op:MatrixSquareRoot\]"),
    (lambda: msr.sqrtm(tf.ones([2, 2], tf.float16)), tf.errors.NotFoundError,
     r"MatrixSquareRoot\[T=DT_HALF\] \[Op:MatrixSquareRoot\]"),
]
