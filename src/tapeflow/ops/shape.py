"""Ops that move elements without arithmetic: reshape, transpose, expand_dims and squeeze,
broadcast_to, stack and unstack, concat and split, tile, pad, reverse, and the shape
queries; with MirrorPadGrad and Pad (paddings as a tensor: Slice's gradient) as table
entries. Reading or writing elements by index is ops/indexing.py."""

import math
import numbers

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..tensor import _Operators, convert_to_tensor
from . import rules
from .dynamic import (
    dynamic_broadcast_to,
    dynamic_reshape,
    input_dims,
    input_shape_vector,
    is_valueless,
    known_ints,
    reshape_to_input,
    reshaped,
    runtime_shape,
    split_sized,
)
from .elementwise import _quiet
from .registry import OpDef, bind, register
from .rules import as_tensor, check_axis, check_int_dtype, int_scalar, int_tuple, unbroadcast

_error = rules.op_error


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
    axis = check_axis("Unpack", axis, len(shape))
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
    return split_sized(dy, [input_dims(ctx, i)[axis] for i in range(len(ctx.shapes))], axis)


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
    axis = check_axis("SplitV", axis, len(shape))
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
    from .indexing import strided_slice
    return strided_slice(dy, tuple(slice(lo, lo + d if d is not None else -hi or None)
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


def _pad_to_infer(input, paddings, hint):
    rank = len(input._shape)
    check_int_dtype("Pad", paddings, "paddings")
    p = paddings._shape
    if len(p) != 2 or p[1] not in (None, 2) or p[0] not in (None, rank):
        raise _error("Pad", f"The first dimension of paddings must be the rank of inputs"
                            f"{rules.kernel_dims(p)} {rules.kernel_dims(input._shape)}")
    known = known_ints(paddings)
    if known is not None:
        pairs = tuple(zip(known[::2], known[1::2]))
        return _check_paddings("Pad", input._shape, pairs), input.dtype
    return (tuple(hint) if hint is not None else (None,) * rank), input.dtype


def _pad_to_kernel(input, paddings, hint):
    pairs = tuple(tuple(row) for row in paddings.tolist())
    _check_paddings("Pad", input.shape, pairs)
    return _pad_kernel(input, np.zeros((), input.dtype), pairs)


def _pad_to_grad(ctx, dy):
    from .indexing import SLICE, slice
    begin = reshape(slice(ctx.paddings, [0, 0], [-1, 1]), [-1])
    return bind(SLICE, (dy, begin, input_shape_vector(ctx, begin.dtype))), None


PAD_TO = register(OpDef(
    name="Pad", args=("input", "paddings"), infer=_pad_to_infer, eager=_pad_to_kernel,
    saves=("paddings",), grad=_pad_to_grad))


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


# -- public wrappers ------------------------------------------------------------------------

def reshape(tensor, shape, name=None):
    """`tensor` with a new shape holding as many elements; one dimension may be -1.

    >>> import tapeflow as tf
    >>> tf.reshape(tf.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    dynamic = runtime_shape(shape)
    if dynamic is not None:
        return dynamic_reshape(as_tensor(tensor), *dynamic)
    x = as_tensor(tensor)
    if is_valueless(x) and isinstance(shape, (list, tuple)) and None in shape and \
            -1 not in shape and list(shape).count(None) == 1:
        # A shape read off a traced tensor (a gradient rule's, say) with one dimension
        # unknown until the graph runs: it is what the others leave.
        shape = [-1 if d is None else d for d in shape]
    shape = int_tuple(shape, "shape", "Reshape")
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
    x = as_tensor(a)
    rank = len(x._shape)
    if perm is None:
        perm = tuple(reversed(range(rank)))
    else:
        perm = tuple(p + rank if p < 0 else p for p in int_tuple(perm, "perm", "Transpose"))
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
    return bind(EXPAND_DIMS, (as_tensor(input),), {"axis": _expand_dims_axis(axis)})


def squeeze(input, axis=None, name=None):
    """Removes dimensions of size 1 (all of them, or those in `axis`)."""
    axis = () if axis is None else int_tuple(axis, "axis")
    return bind(SQUEEZE, (as_tensor(input),), {"axis": axis})


def broadcast_to(input, shape, name=None):
    """Broadcasts `input` to `shape` (NumPy rules), as `tf.broadcast_to`."""
    dynamic = runtime_shape(shape)
    if dynamic is not None:
        return dynamic_broadcast_to(as_tensor(input), *dynamic)
    return bind(BROADCAST_TO, (as_tensor(input),),
                {"shape": int_tuple(shape, "shape", "BroadcastTo")})


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
    axis = int_scalar(axis, "Pack")
    if axis == 0 and isinstance(values, (list, tuple)) and _python_constant(values):
        try:
            return convert_to_tensor(values)
        except (TypeError, ValueError):
            pass  # a ragged list: Pack names the shapes that differ
    return bind(PACK, tuple(_same_kind(values)), {"axis": axis})


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of `value` along `axis`, as a list of tensors."""
    x = as_tensor(value)
    axis = int_scalar(axis, "Unpack")
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
    axis = int_scalar(axis, "ConcatV2")
    if len(values) == 1:
        from .elementwise import identity
        return identity(values[0])
    return bind(CONCAT, tuple(values), {"axis": axis})


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into `num_or_size_splits` equal parts (a Python or
    NumPy integer), or parts of the given sizes (a list or 1-D tensor; one may be -1);
    returns a list of tensors. `num`, when given with sizes, must be their count."""
    x = as_tensor(value)
    axis = int_scalar(axis, "SplitV")
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
    sizes = int_tuple(num_or_size_splits, "num_or_size_splits", "SplitV")
    if num is not None and num != len(sizes):
        raise _error("SplitV", f"size of the split_tensor must be 1-D and have the same "
                               f"elements as outputs got {len(sizes)} != {num}")
    return bind(SPLIT, (x,), {"size_splits": sizes, "axis": axis})


def tile(input, multiples, name=None):
    """Repeats `input` `multiples[i]` times along each axis i."""
    x = as_tensor(input)
    dynamic = runtime_shape(multiples)
    if dynamic is not None:
        return _tile_at_run_time(x, dynamic[0])
    return bind(TILE, (x,), {"multiples": int_tuple(multiples, "multiples", "Tile")})


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
    x = as_tensor(tensor)
    rows = np.asarray(paddings).tolist() if isinstance(paddings, _Operators) else paddings
    mode = mode.upper() if isinstance(mode, str) else mode
    op_name = "PadV2" if mode == "CONSTANT" else "MirrorPad"
    paddings = tuple(int_tuple(row, "paddings", op_name) for row in rows)
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


def reverse(tensor, axis, name=None):
    """Reverses `tensor` along each axis in `axis`."""
    return bind(REVERSE, (as_tensor(tensor),), {"axis": int_tuple(axis, "axis", "ReverseV2")})


def shape(input, out_type=dtypes.int32, name=None):
    """The shape of `input` as a 1-D int32 (or `out_type`) tensor."""
    return bind(SHAPE, (as_tensor(input),), {"out_type": dtypes.as_dtype(out_type)})


def size(input, out_type=dtypes.int32, name=None):
    """The number of elements of `input`, as an int32 (or `out_type`) scalar."""
    return bind(SIZE, (as_tensor(input),), {"out_type": dtypes.as_dtype(out_type)})


def rank(input, name=None):
    """The number of dimensions of `input`, as an int32 scalar."""
    return bind(RANK, (as_tensor(input),), {"out_type": dtypes.int32})


__all__ = [
    "broadcast_to",
    "concat",
    "expand_dims",
    "pad",
    "rank",
    "reshape",
    "reverse",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "tile",
    "transpose",
    "unstack",
]
