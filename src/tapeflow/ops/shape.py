"""Ops that move elements without arithmetic: reshape, transpose, stack, concat, split,
slicing, gather/scatter, pad, tile, and shape queries; with their gradient helpers
(StridedSliceGrad, MirrorPadGrad, UnsortedSegmentSum, ScatterNd) as table entries."""

import builtins
import math
import numbers
import operator

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError, UnimplementedError
from ..tensor import Tensor, _Operators, convert_to_tensor
from . import rules
from .dynamic import (
    dynamic_broadcast_to,
    dynamic_reshape,
    input_dims,
    input_shape,
    reshape_to_input,
    reshaped,
    scatter_slice_to_input,
)
from .elementwise import _quiet
from .registry import OpDef, bind, register
from .rules import unbroadcast

_slice = builtins.slice  # this module defines TensorFlow's `slice`


_error = rules.op_error


def _check_axis(op_name, axis, rank):
    """`axis` in [-rank, rank), made non-negative; TensorFlow's error otherwise."""
    if not -rank <= axis < rank:
        raise _error(op_name, f"Expected axis in the range [{-rank}, {rank}), but got {axis}")
    return axis % rank


def _int_tuple(value, what, op_name=None):
    """A shape-like argument (list, tuple, TensorShape, Tensor, int) as a tuple of ints.

    TensorFlow converts such an argument to a tensor, so floats (or a string) reach the op
    `op_name` as a tensor of the wrong dtype: InvalidArgumentError naming it (TypeError
    where no op is named)."""
    if isinstance(value, _Operators):
        value = np.asarray(value).tolist()
    if isinstance(value, (numbers.Integral, np.integer)):
        return (int(value),)
    try:
        return tuple(operator.index(d) for d in value)
    except TypeError:
        if op_name is None:
            raise TypeError(f"{what} must be a list of integers, got {value!r}") from None
        raise rules.dtype_error(f"{what} must be int32 or int64 values, got {value!r} "
                                f"[Op:{op_name}]", op_name) from None


def _int_scalar(value, op_name=None, what="axis"):
    """An int argument (axis, depth, batch_dims): a Python or NumPy integer, or a scalar
    integer Tensor. A Tensor of another dtype (float, bool) is the InvalidArgumentError
    TensorFlow's op raises for it ("Value for attr 'Tidx' of float is not in the list of
    allowed values: int32, int64"); anything else a TypeError naming the op (TensorFlow
    cannot convert a float to int32)."""
    if isinstance(value, _Operators):
        if not value.dtype.is_integer:
            where = f" [Op:{op_name}]" if op_name else ""
            raise rules.dtype_error(f"{what} must be int32 or int64, got "
                                    f"{rules.describe(value)}{where}", op_name)
        return int(np.asarray(value))
    try:
        return operator.index(value)
    except TypeError:
        where = f" of {op_name}" if op_name else ""
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int32: the "
                        f"{what}{where} must be an integer") from None


def _int_dtype(op_name, x, what="indices"):
    if x.dtype not in (dtypes.int32, dtypes.int64):
        raise rules.dtype_error(f"{what} must be int32 or int64, got {rules.describe(x)} "
                                f"[Op:{op_name}]", op_name)


# -- reshape, transpose, expand_dims, squeeze, broadcast_to ------------------------------

def _reshape_infer(tensor, shape):
    size = None if None in tensor._shape else math.prod(tensor._shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    for i, d in enumerate(shape):
        if d < -1:
            raise _error("Reshape", f"Size {i} must be non-negative, not {d}")
    if len(unknown) > 1:
        raise _error("Reshape", f"Only one input size may be -1, not both {unknown[0]} and "
                                f"{unknown[1]}")
    if size is None:  # a dimension unknown while tracing: checked when the graph runs
        return tuple(None if d == -1 else d for d in shape), tensor.dtype
    if unknown:
        # TensorFlow's rule: zero sizes are left out of the requested product and, when
        # the requested shape has one, the input's zero dimensions are left out of its
        # count too, so the -1 still gets a size ([0, 3] reshaped to [0, -1] is [0, 3]).
        known = math.prod(d for d in shape if d > 0)
        zero_requested = 0 in shape
        count = math.prod(d for d in tensor._shape if d > 0 or not zero_requested)
        missing = count // known
        if not (zero_requested and 0 in tensor._shape) and known * missing != count:
            raise _error("Reshape", f"Input to reshape is a tensor with {size} values, but "
                                    f"the requested shape requires a multiple of {known}")
        i = unknown[0]
        shape = shape[:i] + (missing,) + shape[i + 1:]
    if math.prod(shape) != size:
        raise _error("Reshape", f"Input to reshape is a tensor with {size} values, but the "
                                f"requested shape has {math.prod(shape)}")
    return shape, tensor.dtype


RESHAPE = register(OpDef(
    name="Reshape", args=("tensor",), infer=_reshape_infer,
    # A -1 beside a 0, which NumPy's reshape (and the compiled one) cannot size, never
    # gets here: reshape() gives its size (see there).
    eager=lambda tensor, shape: np.reshape(tensor, shape),
    grad=lambda ctx, dy: (reshape_to_input(dy, ctx),)))


def _transpose_infer(x, perm):
    rank = len(x._shape)
    if len(perm) != rank:
        raise _error("Transpose", f"transpose expects a vector of size {rank}. But input(1) "
                                  f"is a vector of size {len(perm)}")
    if sorted(perm) != list(range(rank)):
        raise _error("Transpose", f"{list(perm)} is not a permutation of [0, {rank})")
    return tuple(x._shape[p] for p in perm), x.dtype


TRANSPOSE = register(OpDef(
    name="Transpose", args=("x",), infer=_transpose_infer,
    eager=lambda x, perm: np.transpose(x, perm),
    grad=lambda ctx, dy: (transpose(dy, tuple(np.argsort(ctx.attrs["perm"]).tolist())),)))


def _expand_dims_infer(input, axis):
    rank = len(input._shape)
    if not -rank - 1 <= axis <= rank:
        raise _error("ExpandDims", f"Tried to expand dim index {axis} for tensor with {rank} "
                                   f"dimensions.")
    axis %= rank + 1
    return input._shape[:axis] + (1,) + input._shape[axis:], input.dtype


EXPAND_DIMS = register(OpDef(
    name="ExpandDims", args=("input",), infer=_expand_dims_infer,
    eager=lambda input, axis: np.expand_dims(input, axis),
    grad=lambda ctx, dy: (reshape_to_input(dy, ctx),)))


def _squeeze_dims(shape, axis):
    """The axes Squeeze removes: the given ones (checked to be 1) or every 1."""
    rank = len(shape)
    if not axis:
        return tuple(i for i, d in enumerate(shape) if d == 1)
    out = []
    for a in axis:
        if not -rank <= a < rank:
            raise _error("Squeeze", f"Tried to squeeze dim index {a} for tensor with {rank} "
                                    f"dimensions.")
        if shape[a] != 1:
            raise _error("Squeeze", f"Can not squeeze dim[{a % rank}], expected a dimension "
                                    f"of 1, got {shape[a]}")
        out.append(a % rank)
    return tuple(sorted(set(out)))


def _squeeze_infer(input, axis):
    drop = _squeeze_dims(input._shape, axis)
    return tuple(d for i, d in enumerate(input._shape) if i not in drop), input.dtype


SQUEEZE = register(OpDef(
    name="Squeeze", args=("input",), infer=_squeeze_infer,
    eager=lambda input, axis: np.squeeze(input, _squeeze_dims(np.shape(input), axis)),
    grad=lambda ctx, dy: (reshape_to_input(dy, ctx),)))


def _broadcast_to_infer(input, shape):
    src = input._shape
    ok = len(shape) >= len(src) and all(
        d == s or d == 1 for s, d in zip(shape[len(shape) - len(src):], src))
    if not ok or any(d < 0 for d in shape):
        raise _error("BroadcastTo", f"Unable to broadcast tensor of shape {list(src)} to "
                                    f"tensor of shape {list(shape)}")
    return shape, input.dtype


BROADCAST_TO = register(OpDef(
    name="BroadcastTo", args=("input",), infer=_broadcast_to_infer,
    # A copy: a zero-stride, read-only view would surprise the compiled backends.
    eager=lambda input, shape: np.array(np.broadcast_to(input, shape)),
    grad=lambda ctx, dy: (unbroadcast(dy, ctx.shapes[0]),)))


# -- stack / unstack, concat / split -------------------------------------------------------

def _pack_infer(*values, axis):
    if not values:
        raise ValueError("tf.stack needs at least one value to stack along an axis other "
                         "than 0 (Pack)")
    rules.check_same_dtype("Pack", values)
    first = values[0]._shape
    for i, v in enumerate(values[1:], 1):
        if v._shape != first:
            raise _error("Pack", f"Shapes of all inputs must match: values[0].shape = "
                                 f"{list(first)} != values[{i}].shape = {list(v._shape)}")
    rank = len(first) + 1
    if not -rank <= axis < rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank}, {rank})")
    axis %= rank
    return first[:axis] + (len(values),) + first[axis:], values[0].dtype


