"""Kernels of the decompositions and matrix-structure ops (ops/decompositions.py,
ops/matrix.py), on stacks of matrices (batch, rows, cols): LAPACK through Numba's
np.linalg where it serves (qr, svd, eigh, slogdet), LAPACK's gesv called directly for
solve, loops where the op's own rules differ
(Cholesky's NaN for a matrix that is not positive definite, triangular solves that read
one triangle and divide by a zero pivot instead of raising)."""

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import array_helper as _array_jit
from . import helper as _jit
from .allocation import empty_array, zeros_array
from .arrays import copy_flat, copy_into
from .microgemm import array_data
from .views import cast_array, contiguous, copy_of

_LAPACK_KINDS = {"float32": ord("s"), "float64": ord("d")}


@intrinsic
def _gesv(typingctx, a, pivots, b):
    """LAPACK's gesv on column-major data (as Numba's np.linalg.solve calls it, through
    Numba's C helper of SciPy's LAPACK): solves in place, b (nrhs, n) becomes the
    solution, a (n, n) its LU factors; returns LAPACK's info (> 0: a singular pivot)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)
            and str(a.dtype) in _LAPACK_KINDS and a.dtype == b.dtype):
        return None
    kind = _LAPACK_KINDS[str(a.dtype)]

    def codegen(context, builder, signature, args):
        i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
        ptr = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
            i32, [i8, i64, i64, ptr, i64, ptr, ptr, i64]), "numba_xgesv")
        rhs = context.make_array(b)(context, builder, args[2])
        n, nrhs = cgutils.unpack_tuple(builder, rhs.shape, 2)[::-1]
        data = [builder.bitcast(array_data(context, builder, t, v), ptr)
                for t, v in zip(signature.args, args)]
        return builder.call(fn, [i8(kind), n, nrhs, data[0], n, data[1], data[2], n])
    return types.int32(a, pivots, b), codegen


if config.DISABLE_JIT:  # kernels run as Python
    def _gesv(a, pivots, b):
        import scipy.linalg
        lu, _, x, info = scipy.linalg.lapack.get_lapack_funcs("gesv", (a,))(a.T, b.T)
        a[...], b[...] = lu.T, x.T
        return info


@_array_jit
def solve3(a, b, adjoint):
    """Each system a x = b (or a^T x = b) of the stacks, by LAPACK's gesv, as NumPy's
    np.linalg.solve: not through Numba's, whose checks compile the formatting of their
    messages (string joins and reprs: 4 s of this helper's first compile), and which
    refuses NaN that NumPy passes on."""
    batch, n, nrhs = b.shape
    out = empty_array(b.shape, b.dtype)
    lu = empty_array((n, n), a.dtype)  # C order of the transpose: LAPACK's column order
    solution = empty_array((nrhs, n), b.dtype)
    pivots = empty_array(n, np.int32)
    for k in range(batch):
        for i in range(n):
            for j in range(n):
                lu[j, i] = a[k, j, i] if adjoint else a[k, i, j]
            for j in range(nrhs):
                solution[j, i] = b[k, i, j]
        if n > 0 and nrhs > 0 and _gesv(lu, pivots, solution) > 0:
            raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
        for i in range(n):
            for j in range(nrhs):
                out[k, i, j] = solution[j, i]
    return out


@_array_jit
def cholesky3(x):
    """The lower factors, from the lower triangles; NaN on and below the diagonal of a
    matrix that is not positive definite (TensorFlow 2.21's CPU kernel raises nothing)."""
    batch, n = x.shape[0], x.shape[1]
    out = zeros_array(x.shape, x.dtype)
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
    out = copy_of(rhs)
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
    q = empty_array((batch, m, k), x.dtype)
    r = empty_array((batch, k, n), x.dtype)
    for b in range(batch):
        if full_matrices and m > n:
            # Zero columns add reflectors that are the identity: the same first n
            # reflectors, so Q is LAPACK's complete Q (Numba has only the reduced mode).
            padded = zeros_array((m, m), x.dtype)
            copy_into(padded[:, :n], x[b])
            qb, rb = np.linalg.qr(padded)
            copy_flat(q, b * m * k, qb)
            copy_flat(r, b * k * n, rb[:, :n])
        else:
            qb, rb = np.linalg.qr(contiguous(x[b]))
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
    s = empty_array((batch, k), x.dtype)
    u = empty_array((batch, m, cols_u), x.dtype)
    v = empty_array((batch, n, cols_v), x.dtype)
    for b in range(batch):
        ub, sb, vhb = np.linalg.svd(contiguous(x[b]), full_matrices=full_matrices)
        copy_flat(s, b * k, sb)
        if compute_uv:
            copy_flat(u, b * m * cols_u, ub)
            copy_flat(v, b * n * cols_v, vhb.T)
    return s, u, v


@_array_jit
def eigh3(x, compute_v):
    batch, n = x.shape[0], x.shape[1]
    cols = n if compute_v else 0
    e = empty_array((batch, n), x.dtype)
    v = empty_array((batch, n, cols), x.dtype)
    for b in range(batch):
        eb, vb = np.linalg.eigh(contiguous(x[b]))
        copy_flat(e, b * n, eb)
        if compute_v:
            copy_flat(v, b * n * n, vb)
    return e, v


@_array_jit
def slogdet3(x):
    batch = x.shape[0]
    sign = empty_array(batch, x.dtype)
    log_abs = empty_array(batch, x.dtype)
    for b in range(batch):
        sb, lb = np.linalg.slogdet(contiguous(x[b]))
        sign[b] = sb
        log_abs[b] = lb
    return sign, log_abs


@_array_jit
def band_part3(x, num_lower, num_upper):
    batch, rows, cols = x.shape
    out = zeros_array(x.shape, x.dtype)
    for b in range(batch):
        for i in range(rows):
            for j in range(cols):
                if (num_lower < 0 or i - j <= num_lower) and (num_upper < 0
                                                               or j - i <= num_upper):
                    out[b, i, j] = x[b, i, j]
    return out


@_array_jit
def set_diag3(x, diagonal, k):
    out = copy_of(x)
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(x.shape[0]):
        for j in range(diagonal.shape[1]):
            out[b, r0 + j, c0 + j] = diagonal[b, j]
    return out


@_array_jit
def cross3(a, b):
    """Rows of 3-element vectors: a[r] x b[r]."""
    out = empty_array(a.shape, a.dtype)
    for r in range(a.shape[0]):
        out[r, 0] = a[r, 1] * b[r, 2] - a[r, 2] * b[r, 1]
        out[r, 1] = a[r, 2] * b[r, 0] - a[r, 0] * b[r, 2]
        out[r, 2] = a[r, 0] * b[r, 1] - a[r, 1] * b[r, 0]
    return out


@_jit
def lu3(x):
    """Packed LU factors and row permutations (x[b][perm[b]] = L U) by partial pivoting,
    the first of equal candidates chosen, as LAPACK's getrf; a zero pivot raises."""
    batch, n = x.shape[0], x.shape[1]
    out = copy_of(x)
    perm = empty_array((batch, n), np.int64)
    for b in range(batch):
        a = out[b]
        for i in range(n):
            perm[b, i] = i
        for j in range(n):
            pivot = j
            for i in range(j + 1, n):
                if abs(a[i, j]) > abs(a[pivot, j]):
                    pivot = i
            if not abs(a[pivot, j]) > 0:
                raise np.linalg.LinAlgError("Input is not invertible.")
            if pivot != j:
                for c in range(n):
                    a[j, c], a[pivot, c] = a[pivot, c], a[j, c]
                perm[b, j], perm[b, pivot] = perm[b, pivot], perm[b, j]
            for i in range(j + 1, n):
                a[i, j] /= a[j, j]
                for c in range(j + 1, n):
                    a[i, c] -= a[i, j] * a[j, c]
    return out, perm


@_jit
def sqrtm3(x):
    """Principal square roots by the Denman-Beavers iteration with determinant scaling;
    NaN where it does not converge (a negative real eigenvalue: no real principal root)
    or meets a singular iterate."""
    batch, n = x.shape[0], x.shape[1]
    out = empty_array(x.shape, x.dtype)
    tolerance = 4.0 * n * np.finfo(x.dtype).eps
    for b in range(batch):
        y = contiguous(x[b])
        z = np.eye(n, dtype=x.dtype)
        converged = n == 0
        for _ in range(100):
            if converged:
                break
            try:
                y_inverse = np.linalg.inv(y)
                z_inverse = np.linalg.inv(z)
            except Exception:  # noqa: BLE001 - Numba raises LinAlgError for singular
                break
            mu = abs(np.linalg.det(y) * np.linalg.det(z)) ** (-0.5 / n)
            if not np.isfinite(mu) or mu == 0:
                mu = 1.0
            y_next = cast_array(0.5 * (mu * y + z_inverse / mu), x.dtype)
            z = cast_array(0.5 * (mu * z + y_inverse / mu), x.dtype)
            change = np.sqrt(np.sum((y_next - y) ** 2))
            converged = change <= tolerance * np.sqrt(np.sum(y_next ** 2))
            y = y_next
        if converged and np.all(np.isfinite(y)):
            copy_into(out[b], y)
        else:
            out[b] = np.nan
    return out


@_jit
def tridiagonal_solve3(diagonals, rhs, pivoting, perturb):
    """Gaussian elimination on each tridiagonal system (LAPACK's gtsv: with `pivoting`,
    rows interchange where the subdiagonal is larger); a zero pivot gives NaN, or with
    `perturb` pivots below eps times U's largest entry become that size."""
    batch, m, k = rhs.shape
    out = copy_of(rhs)
    for b in range(batch):
        sup = copy_of(diagonals[b, 0])
        d = copy_of(diagonals[b, 1])
        sup2 = zeros_array(m, rhs.dtype)
        x = out[b]
        for i in range(m - 1):
            below = diagonals[b, 2, i + 1]
            if pivoting and abs(below) > abs(d[i]):
                g = d[i] / below
                after = sup[i + 1] if i + 1 < m - 1 else 0.0
                d[i] = below
                moved = d[i + 1]
                d[i + 1] = sup[i] - g * moved
                sup2[i] = after
                if i + 1 < m - 1:
                    sup[i + 1] = -g * after
                sup[i] = moved
                for c in range(k):
                    top = x[i, c]
                    x[i, c] = x[i + 1, c]
                    x[i + 1, c] = top - g * x[i + 1, c]
            else:
                f = below / d[i]
                d[i + 1] -= f * sup[i]
                for c in range(k):
                    x[i + 1, c] -= f * x[i, c]
        if perturb and m:
            largest = 0.0
            for i in range(m):
                largest = max(largest, abs(d[i]), abs(sup2[i]))
                if i < m - 1:
                    largest = max(largest, abs(sup[i]))
            tiny = np.finfo(rhs.dtype).eps * largest
            for i in range(m):
                if abs(d[i]) < tiny:
                    d[i] = -tiny if d[i] < 0 else tiny
        singular = False
        for i in range(m):
            singular = singular or d[i] == 0
        for i in range(m - 1, -1, -1):
            for c in range(k):
                value = x[i, c]
                if i + 1 < m:
                    value -= sup[i] * x[i + 1, c]
                if i + 2 < m:
                    value -= sup2[i] * x[i + 2, c]
                x[i, c] = np.nan if singular else value / d[i]
    return out
