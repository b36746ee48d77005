"""Samplers and error cases for ops/linalg.py."""

import importlib

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

la = importlib.import_module("tapeflow.ops.linalg")

from .common import Case, broadcast_shapes, floats, ints, sometimes_complex
from .common import constant as _c


def _side(draw, lo=1, hi=4):
    return draw(st.integers(lo, hi))


def _matrix_values(draw, shape):
    """Mostly float64; sometimes int32 (no gradient checked on those)."""
    if draw(st.integers(0, 5)) == 0:
        return ints(draw, shape, -3, 3)
    return floats(draw, shape, (-1.0, 1.0))


def _matmul(draw):
    m, k, n = _side(draw), _side(draw), _side(draw)
    ta, tb = draw(st.booleans()), draw(st.booleans())
    a_shape = (k, m) if ta else (m, k)
    b_shape = (n, k) if tb else (k, n)
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, a_shape, -3, 3), ints(draw, b_shape, -3, 3)],
                    {"transpose_a": ta, "transpose_b": tb})
    return Case([floats(draw, a_shape, (-1.0, 1.0)), floats(draw, b_shape, (-1.0, 1.0))],
                {"transpose_a": ta, "transpose_b": tb})


def _batch_matmul(draw):
    bx, by = broadcast_shapes(draw, n=2, min_dims=0, max_dims=2, max_side=3)
    m, k, n = _side(draw), _side(draw), _side(draw)
    adj_x, adj_y = draw(st.booleans()), draw(st.booleans())
    x_shape = tuple(bx) + ((k, m) if adj_x else (m, k))
    y_shape = tuple(by) + ((n, k) if adj_y else (k, n))
    attrs = {"adj_x": adj_x, "adj_y": adj_y}
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, x_shape, -3, 3), ints(draw, y_shape, -3, 3)], attrs)
    return Case([floats(draw, x_shape, (-1.0, 1.0)), floats(draw, y_shape, (-1.0, 1.0))],
                attrs)


# (equation, labels that broadcast): two-operand contractions, outer products, repeated
# labels (diagonals) and broadcast (ellipsis) labels.
_BINARY_EQUATIONS = [
    ("ij,jk->ik", ""), ("bij,bjk->bik", ""), ("ij,ij->i", ""), ("i,j->ij", ""),
    ("ij,j->i", ""), ("ij,kj->ki", ""), ("ijk,k->i", ""), ("ii,i->i", ""),
    ("bxby,by->bx", ""), ("iij,jk->ik", ""), ("ij,->ij", ""), ("ij,k->ik", ""),
    ("Aij,Ajk->Aik", "A"), ("ABi,Bi->ABi", "AB"),
]
_UNARY_EQUATIONS = [
    ("ii->i", ""), ("ij->", ""), ("ij->ji", ""), ("bxby->bxy", ""), ("iij->j", ""),
    ("ijk->ki", ""), ("ii->", ""), ("i->i", ""), ("iji->j", ""), ("Aij->Aj", "A"),
]


def _einsum_case(draw, table, n):
    equation, broadcast = draw(st.sampled_from(table))
    lhs, _ = equation.split("->")
    operands = lhs.split(",")
    size = {c: _side(draw) for c in set(lhs.replace(",", ""))}
    inputs = []
    for labels in operands:
        shape = tuple(1 if c in broadcast and draw(st.integers(0, 2)) == 0 else size[c]
                      for c in labels)
        inputs.append(floats(draw, shape, (-1.0, 1.0)))
    if draw(st.integers(0, 7)) == 0:
        inputs = [np.round(a * 3).astype(np.int32) for a in inputs]
    assert len(inputs) == n
    return Case(inputs, {"equation": equation, "broadcast": broadcast})


def _well_conditioned(draw, batch, n):
    """Diagonally dominant matrices: far from singular, so finite differences are
    meaningful for inverse, determinant and solve."""
    a = floats(draw, tuple(batch) + (n, n), (-1.0, 1.0))
    return a + (n + 1.0) * np.eye(n) * draw(st.sampled_from([1.0, -1.0]))


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 3), max_size=2)))


def _inverse(draw):
    return Case([_well_conditioned(draw, _batch(draw), _side(draw))],
                {"adjoint": draw(st.booleans())})


def _determinant(draw):
    return Case([_well_conditioned(draw, _batch(draw), _side(draw))])


def _solve(draw):
    batch, n = _batch(draw), _side(draw)
    rhs = floats(draw, batch + (n, _side(draw)), (-1.0, 1.0))
    return Case([_well_conditioned(draw, batch, n), rhs], {"adjoint": draw(st.booleans())})


