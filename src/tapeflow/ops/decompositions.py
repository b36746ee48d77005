"""Matrix decompositions, batched over leading dimensions: Cholesky, Qr, Svd,
SelfAdjointEigV2 (eigh, eigvalsh) and LogMatrixDeterminant (slogdet), each with
TensorFlow's gradient formula (tensorflow/python/ops/linalg_grad.py), so gradients
match TensorFlow's; and what TensorFlow composes of them in Python: logdet, lstsq, pinv.

Signs of singular vectors and eigenvectors are LAPACK's (each column is defined up to
its sign; TensorFlow's Eigen kernels may pick the other one)."""

from collections import namedtuple

import numpy as np

from ..errors import NotFoundError
from . import rules
from .elementwise import log, square, where
from .linalg import _identity, _wide, diag, diag_part, inv, matmul
from .matrix import band_part, cholesky_solve, matrix_transpose, set_diag, triangular_solve
from .dynamic import input_dims
from .registry import OpDef, bind, register
from .rules import is_float


def _square_float_matrix(op_name, x, square=True):
    if not is_float(x.dtype):
        rules.check_dtype_in(op_name, x, is_float, "half, float, double")
    if len(x._shape) < 2:
        raise rules.op_error(op_name, f"Input tensor 0 must have rank >= 2, got "
                                      f"{len(x._shape)}")
    rows, cols = x._shape[-2:]
    if square and rows != cols and None not in (rows, cols):
        raise rules.op_error(op_name, "Input matrix must be square.")


def no_half_kernel(op_name, x, more_attrs=""):
    """TensorFlow 2.21 registers no CPU kernel of op_name for half: NotFoundError."""
    if x.dtype.name == "float16":
        raise NotFoundError(f"Could not find device for node: {{{{node {op_name}}}}} = "
                            f"{op_name}[T=DT_HALF{more_attrs}] [Op:{op_name}]", op=op_name)


def _safe_reciprocal(x, epsilon=1e-20):
    """TensorFlow's _SafeReciprocal: 1/x, broadened near 0 so that equal eigenvalues or
    singular values give large finite numbers instead of inf."""
    return x / (x * x + epsilon)


def _zeros_on_diagonal(x):
    from .creation import zeros_like
    return set_diag(x, zeros_like(diag_part(x)))


# -- Cholesky ---------------------------------------------------------------------------

def _cholesky_infer(input):
    _square_float_matrix("Cholesky", input)
    return input._shape, input.dtype


def _cholesky_kernel(input):
    """The lower factor, reading the lower triangle only. A matrix that is not positive
    definite gives NaN on and below the diagonal, as TensorFlow 2.21's CPU kernel does
    (it raises nothing)."""
    lower = np.tril(input)
    symmetric = lower + np.swapaxes(np.tril(input, -1), -1, -2)
    try:
        return np.linalg.cholesky(symmetric)
    except np.linalg.LinAlgError:
        pass
    flat = symmetric.reshape((-1,) + input.shape[-2:])
    out = np.empty_like(flat)
    for i, a in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            out[i] = np.where(np.tri(a.shape[0], dtype=bool), np.nan, 0)
    return out.reshape(input.shape)


