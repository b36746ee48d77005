"""tf.linalg.LinearOperator: a (batch of) matrices known by what they do — products,
solves, determinants — rather than by their entries. As in TensorFlow, every method is
a composition of ordinary ops, so gradients flow through operators (eagerly and inside
tf.function) and each subclass overrides only what its structure makes cheaper; the
defaults work on the dense matrix."""

import numpy as np

from ...tensor import TensorShape
from .. import rules
from ..creation import eye
from ..decompositions import cholesky, eigvalsh, slogdet, svd
from ..elementwise import abs, exp, log
from ..linalg import det, diag_part, solve
from ..matrix import cholesky_solve, matrix_transpose, set_diag
from ..reduce import reduce_max, reduce_min, reduce_sum
from ..shape import broadcast_to, expand_dims, squeeze


def as_float_tensor(value, what, dtype=None):
    """A tensor of a float dtype for an operator's parameter (TypeError otherwise, as
    TensorFlow's operators check)."""
    x = rules.as_tensor(value, dtype)
    if not rules.is_float(x.dtype):
        raise TypeError(f"Argument {what} must have dtype in [float16, float32, float64, "
                        f"complex64, complex128]. Found: {x.dtype.name}")
    return x


def adjointed(x, adjoint):
    return matrix_transpose(x) if adjoint else x