def _diag(draw):
    batch, n = _batch(draw), _side(draw)
    k = draw(st.integers(-2, 2))
    rows = cols = -1
    extra = draw(st.integers(0, 2))
    if extra and draw(st.booleans()):
        rows = n + max(-k, 0) + extra
    elif extra:
        cols = n + max(k, 0) + extra
    padding = draw(st.sampled_from([0, 0.0, 1.5]))
    return Case([floats(draw, batch + (n,))],
                {"k": k, "num_rows": rows, "num_cols": cols, "padding_value": padding})


def _diag_part(draw):
    batch, rows, cols = _batch(draw), _side(draw), _side(draw)
    k = draw(st.integers(-rows + 1, cols - 1))
    return Case([_matrix_values(draw, batch + (rows, cols))], {"k": k, "padding_value": 0})


SAMPLES = {
    "MatMul": sometimes_complex(_matmul),
    "BatchMatMulV2": sometimes_complex(_batch_matmul),
    "Einsum": lambda draw: _einsum_case(draw, _BINARY_EQUATIONS, 2),
    "UnaryEinsum": lambda draw: _einsum_case(draw, _UNARY_EQUATIONS, 1),
    "MatrixInverse": _inverse,
    "MatrixDeterminant": _determinant,
    "MatrixSolve": _solve,
    "MatrixDiagV3": _diag,
    "MatrixDiagPartV3": _diag_part,
}



_SINGULAR = [[1.0, 2.0], [2.0, 4.0]]

