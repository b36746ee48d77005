"""Ops that read or write elements by index: strided slices (what `tensor[key]` runs) and
their gradient, Slice, gathers, scatters, segment sums, Where and OneHot; with the index
key machinery of `tensor[key]`, tensor indices included. Moving elements without an index
is ops/shape.py."""

import builtins
import math
import numbers

import numpy as np

from .. import dtypes
from ..errors import UnimplementedError
from ..tensor import _Operators, convert_to_tensor
from . import rules
from .dynamic import (
    input_dims,
    input_shape_vector,
    is_valueless,
    known_ints,
    reshaped,
    runtime_shape,
    scatter_slice_to_input,
    scattered_nd,
    segment_summed,
)
from .elementwise import _quiet
from .registry import OpDef, bind, register
from .rules import as_tensor, check_axis, check_int_dtype, int_scalar, int_tuple
from .shape import PAD_TO, concat, reshape, shape, transpose

_slice = builtins.slice  # this module defines TensorFlow's `slice`
_error = rules.op_error


# -- slicing ------------------------------------------------------------------------------

_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) "
                     "and scalar tf.int32/tf.int64 tensors are valid indices")


def _index(value, key):
    """A Python int from an int, NumPy integer or scalar int32/int64 Tensor (TF's rule)."""
    if isinstance(value, (numbers.Integral, np.integer)):
        return int(value)
    dtype = getattr(value, "dtype", None)
    try:
        ok = dtype is not None and dtypes.as_dtype(dtype) in (dtypes.int32, dtypes.int64)
    except TypeError:
        ok = False
    if ok and np.ndim(value) == 0:
        return int(np.asarray(value))
    raise TypeError(f"{_SLICE_TYPE_ERROR}, got {key!r}")


def _normalize_key(key):
    """A hashable index key: ints, None, Ellipsis, and (start, stop, step) for slices."""
    if not isinstance(key, (tuple, list)):
        key = (key,)
    out = []
    for k in key:
        if k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, _slice):
            out.append(tuple(None if b is None else _index(b, k)
                             for b in (k.start, k.stop, k.step)))
        else:
            out.append(_index(k, k))
    return tuple(out)


def numpy_key(key):
    return tuple(_slice(*k) if type(k) is tuple else k for k in key)


def _slice_infer(input, key):
    shape = input._shape
    rank = len(shape)
    n_ellipsis = sum(k is Ellipsis for k in key)
    if n_ellipsis > 1:
        raise _error("StridedSlice", "Multiple ellipses in slice spec not allowed")
    consumed = sum(k is not None and k is not Ellipsis for k in key)
    if consumed > rank:
        raise _error("StridedSlice", f"Index out of range using input dim {rank}; input has "
                                     f"only {rank} dims")
    out, dim = [], 0
    for k in key:
        if k is None:
            out.append(1)
        elif k is Ellipsis:
            out.extend(shape[dim:dim + rank - consumed])
            dim += rank - consumed
        elif type(k) is tuple:
            if k[2] == 0:
                raise _error("StridedSlice", f"strides[{dim}] must be non-zero")
            out.append(None if shape[dim] is None else len(range(*_slice(*k).indices(shape[dim]))))
            dim += 1
        else:
            if shape[dim] is not None and not -shape[dim] <= k < shape[dim]:
                raise _error("StridedSlice", f"slice index {k} of dimension {dim} out of "
                                             f"bounds.")
            dim += 1
    out.extend(shape[dim:])
    return tuple(out), input.dtype


def _slice_grad_infer(dy, shape, key):
    expected, _ = _slice_infer(_Aval(shape, dy.dtype), key)
    if expected != dy._shape:
        raise _error("StridedSliceGrad", f"dy has shape {list(dy._shape)} but the slice of "
                                         f"{list(shape)} has shape {list(expected)}")
    return tuple(shape), dy.dtype


def _slice_grad_kernel(dy, shape, key):
    out = np.zeros(shape, dtype=dy.dtype)
    out[numpy_key(key)] = dy
    return out


class _Aval:
    """A bare (shape, dtype) pair, for calling one op's infer from another's."""

    __slots__ = ("_shape", "dtype")

    def __init__(self, shape, dtype):
        self._shape = tuple(shape)
        self.dtype = dtype


