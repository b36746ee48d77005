"""The operators that hold one tensor: a full matrix, a diagonal, the identity (scaled
or not), a lower triangle and zeros."""

import numpy as np

from ... import dtypes
from ..creation import eye, ones, zeros
from ..elementwise import abs, log, sqrt
from ..linalg import diag, diag_part, matmul
from ..matrix import band_part, triangular_solve
from ..reduce import reduce_max, reduce_min, reduce_prod, reduce_sum
from ..shape import broadcast_to, expand_dims
from .base import LinearOperator, adjointed, as_float_tensor, broadcast_batch, plus_diagonal


class LinearOperatorFullMatrix(LinearOperator):
    """The operator of a [batch] matrix, held as it is."""

    def __init__(self, matrix, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorFullMatrix"):
        self._matrix = as_float_tensor(matrix, "matrix")
        if len(self._matrix._shape) < 2:
            raise ValueError(f"Argument matrix must have at least 2 dimensions. Found: "
                             f"{self._matrix}")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, {"matrix": self._matrix})

    def _shape(self):
        return tuple(self._matrix._shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._matrix


def _real_is_self_adjoint(is_self_adjoint, what):
    if is_self_adjoint is False:
        raise ValueError(f"A real {what} operator is always self adjoint.")
    return True


class LinearOperatorDiag(LinearOperator):
    """The square operator of a [batch] diagonal [..., N]."""

    def __init__(self, diag, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorDiag"):
        self._diag = as_float_tensor(diag, "diag")
        if len(self._diag._shape) < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension.  Found: "
                             f"{self._diag}")
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        is_self_adjoint = _real_is_self_adjoint(is_self_adjoint, "diagonal")
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"diag": self._diag})

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        return tuple(self._diag._shape) + (self._diag._shape[-1],)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return expand_dims(self._diag, -1) * adjointed(x, adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjointed(rhs, adjoint_arg) / expand_dims(self._diag, -1)

    def _determinant(self):
        return reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(abs(self._diag)), axis=-1)

    def _to_dense(self):
        return diag(self._diag)

    def _diag_part(self):
        return self._diag

    def _add_to_tensor(self, x):
        return plus_diagonal(x, self._diag)

    def _eigvals(self):
        return self._diag

    def _cond(self):
        magnitude = abs(self._diag)
        return reduce_max(magnitude, axis=-1) / reduce_min(magnitude, axis=-1)

    def _inverse(self):
        return LinearOperatorDiag(1.0 / self._diag, self.is_non_singular,
                                  self.is_self_adjoint, self.is_positive_definite, True)

    def _cholesky(self):
        return LinearOperatorDiag(sqrt(self._diag), True, True, True, True)

    def _matmul_operator(self, other):
        if isinstance(other, LinearOperatorDiag):
            return LinearOperatorDiag(self._diag * other.diag,
                                      _both(self, other, "is_non_singular"), True, None, True)
        return super()._matmul_operator(other)


def _both(a, b, hint):
    return True if getattr(a, hint) and getattr(b, hint) else None


def _rows(num_rows, what="num_rows"):
    value = np.asarray(getattr(num_rows, "_value", num_rows))
    if value.shape:
        raise ValueError(f"Argument {what} must be a 0-D Tensor.")
    if value.dtype.kind not in "iu":
        raise TypeError(f"Argument {what} must be integer type.  Found: {value.dtype}")
    if value < 0:
        raise ValueError(f"Argument {what} must be non-negative.  Found: {int(value)}")
    return int(value)


def _batch_shape(batch_shape):
    if batch_shape is None:
        return ()
    value = np.asarray(getattr(batch_shape, "_value", batch_shape))
    if value.ndim != 1:
        raise ValueError(f"Argument batch_shape must be a 1-D Tensor.  Found: {batch_shape}")
    if (value < 0).any():
        raise ValueError(f"Argument batch_shape must be non-negative.  Found: {batch_shape}")
    return tuple(int(v) for v in value)


