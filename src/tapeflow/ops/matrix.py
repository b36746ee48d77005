"""Matrix structure ops: band_part (MatrixBandPart), set_diag (MatrixSetDiagV3),
triangular_solve (MatrixTriangularSolve) and cross (Cross), each with TensorFlow's
gradient; and the compositions TensorFlow writes in Python: adjoint / matrix_transpose
and cholesky_solve (expm is ops/matrix_exponential.py). The decompositions, whose
gradients use these, are ops/decompositions.py."""

import numpy as np

from ..errors import FailedPreconditionError, InvalidArgumentError
from . import rules
from .linalg import _wide, diag_part, matmul
from .registry import OpDef, bind, register
from .rules import is_float, kernel_dims, unbroadcast


def _at_least_matrix(op_name, x):
    if len(x._shape) < 2:
        raise rules.op_error(op_name, f"input must be at least 2-dim, received shape: "
                                      f"{kernel_dims(x._shape)}")


# -- MatrixBandPart ---------------------------------------------------------------------

def _band_part_infer(input, num_lower, num_upper):
    op_name = "MatrixBandPart"
    _at_least_matrix(op_name, input)
    rows, cols = input._shape[-2:]
    for name, value, size, what in (("num_lower", num_lower, rows, "rows"),
                                    ("num_upper", num_upper, cols, "columns")):
        if size is not None and value > size:
            raise rules.op_error(op_name, f"{name} must be negative or less or equal to "
                                          f"number of {what} ({size}) got: {value}")
    return input._shape, input.dtype


def band_mask(rows, cols, num_lower, num_upper):
    """Which entries of a rows x cols matrix lie in the band (a negative bound: all)."""
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    inside = np.ones((rows, cols), bool)
    if num_lower >= 0:
        inside &= offset >= -num_lower
    if num_upper >= 0:
        inside &= offset <= num_upper
    return inside


def _band_part_kernel(input, num_lower, num_upper):
    inside = band_mask(*input.shape[-2:], num_lower, num_upper)
    return np.where(inside, input, np.zeros((), input.dtype))


MATRIX_BAND_PART = register(OpDef(
    name="MatrixBandPart", args=("input",), infer=_band_part_infer, eager=_band_part_kernel,
    saves=(), grad=lambda ctx, dy: (bind(MATRIX_BAND_PART, (dy,), ctx.attrs),)))


def _band_bound(value, what):
    if hasattr(value, "_value") or isinstance(value, np.ndarray):
        value = np.asarray(getattr(value, "_value", value))
        if value.shape or value.dtype.kind not in "iu":
            raise TypeError(f"Cannot convert {value} to EagerTensor of dtype int64")
        return int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"Cannot convert {value} to EagerTensor of dtype int64")
    return int(value)


def band_part(input, num_lower, num_upper, name=None):
    """The band of each innermost matrix: entries (i, j) with i - j <= num_lower and
    j - i <= num_upper kept, the rest zero; a negative bound keeps that whole triangle
    (tf.linalg.band_part).

    >>> import tapeflow as tf
    >>> tf.linalg.band_part(tf.ones([3, 3]), 0, -1).numpy()
    array([[1., 1., 1.],
           [0., 1., 1.],
           [0., 0., 1.]], dtype=float32)
    """
    return bind(MATRIX_BAND_PART, (rules.as_tensor(input),),
                {"num_lower": _band_bound(num_lower, "num_lower"),
                 "num_upper": _band_bound(num_upper, "num_upper")})


# -- MatrixSetDiagV3 --------------------------------------------------------------------

def _diagonal_length(rows, cols, k):
    return max(0, min(rows + min(k, 0), cols - max(k, 0)))


def _set_diag_infer(input, diagonal, k):
    op_name = "MatrixSetDiagV3"
    rules.check_same_dtype(op_name, (input, diagonal))
    _at_least_matrix(op_name, input)
    rows, cols = input._shape[-2:]
    if None not in (rows, cols):
        expected = input._shape[:-2] + (_diagonal_length(rows, cols, k),)
        if not -rows < k < cols and rows and cols:
            raise rules.op_error(op_name, f"Diagonal index k={k} is out of bounds for a "
                                          f"{rows}x{cols} matrix")
        if len(diagonal._shape) != len(expected) or any(
                d is not None and e is not None and d != e
                for d, e in zip(diagonal._shape, expected)):
            raise rules.op_error(
                op_name, "Either first dimensions of diagonal don't match input.shape[:-2], "
                "or diagonal.shape[:-1] is not equal to the longests diagonal in range "
                f"[lower_diag_index:upper_diag_index].\nInput shape: "
                f"{kernel_dims(input._shape)}\nDiagonal shape: {kernel_dims(diagonal._shape)}"
                f"\nExpected diagonal shape: {kernel_dims(expected)}")
    return input._shape, input.dtype


