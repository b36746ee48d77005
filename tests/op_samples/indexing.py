"""Samplers and error cases for ops/indexing.py."""

import importlib

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

# The module, not the package's functions of the same names.
ix = importlib.import_module("tapeflow.ops.indexing")

from .common import Case, bools, floats, ints, shapes
from .common import constant as _c
from .shape import _any_value


def _slice(draw):
    """Slice with begin and size as int tensors (what a tf.function passes at run time);
    a size of -1 takes the rest of the dimension."""
    shape = shapes(draw, min_side=0)
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    begin = [draw(st.integers(0, d)) for d in shape]
    size = [-1 if draw(st.integers(0, 3)) == 0 else draw(st.integers(0, d - b))
            for d, b in zip(shape, begin)]
    return Case([_any_value(draw, shape), np.array(begin, dtype).reshape(len(shape)),
                 np.array(size, dtype).reshape(len(shape))])


def _slice_index(draw):
    """x[k] for a tensor k: k in range along axis `dim`, negative ones counting from
    the end."""
    shape = shapes(draw, min_dims=1)
    dim = draw(st.integers(0, len(shape) - 1))
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    k = draw(st.integers(-shape[dim], shape[dim] - 1))
    return Case([_any_value(draw, shape), np.asarray(k, dtype)], {"dim": dim})


def _index_entry(draw, d):
    """One index for an axis of size d: an int in range, or a (start, stop, step) slice."""
    if d and draw(st.integers(0, 3)) == 0:
        return draw(st.integers(-d, d - 1))
    bound = st.none() | st.integers(-d - 2, d + 2)
    return (draw(bound), draw(bound), draw(st.sampled_from([None, 1, 2, -1, -2, 3])))


