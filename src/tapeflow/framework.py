"""TensorFlow's framework helpers at `tf`'s top level: get_static_value,
is_symbolic_tensor, inside_function, identity_n and shape_n."""

import numpy as np

from . import context, dtypes
from .ops.elementwise import identity
from .ops.shape import shape
from .tensor import Symbolic, ValuelessTensor, _Operators


def get_static_value(tensor, partial=False):
    """The value of `tensor` when it is known now (an eager tensor: its NumPy value), else
    None (a tensor inside a traced function); anything else comes back as it is.

    >>> import tapeflow as tf
    >>> tf.get_static_value(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    """
    if not isinstance(tensor, _Operators):
        return tensor
    if isinstance(tensor, ValuelessTensor):
        return None
    return np.asarray(tensor.numpy())


def is_symbolic_tensor(tensor):
    """Whether `tensor` is a value of a graph being traced (it has no value yet)."""
    return isinstance(tensor, Symbolic)


def inside_function():
    """True while a tf.function is being traced."""
    return context.current_graph.get() is not None


def identity_n(input, name=None):  # noqa: A002 - TensorFlow's name
    """An identity of each tensor of `input` (tf.identity_n)."""
    return [identity(x) for x in input]


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape of each tensor of `input`, as 1-D `out_type` tensors (tf.shape_n)."""
    return [shape(x, out_type=out_type) for x in input]


__all__ = ["get_static_value", "is_symbolic_tensor", "inside_function", "identity_n",
           "shape_n"]