ERRORS = [
    # matmul: ranks, inner dimensions, batch dimensions, dtypes
    (lambda: la.matmul(tf.ones([2, 3]), tf.ones([4, 5])), InvalidArgumentError,
     r"Matrix size-incompatible: In\[0\]: \[2,3\], In\[1\]: \[4,5\] \[Op:MatMul\]"),
    (lambda: la.matmul(tf.ones([3]), tf.ones([3])), InvalidArgumentError,
     r"In\[0\] and In\[1\] ndims must be == 2: 1 \[Op:MatMul\]"),
    (lambda: la.matmul(tf.ones([2, 3]), tf.ones([3])), InvalidArgumentError,
     r"In\[0\] and In\[1\] has different ndims: \[2,3\] vs. \[3\] \[Op:MatMul\]"),
    (lambda: la.matmul(tf.ones([2, 3, 4]), tf.ones([4])), InvalidArgumentError,
     r"In\[1\] ndims must be >= 2: 1 \[Op:BatchMatMulV2\]"),
    (lambda: la.matmul(tf.ones([2, 3, 4]), tf.ones([3, 4, 5])), InvalidArgumentError,
     r"must have compatible batch dimensions: \[2,3,4\] vs. \[3,4,5\] \[Op:BatchMatMulV2\]"),
    (lambda: la.matmul(tf.ones([2, 3, 4]), tf.ones([2, 5, 6])), InvalidArgumentError,
     (r"Matrix size-incompatible: In\[0\]: \[2,3,4\], In\[1\]: \[2,5,6\] 0 0 "
      r"\[Op:BatchMatMulV2\]")),
    (lambda: la.matmul(tf.ones([2, 3]), tf.ones([2, 3]), transpose_a=True, adjoint_a=True),
     ValueError, r"Only one of `transpose_a` and `adjoint_a`"),
    (lambda: la.matmul(tf.ones([2, 3]), _c([[1], [2], [3]])), InvalidArgumentError,
     r"float32.*int32.*\[Op:MatMul\]"),
    (lambda: la.matmul(_c([[True]]), _c([[False]])), InvalidArgumentError,
     r"bool.*\[Op:MatMul\]"),
    (lambda: tf.ones([2, 3]) @ tf.ones([2, 3]), InvalidArgumentError,
     r"Matrix size-incompatible.*\[Op:MatMul\]"),
    # einsum
    (lambda: la.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([4, 5])), InvalidArgumentError,
     (r"Expected dimension 3 at axis 0 of the input shaped \[4,5\] but got dimension 4 "
      r"\[Op:Einsum\]")),
    (lambda: la.einsum("ij,jk->ik", tf.ones([2, 3])), ValueError, r"expecting 2"),
    # TensorFlow 2.21: ValueError "Output subscripts contain the label k not present in
    # the input subscripts." (checked in Python, before any kernel)
    (lambda: la.einsum("ij->ik", tf.ones([2, 3])), ValueError,
     r"Einsum: output subscripts contain the label k not present in the input"),
    (lambda: la.einsum("ij,jk->ikx", tf.ones([2, 2]), tf.ones([2, 2])), ValueError,
     r"Einsum: .*label x not present"),
    (lambda: la.einsum("ij4->i", tf.ones([2, 3])), ValueError, r"incorrect format"),
    (lambda: la.einsum("ijk->i", tf.ones([2, 3])), InvalidArgumentError,
     r"rank 3 but got: 2.*\[Op:Einsum\]"),
    (lambda: la.einsum("ii->i", tf.ones([2, 3])), InvalidArgumentError,
     r"Expected dimension 2 at axis 1.*\[Op:Einsum\]"),
    (lambda: la.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([3, 2], tf.float64)),
     InvalidArgumentError, r"float32.*float64.*\[Op:Einsum\]"),
    (lambda: la.tensordot(tf.ones([2, 3]), tf.ones([4, 5]), 1), InvalidArgumentError,
     r"\[Op:MatMul\]"),
    (lambda: la.tensordot(tf.ones([2, 3]), tf.ones([3, 5]), [[1], [0, 1]]), ValueError,
     r"Different number of contraction axes"),
    # inverse, determinant, solve
    (lambda: la.inv(_c(_SINGULAR)), InvalidArgumentError,
     r"Input is not invertible. \[Op:MatrixInverse\]"),
    (lambda: la.inv(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square.*\[2,3\] \[Op:MatrixInverse\]"),
    (lambda: la.inv(tf.ones([3])), InvalidArgumentError,
     r"must have rank >= 2.*\[Op:MatrixInverse\]"),
    (lambda: la.inv(_c([[1, 2], [3, 4]])), InvalidArgumentError,
     r"int32.*\[Op:MatrixInverse\]"),
    (lambda: la.det(tf.ones([2, 3])), InvalidArgumentError,
     r"must be square.*\[Op:MatrixDeterminant\]"),
    (lambda: la.det(_c([[1, 2], [3, 4]])), InvalidArgumentError,
     r"int32.*\[Op:MatrixDeterminant\]"),
    (lambda: la.solve(_c(_SINGULAR), tf.ones([2, 1])), InvalidArgumentError,
     r"Input matrix is not invertible. \[Op:MatrixSolve\]"),
    (lambda: la.solve(tf.ones([2, 2]), tf.ones([3, 1])), InvalidArgumentError,
     r"same number of rows.*\[Op:MatrixSolve\]"),
    (lambda: la.solve(tf.ones([2, 3]), tf.ones([2, 1])), InvalidArgumentError,
     r"square.*\[Op:MatrixSolve\]"),
    (lambda: la.solve(tf.ones([2, 2]), tf.ones([2])), InvalidArgumentError,
     r"rank >= 2.*\[Op:MatrixSolve\]"),
    (lambda: la.solve(tf.ones([3, 2, 2]), tf.ones([2, 2, 1])), InvalidArgumentError,
     r"outer dimensions.*\[Op:MatrixSolve\]"),
    (lambda: la.solve(tf.ones([2, 2]), tf.ones([2, 1], tf.float64)), InvalidArgumentError,
     r"float32.*float64.*\[Op:MatrixSolve\]"),
    # diagonals, trace
    (lambda: la.diag(_c(1.0)), InvalidArgumentError,
     r"at least 1-dim.*\[Op:MatrixDiagV3\]"),
    (lambda: la.diag(_c([1.0, 2.0]), num_rows=5, num_cols=5), InvalidArgumentError,
     r"not consistent.*\[Op:MatrixDiagV3\]"),
    (lambda: la.diag_part(tf.ones([3])), InvalidArgumentError,
     r"at least 2-dim, received shape: \[3\] \[Op:MatrixDiagPartV3\]"),
    (lambda: la.diag_part(tf.ones([2, 2]), k=3), InvalidArgumentError,
     r"out of bounds.*\[Op:MatrixDiagPartV3\]"),
    (lambda: la.trace(tf.ones([3])), InvalidArgumentError, r"\[Op:MatrixDiagPartV3\]"),
    # norms
    (lambda: la.norm(tf.ones([2, 3]), ord="fro"), ValueError, r"supported vector norm"),
    (lambda: la.norm(tf.ones([2, 3]), ord=-1), ValueError, r"supported vector norm"),
    (lambda: la.norm(tf.ones([2, 3]), ord=3, axis=(0, 1)), ValueError,
     r"supported matrix norm"),
    (lambda: la.norm(tf.ones([2, 3]), axis=(0, 0)), ValueError, r"2 unique integers"),
    (lambda: la.norm(tf.ones([2, 3]), axis=5), InvalidArgumentError,
     r"Invalid reduction dimension 5"),
    (lambda: la.norm(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:Sqrt\]"),
    (lambda: la.clip_by_norm(_c([1, 2]), 1.0), InvalidArgumentError, r"int32.*\[Op:Sqrt\]"),
    (lambda: la.clip_by_norm(tf.ones([2]), tf.ones([3])), InvalidArgumentError,
     r"Incompatible shapes"),
]

__all__ = ["ERRORS", "SAMPLES"]