def _set_diag_kernel(input, diagonal, k):
    out = np.array(input, copy=True)
    n = diagonal.shape[-1]
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[..., rows, cols] = diagonal
    return out


def _set_diag_grad(ctx, dy):
    from .creation import zeros_like
    k = ctx.attrs["k"]
    grad_diagonal = diag_part(dy, k=k)
    grad_input = None
    if ctx.needs[0]:
        grad_input = bind(MATRIX_SET_DIAG, (dy, zeros_like(grad_diagonal)), {"k": k})
    return grad_input, grad_diagonal


MATRIX_SET_DIAG = register(OpDef(
    name="MatrixSetDiagV3", args=("input", "diagonal"), infer=_set_diag_infer,
    eager=_set_diag_kernel, saves=(), grad=_set_diag_grad))


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):
    """`input` with diagonal `k` of each innermost matrix replaced by `diagonal`
    (tf.linalg.set_diag).

    >>> import tapeflow as tf
    >>> tf.linalg.set_diag(tf.zeros([2, 3]), [1., 2.]).numpy()
    array([[1., 0., 0.],
           [0., 2., 0.]], dtype=float32)
    """
    from .linalg import _diag_index
    x, d = rules.as_tensors(input, diagonal)
    return bind(MATRIX_SET_DIAG, (x, d), {"k": _diag_index(k)})


# -- MatrixTriangularSolve --------------------------------------------------------------

def _triangular_solve_infer(matrix, rhs, lower, adjoint):
    op_name = "MatrixTriangularSolve"
    if not is_float(matrix.dtype):
        rules.check_dtype_in(op_name, matrix, is_float, "half, float, double")
    rules.check_same_dtype(op_name, (matrix, rhs))
    for i, x in enumerate((matrix, rhs)):
        if len(x._shape) < 2:
            raise rules.op_error(op_name, f"In[{i}] ndims must be >= 2: {len(x._shape)}")
    rows, cols = matrix._shape[-2:]
    if None not in (rows, cols) and rows != cols:
        raise rules.op_error(op_name, f"In[0] matrices in the last dimensions must be "
                                      f"square ({cols} =/= {rows})")
    if None not in (cols, rhs._shape[-2]) and cols != rhs._shape[-2]:
        raise rules.op_error(
            op_name, f"In[0] mismatch In[1] shape: {cols} vs. {rhs._shape[-2]}: "
            f"{kernel_dims(matrix._shape)} {kernel_dims(rhs._shape)} {int(lower)} "
            f"{int(adjoint)}")
    try:
        batch = rules.broadcast_shapes(op_name, matrix._shape[:-2], rhs._shape[:-2])
    except InvalidArgumentError:
        raise rules.op_error(
            op_name, f"In[0] and In[1] must have compatible batch dimensions: "
            f"{kernel_dims(matrix._shape)} vs. {kernel_dims(rhs._shape)}") from None
    return tuple(batch) + tuple(rhs._shape[-2:]), rhs.dtype


def _triangular_solve_kernel(matrix, rhs, lower, adjoint):
    """Substitution on the one triangle (the other is never read), as TensorFlow's
    kernel: a zero on the diagonal gives inf or nan, not an error."""
    batch = np.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
    a = np.broadcast_to(matrix, batch + matrix.shape[-2:])
    if adjoint:  # solve with the transpose: the triangle flips
        a, lower = np.swapaxes(a, -1, -2), not lower
    x = np.array(np.broadcast_to(rhs, batch + rhs.shape[-2:]), copy=True)
    n = x.shape[-2]
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        solved = slice(0, i) if lower else slice(i + 1, n)
        x[..., i, :] -= np.einsum("...j,...jk->...k", a[..., i, solved], x[..., solved, :])
        x[..., i, :] /= a[..., i, i, None]
    return x