PACK = register(OpDef(
    name="Pack", args=("values",), variadic=True,  # every input is one of `values`
    infer=_pack_infer, eager=lambda *values, axis: np.stack(values, axis),
    grad=lambda ctx, dy: tuple(unstack(dy, num=len(ctx.shapes), axis=ctx.attrs["axis"]))))


def _unpack_infer(value, axis, num=None):
    """`num`: the output count, given where the dimension is unknown while tracing (and
    checked when the graph runs)."""
    shape = value._shape
    if not shape:
        raise ValueError("Cannot unstack a scalar: the input must have rank at least 1")
    axis = _check_axis("Unpack", axis, len(shape))
    if num is not None and shape[axis] is not None and shape[axis] != num:
        raise _error("Unpack", f"Input shape axis {axis} must equal {num}, got shape "
                               f"{rules.kernel_dims(shape)}")
    part = shape[:axis] + shape[axis + 1:]
    return [(part, value.dtype)] * (shape[axis] if num is None else num)


UNPACK = register(OpDef(
    name="Unpack", args=("value",), infer=_unpack_infer,
    n_out=None,  # one output per slice along `axis`
    eager=lambda value, axis, num=None: tuple(np.moveaxis(value, axis, 0)),
    grad=lambda ctx, *dys: (stack(list(dys), axis=ctx.attrs["axis"]),)))