def _slice_row_grad(ctx, dy):
    """x[k] or x[a:b:c] (the rest of the key whole): dy's rows and their indices."""
    key, shape = ctx.attrs["key"], ctx.shapes[0]
    if not key or None in shape or not all(k == (None, None, None) for k in key[1:]):
        return None
    first = key[0]
    if type(first) is tuple:
        rows = np.arange(*_slice(*first).indices(shape[0]), dtype=np.int32)
        return (as_tensor(rows), dy, shape[0]) if rows.size else None
    if isinstance(first, numbers.Integral) and not isinstance(first, bool):
        from .shape import expand_dims
        return as_tensor(np.array([first % shape[0]], np.int32)), expand_dims(dy, 0), shape[0]
    return None


STRIDED_SLICE = register(OpDef(
    name="StridedSlice", args=("input",), infer=_slice_infer,
    eager=lambda input, key: np.asarray(input)[numpy_key(key)],
    grad=lambda ctx, dy: (scatter_slice_to_input(dy, ctx, ctx.attrs["key"]),),
    row_grad=_slice_row_grad))
STRIDED_SLICE_GRAD = register(OpDef(
    name="StridedSliceGrad", args=("dy",), infer=_slice_grad_infer, eager=_slice_grad_kernel,
    grad=lambda ctx, g: (bind(STRIDED_SLICE, (g,), {"key": ctx.attrs["key"]}),)))


# -- Slice and Pad with begin, size and paddings as tensors ------------------------------
# tf.slice inside tf.function with begin/size known only when the graph runs (or an input
# dimension unknown while tracing) is TensorFlow's Slice op; its gradient pads dy back to
# the input's shape with Pad, whose gradient is a Slice again (TF's _SliceGrad, _PadGrad).

def _check_slice_args(input, begin, size):
    for what, t in (("begin", begin), ("size", size)):
        check_int_dtype("Slice", t, what)
    if begin.dtype is not size.dtype:
        raise rules.dtype_error(f"cannot compute Slice as input #2(zero-based) was expected "
                                f"to be a {begin.dtype.name} tensor but is a "
                                f"{size.dtype.name} tensor [Op:Slice]", "Slice")
    rank = len(input._shape)
    if len(begin._shape) != 1 or len(size._shape) != 1 or any(
            t._shape[0] not in (None, rank) for t in (begin, size)):
        raise _error("Slice", f"Expected begin and size arguments to be 1-D tensors of size "
                              f"{rank}, but got shapes {rules.kernel_dims(begin._shape)} and "
                              f"{rules.kernel_dims(size._shape)} instead.")


def _slice_op_infer(input, begin, size):
    """TensorFlow's shape rule: size[i] where it is known and not -1, the rest of the
    input's dimension after begin[i] where both are known, else unknown."""
    _check_slice_args(input, begin, size)
    b, s = known_ints(begin), known_ints(size)
    rank = len(input._shape)
    if b is not None or s is not None:  # what the known values already rule out
        _check_slice_bounds(input._shape if b is not None else (None,) * rank,
                            b if b is not None else (0,) * rank,
                            s if s is not None else (-1,) * rank)
    if s is None:
        return (None,) * len(input._shape), input.dtype
    out = tuple(n if n != -1 else None if d is None or b is None else d - b[i]
                for i, (d, n) in enumerate(zip(input._shape, s)))
    return out, input.dtype


