"""Tridiagonal systems: TridiagonalSolve (Gaussian elimination with or without partial
pivoting, as TensorFlow's CPU kernel, with TensorFlow's gradient) and what TensorFlow
writes around it in Python: tridiagonal_solve's three formats of diagonals (compact
[..., 3, M], a sequence of three [..., M] tensors, a [..., M, M] matrix),
tridiagonal_matmul (here a composition of shifted products, whose gradient is
TensorFlow's TridiagonalMatMul gradient) and eigh_tridiagonal."""

import numpy as np

from . import rules
from .decompositions import eigh as _dense_eigh
from .decompositions import eigvalsh
from .elementwise import cast, greater, less_equal, logical_and
from .linalg import diag, diag_part
from .rearrange import boolean_mask
from .reduce import reduce_sum
from .registry import OpDef, bind, register
from .rules import kernel_dims
from .shape import expand_dims, pad, squeeze, stack

_SOLVE = "TridiagonalSolve"


def _solve_infer(diagonals, rhs, partial_pivoting, perturb_singular):
    if not rules.is_float(diagonals.dtype) or diagonals.dtype.name == "float16":
        rules.check_dtype_in(_SOLVE, diagonals, lambda d: d.name in ("float32", "float64"),
                             "double, float")
    rules.check_same_dtype(_SOLVE, (diagonals, rhs))
    if len(diagonals._shape) < 2 or len(rhs._shape) < 2:
        raise rules.op_error(_SOLVE, f"Expected rank >= 2, got diagonals "
                                     f"{kernel_dims(diagonals._shape)} and rhs "
                                     f"{kernel_dims(rhs._shape)}")
    if diagonals._shape[-2] not in (3, None):
        raise rules.op_error(_SOLVE, f"Expected 3 diagonals got {diagonals._shape[-2]}")
    m, rows = diagonals._shape[-1], rhs._shape[-2]
    if (len(diagonals._shape) != len(rhs._shape)
            or any(a is not None and b is not None and a != b
                   for a, b in zip(diagonals._shape[:-2], rhs._shape[:-2]))
            or None not in (m, rows) and m != rows):
        raise rules.op_error(_SOLVE, f"Batch shapes and the number of equations of "
                                     f"diagonals {kernel_dims(diagonals._shape)} and rhs "
                                     f"{kernel_dims(rhs._shape)} do not match")
    return rhs._shape, rhs.dtype


def _solve_kernel(diagonals, rhs, partial_pivoting, perturb_singular):
    """All systems at once, one row of elimination at a time (LAPACK's gtsv). A zero
    pivot makes that system's solution NaN, as TensorFlow's kernel returns it; with
    `perturb_singular`, pivots tiny next to the largest of U become that size instead."""
    m = rhs.shape[-2]
    batch = rhs.shape[:-2]
    sup = np.array(diagonals[..., 0, :], copy=True)
    d = np.array(diagonals[..., 1, :], copy=True)
    sub = diagonals[..., 2, :]
    sup2 = np.zeros_like(d)  # the second superdiagonal a row interchange fills in
    b = np.array(rhs, copy=True)
    for i in range(m - 1):
        below = sub[..., i + 1]
        swap = np.abs(below) > np.abs(d[..., i]) if partial_pivoting else np.zeros(batch, bool)
        keep = ~swap
        with np.errstate(all="ignore"):
            # no interchange: row i+1 -= f * row i
            f = np.where(keep, below / np.where(keep, d[..., i], 1), 0)
            d_next = np.where(keep, d[..., i + 1] - f * sup[..., i], 0)
            b_next = np.where(keep[..., None], b[..., i + 1, :] - f[..., None] * b[..., i, :],
                              0)
            # interchange rows i and i+1, then eliminate
            g = np.where(swap, d[..., i] / np.where(swap, below, 1), 0)
            after = sup[..., i + 1] if i + 1 < m - 1 else np.zeros(batch, d.dtype)
            d_swapped = sup[..., i] - g * d[..., i + 1]
            b_swapped = b[..., i, :] - g[..., None] * b[..., i + 1, :]
        sup2[..., i] = np.where(swap, after, 0)
        new_sup_i = np.where(swap, d[..., i + 1], sup[..., i])
        d[..., i] = np.where(swap, below, d[..., i])
        if i + 1 < m - 1:
            sup[..., i + 1] = np.where(swap, -g * after, sup[..., i + 1])
        sup[..., i] = new_sup_i
        b_i = np.where(swap[..., None], b[..., i + 1, :], b[..., i, :])
        b[..., i + 1, :] = np.where(swap[..., None], b_swapped, b_next)
        b[..., i, :] = b_i
        d[..., i + 1] = np.where(swap, d_swapped, d_next)
    if perturb_singular and m:
        largest = np.maximum(np.abs(d).max(-1), np.abs(sup[..., :-1]).max(-1, initial=0))
        largest = np.maximum(largest, np.abs(sup2).max(-1))[..., None]
        tiny = np.finfo(d.dtype).eps * largest
        d = np.where(np.abs(d) < tiny, np.where(d < 0, -tiny, tiny), d)
    singular = np.any(d == 0, axis=-1) if m else np.zeros(batch, bool)
    with np.errstate(all="ignore"):
        for i in range(m - 1, -1, -1):
            x = b[..., i, :]
            if i + 1 < m:
                x = x - sup[..., i, None] * b[..., i + 1, :]
            if i + 2 < m:
                x = x - sup2[..., i, None] * b[..., i + 2, :]
            b[..., i, :] = x / d[..., i, None]
    b[singular] = np.nan
    return b