def _concat_infer(*values, axis):
    if not values:
        raise _error("ConcatV2", "ConcatOp needs at least one tensor to concatenate, got an "
                                 "empty list")
    rules.check_same_dtype("ConcatV2", values)
    first = values[0]._shape
    rank = len(first)
    if rank == 0:
        raise _error("ConcatV2", "ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    if not -rank <= axis < rank:
        raise _error("ConcatV2", f"ConcatOp : Expected concatenating dimensions in the range "
                                 f"[{-rank}, {rank}), but got {axis}")
    axis %= rank
    total = 0
    for i, v in enumerate(values):
        shape = v._shape
        if len(shape) != rank:
            raise _error("ConcatV2", f"ConcatOp : Ranks of all input tensors should match: "
                                     f"shape[0] = {list(first)} vs. shape[{i}] = {list(shape)}")
        for d in range(rank):
            if d != axis and shape[d] != first[d] and None not in (shape[d], first[d]):
                raise _error("ConcatV2", f"ConcatOp : Dimension {d} in both shapes must be "
                                         f"equal: shape[0] = {list(first)} vs. shape[{i}] = "
                                         f"{list(shape)}")
        total = None if total is None or shape[axis] is None else total + shape[axis]
    return first[:axis] + (total,) + first[axis + 1:], values[0].dtype


CONCAT = register(OpDef(
    name="ConcatV2", args=("values",), variadic=True,  # every input is one of `values`
    infer=_concat_infer, eager=lambda *values, axis: np.concatenate(values, axis),
    grad=lambda ctx, dy: tuple(_concat_grad(ctx, dy))))


def _concat_grad(ctx, dy):
    axis = ctx.attrs["axis"]
    sizes = [s[axis] for s in ctx.shapes]
    if sizes.count(None) == 1:  # the unknown part is what the others leave
        sizes[sizes.index(None)] = -1
    if None in sizes:
        from .creation import range as range_
        starts, parts = 0, []
        for i in range(len(sizes)):
            size = input_shape(ctx, i)[axis] if sizes[i] is None else sizes[i]
            index = range_(starts, starts + size)
            parts.append(gather(dy, index, axis=axis))
            starts = starts + size
        return parts
    return split(dy, sizes, axis=axis)


def _split_sizes(op_name, size_splits, dim):
    """`size_splits` with its one -1 resolved against `dim`, the size being split."""
    unknown = [i for i, s in enumerate(size_splits) if s == -1]
    known = sum(s for s in size_splits if s != -1)
    if len(unknown) > 1 or any(s < -1 for s in size_splits):
        raise _error(op_name, f"There can only be one -1 in the input, and sizes must be "
                              f">= -1, got {list(size_splits)}")
    if dim is None:  # unknown while tracing: checked when the graph runs
        return tuple(None if s == -1 else s for s in size_splits)
    if (not unknown and known != dim) or (unknown and known > dim):
        raise _error(op_name, f"Determined shape must either match input shape along "
                              f"split_dim exactly if fully specified, or be less than the "
                              f"size of the input along split_dim if not fully specified.  "
                              f"Got: {known}")
    if unknown:
        i = unknown[0]
        return size_splits[:i] + (dim - known,) + size_splits[i + 1:]
    return size_splits


def _split_infer(value, size_splits, axis):
    shape = value._shape
    axis = _check_axis("SplitV", axis, len(shape))
    sizes = _split_sizes("SplitV", size_splits, shape[axis])
    return [(shape[:axis] + (s,) + shape[axis + 1:], value.dtype) for s in sizes]


def _split_kernel(value, size_splits, axis):
    sizes = _split_sizes("SplitV", size_splits, value.shape[axis])
    return tuple(np.split(value, np.cumsum(sizes)[:-1], axis))


SPLIT = register(OpDef(
    name="SplitV", args=("value",), infer=_split_infer, eager=_split_kernel,
    n_out=None,  # one output per entry of size_splits
    grad=lambda ctx, *dys: (concat(list(dys), axis=ctx.attrs["axis"]),)))


# -- tile, pad ----------------------------------------------------------------------------

def _tile_infer(input, multiples):
    shape = input._shape
    if len(multiples) != len(shape):
        raise _error("Tile", f"Expected multiples argument to be a vector of length "
                             f"{len(shape)} but got length {len(multiples)}")
    for i, m in enumerate(multiples):
        if m < 0:
            raise _error("Tile", f"Expected multiples[{i}] >= 0, but got {m}")
    return tuple(None if d is None else d * m for d, m in zip(shape, multiples)), input.dtype


def _tile_grad(ctx, dy):
    # TensorFlow's _TileGrad: view dy as (m0, d0, m1, d1, ...) and sum the copies.
    from .reduce import reduce_sum
    dims = input_dims(ctx)
    folded = reshaped(dy, _interleaved(ctx.attrs["multiples"], dims))
    return (reduce_sum(folded, axis=list(range(0, 2 * len(dims), 2))),)


TILE = register(OpDef(
    name="Tile", args=("input",), infer=_tile_infer,
    eager=lambda input, multiples: np.tile(input, multiples) if multiples else np.copy(input),
    grad=_tile_grad))


def _check_paddings(op_name, shape, paddings, limit=None):
    if len(paddings) != len(shape) or any(len(p) != 2 for p in paddings):
        raise _error(op_name, f"The first dimension of paddings must be the rank of inputs"
                              f"[{len(paddings)},2] {rules.kernel_dims(shape)}")
    for d, (lo, hi) in zip(shape, paddings):
        if lo < 0 or hi < 0:
            raise _error(op_name, f"Paddings must be non-negative: {lo} {hi}")
        if limit is not None and d is not None and (lo > d - limit or hi > d - limit):
            raise _error(op_name, f"paddings must be less than the dimension size: {lo}, {hi} "
                                  f"not less than {d}" if limit else
                                  f"paddings must be no greater than the dimension size: "
                                  f"{lo}, {hi} greater than {d}")
    return tuple(None if d is None else d + lo + hi for d, (lo, hi) in zip(shape, paddings))


def _pad_infer(input, constant_values, paddings):
    rules.check_same_dtype("PadV2", (input, constant_values))
    if constant_values._shape:
        raise _error("PadV2", f"constant_values must be a scalar. Got shape "
                              f"{list(constant_values._shape)}")
    return _check_paddings("PadV2", input._shape, paddings), input.dtype


def _unpad(dy, paddings, shape):
    return strided_slice(dy, tuple(_slice(lo, lo + d if d is not None else -hi or None)
                                   for (lo, hi), d in zip(paddings, shape)))


def _pad_kernel(input, constant_values, paddings):
    if not paddings:  # a scalar: NumPy rejects an empty pad_width
        return np.array(input)
    return np.pad(input, paddings, constant_values=constant_values)


PAD = register(OpDef(
    name="PadV2", args=("input", "constant_values"), infer=_pad_infer, eager=_pad_kernel,
    # TensorFlow gives constant_values no gradient.
    grad=lambda ctx, dy: (_unpad(dy, ctx.attrs["paddings"], ctx.shapes[0]), None)))


def _mirror_index(n, lo, hi, mode):
    """For each position of a mirror-padded axis, the source index in the input."""
    shift = 0 if mode == "REFLECT" else 1
    left = [lo - p - shift for p in range(lo)]
    right = [n - 2 + shift - j for j in range(hi)]
    return np.array(left + list(range(n)) + right, dtype=np.intp)


def _mirror_pad_infer(input, paddings, mode):
    return _check_paddings("MirrorPad", input._shape, paddings,
                           limit=1 if mode == "REFLECT" else 0), input.dtype


@_quiet
def _mirror_pad_grad_kernel(dy, paddings, mode):
    # Fold each padded border back onto the entries it was copied from, one axis at a time.
    for axis, (lo, hi) in enumerate(paddings):
        n = dy.shape[axis] - lo - hi
        moved = np.moveaxis(dy, axis, 0)
        out = np.zeros((n,) + moved.shape[1:], dtype=dy.dtype)
        np.add.at(out, _mirror_index(n, lo, hi, mode), moved)
        dy = np.moveaxis(out, 0, axis)
    return np.array(dy, order="C")


def _mirror_pad_grad_infer(dy, paddings, mode):
    return tuple(None if d is None else d - lo - hi
                 for d, (lo, hi) in zip(dy._shape, paddings)), dy.dtype


MIRROR_PAD = register(OpDef(
    name="MirrorPad", args=("input",), infer=_mirror_pad_infer,
    eager=lambda input, paddings, mode: np.pad(input, paddings, mode=mode.lower())
    if paddings else np.array(input),
    grad=lambda ctx, dy: (bind(MIRROR_PAD_GRAD, (dy,), ctx.attrs),)))
MIRROR_PAD_GRAD = register(OpDef(
    name="MirrorPadGrad", args=("dy",), infer=_mirror_pad_grad_infer,
    eager=_mirror_pad_grad_kernel,
    grad=lambda ctx, g: (bind(MIRROR_PAD, (g,), ctx.attrs),)))


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


def _numpy_key(key):
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
    out[_numpy_key(key)] = dy
    return out


class _Aval:
    """A bare (shape, dtype) pair, for calling one op's infer from another's."""

    __slots__ = ("_shape", "dtype")

    def __init__(self, shape, dtype):
        self._shape = tuple(shape)
        self.dtype = dtype


STRIDED_SLICE = register(OpDef(
    name="StridedSlice", args=("input",), infer=_slice_infer,
    eager=lambda input, key: np.asarray(input)[_numpy_key(key)],
    grad=lambda ctx, dy: (scatter_slice_to_input(dy, ctx, ctx.attrs["key"]),)))
STRIDED_SLICE_GRAD = register(OpDef(
    name="StridedSliceGrad", args=("dy",), infer=_slice_grad_infer, eager=_slice_grad_kernel,
    grad=lambda ctx, g: (bind(STRIDED_SLICE, (g,), {"key": ctx.attrs["key"]}),)))


# -- Slice and Pad with begin, size and paddings as tensors ------------------------------
# tf.slice inside tf.function with begin/size known only when the graph runs (or an input
# dimension unknown while tracing) is TensorFlow's Slice op; its gradient pads dy back to
# the input's shape with Pad, whose gradient is a Slice again (TF's _SliceGrad, _PadGrad).

def _known_ints(t):
    """The values of an int tensor known now (a constant), else None."""
    value = getattr(t, "_value", None)
    return None if value is None else tuple(int(v) for v in np.asarray(value).reshape(-1))


def _check_slice_args(input, begin, size):
    for what, t in (("begin", begin), ("size", size)):
        _int_dtype("Slice", t, what)
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
    b, s = _known_ints(begin), _known_ints(size)
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


def _input_shape_vector(ctx, dtype):
    """Input 0's shape as a 1-D tensor of `dtype`: a constant where tracing knew it."""
    known = input_shape(ctx, 0)
    if type(known) is not tuple:
        from .elementwise import cast
        return cast(known, dtype)
    return convert_to_tensor(np.array(known, dtype._np).reshape(len(known)))


def _slice_op_grad(ctx, dy):
    from .elementwise import subtract
    begin = ctx.begin
    after = subtract(subtract(_input_shape_vector(ctx, begin.dtype),
                              shape(dy, out_type=begin.dtype)), begin)
    rank = len(ctx.shapes[0])  # begin's length too, once the Slice ran
    paddings = concat([reshape(begin, [rank, 1]), reshape(after, [rank, 1])], 1)
    return bind(PAD_TO, (dy, paddings), {"hint": tuple(ctx.shapes[0])}), None, None


SLICE = register(OpDef(
    name="Slice", args=("input", "begin", "size"), infer=_slice_op_infer,
    eager=_slice_op_kernel, saves=("begin",), grad=_slice_op_grad))


def _pad_to_infer(input, paddings, hint):
    rank = len(input._shape)
    _int_dtype("Pad", paddings, "paddings")
    p = paddings._shape
    if len(p) != 2 or p[1] not in (None, 2) or p[0] not in (None, rank):
        raise _error("Pad", f"The first dimension of paddings must be the rank of inputs"
                            f"{rules.kernel_dims(p)} {rules.kernel_dims(input._shape)}")
    known = _known_ints(paddings)
    if known is not None:
        pairs = tuple(zip(known[::2], known[1::2]))
        return _check_paddings("Pad", input._shape, pairs), input.dtype
    return (tuple(hint) if hint is not None else (None,) * rank), input.dtype


def _pad_to_kernel(input, paddings, hint):
    pairs = tuple(tuple(row) for row in paddings.tolist())
    _check_paddings("Pad", input.shape, pairs)
    return _pad_kernel(input, np.zeros((), input.dtype), pairs)


def _pad_to_grad(ctx, dy):
    begin = reshape(slice(ctx.paddings, [0, 0], [-1, 1]), [-1])
    return bind(SLICE, (dy, begin, _input_shape_vector(ctx, begin.dtype))), None


PAD_TO = register(OpDef(
    name="Pad", args=("input", "paddings"), infer=_pad_to_infer, eager=_pad_to_kernel,
    saves=("paddings",), grad=_pad_to_grad))


def _slice_index_infer(input, index, dim):
    if index._shape:
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got a tensor of shape {list(index._shape)}")
    _int_dtype("StridedSlice", index, "a tensor index")
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


def _reverse_infer(tensor, axis):
    rank = len(tensor._shape)
    seen = set()
    for a in axis:
        if not -rank <= a < rank:
            raise _error("ReverseV2", f"'axis'[0] = {a} is out of valid range [0, {rank}")
        if a % rank in seen:
            raise _error("ReverseV2", f"axis {a % rank} specified more than once.")
        seen.add(a % rank)
    return tensor._shape, tensor.dtype


REVERSE = register(OpDef(
    name="ReverseV2", args=("tensor",), infer=_reverse_infer,
    eager=lambda tensor, axis: np.flip(tensor, axis) if axis else tensor,
    grad=lambda ctx, dy: (reverse(dy, ctx.attrs["axis"]),)))


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
    axis = _check_axis("GatherV2", axis, max(p_rank, 1))
    if batch_dims < 0:
        batch_dims += i_rank
    if not 0 <= batch_dims <= min(axis, i_rank):
        raise _error("GatherV2", f"batch_dims ({batch_dims}) must be in [0, {i_rank}] and "
                                 f"less than or equal to axis ({axis})")
    if params._shape[:batch_dims] != indices._shape[:batch_dims]:
        raise _error("GatherV2", f"params.shape[:{batch_dims}] = "
                                 f"{list(params._shape[:batch_dims])} should equal "
                                 f"indices.shape[:{batch_dims}] = "
                                 f"{list(indices._shape[:batch_dims])}")
    return axis, batch_dims


def _gather_infer(params, indices, axis, batch_dims):
    _int_dtype("GatherV2", indices)
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
    # dy to the front (after the batch ones), then sum rows into their slots.
    p_shape, i_shape = ctx.shapes
    axis, batch_dims = ctx.attrs["axis"] % len(p_shape), ctx.attrs["batch_dims"]
    if None in p_shape or None in i_shape:
        return _gather_grad_unknown_size(ctx, dy, axis, batch_dims), None
    batch_dims += len(i_shape) if batch_dims < 0 else 0
    b, n_idx = batch_dims, len(i_shape) - batch_dims
    dy_rank = len(dy._shape)
    perm = (list(range(b)) + list(range(axis, axis + n_idx)) + list(range(b, axis))
            + list(range(axis + n_idx, dy_rank)))
    rest = p_shape[b:axis] + p_shape[axis + 1:]
    n_batch, n_rows = math.prod(p_shape[:b]), math.prod(i_shape[b:])
    rows = reshape(transpose(dy, perm), (n_batch * n_rows,) + rest)
    ids = ctx.indices
    if b:
        from .creation import range as _range
        offsets = _range(0, n_batch * p_shape[axis], p_shape[axis], dtype=ids.dtype)
        ids = ids + reshape(offsets, p_shape[:b] + (1,) * n_idx)
    summed = unsorted_segment_sum(rows, reshape(ids, (-1,)), n_batch * p_shape[axis])
    summed = reshape(summed, p_shape[:b] + (p_shape[axis],) + rest)
    back = list(range(b)) + list(range(b + 1, axis + 1)) + [b] + list(
        range(axis + 1, len(p_shape)))
    return transpose(summed, back), None


def _gather_grad_unknown_size(ctx, dy, axis, batch_dims):
    """Gather with shapes known only at run time (a loop's history, a list built in a
    loop, indices of a computed length): add the rows into zeros shaped like the params,
    with the gathered axis moved to the front and back."""
    p_shape, i_shape = ctx.shapes
    n_idx = len(i_shape)
    rest = p_shape[:axis] + p_shape[axis + 1:]
    if batch_dims != 0 or (n_idx > 1 and None in rest):
        raise UnimplementedError(
            f"the gradient of GatherV2 (axis {axis}, batch_dims {batch_dims}) of a tensor "
            f"of shape {list(p_shape)} with indices of shape {list(i_shape)} needs shapes "
            f"known while tracing [Op:GatherV2]", op="GatherV2")
    from .creation import zeros_like
    front = [axis] + [d for d in range(len(p_shape)) if d != axis]
    inverse = tuple(np.argsort(front).tolist())
    # dy holds the index dimensions where `axis` was: move them to the front, as rows.
    rank = len(dy._shape)
    if n_idx == 0:  # one index: dy is the one row
        rows = expand_dims(dy, 0)
    else:
        rows = transpose(dy, list(range(axis, axis + n_idx)) + list(range(axis))
                         + list(range(axis + n_idx, rank)))
    if n_idx > 1:
        rows = reshape(rows, (-1,) + tuple(rest))
    summed = tensor_scatter_nd_add(transpose(zeros_like(ctx.params), front),
                                   reshape(ctx.indices, (-1, 1)), rows)
    return transpose(summed, inverse)


GATHER = register(OpDef(
    name="GatherV2", args=("params", "indices"), infer=_gather_infer, eager=_gather_kernel,
    saves=("params", "indices"), grad=_gather_grad))


def _segment_sum_infer(data, segment_ids, num_segments):
    _int_dtype("UnsortedSegmentSum", segment_ids, "segment_ids")
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
    _int_dtype("GatherNd", indices)
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
    shape = ctx.shapes[0]
    if None in shape:  # known when the graph runs: add into zeros of the params' shape
        from .creation import zeros
        return tensor_scatter_nd_add(zeros(input_shape(ctx, 0), dtype=dy.dtype),
                                     ctx.indices, dy)
    return scatter_nd(ctx.indices, dy, shape)


def _scatter_nd_infer(indices, updates, shape):
    _int_dtype("ScatterNd", indices)
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
    _int_dtype("TensorScatterAdd", indices)
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
    return bind(TENSOR_SCATTER_ADD, (_tensor(tensor), _tensor(indices), _tensor(updates)))


# -- queries and other non-differentiable ops ------------------------------------------------

def _where_infer(condition):
    if not condition._shape:
        raise _error("Where", "WhereOp : Unhandled input dimensions: 0")
    return (None, len(condition._shape)), dtypes.int64


WHERE = register(OpDef(
    name="Where", args=("condition",), infer=_where_infer, differentiable=False,
    eager=lambda condition: np.argwhere(condition).astype(np.int64)))


def _query_infer(shape_of):
    def infer(input, out_type):
        return shape_of(input._shape), out_type
    return infer


def _shape_infer(input, out_type):
    if out_type not in (dtypes.int32, dtypes.int64):
        raise rules.dtype_error(f"Value for attr 'out_type' of {out_type.name} is not in the "
                                f"list of allowed values: int32, int64 [Op:Shape]", "Shape")
    return (len(input._shape),), out_type


SHAPE = register(OpDef(
    name="Shape", args=("input",), infer=_shape_infer,
    eager=lambda input, out_type: np.array(np.shape(input), dtype=out_type._np),
    differentiable=False))
SIZE = register(OpDef(
    name="Size", args=("input",), infer=_query_infer(lambda s: ()),
    eager=lambda input, out_type: np.array(np.size(input), dtype=out_type._np),
    differentiable=False))
RANK = register(OpDef(
    name="Rank", args=("input",), infer=_query_infer(lambda s: ()),
    eager=lambda input, out_type: np.array(np.ndim(input), dtype=out_type._np),
    differentiable=False))


def _one_hot_infer(indices, depth, on_value, off_value, axis, dtype):
    _int_dtype("OneHot", indices)
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

def _tensor(x):
    return x if type(x) is Tensor else rules.as_tensor(x)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape holding as many elements; one dimension may be -1.

    >>> import tapeflow as tf
    >>> tf.reshape(tf.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    dynamic = _runtime_shape(shape)
    if dynamic is not None:
        return dynamic_reshape(_tensor(tensor), *dynamic)
    x = _tensor(tensor)
    if _valueless(x) and isinstance(shape, (list, tuple)) and None in shape and \
            -1 not in shape and list(shape).count(None) == 1:
        # A shape read off a traced tensor (a gradient rule's, say) with one dimension
        # unknown until the graph runs: it is what the others leave.
        shape = [-1 if d is None else d for d in shape]
    shape = _int_tuple(shape, "shape", "Reshape")
    if -1 in shape and 0 in shape:
        # TensorFlow sizes a -1 beside a 0 by its own rule (see _reshape_infer), which
        # NumPy's reshape and the compiled kernels do not know: give them the size, from
        # the shape if it is known now, else when the graph runs. (Other -1s stay, so a
        # kernel serves every input shape of a rank.)
        try:
            sized = _reshape_infer(x, shape)[0]
        except InvalidArgumentError:
            sized = shape  # bind's infer reports it (inside tf.function, as TensorFlow)
        if None in sized:
            return _reshape_beside_zero_at_run_time(x, shape)
        shape = sized
    return bind(RESHAPE, (x,), {"shape": shape})


def _reshape_beside_zero_at_run_time(x, target):
    """x reshaped to `target`, whose -1 beside a 0 takes the size _reshape_infer gives it
    (the input's non-zero dimensions over the target's), computed from x's shape when
    the graph runs."""
    from .elementwise import maximum
    from .reduce import reduce_prod
    known = math.prod(d for d in target if d > 0)
    size = reduce_prod(maximum(shape(x), 1)) // known
    dims = [size if d == -1 else d for d in target]
    return dynamic_reshape(x, stack(dims), hint=[None if d == -1 else d for d in target])


def transpose(a, perm=None, conjugate=False, name="transpose"):
    """Permutes dimensions by `perm` (default: reversed), as `tf.transpose`; a negative
    entry counts from the end, as in TensorFlow."""
    x = _tensor(a)
    rank = len(x._shape)
    if perm is None:
        perm = tuple(reversed(range(rank)))
    else:
        perm = tuple(p + rank if p < 0 else p for p in _int_tuple(perm, "perm", "Transpose"))
    return bind(TRANSPOSE, (x,), {"perm": perm})


def _expand_dims_axis(axis):
    """ExpandDims' `axis`: an integer, or a list, array or Tensor holding exactly one
    (TensorFlow reads it as a tensor, so `[0]` works and `[0, 1]` is an error)."""
    if isinstance(axis, (numbers.Integral, np.integer)):
        return int(axis)
    if isinstance(axis, _Operators):
        if not axis.dtype.is_integer:
            raise rules.dtype_error(f"axis must be int32 or int64, got {rules.describe(axis)} "
                                    f"[Op:ExpandDims]", "ExpandDims")
        values = np.asarray(axis).ravel()
    elif isinstance(axis, (list, tuple, np.ndarray)):
        values = np.asarray(axis).ravel()
        if values.size == 1 and values.dtype.kind not in "iub":
            raise rules.dtype_error(f"axis must be int32 or int64 values, got {axis!r} "
                                    f"[Op:ExpandDims]", "ExpandDims")
    else:  # a float or a string: TensorFlow cannot convert it to int32
        raise TypeError(f"Cannot convert {axis!r} to EagerTensor of dtype int32: the axis of "
                        f"ExpandDims must be an integer")
    if values.size != 1:
        raise _error("ExpandDims", f"'dim' must be a tensor with a single value, got {axis!r}")
    return int(values[0])


def expand_dims(input, axis, name=None):
    """Inserts a dimension of size 1 at `axis` (negative counts from the end); `axis` may
    also be a one-element list or tensor, as in TensorFlow."""
    return bind(EXPAND_DIMS, (_tensor(input),), {"axis": _expand_dims_axis(axis)})


def squeeze(input, axis=None, name=None):
    """Removes dimensions of size 1 (all of them, or those in `axis`)."""
    axis = () if axis is None else _int_tuple(axis, "axis")
    return bind(SQUEEZE, (_tensor(input),), {"axis": axis})


def broadcast_to(input, shape, name=None):
    """Broadcasts `input` to `shape` (NumPy rules), as `tf.broadcast_to`."""
    dynamic = _runtime_shape(shape)
    if dynamic is not None:
        return dynamic_broadcast_to(_tensor(input), *dynamic)
    return bind(BROADCAST_TO, (_tensor(input),),
                {"shape": _int_tuple(shape, "shape", "BroadcastTo")})


def _runtime_shape(shape):
    """(int32 shape vector, hint) when `shape` is known only when a traced function runs
    (`tf.shape(x)` of a tensor with an unknown dimension, or a list holding such a
    tensor); None for a shape known now."""
    if _valueless(shape):
        return shape, None
    if isinstance(shape, (list, tuple)) and any(_valueless(d) for d in shape):
        hint = [None if _valueless(d) else _int_scalar(d, what="shape") for d in shape]
        from .elementwise import cast
        dims = [cast(d, dtypes.int32) if _valueless(d) else int(d) for d in shape]
        return stack(dims), hint
    return None


def _same_kind(values):
    """Converts a list of values to Tensors; Python values take the first Tensor's dtype."""
    if isinstance(values, _Operators):
        return list(unstack(values))
    return rules.as_tensors(*values)


def _python_constant(values):
    """Whether `values` is a (nested) list of Python numbers that TensorFlow converts as
    one constant: no tensors or NumPy values, and bools not mixed with numbers (TensorFlow
    refuses to convert [True, 1])."""
    kinds = set()

    def visit(v):
        if isinstance(v, (list, tuple)):
            return all(visit(item) for item in v)
        if type(v) not in (bool, int, float):
            return False
        kinds.add(type(v) is bool)
        return True
    return visit(values) and len(kinds) < 2


def stack(values, axis=0, name="stack"):
    """Stacks equally shaped tensors along a new `axis`.

    Along axis 0, a list of Python numbers is converted as one constant first, as
    TensorFlow does: `tf.stack([1, 2.5])` is float32 and `tf.stack([])` a float32 [0].

    >>> import tapeflow as tf
    >>> tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1).numpy()
    array([[1, 3],
           [2, 4]], dtype=int32)
    >>> tf.stack([1, 2.5])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([1. , 2.5], dtype=float32)>
    """
    if isinstance(axis, float) and axis.is_integer():  # TensorFlow takes 1.0 for 1 here
        axis = int(axis)
    axis = _int_scalar(axis, "Pack")
    if axis == 0 and isinstance(values, (list, tuple)) and _python_constant(values):
        try:
            return convert_to_tensor(values)
        except (TypeError, ValueError):
            pass  # a ragged list: Pack names the shapes that differ
    return bind(PACK, tuple(_same_kind(values)), {"axis": axis})


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of `value` along `axis`, as a list of tensors."""
    x = _tensor(value)
    axis = _int_scalar(axis, "Unpack")
    if num is not None and x._shape and -len(x._shape) <= axis < len(x._shape) and \
            x._shape[axis] is None:  # unknown while tracing: `num` says it, checked later
        return bind(UNPACK, (x,), {"axis": axis, "num": int(num)})
    if num is not None and x._shape and -len(x._shape) <= axis < len(x._shape) and (
            x._shape[axis] != num):
        raise _error("Unpack", f"Input shape axis {axis % len(x._shape)} must equal {num}, "
                               f"got shape {rules.kernel_dims(x._shape)}")
    return bind(UNPACK, (x,), {"axis": axis})


def concat(values, axis, name="concat"):
    """Joins tensors along an existing `axis`.

    >>> import tapeflow as tf
    >>> tf.concat([tf.zeros([2, 1]), tf.ones([2, 2])], axis=-1).shape
    TensorShape([2, 3])
    """
    if isinstance(values, _Operators):  # one tensor is a list of one, as in TensorFlow
        values = [values]
    values = _same_kind(values)
    axis = _int_scalar(axis, "ConcatV2")
    if len(values) == 1:
        from .elementwise import identity
        return identity(values[0])
    return bind(CONCAT, tuple(values), {"axis": axis})


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into `num_or_size_splits` equal parts (a Python or
    NumPy integer), or parts of the given sizes (a list or 1-D tensor; one may be -1);
    returns a list of tensors. `num`, when given with sizes, must be their count."""
    x = _tensor(value)
    axis = _int_scalar(axis, "SplitV")
    if isinstance(num_or_size_splits, (numbers.Integral, np.integer)):
        n = int(num_or_size_splits)
        rank = len(x._shape)
        dim = x._shape[axis] if -rank <= axis < rank else 0
        if n <= 0 or dim % n:
            raise _error("Split", f"Number of ways to split should evenly divide the split "
                                  f"dimension, but got split_dim {axis} (size = {dim}) and "
                                  f"num_split {n}")
        return bind(SPLIT, (x,), {"size_splits": (dim // n,) * n, "axis": axis})
    if np.ndim(num_or_size_splits) == 0:  # TensorFlow reads anything else as a tensor
        raise ValueError(f"Rank-0 tensors are not supported as the num_or_size_splits "
                         f"argument to split. Argument provided: {num_or_size_splits}")
    sizes = _int_tuple(num_or_size_splits, "num_or_size_splits", "SplitV")
    if num is not None and num != len(sizes):
        raise _error("SplitV", f"size of the split_tensor must be 1-D and have the same "
                               f"elements as outputs got {len(sizes)} != {num}")
    return bind(SPLIT, (x,), {"size_splits": sizes, "axis": axis})


def tile(input, multiples, name=None):
    """Repeats `input` `multiples[i]` times along each axis i."""
    x = _tensor(input)
    dynamic = _runtime_shape(multiples)
    if dynamic is not None:
        return _tile_at_run_time(x, dynamic[0])
    return bind(TILE, (x,), {"multiples": _int_tuple(multiples, "multiples", "Tile")})


def _tile_at_run_time(x, multiples):
    """tile with multiples known when the graph runs: x viewed as [1, d0, 1, d1, ...],
    broadcast to [m0, d0, m1, d1, ...] and folded to [m0 * d0, m1 * d1, ...]."""
    from .elementwise import cast
    rank = len(x._shape)
    if multiples._shape != (rank,):
        raise _error("Tile", f"Expected multiples argument to be a vector of length {rank} "
                             f"but got shape {list(multiples._shape)}")
    dims = unstack(shape(x), num=rank) if rank else []
    counts = unstack(cast(multiples, dtypes.int32), num=rank) if rank else []
    ones = (1,) * rank
    if None in x._shape:
        spread = dynamic_reshape(x, stack(_interleaved(ones, dims)),
                                 hint=_interleaved(ones, x._shape))
    else:
        spread = reshape(x, _interleaved(ones, x._shape))
    grown = dynamic_broadcast_to(spread, stack(_interleaved(counts, dims)),
                                 hint=_interleaved((None,) * rank, x._shape))
    return dynamic_reshape(grown, stack([m * d for m, d in zip(counts, dims)]))


def _interleaved(a, b):
    """(a0, b0, a1, b1, ...): tile's view of each axis as (copies, size)."""
    return tuple(d for pair in zip(a, b) for d in pair)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads with `constant_values` (mode CONSTANT) or a mirror image (REFLECT, SYMMETRIC).

    >>> import tapeflow as tf
    >>> tf.pad(tf.constant([[1, 2]]), [[0, 0], [1, 1]]).numpy()
    array([[0, 1, 2, 0]], dtype=int32)
    """
    x = _tensor(tensor)
    rows = np.asarray(paddings).tolist() if isinstance(paddings, _Operators) else paddings
    mode = mode.upper() if isinstance(mode, str) else mode
    op_name = "PadV2" if mode == "CONSTANT" else "MirrorPad"
    paddings = tuple(_int_tuple(row, "paddings", op_name) for row in rows)
    if mode == "CONSTANT":
        if not isinstance(constant_values, _Operators) and np.ndim(constant_values) == 0 \
                and constant_values == 0:
            # A plain 0 pads with the dtype's zero, as TensorFlow's Pad op: False for bool.
            constant_values = np.zeros((), x.dtype._np)
        return bind(PAD, tuple(rules.as_tensors(x, constant_values)), {"paddings": paddings})
    if mode in ("REFLECT", "SYMMETRIC"):
        return bind(MIRROR_PAD, (x,), {"paddings": paddings, "mode": mode})
    raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", '
                     f'"REFLECT", or "SYMMETRIC". Received `mode` = {mode}')


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
    x = _tensor(input_)
    if end is None:
        key = begin
        parts = key if isinstance(key, (tuple, list)) else (key,)
        if any(_valueless(k) or _has_tensor_bounds(k) for k in parts):
            return _slice_with_tensor_indices(x, tuple(parts))
    else:
        begin, end = _int_tuple(begin, "begin"), _int_tuple(end, "end")
        strides = (1,) * len(begin) if strides is None else _int_tuple(strides, "strides")
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


def _valueless(k):
    """Whether `k` is a tensor without a value yet (a traced one, or a jacobian's batch):
    as an index or a size it is known only when the function runs."""
    return isinstance(k, _Operators) and getattr(k, "_value", 0) is None


def _has_tensor_bounds(k):
    return isinstance(k, _slice) and any(_valueless(b) for b in (k.start, k.stop, k.step))


def _slice_with_tensor_indices(x, key):
    """`x[t]` or `x[a:b]` where t, a or b are tensors known only when a traced function
    runs (`for t in tf.range(n)`): slice the static part, then gather along each axis
    that a tensor indexes (`a:b` gathers the range Python's slice rules give)."""
    static = tuple(_slice(None) if _valueless(k) or _has_tensor_bounds(k) else k
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
        elif _valueless(k):
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
    if k.step is not None and _valueless(k.step):
        raise TypeError("a slice step must be a Python int inside tf.function, got a tensor")
    step = 1 if k.step is None else _index(k.step, k)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    n = _dim_size(x, dim)

    def bound(b, default, low, high):
        if b is None:
            return default
        b = cast(b, dtypes.int32) if _valueless(b) else _index(b, k)
        b = where(b < 0, b + n, b) if _valueless(b) else (b + n if b < 0 else b)
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
    x = _tensor(input_)
    if isinstance(begin, _Operators) or isinstance(size, _Operators) or None in x._shape \
            or _runtime_shape(begin) is not None or _runtime_shape(size) is not None:
        # Values or dimensions known only when the graph runs: the Slice op checks them
        # then, as TensorFlow's does.
        return bind(SLICE, (x,) + _slice_vectors(begin, size))
    begin = _int_tuple(begin, "begin", "Slice")
    size = _int_tuple(size, "size", "Slice")
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
            dynamic = _runtime_shape(v)
            v = dynamic[0] if dynamic is not None else convert_to_tensor(
                _int_tuple(v, what, "Slice"), dtype=dtype)
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


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each axis in `axis`."""
    return bind(REVERSE, (_tensor(tensor),), {"axis": _int_tuple(axis, "axis", "ReverseV2")})


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of `params` along `axis` (default 0 or batch_dims) at `indices`.

    >>> import tapeflow as tf
    >>> tf.gather(tf.constant([10, 20, 30]), [2, 0]).numpy()
    array([30, 10], dtype=int32)
    """
    p = _tensor(params)
    i = _tensor(indices)
    if axis is None:
        axis = batch_dims  # as TensorFlow
    if isinstance(axis, (float, np.floating, bool, np.bool_)):
        # TensorFlow passes the axis to the op as a tensor: a float (or bool) one is the
        # op's InvalidArgumentError, not the TypeError of a conversion to int32
        axis = convert_to_tensor(axis)
    axis = _int_scalar(axis, "GatherV2")
    batch_dims = _int_scalar(batch_dims, "GatherV2", "batch_dims")
    return bind(GATHER, (p, i), {"axis": axis, "batch_dims": batch_dims})


def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of `params` at the coordinates in the last axis of `indices`."""
    return bind(GATHER_ND, (_tensor(params), _tensor(indices)),
                {"batch_dims": _int_scalar(batch_dims, "GatherNd", "batch_dims")})


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of `shape` with `updates` added at `indices` (duplicates add up)."""
    return bind(SCATTER_ND, (_tensor(indices), _tensor(updates)),
                {"shape": _int_tuple(shape, "shape")})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the rows of `data` into `num_segments` slots picked by `segment_ids`."""
    return bind(SEGMENT_SUM, (_tensor(data), _tensor(segment_ids)),
                {"num_segments": _int_scalar(num_segments, "UnsortedSegmentSum",
                                             "num_segments")})


def where_indices(condition):
    """The coordinates of the True (non-zero) entries, int64 of shape (n, rank): what
    `tf.where(condition)` returns."""
    return bind(WHERE, (_tensor(condition),))


def shape(input, out_type=dtypes.int32, name=None):
    """The shape of `input` as a 1-D int32 (or `out_type`) tensor."""
    return bind(SHAPE, (_tensor(input),), {"out_type": dtypes.as_dtype(out_type)})


def size(input, out_type=dtypes.int32, name=None):
    """The number of elements of `input`, as an int32 (or `out_type`) scalar."""
    return bind(SIZE, (_tensor(input),), {"out_type": dtypes.as_dtype(out_type)})


def rank(input, name=None):
    """The number of dimensions of `input`, as an int32 scalar."""
    return bind(RANK, (_tensor(input),), {"out_type": dtypes.int32})


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
    return bind(ONE_HOT, (_tensor(indices),),
                {"depth": _int_scalar(depth, "OneHot", "depth"), "on_value": on,
                 "off_value": off, "axis": -1 if axis is None else _int_scalar(axis, "OneHot"),
                 "dtype": dtype})


__all__ = [
    "broadcast_to",
    "concat",
    "expand_dims",
    "gather",
    "gather_nd",
    "one_hot",
    "pad",
    "rank",
    "reshape",
    "reverse",
    "scatter_nd",
    "shape",
    "size",
    "slice",
    "split",
    "squeeze",
    "stack",
    "strided_slice",
    "tensor_scatter_nd_add",
    "tile",
    "transpose",
    "unsorted_segment_sum",
    "unstack",
    "where_indices",
]