def _slice_op_kernel(input, begin, size):
    begin, size = tuple(begin.tolist()), tuple(size.tolist())
    _check_slice_bounds(input.shape, begin, size)
    return input[tuple(_slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]


def _slice_op_grad(ctx, dy):
    from .elementwise import subtract
    begin = ctx.begin
    after = subtract(subtract(input_shape_vector(ctx, begin.dtype),
                              shape(dy, out_type=begin.dtype)), begin)
    rank = len(ctx.shapes[0])  # begin's length too, once the Slice ran
    paddings = concat([reshape(begin, [rank, 1]), reshape(after, [rank, 1])], 1)
    return bind(PAD_TO, (dy, paddings), {"hint": tuple(ctx.shapes[0])}), None, None


SLICE = register(OpDef(
    name="Slice", args=("input", "begin", "size"), infer=_slice_op_infer,
    eager=_slice_op_kernel, saves=("begin",), grad=_slice_op_grad))


def _slice_index_infer(input, index, dim):
    if index._shape:
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got a tensor of shape {list(index._shape)}")
    check_int_dtype("StridedSlice", index, "a tensor index")
    return (), index.dtype


def _slice_index_kernel(input, index, dim):
    n, k = input.shape[dim], int(index)
    if not -n <= k < n:
        raise _error("StridedSlice", f"slice index {k} of dimension {dim} out of bounds.")
    return np.asarray(k + n if k < 0 else k, dtype=index.dtype)


# x[k] for a tensor k: k checked against (and counted from the end of) x's dimension
# `dim`, as TensorFlow's StridedSlice does; a gather then takes the row.
SLICE_INDEX = register(OpDef(
    name="StridedSliceIndex", args=("input", "index"), infer=_slice_index_infer,
    eager=_slice_index_kernel, differentiable=False))


# -- gather / scatter ---------------------------------------------------------------------

def _check_range(op_name, indices, limit):
    """TensorFlow rejects out-of-range (and negative) indices where NumPy would wrap."""
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = np.flatnonzero((indices < 0) | (indices >= limit))[0]
        where = list(np.unravel_index(bad, indices.shape)) if indices.ndim > 1 else [bad]
        raise _error(op_name, f"indices[{','.join(str(int(i)) for i in where)}] = "
                              f"{indices.flat[bad]} is not in [0, {limit})")


def _gather_axes(params, indices, axis, batch_dims):
    """(axis, batch_dims) made non-negative and checked, as GatherV2's infer does."""
    p_rank, i_rank = len(params._shape), len(indices._shape)
    axis = check_axis("GatherV2", axis, max(p_rank, 1))
    if batch_dims < 0:
        batch_dims += i_rank
    if not 0 <= batch_dims <= min(axis, i_rank):
        raise _error("GatherV2", f"batch_dims ({batch_dims}) must be in [0, {i_rank}] and "
                                 f"less than or equal to axis ({axis})")
    if any(p is not None and i is not None and p != i
           for p, i in zip(params._shape[:batch_dims], indices._shape[:batch_dims])):
        raise _error("GatherV2", f"params.shape[:{batch_dims}] = "
                                 f"{list(params._shape[:batch_dims])} should equal "
                                 f"indices.shape[:{batch_dims}] = "
                                 f"{list(indices._shape[:batch_dims])}")
    return axis, batch_dims


def _gather_infer(params, indices, axis, batch_dims):
    check_int_dtype("GatherV2", indices)
    if not params._shape:
        raise _error("GatherV2", "params must be at least 1 dimensional")
    axis, batch_dims = _gather_axes(params, indices, axis, batch_dims)
    p = params._shape
    return p[:axis] + indices._shape[batch_dims:] + p[axis + 1:], params.dtype


def _gather_kernel(params, indices, axis, batch_dims):
    axis %= params.ndim
    batch_dims += indices.ndim if batch_dims < 0 else 0
    _check_range("GatherV2", indices, params.shape[axis])
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    batch = params.shape[:batch_dims]
    p = params.reshape((-1,) + params.shape[batch_dims:])
    i = indices.reshape((-1,) + indices.shape[batch_dims:])
    out_shape = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]
    out = np.empty((len(p),) + out_shape[batch_dims:], dtype=params.dtype)
    for b in range(len(p)):
        out[b] = np.take(p[b], i[b], axis=axis - batch_dims)
    return out.reshape(batch + out.shape[1:])


def _gather_grad(ctx, dy):
    # Dense version of TensorFlow's IndexedSlices gradient: move the index dimensions of
    # dy to the front (after the batch ones), then sum rows into their slots. Dimensions
    # are ints, or int32 scalars read in the running graph where tracing did not know
    # them (input_dims): the sizes computed below are then computed by the graph.
    p_dims, i_dims = input_dims(ctx, 0), input_dims(ctx, 1)
    axis, b = ctx.attrs["axis"] % len(p_dims), ctx.attrs["batch_dims"]
    b += len(i_dims) if b < 0 else 0
    n_idx = len(i_dims) - b
    perm = (list(range(b)) + list(range(axis, axis + n_idx)) + list(range(b, axis))
            + list(range(axis + n_idx, len(dy._shape))))
    rest = p_dims[b:axis] + p_dims[axis + 1:]
    n_batch, n_rows = math.prod(p_dims[:b]), math.prod(i_dims[b:])
    rows = reshaped(transpose(dy, perm), (n_batch * n_rows,) + rest)
    ids = ctx.indices
    if b:
        from .creation import range as _range
        offsets = _range(0, n_batch * p_dims[axis], p_dims[axis], dtype=ids.dtype)
        ids = ids + reshaped(offsets, p_dims[:b] + (1,) * n_idx)
    summed = segment_summed(rows, reshape(ids, (-1,)), n_batch * p_dims[axis])
    summed = reshaped(summed, p_dims[:b] + (p_dims[axis],) + rest)
    back = list(range(b)) + list(range(b + 1, axis + 1)) + [b] + list(
        range(axis + 1, len(p_dims)))
    return transpose(summed, back), None