def _cholesky_grad(ctx, dy):
    # l^-H ((l^H dy) * (tril(ones) - eye / 2)) l^-1, symmetrized (TensorFlow's
    # _CholeskyGrad): the gradient with respect to a symmetric input.
    l = ctx.out
    l_inverse = triangular_solve(l, _identity(input_dims(ctx, 0)[-1], l.dtype))
    middle = matmul(l, dy, adjoint_a=True)
    middle = set_diag(middle, 0.5 * diag_part(middle))
    middle = band_part(middle, -1, 0)
    grad = matmul(matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad += matrix_transpose(grad)
    return (grad * 0.5,)


CHOLESKY = register(OpDef(
    name="Cholesky", args=("input",), infer=_cholesky_infer, eager=_wide(_cholesky_kernel),
    saves=("out",), grad=_cholesky_grad, domain=(-1.0, 1.0)))


def cholesky(input, name=None):
    """The lower Cholesky factor L of each innermost matrix (A = L L^T), reading only its
    lower triangle (tf.linalg.cholesky). A matrix that is not positive definite gives
    NaN, as TensorFlow 2.21 does.

    >>> import tapeflow as tf
    >>> tf.linalg.cholesky(tf.constant([[4., 2.], [2., 5.]])).numpy()
    array([[2., 0.],
           [1., 2.]], dtype=float32)
    """
    return bind(CHOLESKY, (rules.as_tensor(input),))


def logdet(matrix, name=None):
    """log(det(matrix)) of Hermitian positive definite matrices, from their Cholesky
    factor as TensorFlow computes it (tf.linalg.logdet)."""
    from .reduce import reduce_sum
    chol = cholesky(matrix)
    return 2.0 * reduce_sum(log(diag_part(chol)), axis=-1)


# -- Qr ---------------------------------------------------------------------------------

def _qr_infer(input, full_matrices):
    _square_float_matrix("Qr", input, square=False)
    m, n = input._shape[-2:]
    k = m if full_matrices else (None if None in (m, n) else min(m, n))
    batch = input._shape[:-2]
    return [(batch + (m, k), input.dtype), (batch + (k, n), input.dtype)]


def _qr_kernel(input, full_matrices):
    return np.linalg.qr(input, mode="complete" if full_matrices else "reduced")


def _qr_grad(ctx, dq, dr):
    # TensorFlow's _QrGrad (https://arxiv.org/abs/2009.10071).
    from .shape import concat
    q, r = ctx.out0, ctx.out1
    m, n = q._shape[-2], r._shape[-1]
    if None in (m, n, r._shape[-2]):
        raise NotImplementedError("QrGrad not implemented with dynamic shapes. Received "
                                  f"r.shape: {list(r._shape)}")
    if r._shape[-2] > n and q._shape[-1] == m:
        raise NotImplementedError(
            "QrGrad not implemented when nrows > ncols and full_matrices is true. Received "
            f"r.shape={list(r._shape)} with nrows={r._shape[-2]}and ncols={n}.")
    if m >= n:
        return (_qr_grad_square_and_deep(q, r, dq, dr),)
    # A wide matrix [x, y] with r = [u, v]: the square case for x.
    y = ctx.input[..., :, m:]
    u = r[..., :, :m]
    dv = dr[..., :, m:]
    du = dr[..., :, :m]
    dx = _qr_grad_square_and_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return (concat([dx, matmul(q, dv)], axis=-1),)


def _qr_grad_square_and_deep(q, r, dq, dr):
    def times_r_inverse_adjoint(x):
        return matrix_transpose(triangular_solve(r, matrix_transpose(x), lower=False))

    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    tril = band_part(qdq - matrix_transpose(qdq) + rdr - matrix_transpose(rdr), -1, 0)
    grad_a = matmul(q, dr + times_r_inverse_adjoint(tril))
    return grad_a + times_r_inverse_adjoint(dq - matmul(q, qdq))


QR = register(OpDef(
    name="Qr", args=("input",), infer=_qr_infer, eager=_wide(_qr_kernel), n_out=2,
    saves=("input", "out0", "out1"), grad=_qr_grad))

# What tf.linalg.qr returns, as TensorFlow names it.
Qr = namedtuple("Qr", ["q", "r"])


def qr(input, full_matrices=False, name=None):
    """The QR decomposition of each innermost matrix: orthonormal columns q and upper
    triangular r with input = q @ r (tf.linalg.qr); LAPACK's signs, as TensorFlow's.

    >>> import tapeflow as tf
    >>> q, r = tf.linalg.qr(tf.constant([[3., 1.], [4., 2.]]))
    >>> r.numpy().round(3)
    array([[-5. , -2.2],
           [ 0. ,  0.4]], dtype=float32)
    """
    return Qr(*bind(QR, (rules.as_tensor(input),), {"full_matrices": bool(full_matrices)}))


# -- Svd --------------------------------------------------------------------------------

def _svd_infer(input, compute_uv, full_matrices):
    _square_float_matrix("Svd", input, square=False)
    m, n = input._shape[-2:]
    k = None if None in (m, n) else min(m, n)
    batch = input._shape[:-2]
    if not compute_uv:  # empty u and v, batched like the input
        return [(batch + (k,), input.dtype), (batch + (m, 0), input.dtype),
                (batch + (n, 0), input.dtype)]
    cols_u, cols_v = (m, n) if full_matrices else (k, k)
    return [(batch + (k,), input.dtype), (batch + (m, cols_u), input.dtype),
            (batch + (n, cols_v), input.dtype)]


def _svd_kernel(input, compute_uv, full_matrices):
    if not np.isfinite(input).all():
        # LAPACK's gesdd can loop for ever on infinities (a 4x4 with two of them did), and
        # gives up on NaN; the compiled kernel (Numba's svd) refuses both. So do we.
        raise np.linalg.LinAlgError("SVD did not converge: the input holds inf or NaN")
    if not compute_uv:
        s = np.linalg.svd(input, compute_uv=False)
        batch, (m, n) = input.shape[:-2], input.shape[-2:]
        return s, np.zeros(batch + (m, 0), input.dtype), np.zeros(batch + (n, 0), input.dtype)
    u, s, vh = np.linalg.svd(input, full_matrices=full_matrices)
    return s, u, np.swapaxes(vh, -1, -2)


def _svd_grad(ctx, grad_s, grad_u, grad_v):
    # TensorFlow's _SvdGrad, real matrices.
    from .creation import zeros_like
    from .shape import expand_dims
    grad_s_mat = diag(grad_s)
    if not ctx.attrs["compute_uv"]:
        _, u, v = bind(SVD, (ctx.input,), {"compute_uv": True, "full_matrices": False})
        return (matmul(u, matmul(grad_s_mat, v, adjoint_b=True)),)
    full_matrices = ctx.attrs["full_matrices"]
    m, n = ctx.shapes[0][-2:]
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    s, u, v = ctx.out0, ctx.out1, ctx.out2
    use_adjoint = m > n
    if use_adjoint:  # the gradient of a^H = v s u^H, transposed at the end
        m, n = n, m
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError(
            "svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True. "
            f"Received: m={m} and n={n} from op input with shape={list(ctx.shapes[0])}.")
    s_mat = diag(s)
    s2 = square(s)
    f = set_diag(_safe_reciprocal(expand_dims(s2, -2) - expand_dims(s2, -1)), zeros_like(s))
    v1 = v[..., :, :m]
    grad_v1 = grad_v[..., :, :m]
    f_u = f * matmul(u, grad_u, adjoint_a=True)
    f_v = f * matmul(v1, grad_v1, adjoint_a=True)
    middle = (grad_s_mat + matmul(f_u + matrix_transpose(f_u), s_mat)
              + matmul(s_mat, f_v + matrix_transpose(f_v)))
    grad = matmul(u, matmul(middle, v1, adjoint_b=True))
    if m != n:
        gv1t = matrix_transpose(grad_v1)
        term2_nous = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2 = v[..., :, m:n]
            term2_nous -= matmul(matmul(v1, grad_v[..., :, m:n], adjoint_a=True), v2,
                                 adjoint_b=True)
        grad += matmul(matmul(u, diag(_safe_reciprocal(s))), term2_nous)
    return (matrix_transpose(grad) if use_adjoint else grad,)


SVD = register(OpDef(
    name="Svd", args=("input",), infer=_svd_infer, eager=_wide(_svd_kernel), n_out=3,
    saves=("input", "out0", "out1", "out2"), grad=_svd_grad))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular values s (descending) of each innermost matrix and, with
    `compute_uv`, u and v with tensor = u @ diag(s) @ adjoint(v) (tf.linalg.svd): returns
    s alone, or (s, u, v).

    >>> import tapeflow as tf
    >>> tf.linalg.svd(tf.constant([[3., 0.], [0., -4.]]), compute_uv=False).numpy()
    array([4., 3.], dtype=float32)
    """
    s, u, v = bind(SVD, (rules.as_tensor(tensor),), {"compute_uv": bool(compute_uv),
                                                      "full_matrices": bool(full_matrices)})
    return (s, u, v) if compute_uv else s


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each innermost matrix, from its SVD with
    singular values at most rcond * max(s) dropped, as TensorFlow computes it
    (tf.linalg.pinv); the default rcond is 10 * max(rows, cols) * eps."""
    from .reduce import reduce_max
    from .shape import expand_dims
    x = rules.as_tensor(a)
    if not is_float(x.dtype):
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {x.dtype.name}).")
    if len(x._shape) < 2:
        raise rules.op_error("Svd", f"Input tensor 0 must have rank >= 2, got {len(x._shape)}")
    if rcond is None:
        rows, cols = x._shape[-2:]
        rcond = 10.0 * max(rows, cols) * float(np.finfo(x.dtype._np).eps)
    s, u, v = svd(x, full_matrices=False, compute_uv=True)
    cutoff = rcond * reduce_max(s, axis=-1)
    # Small singular values become inf, so that 1 / s is 0 without a NaN gradient.
    s = where(s > expand_dims(cutoff, -1), s, np.array(np.inf, x.dtype._np))
    return matmul(v / expand_dims(s, -2), u, adjoint_b=True)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Least-squares solutions of matrix @ x = rhs (tf.linalg.lstsq). fast=True solves
    the regularized normal equations by Cholesky as TensorFlow does: (A^T A + l2 I)^-1
    A^T rhs for tall matrices, A^T (A A^T + l2 I)^-1 rhs for wide ones. fast=False gives
    the minimum-norm solution (rank-deficient matrices too), ignoring l2_regularizer,
    as TensorFlow's complete orthogonal decomposition does."""
    matrix, rhs = rules.as_tensors(matrix, rhs)
    if not fast:
        return matmul(pinv(matrix), rhs)
    rows, cols = matrix._shape[-2:]
    first_kind = rows >= cols
    gramian = matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if not (isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0):
        from .elementwise import cast
        small = cols if first_kind else rows
        identity = _identity(small, matrix.dtype)
        gramian += cast(rules.as_tensor(l2_regularizer), matrix.dtype) * identity
    chol = cholesky(gramian)
    if first_kind:
        return cholesky_solve(chol, matmul(matrix, rhs, adjoint_a=True))
    return matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)