def _transposed(diagonals):
    """The compact diagonals of each matrix's transpose."""
    superdiag = pad(diagonals[..., 2, 1:], [[0, 0]] * (len(diagonals._shape) - 2) + [[0, 1]])
    subdiag = pad(diagonals[..., 0, :-1], [[0, 0]] * (len(diagonals._shape) - 2) + [[1, 0]])
    return stack([superdiag, diagonals[..., 1, :], subdiag], axis=-2)


def _shifted_rows(x, by):
    """x's rows moved `by` places down (up when negative), zeros filling in."""
    rows = [[0, 0]] * (len(x._shape) - 2)
    if by > 0:
        return pad(x[..., :-by, :], rows + [[by, 0], [0, 0]])
    return pad(x[..., -by:, :], rows + [[0, -by], [0, 0]])


def _solve_grad(ctx, grad):
    # TensorFlow's _TridiagonalSolveGrad: the transposed system for rhs, and the three
    # diagonals of -grad_rhs x^T for the diagonals.
    grad_rhs = bind(TRIDIAGONAL_SOLVE, (_transposed(ctx.diagonals), grad), ctx.attrs)
    x = ctx.out
    products = [reduce_sum(grad_rhs * _shifted_rows(x, by), axis=-1) for by in (-1, 0, 1)]
    return -stack(products, axis=-2), grad_rhs


TRIDIAGONAL_SOLVE = register(OpDef(
    name=_SOLVE, args=("diagonals", "rhs"), infer=_solve_infer,
    eager=_solve_kernel, saves=("diagonals", "out"), grad=_solve_grad))


def _compact(diagonals, diagonals_format, what):
    """The diagonals as one [..., 3, M] tensor (TensorFlow's compact format)."""
    if diagonals_format == "compact":
        return rules.as_tensor(diagonals)
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        superdiag, maindiag, subdiag = rules.as_tensors(*diagonals)
        if (superdiag._shape[:-1] != maindiag._shape[:-1]
                or subdiag._shape[:-1] != maindiag._shape[:-1]):
            raise ValueError(
                f"Tensors representing the three diagonals must have the same shape,except "
                f"for the last dimension, got {_shape(subdiag)}, {_shape(maindiag)}, "
                f"{_shape(superdiag)}")
        m = maindiag._shape[-1]

        def padded(t, name, padding):
            n = t._shape[-1]
            if not n or n == m:
                return t
            if n == m - 1:
                return pad(t, [[0, 0]] * (len(t._shape) - 1) + [padding])
            raise ValueError(f"Expected {name} to be have length {m} or {m - 1}, got {n}.")

        return stack([padded(superdiag, "superdiagonal", [0, 1]), maindiag,
                      padded(subdiag, "subdiagonal", [1, 0])], axis=-2)
    if diagonals_format == "matrix":
        matrix = rules.as_tensor(diagonals)
        m1, m2 = matrix._shape[-1], matrix._shape[-2]
        if m1 and m2 and m1 != m2:
            raise ValueError(f"Expected last two dimensions of diagonals to be same, got "
                             f"{m1} and {m2}")
        rank = len(matrix._shape)
        return stack([pad(diag_part(matrix, k=1), [[0, 0]] * (rank - 2) + [[0, 1]]),
                      diag_part(matrix),
                      pad(diag_part(matrix, k=-1), [[0, 0]] * (rank - 2) + [[1, 0]])],
                     axis=-2)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def _shape(t):
    from ..tensor import TensorShape
    return TensorShape(t._shape)


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """Solves tridiagonal systems A x = rhs (tf.linalg.tridiagonal_solve), A given in one
    of three formats: "compact" ([..., 3, M]: superdiagonal, diagonal, subdiagonal, the
    superdiagonal's last and the subdiagonal's first element unread), "sequence" (three
    tensors [..., M] or [..., M - 1]) or "matrix" ([..., M, M]). rhs is [..., M] or
    [..., M, K] (with `transpose_rhs`, [..., K, M]). A singular matrix gives NaN.

    >>> import tapeflow as tf
    >>> diagonals = tf.constant([[1., 1., 0.], [4., 4., 4.], [0., 1., 1.]])
    >>> tf.linalg.tridiagonal_solve(diagonals, tf.constant([5., 6., 5.])).numpy().round(4)
    array([1., 1., 1.], dtype=float32)
    """
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    diagonals = _compact(diagonals, diagonals_format, "tridiagonal_solve")
    rhs = rules.as_tensor(rhs, diagonals.dtype)
    diags_rank, rhs_rank = len(diagonals._shape), len(rhs._shape)
    if diags_rank < 2:
        raise ValueError(f"Expected diagonals to have rank at least 2, got {diags_rank}")
    if rhs_rank not in (diags_rank, diags_rank - 1):
        raise ValueError(f"Expected the rank of rhs to be {diags_rank - 1} or {diags_rank}, "
                         f"got {rhs_rank}")
    if diagonals._shape[:-2] != rhs._shape[:diags_rank - 2]:
        raise ValueError(f"Batch shapes {_shape(diagonals)[:-2]} and "
                         f"{_shape(rhs)[:diags_rank - 2]} are incompatible")
    if diagonals._shape[-2] != 3:
        raise ValueError(f"Expected 3 diagonals got {diagonals._shape[-2]}")
    attrs = {"partial_pivoting": bool(partial_pivoting),
             "perturb_singular": bool(perturb_singular)}
    vector = rhs_rank == diags_rank - 1
    if vector:
        rhs = expand_dims(rhs, -1)
    elif transpose_rhs:
        from .matrix import matrix_transpose
        rhs = matrix_transpose(rhs)
    m, rows = diagonals._shape[-1], rhs._shape[-2]
    if m and rows and m != rows:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be "
                         f"equal, got {m} and {rows}")
    solved = bind(TRIDIAGONAL_SOLVE, (diagonals, rhs), attrs)
    return squeeze(solved, -1) if vector else solved


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """The product of tridiagonal matrices (in the formats of tridiagonal_solve) with
    rhs [..., M, N] (tf.linalg.tridiagonal_matmul).

    >>> import tapeflow as tf
    >>> diagonals = [tf.constant([-1., -1., 0.]), tf.constant([2., 2., 2.]),
    ...              tf.constant([0., -1., -1.])]
    >>> tf.linalg.tridiagonal_matmul(diagonals, tf.ones([3, 2]),
    ...                              diagonals_format="sequence").numpy()
    array([[1., 1.],
           [0., 0.],
           [1., 1.]], dtype=float32)
    """
    if diagonals_format == "sequence":
        superdiag, maindiag, subdiag = rules.as_tensors(*diagonals)
    else:
        compact = _compact(diagonals, diagonals_format, "tridiagonal_matmul")
        superdiag, maindiag, subdiag = (compact[..., k, :] for k in range(3))
    rhs = rules.as_tensor(rhs, maindiag.dtype)
    rules.check_same_dtype("TridiagonalMatMul", (maindiag, rhs))
    if len(rhs._shape) < 2 or rhs._shape[-2] not in (maindiag._shape[-1], None):
        raise rules.op_error("TridiagonalMatMul", "Invalid superdiagonal shape.")
    return (expand_dims(superdiag, -1) * _shifted_rows(rhs, -1)
            + expand_dims(maindiag, -1) * rhs
            + expand_dims(subdiag, -1) * _shifted_rows(rhs, 1))


