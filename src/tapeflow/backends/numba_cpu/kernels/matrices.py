"""Kernels of the decompositions and matrix-structure ops (ops/decompositions.py,
ops/matrix.py), on stacks of matrices (batch, rows, cols): LAPACK through Numba's
np.linalg where it serves (qr, svd, eigh, slogdet), loops where the op's own rules differ
(Cholesky's NaN for a matrix that is not positive definite, triangular solves that read
one triangle and divide by a zero pivot instead of raising)."""

import numpy as np

from . import array_helper as _array_jit
from . import helper as _jit
from .arrays import copy_flat, copy_into


@_array_jit
def cholesky3(x):
    """The lower factors, from the lower triangles; NaN on and below the diagonal of a
    matrix that is not positive definite (TensorFlow 2.21's CPU kernel raises nothing)."""
    batch, n = x.shape[0], x.shape[1]
    out = np.zeros(x.shape, x.dtype)
    for b in range(batch):
        a, l = x[b], out[b]
        for j in range(n):
            pivot = a[j, j]
            for p in range(j):
                pivot -= l[j, p] * l[j, p]
            if not pivot > 0:
                for i in range(n):
                    for c in range(i + 1):
                        l[i, c] = np.nan
                break
            l[j, j] = np.sqrt(pivot)
            for i in range(j + 1, n):
                s = a[i, j]
                for p in range(j):
                    s -= l[i, p] * l[j, p]
                l[i, j] = s / l[j, j]
    return out


@_array_jit
def triangular_solve3(a, rhs, lower, adjoint):
    """Substitution reading one triangle of each a[b] (of the transpose when `adjoint`);
    a zero pivot gives inf or nan."""
    batch, n, k = rhs.shape
    out = rhs.copy()
    forward = lower != adjoint
    for b in range(batch):
        x = out[b]
        for step in range(n):
            i = step if forward else n - 1 - step
            lo, hi = (0, i) if forward else (i + 1, n)
            for j in range(lo, hi):
                coefficient = a[b, j, i] if adjoint else a[b, i, j]
                for c in range(k):
                    x[i, c] -= coefficient * x[j, c]
            for c in range(k):
                x[i, c] /= a[b, i, i]
    return out


@_array_jit
def qr3(x, full_matrices):
    batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    q = np.empty((batch, m, k), x.dtype)
    r = np.empty((batch, k, n), x.dtype)
    for b in range(batch):
        if full_matrices and m > n:
            # Zero columns add reflectors that are the identity: the same first n
            # reflectors, so Q is LAPACK's complete Q (Numba has only the reduced mode).
            padded = np.zeros((m, m), x.dtype)
            copy_into(padded[:, :n], x[b])
            qb, rb = np.linalg.qr(padded)
            copy_flat(q, b * m * k, qb)
            copy_flat(r, b * k * n, rb[:, :n])
        else:
            qb, rb = np.linalg.qr(np.ascontiguousarray(x[b]))
            copy_flat(q, b * m * k, qb)
            copy_flat(r, b * k * n, rb)
    return q, r


@_array_jit
def svd3(x, compute_uv, full_matrices):
    batch, m, n = x.shape
    k = min(m, n)
    cols_u, cols_v = (m, n) if full_matrices else (k, k)
    if not compute_uv:
        cols_u, cols_v = 0, 0
    s = np.empty((batch, k), x.dtype)
    u = np.empty((batch, m, cols_u), x.dtype)
    v = np.empty((batch, n, cols_v), x.dtype)
    for b in range(batch):
        ub, sb, vhb = np.linalg.svd(np.ascontiguousarray(x[b]), full_matrices=full_matrices)
        copy_flat(s, b * k, sb)
        if compute_uv:
            copy_flat(u, b * m * cols_u, ub)
            copy_flat(v, b * n * cols_v, vhb.T)
    return s, u, v


@_array_jit
def eigh3(x, compute_v):
    batch, n = x.shape[0], x.shape[1]
    cols = n if compute_v else 0
    e = np.empty((batch, n), x.dtype)
    v = np.empty((batch, n, cols), x.dtype)
    for b in range(batch):
        eb, vb = np.linalg.eigh(np.ascontiguousarray(x[b]))
        copy_flat(e, b * n, eb)
        if compute_v:
            copy_flat(v, b * n * n, vb)
    return e, v


@_array_jit
def slogdet3(x):
    batch = x.shape[0]
    sign = np.empty(batch, x.dtype)
    log_abs = np.empty(batch, x.dtype)
    for b in range(batch):
        sb, lb = np.linalg.slogdet(np.ascontiguousarray(x[b]))
        sign[b] = sb
        log_abs[b] = lb
    return sign, log_abs


@_array_jit
def band_part3(x, num_lower, num_upper):
    batch, rows, cols = x.shape
    out = np.zeros(x.shape, x.dtype)
    for b in range(batch):
        for i in range(rows):
            for j in range(cols):
                if (num_lower < 0 or i - j <= num_lower) and (num_upper < 0
                                                               or j - i <= num_upper):
                    out[b, i, j] = x[b, i, j]
    return out


@_array_jit
def set_diag3(x, diagonal, k):
    out = x.copy()
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(x.shape[0]):
        for j in range(diagonal.shape[1]):
            out[b, r0 + j, c0 + j] = diagonal[b, j]
    return out


@_array_jit
def cross3(a, b):
    """Rows of 3-element vectors: a[r] x b[r]."""
    out = np.empty(a.shape, a.dtype)
    for r in range(a.shape[0]):
        out[r, 0] = a[r, 1] * b[r, 2] - a[r, 2] * b[r, 1]
        out[r, 1] = a[r, 2] * b[r, 0] - a[r, 0] * b[r, 2]
        out[r, 2] = a[r, 0] * b[r, 1] - a[r, 1] * b[r, 0]
    return out