def broadcast_batch(*shapes):
    """The broadcast of batch shapes (tuples), as operators combine them."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


class LinearOperator:
    """The base class: subclasses define `_shape()` (batch + (rows, columns)) and
    `_matmul`, and override what their structure computes better."""

    def __init__(self, dtype, graph_parents=None, is_non_singular=None, is_self_adjoint=None,
                 is_positive_definite=None, is_square=None, name=None, parameters=None):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular and is_square is False:
            raise ValueError("A non-singular matrix is always square.")
        if is_non_singular:
            is_square = True
        self._dtype = dtype
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_hint = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})
        if is_square is False and self._square_by_shape():
            raise ValueError("User set is_square hint to False, but the operator was square.")
        if is_square is True and self._square_by_shape() is False:
            raise ValueError(f"Operator {self._name} was expected to be square, but has "
                             f"shape {self.shape}.")

    # -- what the operator is ------------------------------------------------------------

    def _square_by_shape(self):
        rows, cols = self._shape()[-2:]
        return None if None in (rows, cols) else rows == cols

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def parameters(self):
        return dict(self._parameters)

    @property
    def graph_parents(self):
        return []

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        """The hint, else whether the shape is square (None where unknown)."""
        if self._is_square_hint is not None:
            return self._is_square_hint
        return self._square_by_shape()

    @property
    def shape(self):
        return TensorShape(self._shape())

    @property
    def batch_shape(self):
        return TensorShape(self._shape()[:-2])

    @property
    def tensor_rank(self):
        return len(self._shape())

    @property
    def range_dimension(self):
        return self._shape()[-2]

    @property
    def domain_dimension(self):
        return self._shape()[-1]

    def shape_tensor(self, name="shape_tensor"):
        return rules.as_tensor(np.array(self._shape(), np.int32))

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return rules.as_tensor(np.array(self._shape()[:-2], np.int32))

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        return rules.as_tensor(np.int32(self.tensor_rank))

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        return rules.as_tensor(np.int32(self.range_dimension))

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        return rules.as_tensor(np.int32(self.domain_dimension))

    def _batch_eye(self, n):
        return eye(n, batch_shape=self._shape()[:-2], dtype=self.dtype)

    def _check_input_dtype(self, arg):
        if arg.dtype != self.dtype:
            raise TypeError(f"Expected argument to have dtype {self.dtype!r}. Found: "
                            f"{arg.dtype!r} in tensor {arg!r}")

    def _checked(self, x, own_dim, arg_dim):
        x = rules.as_tensor(x, self.dtype)
        self._check_input_dtype(x)
        own, theirs = self._shape()[own_dim], x._shape[arg_dim] if x._shape else None
        if None not in (own, theirs) and own != theirs:
            raise ValueError(f"Dimensions {own} and {theirs} are not compatible")
        return x

    def __repr__(self):
        return (f"<tf.linalg.{type(self).__name__} '{self.name}' "
                f"batch_shape={list(self.batch_shape)} dtype={self.dtype.name}>")

    # -- products and solves -------------------------------------------------------------

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """self @ x (adjoint(self) with `adjoint`, adjoint(x) with `adjoint_arg`); an
        operator x gives an operator."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if None not in (right.range_dimension, left.domain_dimension) and \
                    right.range_dimension != left.domain_dimension:
                raise ValueError(f"Operators are incompatible. Expected `x` to have "
                                 f"dimension {left.domain_dimension} but got "
                                 f"{right.range_dimension}.")
            return left._matmul_operator(right)
        x = self._checked(x, -2 if adjoint else -1, -1 if adjoint_arg else -2)
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matmul_operator(self, other):
        from .combined import LinearOperatorComposition
        return LinearOperatorComposition([self, other])

    def __matmul__(self, other):
        return self.matmul(other)

    def matvec(self, x, adjoint=False, name="matvec"):
        x = self._checked(x, -2 if adjoint else -1, -1)
        return squeeze(self._matmul(expand_dims(x, -1), adjoint=adjoint), -1)

    def _refuse_if(self, error, *hints_and_messages):
        """Raises `error` with the message of the first hint (a property name) that is
        False."""
        for hint, message in hints_and_messages:
            if getattr(self, hint) is False:
                raise error(message)

    def _check_solvable(self):
        self._refuse_if(
            NotImplementedError,
            ("is_non_singular", ("Exact solve not implemented for an operator that is "
                                 "expected to be singular.")),
            ("is_square", ("Exact solve not implemented for an operator that is expected "
                           "to not be square.")))

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """x with self @ x = rhs (adjoint(self) with `adjoint`, adjoint(rhs) with
        `adjoint_arg`); an operator rhs gives an operator."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            return left.inverse()._matmul_operator(right)
        rhs = self._checked(rhs, -1 if adjoint else -2, -1 if adjoint_arg else -2)
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        self._check_solvable()
        rhs = self._checked(rhs, -1 if adjoint else -2, -1)
        return squeeze(self._solve(expand_dims(rhs, -1), adjoint=adjoint), -1)

    def _can_use_cholesky(self):
        return self.is_self_adjoint and self.is_positive_definite

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjointed(rhs, adjoint_arg)
        if self._can_use_cholesky():
            return cholesky_solve(cholesky(self.to_dense()), rhs)
        matrix = self.to_dense()
        batch = broadcast_batch(matrix._shape[:-2], rhs._shape[:-2])
        return solve(broadcast_to(matrix, list(batch) + list(matrix._shape[-2:])),
                     broadcast_to(rhs, list(batch) + list(rhs._shape[-2:])), adjoint=adjoint)

    # -- the dense matrix and its numbers ------------------------------------------------

    def to_dense(self, name="to_dense"):
        return self._to_dense()

    def _to_dense(self):
        return self._matmul(self._batch_eye(self.domain_dimension))

    def _check_square(self, what):
        if self.is_square is False:
            raise NotImplementedError(f"{what} not implemented for an operator that is "
                                      f"expected to not be square.")

    def determinant(self, name="det"):
        self._check_square("Determinant")
        return self._determinant()

    def _determinant(self):
        if self._can_use_cholesky():
            return exp(self._log_abs_determinant())
        return det(self.to_dense())

    def log_abs_determinant(self, name="log_abs_det"):
        self._check_square("Determinant")
        return self._log_abs_determinant()

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            diagonal = diag_part(cholesky(self.to_dense()))
            return 2.0 * reduce_sum(log(diagonal), axis=-1)
        return slogdet(self.to_dense())[1]

    def diag_part(self, name="diag_part"):
        return self._diag_part()

    def _diag_part(self):
        return diag_part(self.to_dense())

    def trace(self, name="trace"):
        return self._trace()

    def _trace(self):
        return reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x, name="add_to_tensor"):
        x = rules.as_tensor(x, self.dtype)
        self._check_input_dtype(x)
        return self._add_to_tensor(x)

    def _add_to_tensor(self, x):
        return self.to_dense() + x

    def eigvals(self, name="eigvals"):
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _eigvals(self):
        return eigvalsh(self.to_dense())

    def cond(self, name="cond"):
        if self.is_square is False:
            raise NotImplementedError("cond not implemented for an operator that is "
                                      "expected to not be square.")
        return self._cond()

    def _cond(self):
        values = abs(self.eigvals() if self.is_self_adjoint
                     else svd(self.to_dense(), compute_uv=False))
        return reduce_max(values, axis=-1) / reduce_min(values, axis=-1)

    # -- operators derived from this one -------------------------------------------------

    def adjoint(self, name="adjoint"):
        if self.is_self_adjoint is True:
            return self
        return self._adjoint()

    def _adjoint(self):
        from .combined import LinearOperatorAdjoint
        return LinearOperatorAdjoint(self)

    @property
    def H(self):
        return self.adjoint()

    def inverse(self, name="inverse"):
        self._refuse_if(
            ValueError,
            ("is_square", ("Cannot take the Inverse: This operator represents a non "
                           "square matrix.")),
            ("is_non_singular", ("Cannot take the Inverse: This operator represents a "
                                 "singular matrix.")))
        return self._inverse()

    def _inverse(self):
        from .combined import LinearOperatorInversion
        return LinearOperatorInversion(self)

    def cholesky(self, name="cholesky"):
        if not self._can_use_cholesky():
            raise ValueError("Cannot take the Cholesky decomposition: Not a positive "
                             "definite self adjoint matrix.")
        return self._cholesky()

    def _cholesky(self):
        from .basic import LinearOperatorLowerTriangular
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True,
                                             is_square=True)

    # -- run-time checks -----------------------------------------------------------------

    def assert_non_singular(self, name="assert_non_singular"):
        return self._assert(reduce_min(abs(self._singular_values()), axis=-1) > 0,
                            "Singular operator: a singular value is zero.")

    def _singular_values(self):
        return svd(self.to_dense(), compute_uv=False)

    def assert_positive_definite(self, name="assert_positive_definite"):
        return self._assert(reduce_min(eigvalsh(self.to_dense()), axis=-1) > 0,
                            "Operator was not positive definite.")

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        dense = self.to_dense()
        return self._assert(reduce_max(abs(dense - matrix_transpose(dense))) <= 0,
                            "Matrix was not equal to its adjoint.")

    def _assert(self, condition, message):
        from ..checks import assert_at_run_time
        from ..reduce import reduce_all
        return assert_at_run_time(reduce_all(condition), message)





def plus_diagonal(x, diagonal):
    """x with `diagonal` added to its main diagonal (add_to_tensor of diagonal
    operators)."""
    return set_diag(x, diag_part(x) + diagonal)
