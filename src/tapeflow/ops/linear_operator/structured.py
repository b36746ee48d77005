"""Operators of structured matrices held by a few vectors: Toeplitz (a first column and
row), tridiagonal (its three diagonals), Householder reflections and permutations."""

import numpy as np

from ... import dtypes
from .. import rules
from ..creation import ones
from ..elementwise import cast
from ..indexing import gather, one_hot
from ..linalg import matmul
from ..reduce import reduce_sum
from ..shape import concat, expand_dims, reverse
from ..sorting import argsort
from ..tridiagonal import _compact, tridiagonal_matmul, tridiagonal_solve
from .base import LinearOperator, adjointed, as_float_tensor, broadcast_batch


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrices with first column `col` and first row `row` [..., N]
    (row[0] unread: col[0] is the diagonal)."""

    def __init__(self, col, row, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorToeplitz"):
        self._col = as_float_tensor(col, "col")
        self._row = as_float_tensor(row, "row", self._col.dtype)
        rules.check_same_dtype("LinearOperatorToeplitz", (self._col, self._row))
        super().__init__(self._col.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True if is_square is None else is_square,
                         name, {"col": self._col, "row": self._row})

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        n = self._col._shape[-1]
        return broadcast_batch(self._col._shape[:-1], self._row._shape[:-1]) + (n, n)

    def _to_dense(self):
        # Entry (i, j) is values[n - 1 + i - j] of (row reversed without row[0], col).
        n = self._col._shape[-1]
        batch = self._shape()[:-2]
        from ..shape import broadcast_to
        col = broadcast_to(self._col, list(batch) + [n])
        row = broadcast_to(self._row, list(batch) + [n])
        values = concat([reverse(row[..., 1:], [-1]), col], axis=-1)
        index = n - 1 + np.arange(n)[:, None] - np.arange(n)[None, :]
        return gather(values, index.astype(np.int32), axis=-1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _diag_part(self):
        return self._col[..., :1] * ones(self._shape()[:-1], self.dtype)


class LinearOperatorTridiag(LinearOperator):
    """Tridiagonal matrices, given in tf.linalg.tridiagonal_solve's formats."""

    def __init__(self, diagonals, diagonals_format="compact", is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorTridiag"):
        if diagonals_format not in ("compact", "matrix", "sequence"):
            raise ValueError(f"Diagonals Format must be one of compact, matrix, sequence, "
                             f"got : {diagonals_format}")
        self._format = diagonals_format
        self._diagonals = (list(rules.as_tensors(*diagonals))
                           if diagonals_format == "sequence" else rules.as_tensor(diagonals))
        self._compact = _compact(self._diagonals, diagonals_format, "LinearOperatorTridiag")
        if not rules.is_float(self._compact.dtype):
            raise TypeError(f"Argument diagonals must have dtype in [float16, float32, "
                            f"float64, complex64, complex128]. Found: "
                            f"{self._compact.dtype.name}")
        if is_square is False:
            raise ValueError("Only square tridiagonal operators are supported.")
        super().__init__(self._compact.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name,
                         {"diagonals": self._diagonals, "diagonals_format": diagonals_format})

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self):
        return self._format

    def _shape(self):
        n = self._compact._shape[-1]
        return tuple(self._compact._shape[:-2]) + (n, n)

    def _transposed_compact(self):
        from ..tridiagonal import _transposed
        return _transposed(self._compact)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        diagonals = self._transposed_compact() if adjoint else self._compact
        return tridiagonal_matmul(diagonals, adjointed(x, adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        diagonals = self._transposed_compact() if adjoint else self._compact
        return tridiagonal_solve(diagonals, adjointed(rhs, adjoint_arg))

    def _diag_part(self):
        return self._compact[..., 1, :]

    def _to_dense(self):
        from ..linalg import diag
        c = self._compact
        return diag(c[..., 1, :]) + diag(c[..., 0, :-1], k=1) + diag(c[..., 2, 1:], k=-1)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection I - 2 v v^H / (v^H v) across the hyperplane orthogonal to
    reflection_axis v [..., N]: self-adjoint, its own inverse, never positive definite."""

    def __init__(self, reflection_axis, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name="LinearOperatorHouseholder"):
        self._axis = as_float_tensor(reflection_axis, "reflection_axis")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_non_singular is False:
            raise ValueError("A Householder operator is always non-singular.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        super().__init__(self._axis.dtype, None, is_non_singular, True, False, True,
                         name, {"reflection_axis": self._axis})

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        n = self._axis._shape[-1]
        return tuple(self._axis._shape[:-1]) + (n, n)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjointed(x, adjoint_arg)
        axis = expand_dims(self._axis, -1)
        scale = 2.0 / reduce_sum(self._axis * self._axis, axis=-1)
        projection = matmul(axis, x, adjoint_a=True)
        return x - expand_dims(expand_dims(scale, -1), -1) * axis * projection

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint, adjoint_arg)

    def _determinant(self):
        return -ones(self._shape()[:-2], self.dtype)

    def _log_abs_determinant(self):
        return 0.0 * ones(self._shape()[:-2], self.dtype)

    def _trace(self):
        return (self._shape()[-1] - 2.0) * ones(self._shape()[:-2], self.dtype)

    def _diag_part(self):
        squares = self._axis * self._axis
        return 1.0 - 2.0 * squares / reduce_sum(squares, axis=-1, keepdims=True)

    def _eigvals(self):
        # -1 (along the axis) and 1 (n - 1 times): constants, as TensorFlow's.
        batch, n = self._shape()[:-2], self._shape()[-1]
        return concat([-ones(batch + (1,), self.dtype), ones(batch + (n - 1,), self.dtype)],
                      axis=-1)

    def _cond(self):
        return ones(self._shape()[:-2], self.dtype)

    def _inverse(self):
        return self


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrices P with (P x)[i] = x[perm[i]], held as perm [..., N]."""

    def __init__(self, perm, dtype=dtypes.float32, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=None,
                 name="LinearOperatorPermutation"):
        self._perm = rules.as_tensor(perm)
        if not self._perm.dtype.is_integer:
            raise TypeError(f"Argument perm must have integer dtype. Found: "
                            f"{self._perm.dtype.name}")
        if len(self._perm._shape) < 1:
            raise ValueError(f"Argument perm must have at least 1 dimension. Found: "
                             f"{self._perm}")
        if is_non_singular is False:
            raise ValueError("A Permutation operator is always non-singular.")
        if is_square is False:
            raise ValueError("A Permutation operator is always square.")
        super().__init__(dtypes.as_dtype(dtype), None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"perm": self._perm,
                                                            "dtype": dtype})

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        n = self._perm._shape[-1]
        return tuple(self._perm._shape[:-1]) + (n, n)

    def _rows_taken(self, x, perm):
        from ..shape import broadcast_to
        batch = broadcast_batch(perm._shape[:-1], x._shape[:-2])
        x = broadcast_to(x, list(batch) + list(x._shape[-2:]))
        perm = broadcast_to(perm, list(batch) + [perm._shape[-1]])
        return gather(x, perm, axis=-2, batch_dims=len(batch))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        perm = argsort(self._perm, axis=-1) if adjoint else self._perm
        return self._rows_taken(adjointed(x, adjoint_arg), perm)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, not adjoint, adjoint_arg)

    def _to_dense(self):
        return cast(one_hot(self._perm, self._shape()[-1]), self.dtype)

    def _diag_part(self):
        n = self._shape()[-1]
        from ..elementwise import equal
        return cast(equal(self._perm, np.arange(n, dtype=self._perm.dtype._np)), self.dtype)

    def _inverse(self):
        return LinearOperatorPermutation(argsort(self._perm, axis=-1), self.dtype)

    def _adjoint(self):
        return self._inverse()


__all__ = ["LinearOperatorHouseholder", "LinearOperatorPermutation",
           "LinearOperatorToeplitz", "LinearOperatorTridiag"]
