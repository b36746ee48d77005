"""Samplers and error cases for ops/matrix.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import FailedPreconditionError, InvalidArgumentError
from tapeflow.ops import matrix

from .common import Case, broadcast_shapes, floats, ints
from .common import constant as _c


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 3), max_size=2)))


def _values(draw, shape):
    """Mostly float64; sometimes int32 (no gradient checked on those)."""
    if draw(st.integers(0, 5)) == 0:
        return ints(draw, shape, -3, 3)
    return floats(draw, shape, (-1.0, 1.0))


def _band_part(draw):
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return Case([_values(draw, _batch(draw) + (rows, cols))],
                {"num_lower": draw(st.integers(-1, rows)),
                 "num_upper": draw(st.integers(-1, cols))})


def _set_diag(draw):
    batch, rows, cols = _batch(draw), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = draw(st.integers(-rows + 1, cols - 1))
    length = max(0, min(rows + min(k, 0), cols - max(k, 0)))
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, batch + (rows, cols)), ints(draw, batch + (length,))],
                    {"k": k})
    return Case([floats(draw, batch + (rows, cols)), floats(draw, batch + (length,))],
                {"k": k})


def _triangular_solve(draw):
    """Triangles with a dominant diagonal (far from singular); the other triangle holds
    values the op must not read. Batch dimensions broadcast."""
    batch_a, batch_b = broadcast_shapes(draw, n=2, min_dims=0, max_dims=2, max_side=3)
    n, k = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    a = floats(draw, tuple(batch_a) + (n, n), (-1.0, 1.0))
    a = a + (n + 1.0) * np.eye(n) * draw(st.sampled_from([1.0, -1.0]))
    return Case([a, floats(draw, tuple(batch_b) + (n, k), (-1.0, 1.0))],
                {"lower": draw(st.booleans()), "adjoint": draw(st.booleans())})


def _cross(draw):
    shape = _batch(draw) + (3,)
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, shape), ints(draw, shape)])
    return Case([floats(draw, shape), floats(draw, shape)])


SAMPLES = {
    "MatrixBandPart": _band_part,
    "MatrixSetDiagV3": _set_diag,
    "MatrixTriangularSolve": _triangular_solve,
    "Cross": _cross,
}

ERRORS = [
    (lambda: matrix.band_part(tf.ones([3, 4]), 5, 0), InvalidArgumentError,
     r"num_lower must be negative or less or equal to number of rows \(3\) got: 5 "
     r"\[Op:MatrixBandPart\]"),
    (lambda: matrix.band_part(tf.ones([3, 4]), 0, 5), InvalidArgumentError,
     r"num_upper must be negative or less or equal to number of columns \(4\) got: 5 "
     r"\[Op:MatrixBandPart\]"),
    (lambda: matrix.band_part(tf.ones([3]), 1, 0), InvalidArgumentError,
     r"input must be at least 2-dim, received shape: \[3\] \[Op:MatrixBandPart\]"),
    (lambda: matrix.band_part(tf.ones([3, 4]), 1.5, 0), TypeError,
     r"Cannot convert 1.5 to EagerTensor of dtype int64"),
    (lambda: matrix.set_diag(tf.ones([2, 3]), [5.0, 6.0, 7.0]), InvalidArgumentError,
     r"Either first dimensions of diagonal don't match input.shape\[:-2\].*\n"
     r"Input shape: \[2,3\]\nDiagonal shape: \[3\]\nExpected diagonal shape: \[2\] "
     r"\[Op:MatrixSetDiagV3\]"),
    (lambda: matrix.set_diag(tf.ones([3]), [5.0]), InvalidArgumentError,
     r"input must be at least 2-dim, received shape: \[3\] \[Op:MatrixSetDiagV3\]"),
    (lambda: matrix.set_diag(tf.ones([2, 3]), _c([5.0, 6.0], tf.float64)),
     InvalidArgumentError, r"input #1\(zero-based\) was expected to be a float32 tensor "
                           r"but is a float64 tensor \[Op:MatrixSetDiagV3\]"),
    (lambda: matrix.triangular_solve(tf.ones([2, 3]), tf.ones([2, 1])), InvalidArgumentError,
     r"In\[0\] matrices in the last dimensions must be square \(3 =/= 2\) "
     r"\[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.triangular_solve(tf.ones([2, 2]), tf.ones([3, 1]), lower=False,
                                     adjoint=True), InvalidArgumentError,
     r"In\[0\] mismatch In\[1\] shape: 2 vs. 3: \[2,2\] \[3,1\] 0 1 "
     r"\[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.triangular_solve(tf.ones([2, 2, 2]), tf.ones([3, 2, 1])),
     InvalidArgumentError, r"In\[0\] and In\[1\] must have compatible batch dimensions: "
                           r"\[2,2,2\] vs. \[3,2,1\] \[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.triangular_solve(tf.ones([2]), tf.ones([2, 1])), InvalidArgumentError,
     r"In\[0\] ndims must be >= 2: 1 \[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.triangular_solve(tf.ones([2, 2]), tf.ones([2, 1], tf.float64)),
     InvalidArgumentError, r"float32.*float64.*\[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.triangular_solve(_c([[1]]), _c([[1]])), InvalidArgumentError,
     r"int32.*\[Op:MatrixTriangularSolve\]"),
    (lambda: matrix.cross(tf.ones([3]), tf.ones([4])), InvalidArgumentError,
     r"Both inputs must be of same shape: \[3\] vs. \[4\] \[Op:Cross\]"),
    (lambda: matrix.cross(tf.ones([4]), tf.ones([4])), FailedPreconditionError,
     r"Cross-products are only defined for 3-element vectors. \[Op:Cross\]"),
    (lambda: matrix.cross(tf.ones([]), tf.ones([])), InvalidArgumentError,
     r"Input must be at least 1D\[\] \[Op:Cross\]"),
    (lambda: matrix.cross(_c([True] * 3), _c([True] * 3)), InvalidArgumentError,
     r"bool.*\[Op:Cross\]"),
    (lambda: matrix.matrix_transpose(tf.ones([3])), ValueError,
     r"Argument `a` should be a \(batch\) matrix with rank >= 2"),
]
