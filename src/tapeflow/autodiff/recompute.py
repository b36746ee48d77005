"""Gradient helpers built on custom_gradient: tf.recompute_grad (keeps only a function's
inputs for the backward pass and runs it again there) and tf.grad_pass_through (the
forward of a function, the gradient of the identity)."""

import contextlib

from .. import context, nest
from ..tensor import _Operators
from .custom import custom_gradient
from .tape import GradientTape


@contextlib.contextmanager
def _no_tape_records():
    token = context.recording_tapes.set(())
    try:
        yield
    finally:
        context.recording_tapes.reset(token)


def recompute_grad(f):
    """`f` whose intermediate values are not kept for the gradient: the backward pass
    runs `f` again from its inputs (tf.recompute_grad), trading compute for memory.

    >>> import tapeflow as tf
    >>> block = tf.recompute_grad(lambda x: tf.sin(tf.exp(x)))
    >>> x = tf.constant(0.5)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = block(x)
    >>> round(float(tape.gradient(y, x)), 6)
    -0.128346
    """
    @custom_gradient
    def recomputed(*args, **kwargs):
        with _no_tape_records():  # the tapes keep the inputs only
            result = f(*args, **kwargs)

        def grad(*dresult, variables=None):
            inputs = [a for a in nest.flatten(args) if isinstance(a, _Operators)]
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(inputs)
                if variables:
                    tape.watch(variables)
                again = f(*args, **kwargs)
            sources = inputs + list(variables or [])
            grads = iter(tape.gradient(again, sources, output_gradients=list(dresult)))
            input_grads = [next(grads) if isinstance(a, _Operators) else None
                           for a in nest.flatten(args)]
            variable_grads = list(grads)
            return (input_grads, variable_grads) if variables else input_grads

        return result, grad

    return recomputed


def grad_pass_through(f):
    """`f` in the forward pass, the identity in the backward pass: the gradient flows to
    f's inputs as if f were not there (tf.grad_pass_through).

    >>> import tapeflow as tf
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.grad_pass_through(tf.round)(x * 1.3) * 3.0
    >>> float(y), round(float(tape.gradient(y, x)), 4)
    (9.0, 3.9)
    """
    @custom_gradient
    def passed_through(*args, **kwargs):
        def grad(*dresult, variables=None):
            flat = dresult if len(dresult) > 1 else dresult[0]
            return (flat, [None] * len(variables)) if variables else flat
        return f(*args, **kwargs), grad

    return passed_through


__all__ = ["recompute_grad", "grad_pass_through"]