# -- SelfAdjointEigV2 -------------------------------------------------------------------

def _eigh_infer(input, compute_v):
    _square_float_matrix("SelfAdjointEigV2", input)
    batch, n = input._shape[:-2], input._shape[-1]
    return [(batch + (n,), input.dtype), (batch + (n, n if compute_v else 0), input.dtype)]


def _eigh_kernel(input, compute_v):
    """Ascending eigenvalues (and eigenvectors) from the lower triangle."""
    if not compute_v:
        return (np.linalg.eigvalsh(input),
                np.zeros(input.shape[:-1] + (0,), input.dtype))
    return np.linalg.eigh(input)


def _eigh_grad(ctx, grad_e, grad_v):
    # TensorFlow's _SelfAdjointEigV2Grad.
    from .shape import expand_dims
    e = ctx.out0
    if ctx.attrs["compute_v"]:
        v = ctx.out1
        f = _zeros_on_diagonal(_safe_reciprocal(expand_dims(e, -2) - expand_dims(e, -1)))
        middle = diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True)
    else:
        _, v = bind(SELF_ADJOINT_EIG, (ctx.input,), {"compute_v": True})
        middle = diag(grad_e)
    grad = matmul(v, matmul(middle, v, adjoint_b=True))
    # The op reads the lower triangle only: symmetrize, and keep that triangle.
    grad = band_part(grad + matrix_transpose(grad), -1, 0)
    return (set_diag(grad, 0.5 * diag_part(grad)),)


