"""TensorFlow's framework helpers at `tf`'s top level: get_static_value,
is_symbolic_tensor, inside_function, identity_n, shape_n, broadcast_static_shape and
broadcast_dynamic_shape."""

import numpy as np

from . import context, dtypes
from .ops import rules
from .ops.elementwise import identity
from .ops.shape import shape
from .tensor import Symbolic


def get_static_value(tensor, partial=False):
    """The value of `tensor` when it is known now (an eager tensor: its NumPy value), else
    None (a tensor inside a traced function); anything else comes back as it is.

    >>> import tapeflow as tf
    >>> tf.get_static_value(tf.constant([1, 2]))
    array([1, 2], dtype=int32)
    """
    return rules.known_value(tensor)


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


def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape two shapes broadcast to (tf.broadcast_static_shape); unknown
    dimensions stay unknown where the other is 1 or unknown."""
    from .errors import InvalidArgumentError
    from .ops import rules
    from .tensor import TensorShape
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    try:
        return TensorShape(rules.broadcast_shapes("BroadcastArgs", tuple(x), tuple(y)))
    except InvalidArgumentError:
        raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible "
                         f"if for each dimension pair they are either equal or one of them "
                         f"is 1. Received: {tuple(x)} and {tuple(y)}.") from None


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape two shapes, given as int vectors, broadcast to (tf.broadcast_dynamic_shape,
    TensorFlow's BroadcastArgs): InvalidArgumentError where they do not."""
    from .ops import rules
    from .ops.elementwise import equal, where
    from .ops.shape import concat
    x, y = rules.as_tensors(shape_x, shape_y)
    rules.check_same_dtype("BroadcastArgs", (x, y))
    static_x, static_y = get_static_value(x), get_static_value(y)
    if static_x is not None and static_y is not None:
        dims = rules.broadcast_shapes("BroadcastArgs", tuple(static_x.tolist()),
                                      tuple(static_y.tolist()))
        from .tensor import constant
        return constant(np.asarray(dims, dtype=x.dtype._np))
    # Known only when the function runs: the longer shape where the shorter is 1.
    n = max(x._shape[0], y._shape[0])
    x = concat([np.ones(n - x._shape[0], x.dtype._np), x], 0)
    y = concat([np.ones(n - y._shape[0], y.dtype._np), y], 0)
    return where(equal(x, 1), y, x)
