"""Rearrangements composed of the table's movement and indexing ops, as TensorFlow
composes them: tf.roll, tf.repeat, tf.meshgrid, tf.sequence_mask and tf.boolean_mask.
Their gradients, batching and compiled code come from the ops they are made of."""

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..tensor import Symbolic, _Operators
from . import rules
from .creation import ones, range as _range
from .elementwise import (cast, floordiv, floormod, less, multiply, subtract, where,
                          zeros_like)
from .indexing import gather, scatter_nd, where_indices
from .reduce import reduce_max
from .shape import expand_dims, reshape, shape as _shape, squeeze, stack, transpose


def _static_ints(value, what):
    """A Python list of ints from an int, a list, or a tensor whose value is known."""
    if isinstance(value, _Operators):
        try:
            value = value.numpy()
        except Exception as error:
            raise TypeError(f"{what} must be known when the function is traced, got "
                            f"{rules.describe(value)}") from error
    return [int(v) for v in np.asarray(value).reshape(-1)]


def roll(input, shift, axis, name=None):
    """Elements shifted along `axis` by `shift`, wrapping around (tf.roll); shifts along
    one axis add up.

    >>> import tapeflow as tf
    >>> tf.roll(tf.constant([0, 1, 2, 3, 4]), shift=2, axis=0).numpy()
    array([3, 4, 0, 1, 2], dtype=int32)
    """
    x = rules.as_tensor(input)
    shifts, axes = _static_ints(shift, "shift"), _static_ints(axis, "axis")
    if len(shifts) != len(axes):
        raise rules.op_error("Roll", "shift and axis must have the same size")
    rank = len(x._shape)
    total = {}
    for s, a in zip(shifts, axes):
        if not -rank <= a < rank:
            raise rules.op_error("Roll", f"axis {a} is out of range")
        total[a % rank] = total.get(a % rank, 0) + s
    for a, s in sorted(total.items()):
        n = x._shape[a]
        if n is not None:  # known: the source of each position, as constants
            x = gather(x, np.roll(np.arange(n, dtype=np.int64), s), axis=a)
        else:
            length = _shape(x, out_type=dtypes.int64)[a]
            x = gather(x, floormod(subtract(_range(length, dtype=dtypes.int64), s), length),
                       axis=a)
    return x