def _gather_row_grad(ctx, dy):
    """A gather of rows (axis 0, no batch dimensions): dy's rows and their indices."""
    p_dims, i_dims = input_dims(ctx, 0), input_dims(ctx, 1)
    if ctx.attrs["axis"] % len(p_dims) or ctx.attrs["batch_dims"]:
        return None
    rows = reshaped(dy, (math.prod(i_dims),) + tuple(p_dims[1:]))
    return reshape(ctx.indices, (-1,)), rows, p_dims[0]


# The gradient reads the params' shape only: a tape does not keep them alive.
GATHER = register(OpDef(
    name="GatherV2", args=("params", "indices"), infer=_gather_infer, eager=_gather_kernel,
    saves=("indices",), grad=_gather_grad, row_grad=_gather_row_grad))


def _segment_sum_infer(data, segment_ids, num_segments):
    check_int_dtype("UnsortedSegmentSum", segment_ids, "segment_ids")
    n = len(segment_ids._shape)
    if data._shape[:n] != segment_ids._shape:
        raise _error("UnsortedSegmentSum", f"data.shape = {list(data._shape)} does not start "
                                           f"with segment_ids.shape = "
                                           f"{list(segment_ids._shape)}")
    if num_segments < 0:
        raise _error("UnsortedSegmentSum", f"num_segments must be >= 0, got {num_segments}")
    return (num_segments,) + data._shape[n:], data.dtype


@_quiet
def _segment_sum_kernel(data, segment_ids, num_segments):
    # Negative ids are dropped, as in TensorFlow; ids past the end are an error.
    if segment_ids.size and segment_ids.max() >= num_segments:
        raise _error("UnsortedSegmentSum", f"segment_ids[{int(np.argmax(segment_ids))}] = "
                                           f"{segment_ids.max()} is out of range [0, "
                                           f"{num_segments})")
    out = np.zeros((num_segments,) + data.shape[segment_ids.ndim:], dtype=data.dtype)
    keep = segment_ids >= 0
    np.add.at(out, segment_ids[keep], data[keep])
    return out


def _segment_sum_grad(ctx, dy):
    # TensorFlow's _GatherDropNegatives: rows whose id was negative get no gradient.
    from .elementwise import cast, greater_equal, maximum
    ids = ctx.segment_ids
    kept = cast(greater_equal(ids, 0), dy.dtype)
    kept = reshape(kept, ctx.shapes[1] + (1,) * (len(ctx.shapes[0]) - len(ctx.shapes[1])))
    return gather(dy, maximum(ids, 0)) * kept, None


SEGMENT_SUM = register(OpDef(
    name="UnsortedSegmentSum", args=("data", "segment_ids"), infer=_segment_sum_infer,
    eager=_segment_sum_kernel, saves=("segment_ids",),
    grad=_segment_sum_grad))


def _check_nd_indices(op_name, indices, shape):
    """Every index row of `indices` (last axis = coordinates) must lie inside `shape`.
    TensorFlow's GatherNd kernel reports the last bad row, the scatters the first."""
    depth = indices.shape[-1]
    limits = np.array(shape[:depth], dtype=np.int64)
    bad = np.any((indices < 0) | (indices >= limits), axis=-1)
    if bad.any():
        rows = np.flatnonzero(bad)
        pos = np.unravel_index(rows[-1 if op_name == "GatherNd" else 0], bad.shape)
        raise _error(op_name, nd_index_message(op_name, [int(p) for p in pos],
                                               indices[pos].tolist(), shape))


