"""Shapes known only when a traced function runs.

Inside tf.function a dimension is None when a loop changes it: a list appended to in a
`tf.range` loop has an unknown length. Code that rebuilds such a shape (a gradient rule
reshaping or broadcasting back to its input, a user's `tf.reshape(x, tf.shape(y))`)
takes it from the running graph: these ops read their target shape from an int tensor,
as TensorFlow's Reshape and BroadcastTo do. `hint` holds the dimensions known while
tracing (None elsewhere), so the static shape loses nothing that was known.
"""

import math

import numpy as np

from .. import dtypes
from ..tensor import _Operators, convert_to_tensor
from . import rules
from .registry import OpDef, bind, register

_error = rules.op_error


def _target(op_name, shape, hint):
    """The static output shape: `hint`, or all unknown, of the shape vector's length."""
    if shape.dtype not in (dtypes.int32, dtypes.int64) or len(shape._shape) != 1 \
            or shape._shape[0] is None:
        raise _error(op_name, f"the shape must be a 1-D int32 or int64 tensor of known "
                              f"length, got {rules.describe(shape)}")
    rank = shape._shape[0]
    if hint is None:
        return (None,) * rank
    if len(hint) != rank:
        raise _error(op_name, f"a shape of {rank} dimensions cannot have the known "
                              f"dimensions {list(hint)}")
    return tuple(hint)


def _dims(shape):
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))


# -- reshape -----------------------------------------------------------------------------

