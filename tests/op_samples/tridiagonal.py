"""Samplers and error cases for ops/tridiagonal.py: diagonals [..., 3, M] (the unread
corners included) and right-hand sides [..., M, K]; the main diagonal sometimes small,
so that partial pivoting interchanges rows."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.ops import tridiagonal as tri

from .common import Case, floats
from .common import constant as _c


def _tridiagonal_solve(draw):
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=2)))
    m, k = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    diagonals = floats(draw, batch + (3, m), (0.5, 1.0))
    diagonals *= np.where(floats(draw, batch + (3, m), (-1.0, 1.0)) < 0, -1.0, 1.0)
    pivoting = draw(st.booleans())
    if not pivoting or draw(st.booleans()):  # dominant: no interchange, far from singular
        diagonals[..., 1, :] += 2.5 * np.sign(diagonals[..., 1, :])
    else:  # a subdiagonal at least twice the diagonal: rows interchange
        diagonals[..., 1, :] *= 0.1
        diagonals[..., 1, :] += 0.05 * np.sign(diagonals[..., 1, :])
        diagonals[..., 2, :] *= 4.0
    return Case([diagonals, floats(draw, batch + (m, k), (-1.0, 1.0))],
                {"partial_pivoting": pivoting, "perturb_singular": False})


SAMPLES = {"TridiagonalSolve": _tridiagonal_solve}

ERRORS = [
    (lambda: tri.tridiagonal_solve(tf.ones([3, 4]), tf.ones([3, 1])), ValueError,
     r"Expected number of left-hand sided and right-hand sides to be equal, got 4 and 3"),
    (lambda: tri.tridiagonal_solve(tf.ones([2, 4]), tf.ones([4, 1])), ValueError,
     r"Expected 3 diagonals got 2"),
    (lambda: tri.tridiagonal_solve(tf.ones([3, 4]), tf.ones([4, 1]), partial_pivoting=False,
                                   perturb_singular=True), ValueError,
     r"partial_pivoting must be True if perturb_singular is."),
    (lambda: tri.tridiagonal_solve(_c([[1, 1], [1, 1], [1, 1]]), _c([1, 1])),
     tf.errors.InvalidArgumentError, r"int32.*\[Op:TridiagonalSolve\]"),
]
