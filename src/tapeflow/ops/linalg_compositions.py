"""tf.linalg functions TensorFlow writes in Python over other ops, composed here of the
table's entries the same way (their gradients, batching and compiled code come from
those): tensor_diag, tensor_diag_part, normalize, matrix_rank and
banded_triangular_solve."""

import numpy as np

from ..errors import InvalidArgumentError
from . import rules
from .creation import zeros
from .elementwise import cast, greater
from .linalg import diag, diag_part, norm
from .matrix import triangular_solve
from .reduce import reduce_max, reduce_sum
from .rules import kernel_dims
from .shape import expand_dims, reshape, squeeze


def tensor_diag(diagonal, name=None):
    """The tensor of rank 2k with `diagonal` (rank k) on its diagonal: output[i1..ik,
    i1..ik] = diagonal[i1..ik], zero elsewhere (tf.linalg.tensor_diag).

    >>> import tapeflow as tf
    >>> tf.linalg.tensor_diag([1., 2.]).numpy()
    array([[1., 0.],
           [0., 2.]], dtype=float32)
    """
    x = rules.as_tensor(diagonal)
    if not x._shape:
        raise InvalidArgumentError(
            f"Input must be at least rank 1, got {len(x._shape)} [Op:Diag]", op="Diag")
    return reshape(diag(reshape(x, [-1])), list(x._shape) * 2)


def tensor_diag_part(input, name=None):
    """The diagonal of a tensor of rank 2k: output[i1..ik] = input[i1..ik, i1..ik]
    (tf.linalg.tensor_diag_part)."""
    x = rules.as_tensor(input)
    rank = len(x._shape)
    if rank == 0 or rank % 2:
        raise InvalidArgumentError(
            f"The rank of the tensor should be                                          "
            f"even and positive, got shape {kernel_dims(x._shape)} [Op:DiagPart]",
            op="DiagPart")
    half = rank // 2
    for i in range(half):
        if x._shape[i] != x._shape[i + half]:
            raise InvalidArgumentError(
                f"Invalid shape {kernel_dims(x._shape).replace(', ', ',')}: dimensions {i} "
                f"and {i + half} do not match. [Op:DiagPart]", op="DiagPart")
    size = int(np.prod(x._shape[:half], dtype=np.int64))
    return reshape(diag_part(reshape(x, [size, size])), list(x._shape[:half]))


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """(tensor / its norm, the norm), the norm kept with its reduced axes
    (tf.linalg.normalize).

    >>> import tapeflow as tf
    >>> unit, length = tf.linalg.normalize(tf.constant([3., 4.]))
    >>> unit.numpy(), length.numpy()
    (array([0.6, 0.8], dtype=float32), array([5.], dtype=float32))
    """
    x = rules.as_tensor(tensor)
    length = norm(x, ord=ord, axis=axis, keepdims=True)
    return x / length, length


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values of each innermost matrix above `tol` (default
    eps * max(rows, cols) * the largest singular value), as int32
    (tf.linalg.matrix_rank)."""
    from .decompositions import svd
    x = rules.as_tensor(a)
    if not rules.is_float(x.dtype):
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {x.dtype.name}).")
    if len(x._shape) < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions (saw: {len(x._shape)}).")
    s = svd(x, compute_uv=False)
    if tol is None:
        eps = float(np.finfo(x.dtype._np).eps)
        tol = eps * max(x._shape[-2:]) * reduce_max(s, axis=-1, keepdims=True)
    else:
        tol = cast(rules.as_tensor(tol), x.dtype)
    from .. import dtypes
    return reduce_sum(cast(greater(s, tol), dtypes.int32), axis=-1)


def _banded_matrix(bands, lower):
    """The dense triangular matrices [..., M, M] of the K bands [..., K, M]: with `lower`
    row k is subdiagonal k (left-padded), else row K - 1 - k is superdiagonal k
    (right-padded), TensorFlow's LEFT_RIGHT alignment."""
    k, m = bands._shape[-2:]
    matrix = zeros(list(bands._shape[:-2]) + [m, m], dtype=bands.dtype)
    for offset in range(min(k, m)):
        if lower:
            band = bands[..., offset, offset:]
            matrix += diag(band, k=-offset, num_rows=m, num_cols=m)
        else:
            band = bands[..., k - 1 - offset, :m - offset]
            matrix += diag(band, k=offset, num_rows=m, num_cols=m)
    return matrix


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """Solves triangular systems whose K nonzero diagonals are given as bands [..., K, M]
    (tf.linalg.banded_triangular_solve): with `lower` the diagonal first and then the
    subdiagonals, left-padded; else the superdiagonals down to the diagonal (the last
    row), right-padded. rhs is [..., M] or [..., M, N]; batch dimensions broadcast.

    >>> import tapeflow as tf
    >>> tf.linalg.banded_triangular_solve([[2., 3., 4.], [1., 2., 3.]],
    ...                                   tf.ones([3, 1])).numpy()
    array([[0.5 ],
           [0.  ],
           [0.25]], dtype=float32)
    """
    bands, rhs = rules.as_tensors(bands, rhs)
    op_name = "BandedTriangularSolve"
    rules.check_dtype_in(op_name, bands, rules.is_float, "double, float, half")
    rules.check_same_dtype(op_name, (bands, rhs))
    vector = len(rhs._shape) == len(bands._shape) - 1
    if vector:
        rhs = expand_dims(rhs, -1)
    for i, x in enumerate((bands, rhs)):
        if len(x._shape) < 2:
            raise rules.op_error(op_name, f"In[{i}] ndims must be >= 2: {len(x._shape)}")
    m = bands._shape[-1]
    if m != rhs._shape[-2]:
        raise rules.op_error(op_name, f"In[0] mismatch In[1] shape: {m} vs. "
                                      f"{rhs._shape[-2]}: {kernel_dims(bands._shape)} "
                                      f"{kernel_dims(rhs._shape)} {int(lower)} "
                                      f"{int(adjoint)}")
    solved = triangular_solve(_banded_matrix(bands, lower), rhs, lower=lower, adjoint=adjoint)
    return squeeze(solved, -1) if vector else solved


__all__ = ["banded_triangular_solve", "matrix_rank", "normalize", "tensor_diag",
           "tensor_diag_part"]
