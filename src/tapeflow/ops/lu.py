"""The LU decomposition with partial pivoting (Lu: TensorFlow's packed factors and row
permutation) and what TensorFlow composes of it in Python: lu_reconstruct, lu_solve and
lu_matrix_inverse (tensorflow/python/ops/linalg/linalg_impl.py).

TensorFlow registers no gradient for Lu (tape.gradient raises LookupError); tapeflow
differentiates it, the permutation held fixed as it is almost everywhere."""

import warnings
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .creation import eye, ones
from .decompositions import _square_float_matrix, no_half_kernel
from .indexing import gather, one_hot
from .linalg import NOT_INVERTIBLE, _wide, matmul
from .matrix import band_part, matrix_transpose, set_diag, triangular_solve
from .registry import OpDef, bind, register
from .shape import broadcast_to, shape
from .sorting import argsort


def _lu_infer(input, output_idx_type):
    if not rules.is_float(input.dtype):
        rules.check_dtype_in("Lu", input, rules.is_float, "double, float, half")
    if len(input._shape) < 2:
        raise rules.op_error("Lu", f"Input tensor must have rank >= 2, got "
                                   f"{len(input._shape)}")
    _square_float_matrix("Lu", input)
    no_half_kernel("Lu", input, f", output_idx_type=DT_{output_idx_type.name.upper()}")
    return [(input._shape, input.dtype), (input._shape[:-1], output_idx_type)]


def _row_permutation(pivots):
    """LAPACK's row interchanges (row i swapped with pivots[i], in turn) as the
    permutation p with lu = a[p]."""
    perm = np.arange(len(pivots))
    for i, j in enumerate(pivots):
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _lu_kernel(input, output_idx_type):
    from scipy.linalg import lu_factor  # here: scipy.linalg is slow to import
    n = input.shape[-1]
    flat = input.reshape((-1, n, n))
    packed = np.empty_like(flat)
    perms = np.empty(flat.shape[:2], output_idx_type._np)
    for b, a in enumerate(flat):
        with warnings.catch_warnings():  # a singular matrix raises below
            warnings.simplefilter("ignore")
            factors, pivots = lu_factor(a, check_finite=False)
        if not np.all(np.abs(np.diagonal(factors)) > 0):
            raise InvalidArgumentError(f"{NOT_INVERTIBLE['Lu']} [Op:Lu]", op="Lu")
        packed[b], perms[b] = factors, _row_permutation(pivots)
    return packed.reshape(input.shape), perms.reshape(input.shape[:-1])


def _unit_lower(lower_upper):
    return set_diag(band_part(lower_upper, -1, 0),
                    ones(shape(lower_upper)[:-1], dtype=lower_upper.dtype))


def _strictly_lower(x):
    return band_part(x, -1, 0) - band_part(x, 0, 0)


def _lu_grad(ctx, grad_lu, grad_perm):
    # a[p] = L U. With X = L^-1 d(a[p]) U^-1: dL = L tril(X, -1), dU = triu(X) U, so
    # the gradient of a[p] is L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T, and a's is
    # that with the rows put back (P^T times it, P the permutation matrix).
    packed, perm = ctx.out0, ctx.out1
    lower = _unit_lower(packed)
    upper_grad = band_part(grad_lu, 0, -1)
    middle = (_strictly_lower(matmul(lower, grad_lu - upper_grad, adjoint_a=True))
              + band_part(matmul(upper_grad, band_part(packed, 0, -1), adjoint_b=True),
                          0, -1))
    left = triangular_solve(lower, middle, lower=True, adjoint=True)
    grad_rows = matrix_transpose(triangular_solve(packed, matrix_transpose(left),
                                                  lower=False))
    permutation = one_hot(perm, ctx.shapes[0][-1], dtype=grad_rows.dtype)
    return (matmul(permutation, grad_rows, adjoint_a=True),)


LU = register(OpDef(
    name="Lu", args=("input",), infer=_lu_infer, eager=_wide(_lu_kernel), n_out=2,
    saves=("out0", "out1"), grad=_lu_grad, domain=(-1.0, 1.0)))

# What tf.linalg.lu returns, as TensorFlow names it.
Lu = namedtuple("Lu", ["lu", "p"])


def lu(input, output_idx_type=dtypes.int32, name=None):
    """The LU decomposition of each innermost square matrix with partial pivoting
    (tf.linalg.lu): `lu` packs the unit lower factor L (below the diagonal) and the upper
    factor U, and `p` is the row permutation with input[p] = L U. A singular matrix
    raises InvalidArgumentError, as TensorFlow does.

    >>> import tapeflow as tf
    >>> lu, p = tf.linalg.lu(tf.constant([[1., 2.], [3., 4.]]))
    >>> lu.numpy().round(4), p.numpy()
    (array([[3.    , 4.    ],
           [0.3333, 0.6667]], dtype=float32), array([1, 0], dtype=int32))
    """
    index_type = dtypes.as_dtype(output_idx_type)
    if index_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'output_idx_type' has DataType "
                        f"{index_type.name} not in list of allowed values: int32, int64")
    return Lu(*bind(LU, (rules.as_tensor(input),), {"output_idx_type": index_type}))


def _lu_operands(lower_upper, perm):
    lower_upper = rules.as_tensor(lower_upper)
    perm = rules.as_tensor(perm, dtypes.int32)
    return lower_upper, perm


def _permuted_rows(x, perm):
    """x[..., perm, :] with the batch dimensions of x and perm broadcast (TensorFlow's
    batched gather)."""
    batch = rules.broadcast_shapes("lu", x._shape[:-2], perm._shape[:-1])
    x = broadcast_to(x, list(batch) + list(x._shape[-2:]))
    perm = broadcast_to(perm, list(batch) + [perm._shape[-1]])
    return gather(x, perm, axis=-2, batch_dims=len(batch))


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrices whose `tf.linalg.lu` is (lower_upper, perm): L U with its rows put
    back in their order (tf.linalg.lu_reconstruct).

    >>> import tapeflow as tf
    >>> x = tf.constant([[1., 2.], [3., 4.]])
    >>> tf.linalg.lu_reconstruct(*tf.linalg.lu(x)).numpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    lower_upper, perm = _lu_operands(lower_upper, perm)
    product = matmul(_unit_lower(lower_upper), band_part(lower_upper, 0, -1))
    return _permuted_rows(product, argsort(perm, axis=-1))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """Solves A X = rhs given A's LU decomposition (tf.linalg.lu_solve): the permuted
    rhs through two triangular solves; batch dimensions broadcast."""
    lower_upper, perm = _lu_operands(lower_upper, perm)
    rhs = rules.as_tensor(rhs, lower_upper.dtype)
    permuted = _permuted_rows(rhs, perm)
    return triangular_solve(lower_upper, triangular_solve(_unit_lower(lower_upper), permuted),
                            lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of A given its LU decomposition (tf.linalg.lu_matrix_inverse): lu_solve
    of the identity."""
    lower_upper, perm = _lu_operands(lower_upper, perm)
    identity = eye(lower_upper._shape[-1], batch_shape=lower_upper._shape[:-2],
                   dtype=lower_upper.dtype)
    return lu_solve(lower_upper, perm, identity)


__all__ = ["lu", "lu_matrix_inverse", "lu_reconstruct", "lu_solve"]
