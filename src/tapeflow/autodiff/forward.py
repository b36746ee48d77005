"""tf.autodiff.ForwardAccumulator: Jacobian-vector products (forward mode).

The accumulator records the computations of its context on a tape of its own watching
the primals; `jvp(y)` is then J v by the double-backward identity: the vector-Jacobian
product u -> u^T J is linear in u, so the gradient in u of <u^T J, v> is J v. Two
backward passes instead of a forward one, but every op's gradient rule serves, and
nesting works both ways: a GradientTape's gradient computed inside the accumulator is
recorded too, so `acc.jvp(tape.gradient(y, x))` is a Hessian-vector product.
"""

from .. import nest
from ..ops.creation import zeros_like
from ..ops.elementwise import multiply
from ..ops.reduce import reduce_sum
from ..tensor import convert_to_tensor
from .tape import GradientTape, UnconnectedGradients, unconnected_mode


class ForwardAccumulator:
    """Computes Jacobian-vector products of what runs inside its context with respect to
    `primals`, along `tangents` (same structure, shapes and dtypes).

    >>> import tapeflow as tf
    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y).numpy()
    array([2., 0.], dtype=float32)
    """

    def __init__(self, primals, tangents):
        self._primals = nest.flatten(primals)
        flat_tangents = nest.flatten(tangents)
        if len(flat_tangents) != len(self._primals):
            raise ValueError(f"primals and tangents must have the same structure, got "
                             f"{len(self._primals)} primals and {len(flat_tangents)} "
                             f"tangents")
        self._tangents = [convert_to_tensor(t, dtype=p.dtype)
                          for p, t in zip(self._primals, flat_tangents)]
        for p, t in zip(self._primals, self._tangents):
            if tuple(p.shape) != tuple(t.shape):
                raise ValueError(f"a tangent's shape {list(t.shape)} differs from its "
                                 f"primal's {list(p.shape)}")
        self._tape = GradientTape(persistent=True, watch_accessed_variables=False)
        self._entered = False

    def __enter__(self):
        self._tape.__enter__()
        self._entered = True
        self._tape.watch(self._primals)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._tape.__exit__(exc_type, exc, tb)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """J v for each tensor of `primals` (a nested structure) computed inside the
        context: None (or zeros, with UnconnectedGradients.ZERO) where it does not
        depend on the accumulator's primals."""
        zeros_when_unconnected = (unconnected_mode(unconnected_gradients)
                                  is UnconnectedGradients.ZERO)
        return nest.pack_sequence_as(
            primals, [self._jvp(t, zeros_when_unconnected) for t in nest.flatten(primals)])

    def _jvp(self, target, zeros_when_unconnected):
        if not (self._entered and target.dtype.is_differentiable):  # nothing recorded for it
            return zeros_like(target) if zeros_when_unconnected else None
        cotangent = zeros_like(target)
        with GradientTape() as linear:
            linear.watch(cotangent)
            vjps = self._tape.gradient(target, self._primals, output_gradients=cotangent)
            pairs = [(g, v) for g, v in zip(vjps, self._tangents) if g is not None]
            if pairs:
                total = reduce_sum(multiply(pairs[0][0], pairs[0][1]))
                for g, v in pairs[1:]:
                    total = total + reduce_sum(multiply(g, v))
        result = linear.gradient(total, cotangent) if pairs else None
        if result is None and zeros_when_unconnected:
            return zeros_like(target)
        return result


__all__ = ["ForwardAccumulator"]
