"""Top-level functions that in TensorFlow only inform its graph runtime, and what they
compute here: tf.guarantee_const (a promise that a value is constant: the value),
tf.parallel_stack (a stack whose inputs the runtime may copy in as they arrive: graphs
only, as in TensorFlow) and tf.get_logger (the "tensorflow" logger)."""

import logging

from . import context
from .ops.elementwise import identity
from .ops.shape import stack


def guarantee_const(input, name=None):  # noqa: A002 - TensorFlow's name
    """`input`, which the caller promises is constant (tf.guarantee_const). TensorFlow
    registers no gradient for it; here the gradient passes through."""
    return identity(input)


def parallel_stack(values, name="parallel_stack"):
    """The tensors of `values` stacked along a new first axis (tf.parallel_stack);
    inside tf.function only, as TensorFlow."""
    if context.current_graph.get() is None:
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    return stack(values, axis=0)


def get_logger():
    """The logger TensorFlow logs to (tf.get_logger): Python's "tensorflow" logger."""
    return logging.getLogger("tensorflow")
