"""tf.linalg.experimental.conjugate_gradient: the (preconditioned) conjugate gradient
method for self-adjoint positive definite operators, a while loop of operator products
as TensorFlow writes it (tensorflow/python/ops/linalg/sparse/conjugate_gradient.py)."""

from collections import namedtuple

from ... import dtypes
from .. import rules
from ..control import while_loop
from ..creation import zeros
from ..elementwise import greater, less, logical_and
from ..linalg import norm
from ..reduce import reduce_any, reduce_sum
from ..shape import broadcast_to
from .base import broadcast_batch

# The final state, as TensorFlow names it: iterations, solution, residual, search
# direction, and r . M r.
CGState = namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(operator, rhs, preconditioner=None, x=None, tol=1e-5, max_iter=20,
                       name="conjugate_gradient"):
    """Solves operator x = rhs ([..., N]) for a self-adjoint positive definite operator
    by at most `max_iter` conjugate gradient steps, stopping once every residual's norm is
    at most tol times its right-hand side's; `preconditioner` approximates the inverse.

    >>> import tapeflow as tf
    >>> op = tf.linalg.LinearOperatorFullMatrix([[4., 1.], [1., 3.]],
    ...                                         is_self_adjoint=True,
    ...                                         is_positive_definite=True)
    >>> state = tf.linalg.experimental.conjugate_gradient(op, tf.constant([1., 2.]))
    >>> state.x.numpy().round(4), int(state.i)
    (array([0.0909, 0.6364], dtype=float32), 2)
    """
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator.")
    rhs = rules.as_tensor(rhs, operator.dtype)

    def dot(a, b):
        return reduce_sum(a * b, axis=-1)

    def apply_preconditioner(r):
        return r if preconditioner is None else preconditioner.matvec(r)

    def stopping_criterion(i, state):
        return logical_and(less(i, max_iter),
                           reduce_any(greater(norm(state.r, axis=-1), tolerance)))

    def cg_step(i, state):
        z = operator.matvec(state.p)
        alpha = state.gamma / dot(state.p, z)
        x = state.x + alpha[..., None] * state.p
        r = state.r - alpha[..., None] * z
        q = apply_preconditioner(r)
        gamma = dot(r, q)
        p = q + (gamma / state.gamma)[..., None] * state.p
        return i + 1, CGState(i + 1, x, r, p, gamma)

    batch = broadcast_batch(rhs._shape[:-1], operator.batch_shape,
                            () if preconditioner is None else preconditioner.batch_shape)
    r0 = broadcast_to(rhs, list(batch) + [rhs._shape[-1]])
    tolerance = tol * norm(r0, axis=-1)
    if x is None:
        x = zeros(batch + (rhs._shape[-1],), rhs.dtype)
    else:
        x = rules.as_tensor(x, rhs.dtype)
        r0 = rhs - operator.matvec(x)
    p0 = apply_preconditioner(r0)
    i = rules.as_tensor(0, dtypes.int32)
    _, state = while_loop(stopping_criterion, cg_step,
                          [i, CGState(i, x, r0, p0, dot(r0, p0))])
    return CGState(*state)


__all__ = ["CGState", "conjugate_gradient"]
