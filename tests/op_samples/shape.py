"""Samplers and error cases for ops/shape.py."""

import importlib

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

# The module, not the `shape` function that tapeflow.ops re-exports under its name.
sh = importlib.import_module("tapeflow.ops.shape")

from .common import Case, bools, floats, full_and_broadcast, ints, shapes
from .common import constant as _c


def _any_value(draw, shape):
    """Mostly float64 (gradients are checked on those), sometimes int32 or bool."""
    kind = draw(st.sampled_from(["float64", "float64", "float64", "int32", "bool"]))
    if kind == "bool":
        return bools(draw, shape)
    if kind == "int32":
        return ints(draw, shape)
    return floats(draw, shape)


def _axis(draw, rank):
    """An axis in [-rank, rank): negative ones count from the end."""
    return draw(st.integers(-rank, rank - 1))


def _reshape(draw):
    shape = shapes(draw, min_side=0 if draw(st.integers(0, 6)) == 0 else 1)
    dims = list(shape)
    draw(st.randoms()).shuffle(dims)
    target = []
    for d in dims:  # merge some neighbours, keep the element count
        if target and draw(st.booleans()):
            target[-1] *= d
        else:
            target.append(d)
    if draw(st.booleans()):
        target.insert(draw(st.integers(0, len(target))), 1)
    if target and all(target) and draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    return Case([_any_value(draw, shape)], {"shape": tuple(target)})


def _transpose(draw):
    shape = shapes(draw)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return Case([_any_value(draw, shape)], {"perm": perm})


def _expand_dims(draw):
    shape = shapes(draw)
    axis = draw(st.integers(-len(shape) - 1, len(shape)))
    return Case([_any_value(draw, shape)], {"axis": axis})


def _squeeze(draw):
    shape = tuple(d if draw(st.booleans()) else 1 for d in shapes(draw))
    ones = [i for i, d in enumerate(shape) if d == 1]
    axis = ()
    if ones and draw(st.booleans()):
        chosen = draw(st.sets(st.sampled_from(ones), min_size=1))
        axis = tuple(i - len(shape) if draw(st.booleans()) else i for i in sorted(chosen))
    return Case([_any_value(draw, shape)], {"axis": axis})


def _broadcast_to(draw):
    full, part = full_and_broadcast(draw)
    return Case([_any_value(draw, part)], {"shape": tuple(full)})


def _pack(draw):
    shape = shapes(draw)
    n = draw(st.integers(1, 3))
    rank = len(shape) + 1
    if draw(st.integers(0, 4)) == 0:
        return Case([ints(draw, shape) for _ in range(n)], {"axis": _axis(draw, rank)})
    return Case([floats(draw, shape) for _ in range(n)], {"axis": _axis(draw, rank)})


def _unpack(draw):
    # Unpack's output count is the size of `axis`; the table's n_out (2) fixes it here.
    shape = list(shapes(draw, min_dims=1))
    axis = _axis(draw, len(shape))
    shape[axis] = 2
    return Case([_any_value(draw, tuple(shape))], {"axis": axis})


def _concat(draw):
    shape = list(shapes(draw, min_dims=1))
    axis = _axis(draw, len(shape))
    parts = []
    for _ in range(draw(st.integers(2, 3))):
        shape[axis] = draw(st.integers(0, 3))
        parts.append(floats(draw, tuple(shape)))
    return Case(parts, {"axis": axis})


def _split(draw):
    # SplitV's output count is len(size_splits); the table's n_out (2) fixes it here.
    shape = list(shapes(draw, min_dims=1))
    axis = _axis(draw, len(shape))
    first, second = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    shape[axis] = first + second
    sizes = [first, second]
    if draw(st.booleans()):
        sizes[draw(st.integers(0, 1))] = -1
    return Case([floats(draw, tuple(shape))], {"size_splits": tuple(sizes), "axis": axis})