SELF_ADJOINT_EIG = register(OpDef(
    name="SelfAdjointEigV2", args=("input",), infer=_eigh_infer, eager=_wide(_eigh_kernel),
    n_out=2, saves=("input", "out0", "out1"), grad=_eigh_grad))


def eigh(tensor, name=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of each innermost symmetric
    matrix, reading its lower triangle (tf.linalg.eigh).

    >>> import tapeflow as tf
    >>> e, v = tf.linalg.eigh(tf.constant([[2., 1.], [1., 2.]]))
    >>> e.numpy()
    array([1., 3.], dtype=float32)
    """
    e, v = bind(SELF_ADJOINT_EIG, (rules.as_tensor(tensor),), {"compute_v": True})
    return e, v


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of each innermost symmetric matrix (tf.linalg.eigvalsh)."""
    return bind(SELF_ADJOINT_EIG, (rules.as_tensor(tensor),), {"compute_v": False})[0]


# -- LogMatrixDeterminant ---------------------------------------------------------------

def _slogdet_infer(input):
    _square_float_matrix("LogMatrixDeterminant", input)
    batch = input._shape[:-2]
    return [(batch, input.dtype), (batch, input.dtype)]


def _slogdet_kernel(input):
    sign, log_abs = np.linalg.slogdet(input)
    return np.asarray(sign, input.dtype), np.asarray(log_abs, input.dtype)


def _slogdet_grad(ctx, grad_sign, grad_log_abs):
    # d log|det A| = A^-T (TensorFlow's _LogMatrixDeterminantGrad); the sign is constant.
    from .shape import expand_dims
    multipliers = expand_dims(expand_dims(grad_log_abs, -1), -1)
    return (multipliers * inv(ctx.input, adjoint=True),)


LOG_MATRIX_DETERMINANT = register(OpDef(
    name="LogMatrixDeterminant", args=("input",), infer=_slogdet_infer,
    eager=_wide(_slogdet_kernel), n_out=2, saves=("input",), grad=_slogdet_grad,
    domain=(-1.0, 1.0)))

# What tf.linalg.slogdet returns, as TensorFlow names it.
LogMatrixDeterminant = namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def slogdet(input, name=None):
    """The sign and the log of the absolute value of each innermost matrix's determinant
    (tf.linalg.slogdet): a singular matrix gives sign 0 and -inf.

    >>> import tapeflow as tf
    >>> sign, log_abs = tf.linalg.slogdet(tf.constant([[1., 2.], [3., 4.]]))
    >>> float(sign), round(float(log_abs), 4)
    (-1.0, 0.6931)
    """
    return LogMatrixDeterminant(*bind(LOG_MATRIX_DETERMINANT, (rules.as_tensor(input),)))


__all__ = ["cholesky", "eigh", "eigvalsh", "logdet", "lstsq", "pinv", "qr", "slogdet", "svd"]