def _slice_key(draw, shape):
    """A normalized StridedSlice key: ints, slices, newaxis (None) and one optional
    Ellipsis, which lets the entries after it index the last axes."""
    rank = len(shape)
    front = draw(st.integers(0, rank))
    ellipsis = draw(st.booleans())
    back = draw(st.integers(0, rank - front)) if ellipsis else 0
    dims = list(range(front)) + list(range(rank - back, rank))
    entries = [_index_entry(draw, shape[i]) for i in dims]
    if ellipsis:
        entries.insert(front, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        entries.insert(draw(st.integers(0, len(entries))), None)
    return tuple(entries)


def _strided_slice(draw):
    shape = shapes(draw)
    return Case([_any_value(draw, shape)], {"key": _slice_key(draw, shape)})


def _strided_slice_grad(draw):
    shape = shapes(draw)
    key = _slice_key(draw, shape)
    out_shape, _ = ix.STRIDED_SLICE.infer(ix._Aval(shape, tf.float64), key=key)
    return Case([floats(draw, out_shape)], {"shape": tuple(shape), "key": key})


def _index_array(draw, shape, limit):
    """Valid indices (int32 or int64) in [0, limit), duplicates likely."""
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    return ints(draw, shape, 0, limit, dtype=dtype)


def _gather(draw):
    p_shape = shapes(draw, min_dims=1)
    batch_dims = draw(st.integers(0, min(1, len(p_shape) - 1)))
    axis = draw(st.integers(batch_dims, len(p_shape) - 1))
    i_shape = tuple(p_shape[:batch_dims]) + tuple(shapes(draw, max_dims=2))
    attrs = {"axis": axis - len(p_shape) if draw(st.booleans()) else axis,
             "batch_dims": batch_dims}
    return Case([floats(draw, p_shape), _index_array(draw, i_shape, p_shape[axis])], attrs)


def _segment_sum(draw):
    ids_shape = shapes(draw, min_dims=1, max_dims=2)
    data_shape = tuple(ids_shape) + tuple(shapes(draw, max_dims=1))
    num = draw(st.integers(1, 4))
    ids = ints(draw, ids_shape, -1, num)  # -1: dropped, as in TensorFlow
    return Case([floats(draw, data_shape), ids], {"num_segments": num})


def _gather_nd(draw):
    p_shape = shapes(draw, min_dims=1)
    depth = draw(st.integers(1, len(p_shape)))
    rows = tuple(shapes(draw, max_dims=2))
    columns = [_index_array(draw, rows + (1,), p_shape[k]) for k in range(depth)]
    indices = np.concatenate(columns, axis=-1).astype(columns[0].dtype)
    return Case([floats(draw, p_shape), indices], {"batch_dims": 0})


def _scatter_target(draw):
    """(shape, int64 index rows into its leading axes, updates for those rows)."""
    shape = tuple(shapes(draw, min_dims=1))
    depth = draw(st.integers(1, len(shape)))
    rows = tuple(shapes(draw, max_dims=2))
    indices = np.concatenate([_index_array(draw, rows + (1,), shape[k]).astype(np.int64)
                              for k in range(depth)], axis=-1)
    return shape, indices, floats(draw, rows + shape[depth:])


def _scatter_nd(draw):
    shape, indices, updates = _scatter_target(draw)
    return Case([indices, updates], {"shape": shape})


def _tensor_scatter_add(draw):
    shape, indices, updates = _scatter_target(draw)
    return Case([floats(draw, shape), indices, updates], {})


def _where(draw):
    shape = shapes(draw, min_dims=1)  # TensorFlow's Where rejects a scalar (ERRORS below)
    if draw(st.booleans()):
        return Case([bools(draw, shape)])
    return Case([ints(draw, shape, -1, 2)])


def _one_hot(draw):
    shape = shapes(draw, max_dims=2)
    depth = draw(st.integers(0, 4))
    attrs = {"depth": depth, "on_value": draw(st.sampled_from([1, 5, 1.5])),
             "off_value": draw(st.sampled_from([0, -1, 0.25])),
             "axis": draw(st.integers(-1, len(shape))),
             "dtype": draw(st.sampled_from([tf.float32, tf.float64, tf.int32]))}
    if attrs["dtype"] is tf.int32:
        attrs["on_value"], attrs["off_value"] = 3, 0
    return Case([ints(draw, shape, -1, depth + 2)], attrs)  # out of range: all off


SAMPLES = {
    "Slice": _slice,
    "StridedSliceIndex": _slice_index,
    "StridedSlice": _strided_slice,
    "StridedSliceGrad": _strided_slice_grad,
    "GatherV2": _gather,
    "UnsortedSegmentSum": _segment_sum,
    "GatherNd": _gather_nd,
    "ScatterNd": _scatter_nd,
    "TensorScatterAdd": _tensor_scatter_add,
    "Where": _where,
    "OneHot": _one_hot,
}


_M = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

ERRORS = [
    # tensor_scatter_nd_add
    (lambda: ix.tensor_scatter_nd_add(_c(_M), np.array([[5]]), _c([[1.0, 2.0, 3.0]])),
     InvalidArgumentError, r"indices\[0\] = \[5\] does not index into shape \[2,3\] "
                           r"\[Op:TensorScatterAdd\]"),
    (lambda: ix.tensor_scatter_nd_add(_c(_M), np.array([[0]]), _c([[1.0, 2.0]])),
     InvalidArgumentError, r"updates has shape \[1, 2\].*\[Op:TensorScatterAdd\]"),
    # indexing
    (lambda: _c([1.0, 2.0])[5], InvalidArgumentError,
     r"slice index 5 of dimension 0 out of bounds. \[Op:StridedSlice\]"),
    (lambda: _c(_M)[0, -4], InvalidArgumentError,
     r"slice index -4 of dimension 1 out of bounds"),
    (lambda: _c(_M)[0, 0, 0], InvalidArgumentError, r"\[Op:StridedSlice\]"),
    (lambda: _c(_M)[..., 0, ...], InvalidArgumentError, r"Multiple ellipses"),
    (lambda: _c(_M)[::0], InvalidArgumentError, r"\[Op:StridedSlice\]"),
    (lambda: _c(_M)[1.0], TypeError, r"Only integers, slices"),
    (lambda: _c(_M)[_c([0, 1])], TypeError, r"Only integers, slices"),
    (lambda: _c(_M)[_c(0.0)], TypeError, r"Only integers, slices"),
    (lambda: _c(_M)["a"], TypeError, r"Only integers, slices"),
    (lambda: _c(_M)[0:1.5], TypeError, r"Only integers, slices"),
    # gather / scatter
    (lambda: ix.gather(_c([1.0, 2.0]), [2]), InvalidArgumentError,
     r"indices\[0\] = 2 is not in \[0, 2\) \[Op:GatherV2\]"),
    (lambda: ix.gather(_c([1.0, 2.0]), [-1]), InvalidArgumentError, r"\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [0], axis=2), InvalidArgumentError, r"\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [0.0]), InvalidArgumentError, r"float32.*\[Op:GatherV2\]"),
    # TF 2.21 passes gather's axis to the op as a tensor (batch_dims, when no axis is
    # given): InvalidArgumentError "Value for attr 'Taxis' of float is not in the list of
    # allowed values: int32, int64" for a float, NumPy float, float tensor, or a bool.
    (lambda: ix.gather(_c(_M), [0], axis=1.0), InvalidArgumentError,
     r"float32.*\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [0], axis=np.float32(1.0)), InvalidArgumentError,
     r"float32.*\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [0], axis=_c(0.5)), InvalidArgumentError,
     r"float32.*\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [0], axis=True), InvalidArgumentError,
     r"bool.*\[Op:GatherV2\]"),
    (lambda: ix.gather(_c(_M), [[0]], batch_dims=0.5), InvalidArgumentError,
     r"float32.*\[Op:GatherV2\]"),
    # TF 2.21: "Value for attr 'Tnumsegments' of float is not in the list of allowed
    # values: int32, int64"
    (lambda: ix.unsorted_segment_sum(_c([1.0, 2.0]), [0, 0], _c(2.0)), InvalidArgumentError,
     r"num_segments.*float32.*\[Op:UnsortedSegmentSum\]"),
    (lambda: ix.gather(_c(_M), [[0], [1], [0]], axis=1, batch_dims=1),
     InvalidArgumentError, r"\[Op:GatherV2\]"),
    (lambda: ix.gather_nd(_c(_M), [[0, 3]]), InvalidArgumentError,
     r"does not index into param shape \[2,3\], node name: GatherNd \[Op:GatherNd\]"),
    (lambda: ix.gather_nd(_c(_M), [[0, 0, 0]]), InvalidArgumentError,
     r"index innermost dimension length must be <= params rank"),
    (lambda: ix.scatter_nd([[0], [4]], _c([1.0, 2.0]), [4]), InvalidArgumentError,
     r"\[Op:ScatterNd\]"),
    (lambda: ix.scatter_nd([[0], [1]], _c([1.0, 2.0, 3.0]), [4]), InvalidArgumentError,
     r"\[Op:ScatterNd\]"),
    (lambda: ix.unsorted_segment_sum(_c([1.0, 2.0]), [0, 3], 2), InvalidArgumentError,
     r"\[Op:UnsortedSegmentSum\]"),
    (lambda: ix.unsorted_segment_sum(_c([1.0, 2.0]), [0, 1, 1], 2), InvalidArgumentError,
     r"\[Op:UnsortedSegmentSum\]"),
    (lambda: ix.one_hot(_c([0.0, 1.0]), 3), InvalidArgumentError, r"\[Op:OneHot\]"),
    (lambda: ix.one_hot([0, 1], 3, axis=3), InvalidArgumentError, r"\[Op:OneHot\]"),
    # TF 2.21: "Value for attr 'Taxis' of float is not in the list of allowed values"
    (lambda: ix.gather(_c(_M), [0], axis=1.0), InvalidArgumentError, r"\[Op:GatherV2\]"),
    # TF 2.21: "WhereOp : Unhandled input dimensions: 0" for a scalar
    (lambda: ix.where_indices(_c(True)), InvalidArgumentError,
     r"Unhandled input dimensions: 0 \[Op:Where\]"),
    (lambda: tf.where(_c(5)), InvalidArgumentError, r"\[Op:Where\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