def _tile(draw):
    shape = shapes(draw)
    multiples = tuple(draw(st.integers(0 if draw(st.integers(0, 5)) == 0 else 1, 3))
                      for _ in shape)
    return Case([_any_value(draw, shape)], {"multiples": multiples})


def _paddings(draw, shape, limit=None):
    """(lo, hi) per axis; with `limit`, each is at most dim - limit (MirrorPad's rule)."""
    def side(d):
        top = 2 if limit is None else max(min(2, d - limit), 0)
        return draw(st.integers(0, top))
    return tuple((side(d), side(d)) for d in shape)


def _pad(draw):
    shape = shapes(draw)
    x = _any_value(draw, shape)
    value = np.asarray(_any_value(draw, ()), dtype=x.dtype)
    # TensorFlow gives constant_values no gradient, so only the input's is checked.
    return Case([x, value], {"paddings": _paddings(draw, shape)},
                wrt=(0,) if x.dtype.kind == "f" else ())


def _pad_with_tensor(draw):
    """Pad (zeros) with the paddings an int tensor: the gradient of a Slice."""
    shape = shapes(draw)
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    paddings = np.array(_paddings(draw, shape), dtype).reshape(len(shape), 2)
    hint = tuple(d + lo + hi for d, (lo, hi) in zip(shape, paddings.tolist()))
    return Case([_any_value(draw, shape), paddings],
                {"hint": hint if draw(st.booleans()) else None})


def _mirror_attrs(draw, shape):
    mode = draw(st.sampled_from(["REFLECT", "SYMMETRIC"]))
    return {"paddings": _paddings(draw, shape, limit=1 if mode == "REFLECT" else 0),
            "mode": mode}


def _mirror_pad(draw):
    shape = shapes(draw)
    return Case([floats(draw, shape)], _mirror_attrs(draw, shape))


def _mirror_pad_grad(draw):
    shape = shapes(draw)
    attrs = _mirror_attrs(draw, shape)
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(shape, attrs["paddings"]))
    return Case([floats(draw, padded)], attrs)


def _reverse(draw):
    shape = shapes(draw)
    axes = draw(st.sets(st.integers(0, max(len(shape) - 1, 0)), max_size=len(shape)))
    axis = tuple(a - len(shape) if draw(st.booleans()) else a for a in sorted(axes))
    return Case([_any_value(draw, shape)], {"axis": axis})


def _query(draw):
    attrs = {"out_type": draw(st.sampled_from([tf.int32, tf.int64]))}
    return Case([_any_value(draw, shapes(draw, min_side=0))], attrs)


def _rank(draw):
    return Case([_any_value(draw, shapes(draw))], {"out_type": tf.int32})


SAMPLES = {
    "Reshape": _reshape,
    "Transpose": _transpose,
    "ExpandDims": _expand_dims,
    "Squeeze": _squeeze,
    "BroadcastTo": _broadcast_to,
    "Pack": _pack,
    "Unpack": _unpack,
    "ConcatV2": _concat,
    "SplitV": _split,
    "Tile": _tile,
    "PadV2": _pad,
    "Pad": _pad_with_tensor,
    "MirrorPad": _mirror_pad,
    "MirrorPadGrad": _mirror_pad_grad,
    "ReverseV2": _reverse,
    "Shape": _query,
    "Size": _query,
    "Rank": _rank,
}



_M = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