def nd_index_message(op_name, position, row, shape):
    """TensorFlow's words for an index row outside the shape it indexes (GatherNd names
    the params' shape and itself; the scatters the output's)."""
    if op_name == "GatherNd":
        return (f"indices[{','.join(map(str, position))}] = {row} does not index into param "
                f"shape {rules.kernel_dims(shape)}, node name: GatherNd")
    return (f"indices[{','.join(map(str, position))}] = {row} does not index into shape "
            f"{rules.kernel_dims(shape)}")


def _nd_key(indices):
    return tuple(np.moveaxis(indices, -1, 0))


def _gather_nd_infer(params, indices, batch_dims):
    check_int_dtype("GatherNd", indices)
    if batch_dims:
        raise UnimplementedError("GatherNd supports batch_dims=0 only [Op:GatherNd]",
                                 op="GatherNd")
    if not indices._shape:
        raise _error("GatherNd", "indices must be at least a vector")
    depth = indices._shape[-1]
    if depth > len(params._shape):
        raise _error("GatherNd", f"index innermost dimension length must be <= params rank; "
                                 f"saw: {depth} vs. {len(params._shape)}")
    return indices._shape[:-1] + params._shape[depth:], params.dtype


def _gather_nd_kernel(params, indices, batch_dims):
    _check_nd_indices("GatherNd", indices, params.shape)
    out = params[_nd_key(indices)]
    if indices.shape[-1] == 0:  # an empty index picks the whole of params, per row
        out = np.broadcast_to(params, indices.shape[:-1] + params.shape).copy()
    return out


GATHER_ND = register(OpDef(
    name="GatherNd", args=("params", "indices"), infer=_gather_nd_infer,
    eager=_gather_nd_kernel, saves=("indices",),
    grad=lambda ctx, dy: (_gather_nd_grad(ctx, dy), None)))


def _gather_nd_grad(ctx, dy):
    return scattered_nd(ctx.indices, dy, input_dims(ctx, 0))


def _scatter_nd_infer(indices, updates, shape):
    check_int_dtype("ScatterNd", indices)
    if not indices._shape:
        raise _error("ScatterNd", "indices must be at least a vector")
    depth = indices._shape[-1]
    expected = indices._shape[:-1] + tuple(shape[depth:])
    if depth > len(shape) or updates._shape != expected:
        raise _error("ScatterNd", f"updates has shape {list(updates._shape)}, but indices of "
                                  f"shape {list(indices._shape)} into a tensor of shape "
                                  f"{list(shape)} need updates of shape {list(expected)}")
    return tuple(shape), updates.dtype


@_quiet
def _scatter_nd_kernel(indices, updates, shape):
    _check_nd_indices("ScatterNd", indices, shape)
    out = np.zeros(shape, dtype=updates.dtype)
    np.add.at(out, _nd_key(indices), updates)  # duplicate indices add up, as in TF
    return out


SCATTER_ND = register(OpDef(
    name="ScatterNd", args=("indices", "updates"), infer=_scatter_nd_infer,
    eager=_scatter_nd_kernel, saves=("indices",),
    grad=lambda ctx, dy: (None, gather_nd(dy, ctx.indices))))


def _tensor_scatter_add_infer(tensor, indices, updates):
    check_int_dtype("TensorScatterAdd", indices)
    rules.check_same_dtype("TensorScatterAdd", (tensor, updates))
    if not indices._shape or indices._shape[-1] is None:
        raise _error("TensorScatterAdd", "indices must be at least a vector with a known "
                                         "innermost dimension")
    depth = indices._shape[-1]
    expected = indices._shape[:-1] + tensor._shape[depth:]
    if depth > len(tensor._shape) or len(updates._shape) != len(expected) or any(
            a is not None and b is not None and a != b
            for a, b in zip(updates._shape, expected)):
        raise _error("TensorScatterAdd", f"updates has shape {list(updates._shape)}, but "
                                         f"indices of shape {list(indices._shape)} into a "
                                         f"tensor of shape {list(tensor._shape)} need "
                                         f"updates of shape {list(expected)}")
    return tensor._shape, tensor.dtype


def _tensor_scatter_add_kernel(tensor, indices, updates):
    _check_nd_indices("TensorScatterAdd", indices, tensor.shape)
    out = np.array(tensor, copy=True)
    np.add.at(out, _nd_key(indices), updates)  # duplicate indices add up, as in TF
    return out