class _Identities(LinearOperator):
    """What the identity and its multiples share: a product is a scaling of x broadcast
    to the operator's batch."""

    def _shape(self):
        return self._batch + (self._num_rows, self._num_rows)

    def _broadcast(self, x):
        if not self._batch:
            return x
        batch = broadcast_batch(self._batch, x._shape[:-2])
        return broadcast_to(x, list(batch) + list(x._shape[-2:]))

    def _to_dense(self):
        return self._scaled(eye(self._num_rows, batch_shape=self._batch, dtype=self.dtype),
                            self._scale)

    def _diag_part(self):
        return self._scaled(ones(self._batch + (self._num_rows,), self.dtype), self._scale)

    def _eigvals(self):
        return self._diag_part()


class LinearOperatorIdentity(_Identities):
    """The [batch of] N x N identity, held as its size."""

    def __init__(self, num_rows, batch_shape=None, dtype=None, is_non_singular=True,
                 is_self_adjoint=True, is_positive_definite=True, is_square=True,
                 assert_proper_shapes=False, name="LinearOperatorIdentity"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        for hint, value, words in (("is_self_adjoint", is_self_adjoint, "self-adjoint"),
                                   ("is_positive_definite", is_positive_definite,
                                    "positive-definite"),
                                   ("is_non_singular", is_non_singular, "non-singular"),
                                   ("is_square", is_square, "square")):
            if not value:
                raise ValueError(f"An identity operator is always {words}.")
        self._num_rows = _rows(num_rows)
        self._batch = _batch_shape(batch_shape)
        self._scale = None
        super().__init__(dtype, None, True, True, True, True, name,
                         {"num_rows": self._num_rows, "batch_shape": batch_shape,
                          "dtype": dtype})

    @staticmethod
    def _scaled(x, scale):
        return x

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._broadcast(adjointed(x, adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _determinant(self):
        return ones(self._batch, self.dtype)

    def _log_abs_determinant(self):
        return zeros(self._batch, self.dtype)

    def _trace(self):
        return self._num_rows * ones(self._batch, self.dtype)

    def _add_to_tensor(self, x):
        return plus_diagonal(x, ones(x._shape[-1:], x.dtype))

    def _inverse(self):
        return self

    def _cholesky(self):
        return self

    def _matmul_operator(self, other):
        return other


class LinearOperatorScaledIdentity(_Identities):
    """multiplier times the N x N identity; multiplier's shape is the batch shape."""

    def __init__(self, num_rows, multiplier, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=True, assert_proper_shapes=False,
                 name="LinearOperatorScaledIdentity"):
        self._scale = as_float_tensor(multiplier, "multiplier")
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        is_self_adjoint = _real_is_self_adjoint(is_self_adjoint, "scaled identity")
        self._num_rows = _rows(num_rows)
        self._batch = tuple(self._scale._shape)
        super().__init__(self._scale.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name,
                         {"num_rows": self._num_rows, "multiplier": self._scale})

    @property
    def multiplier(self):
        return self._scale

    @staticmethod
    def _scaled(x, scale):
        return x * expand_dims(scale, -1) if len(x._shape) == len(scale._shape) + 1 \
            else x * expand_dims(expand_dims(scale, -1), -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return adjointed(x, adjoint_arg) * expand_dims(expand_dims(self._scale, -1), -1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return adjointed(rhs, adjoint_arg) / expand_dims(expand_dims(self._scale, -1), -1)

    def _determinant(self):
        return self._scale ** self._num_rows

    def _log_abs_determinant(self):
        return self._num_rows * log(abs(self._scale))

    def _trace(self):
        return self._num_rows * self._scale

    def _cond(self):
        return ones(self._batch, self.dtype)

    def _add_to_tensor(self, x):
        return plus_diagonal(x, expand_dims(self._scale, -1) + zeros(x._shape[-1:], x.dtype))

    def _inverse(self):
        return LinearOperatorScaledIdentity(self._num_rows, 1.0 / self._scale,
                                            self.is_non_singular, True,
                                            self.is_positive_definite)

    def _cholesky(self):
        return LinearOperatorScaledIdentity(self._num_rows, sqrt(self._scale), True, True,
                                            True)

    def _matmul_operator(self, other):
        if isinstance(other, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(self._num_rows, self._scale * other.multiplier,
                                                _both(self, other, "is_non_singular"))
        return super()._matmul_operator(other)


class LinearOperatorLowerTriangular(LinearOperator):
    """The square operator of the lower triangles of [batch] matrices (the rest unread)."""

    def __init__(self, tril, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None,
                 name="LinearOperatorLowerTriangular"):
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this "
                             "time.")
        self._tril = as_float_tensor(tril, "tril")
        if len(self._tril._shape) < 2:
            raise ValueError(f"Argument tril must have at least 2 dimensions.  Found: "
                             f"{self._tril}")
        self._lower = band_part(self._tril, -1, 0)
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"tril": self._tril})

    def _shape(self):
        return tuple(self._tril._shape)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self._lower, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return triangular_solve(self._lower, adjointed(rhs, adjoint_arg), lower=True,
                                adjoint=adjoint)

    def _determinant(self):
        return reduce_prod(diag_part(self._lower), axis=-1)

    def _log_abs_determinant(self):
        return reduce_sum(log(abs(diag_part(self._lower))), axis=-1)

    def _to_dense(self):
        return self._lower

    def _eigvals(self):
        return diag_part(self._lower)


class LinearOperatorZeros(LinearOperator):
    """The [batch of] zero matrices, held as their shape."""

    def __init__(self, num_rows, num_columns=None, batch_shape=None, dtype=None,
                 is_non_singular=False, is_self_adjoint=True, is_positive_definite=False,
                 is_square=True, assert_proper_shapes=False, name="LinearOperatorZeros"):
        dtype = dtypes.as_dtype(dtype or dtypes.float32)
        if is_non_singular:
            raise ValueError("A zero operator is always singular.")
        if is_positive_definite:
            raise ValueError("A zero operator is always not positive-definite.")
        self._num_rows = _rows(num_rows)
        self._num_columns = self._num_rows if num_columns is None else _rows(
            num_columns, "num_columns")
        self._batch = _batch_shape(batch_shape)
        square = self._num_rows == self._num_columns
        if not square:
            is_self_adjoint, is_square = None if is_self_adjoint else is_self_adjoint, False
        super().__init__(dtype, None, False, is_self_adjoint, False, is_square, name,
                         {"num_rows": self._num_rows, "num_columns": num_columns,
                          "batch_shape": batch_shape, "dtype": dtype})

    def _shape(self):
        return self._batch + (self._num_rows, self._num_columns)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjointed(x, adjoint_arg)
        rows = self._num_columns if adjoint else self._num_rows
        batch = broadcast_batch(self._batch, x._shape[:-2])
        return zeros(batch + (rows, x._shape[-1]), self.dtype)

    def _determinant(self):
        return zeros(self._batch, self.dtype)

    def _log_abs_determinant(self):
        return log(self._determinant())

    def _to_dense(self):
        return zeros(self._shape(), self.dtype)

    def _diag_part(self):
        return zeros(self._batch + (min(self._num_rows, self._num_columns),), self.dtype)

    def _trace(self):
        return zeros(self._batch, self.dtype)

    def _add_to_tensor(self, x):
        return x + zeros(self._shape(), self.dtype)

    def _eigvals(self):
        return self._diag_part()

    def _matmul_operator(self, other):
        return LinearOperatorZeros(self._num_rows, other.domain_dimension,
                                   list(broadcast_batch(self._batch, other.batch_shape)),
                                   self.dtype, is_square=None)


__all__ = ["LinearOperatorDiag", "LinearOperatorFullMatrix", "LinearOperatorIdentity",
           "LinearOperatorLowerTriangular", "LinearOperatorScaledIdentity",
           "LinearOperatorZeros"]