def _reshape_infer(tensor, shape, hint):
    out = _target("DynamicReshape", shape, hint)
    unknown = [i for i, d in enumerate(out) if d is None]
    if len(unknown) == 1 and None not in tensor._shape:
        known = math.prod(d for d in out if d is not None)
        if known:
            out = out[:unknown[0]] + (math.prod(tensor._shape) // known,) + out[unknown[0] + 1:]
    return out, tensor.dtype


def _reshape_kernel(tensor, shape, hint):
    dims = _dims(shape)
    try:
        return np.reshape(tensor, dims)
    except ValueError:
        raise _error("DynamicReshape", f"Input to reshape is a tensor with {np.size(tensor)} "
                                       f"values, but the requested shape is {list(dims)}") \
            from None


def _reshape_grad(ctx, dy):
    return reshape_to_input(dy, ctx, 0), None


DYNAMIC_RESHAPE = register(OpDef(
    name="DynamicReshape", args=("tensor", "shape"), infer=_reshape_infer,
    eager=_reshape_kernel, grad=_reshape_grad))


# -- broadcast_to ------------------------------------------------------------------------

def _broadcast_infer(input, shape, hint):
    out = _target("DynamicBroadcastTo", shape, hint)
    src = input._shape
    if len(src) > len(out) or any(
            s is not None and d is not None and s != d and s != 1
            for s, d in zip(src[::-1], out[::-1])):
        raise _error("DynamicBroadcastTo", f"Unable to broadcast tensor of shape {list(src)} "
                                           f"to tensor of shape {list(out)}")
    # A dimension the input has (not 1) is the output's too.
    tail = [d if d is not None or s in (None, 1) else s
            for s, d in zip(src, out[len(out) - len(src):])]
    return out[:len(out) - len(src)] + tuple(tail), input.dtype


def _broadcast_kernel(input, shape, hint):
    dims = _dims(shape)
    for d in dims:
        if d < 0:
            raise _error("DynamicBroadcastTo", f"Dimension {d} must be >= 0")
    try:
        return np.array(np.broadcast_to(input, dims))
    except ValueError:
        raise _error("DynamicBroadcastTo", f"Unable to broadcast tensor of shape "
                                           f"{list(np.shape(input))} to tensor of shape "
                                           f"{list(dims)}") from None


DYNAMIC_BROADCAST_TO = register(OpDef(
    name="DynamicBroadcastTo", args=("input", "shape"), infer=_broadcast_infer,
    eager=_broadcast_kernel,
    grad=lambda ctx, dy: (rules.unbroadcast(dy, ctx.shapes[0]), None)))


# -- the gradient of a slice -------------------------------------------------------------

def _slice_grad_infer(dy, shape, key, hint):
    from .indexing import _Aval, _slice_infer
    out = _target("DynamicStridedSliceGrad", shape, hint)
    expected, _ = _slice_infer(_Aval(out, dy.dtype), key)
    if len(expected) != len(dy._shape) or any(
            a is not None and b is not None and a != b for a, b in zip(expected, dy._shape)):
        raise _error("DynamicStridedSliceGrad", f"dy has shape {list(dy._shape)} but the "
                                                f"slice has shape {list(expected)}")
    return out, dy.dtype


def _slice_grad_kernel(dy, shape, key, hint):
    from .indexing import _slice_grad_kernel as static
    return static(dy, _dims(shape), key)


DYNAMIC_STRIDED_SLICE_GRAD = register(OpDef(
    name="DynamicStridedSliceGrad", args=("dy", "shape"), infer=_slice_grad_infer,
    eager=_slice_grad_kernel,
    grad=lambda ctx, g: (slice_of(g, ctx.attrs["key"]), None)))


def slice_of(x, key):
    from .indexing import STRIDED_SLICE
    return bind(STRIDED_SLICE, (x,), {"key": key})


# -- arguments known now or only when the graph runs -------------------------------------

def is_valueless(k):
    """Whether `k` is a tensor without a value yet (a traced one, or a jacobian's batch):
    as an index or a size it is known only when the function runs."""
    return isinstance(k, _Operators) and getattr(k, "_value", 0) is None


def runtime_shape(shape):
    """(int32 shape vector, hint) when `shape` is known only when a traced function runs
    (`tf.shape(x)` of a tensor with an unknown dimension, or a list holding such a
    tensor); None for a shape known now."""
    if is_valueless(shape):
        return shape, None
    if isinstance(shape, (list, tuple)) and any(is_valueless(d) for d in shape):
        hint = [None if is_valueless(d) else rules.int_scalar(d, what="shape") for d in shape]
        from .elementwise import cast
        from .shape import stack
        dims = [cast(d, dtypes.int32) if is_valueless(d) else int(d) for d in shape]
        return stack(dims), hint
    return None


def known_ints(t):
    """The values of an int tensor known now (a constant), else None."""
    value = getattr(t, "_value", None)
    return None if value is None else tuple(int(v) for v in np.asarray(value).reshape(-1))


# -- what the public functions and gradient rules call -----------------------------------

def dynamic_reshape(tensor, shape, hint=None):
    """`tensor` reshaped to the int vector `shape` (one entry may be -1)."""
    return bind(DYNAMIC_RESHAPE, (tensor, shape), {"hint": _hint(hint)})


def dynamic_broadcast_to(input, shape, hint=None):
    """`input` broadcast to the int vector `shape`."""
    return bind(DYNAMIC_BROADCAST_TO, (input, shape), {"hint": _hint(hint)})


def _hint(hint):
    return None if hint is None else tuple(None if d is None or d < 0 else int(d) for d in hint)


def input_shape(ctx, i=0):
    """Input i's shape: a tuple when tracing knew it, else an int32 tensor of it read in
    the running graph."""
    shape = ctx.shapes[i]
    if None not in shape:
        return shape
    from .shape import shape as shape_of
    return shape_of(shape.of)


def input_shape_vector(ctx, dtype):
    """Input 0's shape as a 1-D tensor of `dtype`: a constant where tracing knew it."""
    known = input_shape(ctx, 0)
    if type(known) is not tuple:
        from .elementwise import cast
        return cast(known, dtype)
    return convert_to_tensor(np.array(known, dtype._np).reshape(len(known)))


def input_dims(ctx, i=0):
    """Input i's dimensions: ints where tracing knew them, elsewhere int32 scalars read in
    the running graph. A gradient rule computes with them as with ints (a product of
    dimensions, reshaped) whether or not they are known."""
    shape = ctx.shapes[i]
    if None not in shape:
        return tuple(shape)
    from .shape import unstack
    read = unstack(input_shape(ctx, i), num=len(shape))
    return tuple(r if d is None else d for d, r in zip(shape, read))


def reshaped(x, dims):
    """`x` reshaped to `dims`: ints, and int32 scalars known only when the graph runs
    (such as input_dims gives)."""
    from .shape import reshape, stack
    if not any(isinstance(d, _Operators) for d in dims):
        return reshape(x, tuple(dims))
    hint = tuple(None if isinstance(d, _Operators) else d for d in dims)
    return dynamic_reshape(x, stack(list(dims)), hint=hint)


def split_sized(x, sizes, axis):
    """`x` split along `axis` into parts of `sizes`: ints, and int32 scalars known only
    when the graph runs (such as input_dims gives). One part of unknown size is what the
    others leave (SplitV's -1); with more, each part gathers its range of positions."""
    from .shape import split
    unknown = [isinstance(s, _Operators) for s in sizes]
    if sum(unknown) < 2:
        return split(x, [-1 if u else s for s, u in zip(sizes, unknown)], axis=axis)
    from .creation import range as range_
    from .indexing import gather
    parts, start = [], 0
    for size in sizes:
        parts.append(gather(x, range_(start, start + size), axis=axis))
        start = start + size
    return parts


def segment_summed(data, segment_ids, num_segments):
    """unsorted_segment_sum of `data`, whose `num_segments` may be an int32 scalar known
    only when the graph runs: then the rows are added into zeros of that many rows, so
    every id must lie in range (as a gather's indices do)."""
    from .indexing import tensor_scatter_nd_add, unsorted_segment_sum
    if not isinstance(num_segments, _Operators):
        return unsorted_segment_sum(data, segment_ids, num_segments)
    from .creation import zeros
    from .shape import concat, expand_dims, reshape, shape
    rows = shape(data)[len(segment_ids._shape):]
    slots = zeros(concat([reshape(num_segments, [1]), rows], 0), dtype=data.dtype)
    return tensor_scatter_nd_add(slots, expand_dims(segment_ids, -1), data)


def scattered_nd(indices, updates, dims):
    """scatter_nd into a shape of `dims`: ints, and int32 scalars known only when the graph
    runs (such as input_dims gives), where zeros of that shape take the updates."""
    from .indexing import scatter_nd, tensor_scatter_nd_add
    if not any(isinstance(d, _Operators) for d in dims):
        return scatter_nd(indices, updates, dims)
    from .creation import zeros
    return tensor_scatter_nd_add(zeros(list(dims), dtype=updates.dtype), indices, updates)


def reshape_to_input(x, ctx, i=0):
    """`x` reshaped to input i's shape."""
    from .shape import reshape
    shape = ctx.shapes[i]
    if None not in shape:
        return reshape(x, shape)
    return dynamic_reshape(x, input_shape(ctx, i), hint=shape)


def shaped_as_input(x, ctx, i=0):
    """`x`, which has input i's shape when the graph runs, with every dimension of it
    that tracing knew (a loop relaxes the shapes it carries to unknown dimensions): `x`
    itself where its own shape says as much."""
    shape = ctx.shapes[i]
    if all(d is None or d == s for d, s in zip(shape, x._shape)):
        return x
    return reshape_to_input(x, ctx, i)


def broadcast_to_input(x, ctx, i=0):
    """`x` broadcast to input i's shape."""
    from .shape import broadcast_to
    shape = ctx.shapes[i]
    if None not in shape:
        return broadcast_to(x, shape)
    return dynamic_broadcast_to(x, input_shape(ctx, i), hint=shape)


def scatter_slice_to_input(dy, ctx, key):
    """The gradient of `input[key]`: `dy` placed into zeros of input 0's shape."""
    from .indexing import STRIDED_SLICE_GRAD
    shape = ctx.shapes[0]
    if None not in shape:
        return bind(STRIDED_SLICE_GRAD, (dy,), {"shape": shape, "key": key})
    return bind(DYNAMIC_STRIDED_SLICE_GRAD, (dy, input_shape(ctx, 0)),
                {"key": key, "hint": shape})


__all__ = ["dynamic_broadcast_to", "dynamic_reshape"]