ERRORS = [
    # reshape
    (lambda: sh.reshape(_c(_M), [4]), InvalidArgumentError,
     r"Input to reshape is a tensor with 6 values, but the requested shape has 4 \[Op:Reshape"),
    (lambda: sh.reshape(_c(_M), [4, -1]), InvalidArgumentError,
     r"requested shape requires a multiple of 4 \[Op:Reshape\]"),
    (lambda: sh.reshape(_c(_M), [-1, -1]), InvalidArgumentError,
     r"Only one input size may be -1.*\[Op:Reshape\]"),
    # A shape holding floats reaches TensorFlow's op as a float tensor: "Value for attr
    # 'Tshape' of float is not in the list of allowed values: int32, int64" (TF 2.21).
    (lambda: sh.reshape(_c(_M), [2.5]), InvalidArgumentError, r"shape.*\[Op:Reshape\]"),
    (lambda: sh.reshape(_c(_M), [2.0, 3]), InvalidArgumentError, r"\[2\.0, 3\].*\[Op:Reshape\]"),
    (lambda: sh.reshape(_c(_M), tf.constant([2.0, 3.0])), InvalidArgumentError,
     r"\[Op:Reshape\]"),
    (lambda: sh.reshape(_c(_M), "6"), InvalidArgumentError, r"\[Op:Reshape\]"),
    # TF 2.21: a 0 in the requested shape leaves the -1 the input's non-zero count (6),
    # then the sizes disagree: "Input to reshape is a tensor with 6 values, but the
    # requested shape has 0".
    (lambda: sh.reshape(_c(_M), [0, -1]), InvalidArgumentError,
     r"tensor with 6 values, but the requested shape has 0 \[Op:Reshape\]"),
    # transpose, expand_dims, squeeze, broadcast_to
    (lambda: sh.transpose(_c(_M), [0, 1, 2]), InvalidArgumentError, r"\[Op:Transpose\]"),
    (lambda: sh.transpose(_c(_M), [1, 1]), InvalidArgumentError, r"\[Op:Transpose\]"),
    # A negative entry counts from the end once (TF 2.21: [-1, 1] is "0 is missing from
    # {1,1}", [-3, 0] "-1 is out of range [0 .. 2)").
    (lambda: sh.transpose(_c(_M), [-1, 1]), InvalidArgumentError, r"\[Op:Transpose\]"),
    (lambda: sh.transpose(_c(_M), [-3, 0]), InvalidArgumentError, r"\[Op:Transpose\]"),
    (lambda: sh.transpose(_c(_M), [1.0, 0.0]), InvalidArgumentError, r"\[Op:Transpose\]"),
    (lambda: sh.expand_dims(_c(_M), 3), InvalidArgumentError,
     r"Tried to expand dim index 3 for tensor with 2 dimensions.*\[Op:ExpandDims\]"),
    # TF 2.21: "'dim' must be a tensor with a single value [Op:ExpandDims]" for a list of
    # two or none; TypeError "Cannot convert 1.0 to EagerTensor of dtype int32" for a
    # float; InvalidArgumentError (attr 'Tdim' of float) for a float tensor.
    (lambda: sh.expand_dims(_c(_M), [0, 1]), InvalidArgumentError,
     r"'dim' must be a tensor with a single value.*\[Op:ExpandDims\]"),
    (lambda: sh.expand_dims(_c(_M), []), InvalidArgumentError,
     r"'dim' must be a tensor with a single value.*\[Op:ExpandDims\]"),
    (lambda: sh.expand_dims(_c(_M), 1.0), TypeError, r"Cannot convert 1\.0.*ExpandDims"),
    (lambda: sh.expand_dims(_c(_M), _c(1.0)), InvalidArgumentError,
     r"float32.*\[Op:ExpandDims\]"),
    (lambda: sh.squeeze(_c(_M), axis=0), InvalidArgumentError,
     r"Can not squeeze dim\[0\], expected a dimension of 1, got 2 \[Op:Squeeze\]"),
    (lambda: sh.squeeze(_c([[1.0]]), axis=2), InvalidArgumentError, r"\[Op:Squeeze\]"),
    (lambda: sh.broadcast_to(_c([1, 2, 3]), [2, 4]), InvalidArgumentError,
     r"Unable to broadcast tensor of shape \[3\] to tensor of shape \[2, 4\] \[Op:"),
    (lambda: sh.broadcast_to(_c([1.0]), [2.0, 2]), InvalidArgumentError,
     r"\[Op:BroadcastTo\]"),
    # stack / unstack / concat / split
    (lambda: sh.stack([_c([1.0, 2.0]), _c([1.0])]), InvalidArgumentError,
     r"Shapes of all inputs must match.*\[Op:Pack\]"),
    (lambda: sh.stack([_c([1.0]), _c([1])]), InvalidArgumentError,
     r"float32.*int32.*\[Op:Pack\]"),
    (lambda: sh.stack([_c([1.0]), _c([2.0])], axis=3), ValueError, r"axis"),
    # TF 2.21 converts a list of Python numbers as one constant, and refuses bools mixed
    # with numbers: TypeError "Cannot convert 1 to EagerTensor of dtype bool".
    (lambda: sh.stack([True, 1]), TypeError, r"Cannot convert 1 to EagerTensor of dtype bool"),
    (lambda: sh.stack([[1, 2], [3]]), InvalidArgumentError,
     r"Shapes of all inputs must match.*\[Op:Pack\]"),
    (lambda: sh.stack([_c([1.0]), _c([2.0])], axis=[0]), TypeError, r"axis of Pack"),
    (lambda: sh.unstack(_c(1.0)), ValueError, r"scalar"),
    (lambda: sh.unstack(_c(_M), axis=2), InvalidArgumentError, r"\[Op:Unpack\]"),
    (lambda: sh.unstack(_c(_M), num=3), InvalidArgumentError, r"\[Op:Unpack\]"),
    (lambda: sh.concat([_c(_M), _c([[1.0]])], axis=0), InvalidArgumentError,
     r"Dimension 1 in both shapes must be equal.*\[Op:ConcatV2\]"),
    (lambda: sh.concat([_c(_M), _c([1.0])], axis=0), InvalidArgumentError,
     r"Ranks of all input tensors should match.*\[Op:ConcatV2\]"),
    (lambda: sh.concat([_c(_M), _c(_M)], axis=2), InvalidArgumentError,
     r"Expected concatenating dimensions in the range \[-2, 2\), but got 2"),
    (lambda: sh.concat([_c(1.0), _c(2.0)], axis=0), InvalidArgumentError, r"scalars"),
    (lambda: sh.concat([_c([1.0]), _c([1])], axis=0), InvalidArgumentError,
     r"\[Op:ConcatV2\]"),
    # TF 2.21: InvalidArgumentError ("OpKernel 'ConcatV2' has constraint on attr 'T' not
    # in NodeDef '[N=0, ...]'"); TypeError "Cannot convert 0.0 to EagerTensor of dtype
    # int32" for a float axis.
    (lambda: sh.concat([], 0), InvalidArgumentError, r"empty list \[Op:ConcatV2\]"),
    (lambda: sh.concat([_c([1.0]), _c([2.0])], axis=0.0), TypeError,
     r"Cannot convert 0\.0.*axis of ConcatV2"),
    # An axis tensor that is not an integer reaches the op: TF 2.21 InvalidArgumentError
    # "Value for attr 'Tidx' of float is not in the list of allowed values: int32, int64"
    # (of bool, for a bool tensor); SplitV "cannot compute Split as input #0(zero-based)
    # was expected to be a int32 tensor but is a float tensor".
    (lambda: sh.concat([_c([1.0]), _c([2.0])], axis=_c(0.5)), InvalidArgumentError,
     r"axis must be int32 or int64, got float32\[\] \[Op:ConcatV2\]"),
    (lambda: sh.concat([_c([1.0]), _c([2.0])], axis=_c(0.0)), InvalidArgumentError,
     r"float32.*\[Op:ConcatV2\]"),
    (lambda: sh.concat([_c([1.0]), _c([2.0])], axis=_c(True)), InvalidArgumentError,
     r"bool.*\[Op:ConcatV2\]"),
    (lambda: sh.split(_c(_M), 3, axis=_c(1.0)), InvalidArgumentError,
     r"float32.*\[Op:SplitV\]"),
    (lambda: sh.split(_c(_M), 2, axis=1), InvalidArgumentError,
     r"Number of ways to split should evenly divide the split dimension.*\[Op:Split\]"),
    (lambda: sh.split(_c(_M), [1, 1], axis=1), InvalidArgumentError, r"\[Op:SplitV\]"),
    (lambda: sh.split(_c(_M), [-1, -1], axis=1), InvalidArgumentError, r"\[Op:SplitV\]"),
    (lambda: sh.split(_c(_M), [1, 1], axis=2), InvalidArgumentError, r"\[Op:SplitV\]"),
    # TF 2.21: `num` must be the number of sizes ("size of the split_tensor must be 1-D
    # and have the same elements as outputs got 2 != 3"); a rank-0 tensor (or float) is a
    # ValueError; float sizes an InvalidArgumentError (attr 'Tlen' of float).
    (lambda: sh.split(_c(_M), [1, 2], axis=1, num=3), InvalidArgumentError,
     r"same elements as outputs got 2 != 3 \[Op:SplitV\]"),
    (lambda: sh.split(_c(_M), _c(3), axis=1), ValueError,
     r"Rank-0 tensors are not supported as the num_or_size_splits argument"),
    (lambda: sh.split(_c(_M), np.array(3), axis=1), ValueError, r"Rank-0 tensors"),
    (lambda: sh.split(_c(_M), 3.0, axis=1), ValueError, r"Rank-0 tensors"),
    (lambda: sh.split(_c(_M), [3.0], axis=1), InvalidArgumentError, r"\[Op:SplitV\]"),
    (lambda: sh.split(_c(_M), 3, axis=1.0), TypeError, r"axis of SplitV"),
    # tile, pad
    (lambda: sh.tile(_c(_M), [2]), InvalidArgumentError,
     r"Expected multiples argument to be a vector of length 2 but got length 1"),
    (lambda: sh.tile(_c(_M), [1, -1]), InvalidArgumentError, r"\[Op:Tile\]"),
    (lambda: sh.tile(_c(_M), [2.0, 1.0]), InvalidArgumentError, r"\[Op:Tile\]"),
    (lambda: sh.pad(_c(_M), [[1, 1]]), InvalidArgumentError, r"\[Op:PadV2\]"),
    (lambda: sh.pad(_c(_M), [[1, -1], [0, 0]]), InvalidArgumentError,
     r"Paddings must be non-negative.*\[Op:PadV2\]"),
    (lambda: sh.pad(_c(_M), [[0, 0], [0, 3]], mode="REFLECT"), InvalidArgumentError,
     r"\[Op:MirrorPad\]"),
    (lambda: sh.pad(_c(_M), [[0, 0], [0, 4]], mode="symmetric"), InvalidArgumentError,
     r"\[Op:MirrorPad\]"),
    (lambda: sh.pad(_c(_M), [[0, 0], [0, 1]], mode="WRAP"), ValueError, r"mode"),
    (lambda: sh.pad(_c([1, 2]), [[1, 1]], constant_values=0.5), TypeError, r"int32"),
    (lambda: sh.pad(_c([1.0]), [[1.0, 1]]), InvalidArgumentError, r"\[Op:PadV2\]"),
    # reverse
    (lambda: sh.reverse(_c(_M), [2]), InvalidArgumentError, r"\[Op:ReverseV2\]"),
    (lambda: sh.reverse(_c(_M), [0, -2]), InvalidArgumentError,
     r"specified more than once.*\[Op:ReverseV2\]"),
    (lambda: sh.reverse(_c(_M), [0.0]), InvalidArgumentError, r"\[Op:ReverseV2\]"),
    # queries: TF 2.21 "Value for attr 'out_type' of float is not in the list of allowed
    # values: int32, int64"
    (lambda: sh.shape(_c(_M), out_type=tf.float32), InvalidArgumentError,
     r"out_type.*float32.*int32, int64 \[Op:Shape\]"),
    (lambda: sh.shape(_c(_M), out_type=tf.bool), InvalidArgumentError, r"\[Op:Shape\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