TENSOR_SCATTER_ADD = register(OpDef(
    name="TensorScatterAdd", args=("tensor", "indices", "updates"),
    infer=_tensor_scatter_add_infer, eager=_tensor_scatter_add_kernel,
    saves=("indices",),
    grad=lambda ctx, dy: (dy, None, gather_nd(dy, ctx.indices))))


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """`tensor` with `updates` added at `indices` (rows of coordinates), as TensorFlow's
    tf.tensor_scatter_nd_add; its shape may be known only when a function runs."""
    return bind(TENSOR_SCATTER_ADD, (as_tensor(tensor), as_tensor(indices), as_tensor(updates)))


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """`tensor` with `updates` subtracted at `indices` (tf.tensor_scatter_nd_sub)."""
    from .elementwise import negative
    return tensor_scatter_nd_add(tensor, indices, negative(as_tensor(updates)))


# -- queries and other non-differentiable ops ------------------------------------------------

def _where_infer(condition):
    if not condition._shape:
        raise _error("Where", "WhereOp : Unhandled input dimensions: 0")
    return (None, len(condition._shape)), dtypes.int64


WHERE = register(OpDef(
    name="Where", args=("condition",), infer=_where_infer, differentiable=False,
    eager=lambda condition: np.argwhere(condition).astype(np.int64)))


def _one_hot_infer(indices, depth, on_value, off_value, axis, dtype):
    check_int_dtype("OneHot", indices)
    rank = len(indices._shape)
    if depth < 0:
        raise _error("OneHot", f"depth must be non-negative, got: {depth}")
    if not -1 <= axis <= rank:
        raise _error("OneHot", f"Expected axis to be -1 or between [0, {rank + 1}).  But "
                               f"received: {axis}")
    axis = rank if axis == -1 else axis
    return indices._shape[:axis] + (depth,) + indices._shape[axis:], dtype


def _one_hot_kernel(indices, depth, on_value, off_value, axis, dtype):
    from .creation import allocated
    axis = indices.ndim if axis == -1 else axis
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    # Only the output is allocated (a comparison against every position would need
    # the output's size again in bools and in float64).
    out = allocated("OneHot", shape, dtype, lambda: np.full(shape, off_value, dtype._np))
    hot = (indices >= 0) & (indices < depth)
    where = list(np.nonzero(hot)) if indices.ndim else []
    where.insert(axis, indices[hot])
    out[tuple(where)] = on_value
    return out


ONE_HOT = register(OpDef(
    name="OneHot", args=("indices",), infer=_one_hot_infer, eager=_one_hot_kernel,
    differentiable=False))


# -- public wrappers ------------------------------------------------------------------------