def repeat(input, repeats, axis=None, name=None):
    """Each element repeated `repeats` times along `axis` (tf.repeat); with no axis, the
    flattened input's.

    >>> import tapeflow as tf
    >>> tf.repeat(tf.constant([[1, 2], [3, 4]]), repeats=[1, 2], axis=0).numpy()
    array([[1, 2],
           [3, 4],
           [3, 4]], dtype=int32)
    """
    x = rules.as_tensor(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis = rules.int_scalar(axis, "Repeat")
    counts = _static_ints(repeats, "repeats")
    n = x._shape[axis]
    if len(counts) != 1 and n is not None and len(counts) != n:
        raise ValueError(f"Dimensions {n} and {len(counts)} are not compatible")
    for i, count in enumerate(counts):
        if count < 0:
            raise InvalidArgumentError(f"Expected repeats[{i}] >= 0, but got {count} "
                                       f"[Op:Repeat]", op="Repeat")
    if n is None:
        raise TypeError("tf.repeat needs the size of the repeated axis known when the "
                        "function is traced")
    return gather(x, np.repeat(np.arange(n, dtype=np.int64), counts), axis=axis)


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors (tf.meshgrid): 'xy' (Cartesian, the default)
    swaps the first two axes of the outputs, 'ij' (matrix) does not.

    >>> import tapeflow as tf
    >>> x, y = tf.meshgrid([1, 2, 3], [4, 5])
    >>> x.numpy(), y.numpy()
    (array([[1, 2, 3],
           [1, 2, 3]], dtype=int32), array([[4, 4, 4],
           [5, 5, 5]], dtype=int32))
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword argument: {next(iter(kwargs))}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got "
                         f"'{indexing}'")
    ndim = len(args)
    tensors = [reshape(rules.as_tensor(a), [-1]) for a in args]
    sizes = [t._shape[0] for t in tensors]
    if indexing == "xy" and ndim > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    outputs = []
    for i, t in enumerate(tensors):
        place = (1 - i if i < 2 else i) if indexing == "xy" and ndim > 1 else i
        outputs.append(reshape(t, [-1 if k == place else 1 for k in range(ndim)]))
    if not outputs:
        return []
    # TensorFlow broadcasts by a product with ones of the first input's dtype.
    grid = ones([-1 if s is None else s for s in sizes], dtype=outputs[0].dtype) \
        if None not in sizes else None
    if grid is None:
        raise TypeError("tf.meshgrid needs its inputs' sizes known when the function is "
                        "traced")
    return [multiply(x, grid) for x in outputs]


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[i..., j] = j < lengths[i...] for j < maxlen (tf.sequence_mask); maxlen is the
    longest length when not given.

    >>> import tapeflow as tf
    >>> tf.sequence_mask([1, 3], 4).numpy()
    array([[ True, False, False, False],
           [ True,  True,  True, False]])
    """
    lengths = rules.as_tensor(lengths)
    maxlen = reduce_max(lengths) if maxlen is None else rules.as_tensor(maxlen)
    if maxlen._shape:
        raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received "
                         f"`maxlen` = {maxlen} with shape '{list(maxlen._shape)}' instead")
    positions = _range(0, maxlen, 1, dtype=maxlen.dtype)
    mask = less(positions, cast(expand_dims(lengths, -1), maxlen.dtype))
    dtype = dtypes.as_dtype(dtype)
    return mask if dtype is dtypes.bool else cast(mask, dtype)


def boolean_mask(tensor, mask, axis=None, name=None):
    """The entries of `tensor` where `mask` is True, the mask covering the dimensions
    from `axis` (0) on, flattened into one (tf.boolean_mask).

    >>> import tapeflow as tf
    >>> tf.boolean_mask(tf.constant([[1, 2], [3, 4]]), [True, False]).numpy()
    array([[1, 2]], dtype=int32)
    """
    x, mask = rules.as_tensor(tensor), rules.as_tensor(mask)
    mask_rank = len(mask._shape)
    if mask_rank == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else rules.int_scalar(axis, "boolean_mask")
    axis %= max(len(x._shape), 1)
    covered = x._shape[axis:axis + mask_rank]
    if len(covered) != mask_rank or any(
            a is not None and b is not None and a != b for a, b in zip(covered, mask._shape)):
        raise ValueError(f"Shapes {tuple(covered)} and {tuple(mask._shape)} are incompatible")
    if mask_rank > 1:
        x = reshape(x, [-1 if d is None else d for d in x._shape[:axis]] + [-1]
                    + [-1 if d is None else d for d in x._shape[axis + mask_rank:]])
        mask = reshape(mask, [-1])
    return gather(x, squeeze(where_indices(mask), axis=[1]), axis=axis)


def unravel_index(indices, dims, name=None):
    """The coordinates, in an array of shape `dims`, of flat `indices` (tf.unravel_index):
    one row per dimension.

    >>> import tapeflow as tf
    >>> tf.unravel_index([5, 7], [3, 4]).numpy()
    array([[1, 1],
           [1, 3]], dtype=int32)
    """
    indices, dims = rules.as_tensors(indices, dims)
    sizes = _static_ints(dims, "dims")
    total = int(np.prod(sizes))
    if not isinstance(indices, Symbolic):
        values = np.asarray(indices.numpy())
        if values.size and (values.min() < 0 or values.max() >= total):
            raise InvalidArgumentError("index is out of bound as with dims [Op:UnravelIndex]",
                                       op="UnravelIndex")
    rows, rest = [], indices
    for size in reversed(sizes):
        rows.append(floormod(rest, size))
        rest = floordiv(rest, size)
    return stack(rows[::-1])


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):
    """Each batch entry's first seq_lengths[b] elements along `seq_axis` reversed, the rest
    left in place (tf.reverse_sequence).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(8), [2, 4])
    >>> tf.reverse_sequence(x, [2, 4], seq_axis=1, batch_axis=0).numpy()
    array([[1, 0, 2, 3],
           [7, 6, 5, 4]], dtype=int32)
    """
    x, lengths = rules.as_tensor(input), rules.as_tensor(seq_lengths)
    rank = len(x._shape)
    seq_axis = rules.int_scalar(seq_axis, "ReverseSequence") % rank
    batch_axis = rules.int_scalar(0 if batch_axis is None else batch_axis,
                                  "ReverseSequence") % rank
    if seq_axis == batch_axis:
        raise rules.op_error("ReverseSequence", f"seq_dim must not equal batch_dim: {seq_axis}")
    # batch first, sequence second: gather each entry's positions along its sequence
    perm = [batch_axis, seq_axis] + [a for a in range(rank) if a not in (batch_axis, seq_axis)]
    moved = transpose(x, perm)
    length = cast(lengths, dtypes.int64)
    positions = _range(_shape(moved, out_type=dtypes.int64)[1], dtype=dtypes.int64)
    inside = less(expand_dims(positions, 0), expand_dims(length, 1))
    source = where(inside, expand_dims(length, 1) - 1 - expand_dims(positions, 0),
                   expand_dims(positions, 0) + zeros_like(expand_dims(length, 1)))
    gathered = gather(moved, source, axis=1, batch_dims=1)
    return transpose(gathered, list(np.argsort(perm)))


def invert_permutation(x, name=None):
    """The inverse permutation: y[x[i]] = i (tf.math.invert_permutation).

    >>> import tapeflow as tf
    >>> tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy()
    array([2, 4, 3, 0, 1], dtype=int32)
    """
    x = rules.as_tensor(x)
    if len(x._shape) != 1:
        raise rules.op_error("InvertPermutation", f"invert_permutation expects a 1D vector, "
                                                  f"got {rules.describe(x)}")
    if not isinstance(x, Symbolic):
        values = x.numpy()
        seen = set()
        for v in values.tolist():
            if not 0 <= v < values.size:
                raise rules.op_error("InvertPermutation", f"{v} is not between 0 and "
                                                          f"{values.size}")
            if v in seen:
                raise rules.op_error("InvertPermutation", f"{v} is duplicated in the input.")
            seen.add(v)
    n = _shape(x, out_type=x.dtype)
    return scatter_nd(expand_dims(x, 1), _range(n[0], dtype=x.dtype), n)


__all__ = ["roll", "repeat", "meshgrid", "sequence_mask", "boolean_mask", "unravel_index",
           "reverse_sequence", "invert_permutation"]