def _triangular_solve_grad(ctx, dy):
    # TensorFlow's _MatrixTriangularSolveGrad.
    lower, adjoint = ctx.attrs["lower"], ctx.attrs["adjoint"]
    grad_rhs = bind(MATRIX_TRIANGULAR_SOLVE, (ctx.matrix, dy),
                    {"lower": lower, "adjoint": not adjoint})
    grad_matrix = None
    if ctx.needs[0]:
        if adjoint:
            grad_matrix = -matmul(ctx.out, grad_rhs, adjoint_b=True)
        else:
            grad_matrix = -matmul(grad_rhs, ctx.out, adjoint_b=True)
        grad_matrix = band_part(grad_matrix, -1, 0) if lower else band_part(grad_matrix, 0, -1)
        grad_matrix = unbroadcast(grad_matrix, ctx.shapes[0])
    return grad_matrix, unbroadcast(grad_rhs, ctx.shapes[1])


MATRIX_TRIANGULAR_SOLVE = register(OpDef(
    name="MatrixTriangularSolve", args=("matrix", "rhs"), infer=_triangular_solve_infer,
    eager=_wide(_triangular_solve_kernel), saves=("matrix", "out"),
    grad=_triangular_solve_grad))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves `matrix @ x = rhs` (or `adjoint(matrix) @ x = rhs`) reading only the lower
    (or upper) triangle of `matrix`; batch dimensions broadcast
    (tf.linalg.triangular_solve).

    >>> import tapeflow as tf
    >>> tf.linalg.triangular_solve(tf.constant([[2., 0.], [1., 1.]]),
    ...                            tf.constant([[2.], [2.]])).numpy()
    array([[1.],
           [1.]], dtype=float32)
    """
    matrix, rhs = rules.as_tensors(matrix, rhs)
    return bind(MATRIX_TRIANGULAR_SOLVE, (matrix, rhs),
                {"lower": bool(lower), "adjoint": bool(adjoint)})


def cholesky_solve(chol, rhs, name=None):
    """Solves `A x = rhs` given `chol`, the Cholesky factor of A: two triangular solves,
    as TensorFlow composes it (tf.linalg.cholesky_solve)."""
    y = triangular_solve(chol, rhs, lower=True, adjoint=False)
    return triangular_solve(chol, y, lower=True, adjoint=True)


# -- Cross ------------------------------------------------------------------------------

def _cross_infer(a, b):
    op_name = "Cross"
    rules.check_dtype_in(op_name, a, rules.is_numeric, "real number types")
    rules.check_same_dtype(op_name, (a, b))
    if not a._shape:
        raise rules.op_error(op_name, "Input must be at least 1D[]")
    if a._shape != b._shape:
        raise rules.op_error(op_name, f"Both inputs must be of same shape: "
                                      f"{kernel_dims(a._shape)} vs. {kernel_dims(b._shape)}")
    if a._shape[-1] not in (3, None):
        raise FailedPreconditionError(
            "Cross-products are only defined for 3-element vectors. [Op:Cross]", op=op_name)
    return a._shape, a.dtype


CROSS = register(OpDef(
    name="Cross", args=("a", "b"), infer=_cross_infer,
    eager=_wide(lambda a, b: np.cross(a, b).astype(a.dtype, copy=False)), saves=("a", "b"),
    grad=lambda ctx, dy: (bind(CROSS, (ctx.b, dy)), bind(CROSS, (dy, ctx.a)))))


def cross(a, b, name=None):
    """The cross product of 3-element vectors along the last axis (tf.linalg.cross).

    >>> import tapeflow as tf
    >>> tf.linalg.cross([1., 0., 0.], [0., 1., 0.]).numpy()
    array([0., 0., 1.], dtype=float32)
    """
    a, b = rules.as_tensors(a, b)
    return bind(CROSS, (a, b))


# -- adjoint, matrix_transpose ----------------------------------------------------------

def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """The innermost two dimensions swapped (tf.linalg.matrix_transpose), and complex
    numbers conjugated with `conjugate`."""
    from .elementwise import conj
    from .shape import transpose
    x = rules.as_tensor(a)
    rank = len(x._shape)
    if rank < 2:
        raise ValueError(f"Argument `a` should be a (batch) matrix with rank >= 2.  Received "
                         f"`a` = {x} with shape: {tuple(x._shape)}")
    swapped = transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2])
    return conj(swapped) if conjugate else swapped


def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost matrices (tf.linalg.adjoint)."""
    return matrix_transpose(matrix, conjugate=True)


__all__ = ["adjoint", "band_part", "cholesky_solve", "cross", "matrix_transpose",
           "set_diag", "triangular_solve"]