def strided_slice(input_, begin, end=None, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """Slices `input_`; what `tensor[key]` runs.

    `strided_slice(x, key)` takes an index key (ints, slices, None, Ellipsis, scalar int
    Tensors); the TensorFlow form takes begin/end/strides vectors and bit masks.

    >>> import tapeflow as tf
    >>> tf.constant([[1, 2, 3], [4, 5, 6]])[:, ::-2].numpy()
    array([[3, 1],
           [6, 4]], dtype=int32)
    """
    x = as_tensor(input_)
    if end is None:
        key = begin
        parts = key if isinstance(key, (tuple, list)) else (key,)
        if any(is_valueless(k) or _has_tensor_bounds(k) for k in parts):
            return _slice_with_tensor_indices(x, tuple(parts))
    else:
        begin, end = int_tuple(begin, "begin"), int_tuple(end, "end")
        strides = (1,) * len(begin) if strides is None else int_tuple(strides, "strides")
        key = []
        for i, (b, e, s) in enumerate(zip(begin, end, strides)):
            bit = 1 << i
            if ellipsis_mask & bit:
                key.append(Ellipsis)
            elif new_axis_mask & bit:
                key.append(None)
            elif shrink_axis_mask & bit:
                key.append(b)
            else:
                key.append(_slice(None if begin_mask & bit else b,
                                 None if end_mask & bit else e, s))
    return bind(STRIDED_SLICE, (x,), {"key": _normalize_key(key)})


def _has_tensor_bounds(k):
    return isinstance(k, _slice) and any(is_valueless(b) for b in (k.start, k.stop, k.step))


def _slice_with_tensor_indices(x, key):
    """`x[t]` or `x[a:b]` where t, a or b are tensors known only when a traced function
    runs (`for t in tf.range(n)`): slice the static part, then gather along each axis
    that a tensor indexes (`a:b` gathers the range Python's slice rules give)."""
    static = tuple(_slice(None) if is_valueless(k) or _has_tensor_bounds(k) else k
                   for k in key)
    y = strided_slice(x, static)
    consumed = sum(k is not None and k is not Ellipsis for k in key)
    axis, picks, dim = 0, [], 0  # axis: in y; dim: in x
    for k in key:
        if k is Ellipsis:
            axis += len(x._shape) - consumed
            dim += len(x._shape) - consumed
        elif k is None:
            axis += 1
        elif _has_tensor_bounds(k):
            picks.append((axis, _slice_positions(x, dim, k), False))
            axis += 1
            dim += 1
        elif isinstance(k, _slice):
            axis += 1
            dim += 1
        elif is_valueless(k):
            picks.append((axis, _wrapped_index(x, dim, k), True))
            axis += 1
            dim += 1
        else:
            dim += 1
    removed = 0
    for position, index, drops in picks:
        y = gather(y, index, axis=position - removed)
        removed += drops
    return y


def _dim_size(x, dim, dtype=dtypes.int32):
    """x's size along `dim`: an int, or an int tensor read when the graph runs."""
    from .elementwise import cast
    n = x._shape[dim]
    return cast(shape(x)[dim], dtype) if n is None else n


def _wrapped_index(x, dim, k):
    """A tensor index into axis `dim` of x, a negative one counting from the end as in
    Python; out of range either way, StridedSlice's error when the graph runs."""
    return bind(SLICE_INDEX, (x, k), {"dim": dim})


def _slice_positions(x, dim, k):
    """The positions `start:stop:step` selects along axis `dim` of x, as an int32 tensor
    computed when the graph runs (negative bounds count from the end, then clamp)."""
    from .creation import range as range_
    from .elementwise import cast, maximum, minimum, where
    if k.step is not None and is_valueless(k.step):
        raise TypeError("a slice step must be a Python int inside tf.function, got a tensor")
    step = 1 if k.step is None else _index(k.step, k)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    n = _dim_size(x, dim)

    def bound(b, default, low, high):
        if b is None:
            return default
        b = cast(b, dtypes.int32) if is_valueless(b) else _index(b, k)
        b = where(b < 0, b + n, b) if is_valueless(b) else (b + n if b < 0 else b)
        return minimum(maximum(b, low), high)

    if step > 0:
        start, stop = bound(k.start, 0, 0, n), bound(k.stop, n, 0, n)
        return range_(start, maximum(stop, start), step)
    start, stop = bound(k.start, n - 1, -1, n - 1), bound(k.stop, -1, -1, n - 1)
    return range_(start, minimum(stop, start), step)


def slice(input_, begin, size, name=None):
    """The block of `input_` starting at `begin` with extent `size` (-1: to the end).

    TensorFlow's bounds: 0 <= begin[i] <= dim i, and size[i] is -1 or in
    [0, dim i - begin[i]]; anything else is an InvalidArgumentError (NumPy would clamp).

    >>> import tapeflow as tf
    >>> tf.slice(tf.constant([[1, 2, 3], [4, 5, 6]]), [0, 1], [2, -1]).numpy()
    array([[2, 3],
           [5, 6]], dtype=int32)
    """
    x = as_tensor(input_)
    if isinstance(begin, _Operators) or isinstance(size, _Operators) or None in x._shape \
            or runtime_shape(begin) is not None or runtime_shape(size) is not None:
        # Values or dimensions known only when the graph runs: the Slice op checks them
        # then, as TensorFlow's does.
        return bind(SLICE, (x,) + _slice_vectors(begin, size))
    begin = int_tuple(begin, "begin", "Slice")
    size = int_tuple(size, "size", "Slice")
    _check_slice_bounds(x._shape, begin, size)
    key = tuple(_slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
    return bind(STRIDED_SLICE, (x,), {"key": _normalize_key(key)})


def _slice_vectors(begin, size):
    """begin and size as int tensors: a list (which may hold scalar tensors) takes the
    dtype of the other argument where that is a tensor, as TensorFlow converts them."""
    given = [v for v in (begin, size) if isinstance(v, _Operators)]
    dtype = given[0].dtype if given else dtypes.int32
    out = []
    for what, v in (("begin", begin), ("size", size)):
        if not isinstance(v, _Operators):
            dynamic = runtime_shape(v)
            v = dynamic[0] if dynamic is not None else convert_to_tensor(
                int_tuple(v, what, "Slice"), dtype=dtype)
        out.append(v)
    return tuple(out)


def _check_slice_bounds(shape, begin, size):
    """TensorFlow's Slice checks; a dimension unknown while tracing is checked as far as
    its sign allows."""
    rank = len(shape)
    if len(begin) != rank or len(size) != rank:
        raise _error("Slice", f"Expected begin and size arguments to be 1-D tensors of size "
                              f"{rank}, but got shapes [{len(begin)}] and [{len(size)}] "
                              f"instead.")
    for i, (n, b, s) in enumerate(zip(shape, begin, size)):
        if s == -1 and n is not None:
            s = n - b
        if n == 0 and (b != 0 or s != 0):
            raise _error("Slice", f"Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 "
                                  f"(got {s}) when input.dim_size({i}) == 0")
        if b < 0 or (n is not None and b > n):
            raise _error("Slice", f"Expected begin[{i}] in [0, {n}], but got {b}")
        if s < -1 or (n is not None and (s < 0 or s > n - b)):
            raise _error("Slice", f"Expected size[{i}] in [0, {n if n is None else n - b}], "
                                  f"but got {s}")


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of `params` along `axis` (default 0 or batch_dims) at `indices`.

    >>> import tapeflow as tf
    >>> tf.gather(tf.constant([10, 20, 30]), [2, 0]).numpy()
    array([30, 10], dtype=int32)
    """
    p = as_tensor(params)
    i = as_tensor(indices)
    if axis is None:
        axis = batch_dims  # as TensorFlow
    if isinstance(axis, (float, np.floating, bool, np.bool_)):
        # TensorFlow passes the axis to the op as a tensor: a float (or bool) one is the
        # op's InvalidArgumentError, not the TypeError of a conversion to int32
        axis = convert_to_tensor(axis)
    axis = int_scalar(axis, "GatherV2")
    batch_dims = int_scalar(batch_dims, "GatherV2", "batch_dims")
    return bind(GATHER, (p, i), {"axis": axis, "batch_dims": batch_dims})


def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of `params` at the coordinates in the last axis of `indices`."""
    return bind(GATHER_ND, (as_tensor(params), as_tensor(indices)),
                {"batch_dims": int_scalar(batch_dims, "GatherNd", "batch_dims")})


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates add up)."""
    return bind(SCATTER_ND, (as_tensor(indices), as_tensor(updates)),
                {"shape": int_tuple(shape, "shape")})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the rows of `data` into `num_segments` slots picked by `segment_ids`."""
    return bind(SEGMENT_SUM, (as_tensor(data), as_tensor(segment_ids)),
                {"num_segments": int_scalar(num_segments, "UnsortedSegmentSum",
                                             "num_segments")})


def where_indices(condition):
    """The coordinates of the True (non-zero) entries, int64 of shape (n, rank): what
    `tf.where(condition)` returns."""
    return bind(WHERE, (as_tensor(condition),))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot vectors: `on_value` (1) at each index, `off_value` (0) elsewhere.

    >>> import tapeflow as tf
    >>> tf.one_hot([0, 2], 3).numpy()
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    if dtype is None:
        given = on_value if on_value is not None else off_value
        dtype = (convert_to_tensor(given).dtype if given is not None else dtypes.float32)
    dtype = dtypes.as_dtype(dtype)
    on = 1 if on_value is None else np.asarray(on_value).item()
    off = 0 if off_value is None else np.asarray(off_value).item()
    return bind(ONE_HOT, (as_tensor(indices),),
                {"depth": int_scalar(depth, "OneHot", "depth"), "on_value": on,
                 "off_value": off, "axis": -1 if axis is None else int_scalar(axis, "OneHot"),
                 "dtype": dtype})


__all__ = [
    "gather",
    "gather_nd",
    "one_hot",
    "scatter_nd",
    "slice",
    "strided_slice",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "unsorted_segment_sum",
    "where_indices",
]