def eigh_tridiagonal(alpha, beta, eigvals_only=True, select="a", select_range=None,
                     tol=None, name=None):
    """The eigenvalues (ascending; with eigvals_only=False, and the eigenvectors as
    columns) of the symmetric tridiagonal matrix with diagonal `alpha` [n] and off
    diagonal `beta` [n - 1] (tf.linalg.eigh_tridiagonal): all of them (select="a"),
    those in (lo, hi] (select="v") or those of indices lo ... hi (select="i"). Computed
    from the dense matrix's eigh, so differentiable."""
    alpha, beta = rules.as_tensors(alpha, beta)
    if not rules.is_float(alpha.dtype):
        raise ValueError(f"Only float types are supported, got {alpha.dtype!r}")
    n = alpha._shape[-1]
    if len(alpha._shape) != 1:
        raise ValueError(f"alpha must be a 1-D tensor, got shape {_shape(alpha)}")
    if beta._shape != ((n - 1,) if n else (0,)):
        raise ValueError(f"beta must have shape [{max(n - 1, 0)}], got {_shape(beta)}")
    if select not in ("a", "v", "i"):
        raise ValueError("'select' must have a value in {'a', 'v', 'i'}.")
    matrix = diag(alpha) + diag(beta, k=1) + diag(beta, k=-1) if n > 1 else diag(alpha)
    if eigvals_only:
        values, vectors = eigvalsh(matrix), None
    else:
        values, vectors = _dense_eigh(matrix)
    if select == "a":
        return values if eigvals_only else (values, vectors)
    lo, hi = select_range
    if select == "i":
        lo, hi = int(lo), int(hi)
        chosen_values = values[lo:hi + 1]
        return chosen_values if eigvals_only else (chosen_values, vectors[:, lo:hi + 1])
    lo, hi = (cast(rules.as_tensor(v), values.dtype) for v in (lo, hi))
    inside = logical_and(greater(values, lo), less_equal(values, hi))
    chosen_values = boolean_mask(values, inside)
    if eigvals_only:
        return chosen_values
    from .shape import transpose
    return chosen_values, transpose(boolean_mask(transpose(vectors), inside))


__all__ = ["eigh_tridiagonal", "tridiagonal_matmul", "tridiagonal_solve"]
