"""tf.tensor_scatter_nd_update / _max / _min and tf.dynamic_stitch, written with
ScatterNd, the segment reductions and where, with TensorFlow's gradients (custom
gradients, as TensorFlow registers them for its kernels): an update's gradient is the
output's at its index even when a later duplicate overwrote it; max and min split the
gradient evenly between the tensor's and the updates' values that equal the result."""

import numpy as np

from . import dtypes
from .autodiff.custom import custom_gradient
from .ops import rules
from .ops.creation import range as arange
from .ops.creation import ones_like, zeros, zeros_like
from .ops.elementwise import cast, equal, greater, maximum, minimum, where
from .ops.indexing import gather, gather_nd, scatter_nd
from .ops.reduce import reduce_sum
from .ops.segment_reductions import unsorted_segment_max, unsorted_segment_min
from .ops.shape import concat, expand_dims, reshape, shape


def _flat_positions(indices, tensor):
    """The indices as [n, K] rows, each row's position among the prod(shape[:K]) slices
    of `tensor`, and that count."""
    depth = indices._shape[-1]
    dims = tensor._shape[:depth] if depth is not None else (None,)
    if None in dims:
        raise rules.op_error("TensorScatterUpdate", "the last dimension of indices and the "
                                                    "dimensions it indexes must be known "
                                                    "when the function is traced")
    rows = reshape(indices, [-1, depth])
    strides = np.cumprod((1,) + tuple(dims[:0:-1]))[::-1].astype(indices.dtype._np)
    return rows, reduce_sum(rows * strides, axis=1), int(np.prod(dims, dtype=np.int64))


def _slices(updates, tensor, depth):
    """updates as [n, ...the slice of tensor one index addresses]."""
    rest = tensor._shape[depth:]
    if None in rest:
        return reshape(updates, concat([[-1], shape(tensor)[depth:]], 0))
    return reshape(updates, [-1, *rest])


def _operands(tensor, indices, updates):
    tensor = rules.as_tensor(tensor)
    return tensor, rules.as_tensor(indices), rules.as_tensor(updates, tensor.dtype)


def _check(op_name, tensor, indices, updates):
    rules.check_int_dtype(op_name, indices)
    if updates.dtype != tensor.dtype:
        raise rules.dtype_error(f"cannot compute {op_name} as input #2(zero-based) was "
                                f"expected to be a {tensor.dtype.name} tensor but is a "
                                f"{updates.dtype.name} tensor [Op:{op_name}]", op_name)


def _mask_like(flags, tensor, depth):
    """A [n] or scattered boolean as a mask broadcasting over tensor's slices."""
    extra = len(tensor._shape) - depth
    return reshape(flags, concat([shape(flags), [1] * extra], 0)) if extra else flags


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """`tensor` with the slices at `indices` replaced by `updates`; of duplicate indices
    the last update wins, as on TensorFlow's CPU (tf.tensor_scatter_nd_update)."""
    tensor, indices, updates = _operands(tensor, indices, updates)
    _check("TensorScatterUpdate", tensor, indices, updates)
    rows, positions, count = _flat_positions(indices, tensor)
    depth = rows._shape[1]

    @custom_gradient
    def update(t, u):
        flat = _slices(u, t, depth)
        order = arange(shape(positions)[0], dtype=positions.dtype)
        last = gather(unsorted_segment_max(order, positions, count), positions)
        kept = equal(last, order)
        written = greater(scatter_nd(rows, cast(kept, dtypes.int32), shape(t)[:depth]), 0)
        placed = scatter_nd(rows, where(_mask_like(kept, t, depth), flat, zeros_like(flat)),
                            shape(t))
        out = where(_mask_like(written, t, depth), placed, t)

        def grad(dy):
            touched = greater(scatter_nd(rows, ones_like(positions), shape(t)[:depth]), 0)
            cleared = where(_mask_like(touched, t, depth), zeros_like(dy), dy)
            return cleared, reshape(gather_nd(dy, rows), shape(u))

        return out, grad

    return update(tensor, updates)


def _scatter_extreme(op_name, segment, combine, tensor, indices, updates):
    tensor, indices, updates = _operands(tensor, indices, updates)
    _check(op_name, tensor, indices, updates)
    rows, positions, count = _flat_positions(indices, tensor)
    depth = rows._shape[1]

    @custom_gradient
    def scatter(t, u):
        flat = _slices(u, t, depth)
        extremes = reshape(segment(flat, positions, count), shape(t))
        out = combine(t, extremes)

        def grad(dy):
            # TensorFlow's _TensorScatterMinOrMaxGrad.
            t_hits = cast(equal(t, out), dy.dtype)
            u_hits = cast(equal(flat, gather_nd(out, rows)), dy.dtype)
            shares = t_hits + scatter_nd(rows, u_hits, shape(t))
            return (dy * t_hits / shares,
                    reshape(gather_nd(dy / shares, rows) * u_hits, shape(u)))

        return out, grad

    return scatter(tensor, updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """`tensor` with each slice at `indices` raised to the update where that is larger
    (tf.tensor_scatter_nd_max)."""
    return _scatter_extreme("TensorScatterMax", unsorted_segment_max, maximum, tensor,
                            indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """`tensor` with each slice at `indices` lowered to the update where that is smaller
    (tf.tensor_scatter_nd_min)."""
    return _scatter_extreme("TensorScatterMin", unsorted_segment_min, minimum, tensor,
                            indices, updates)


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i]] = data[m][i], the later of duplicate indices winning, over
    max(indices) + 1 rows (tf.dynamic_stitch); each data's gradient is the merged
    gradient at its indices."""
    from .ops.reduce import reduce_max
    if len(indices) != len(data) or not indices:
        raise ValueError(f"List argument 'indices' to 'DynamicStitch' Op with length "
                         f"{len(indices)} must match length {len(data)} of argument 'data'.")
    index_tensors = [cast(rules.as_tensor(i), dtypes.int32) for i in indices]
    data_tensors = [rules.as_tensor(d) for d in data]
    rows = [reshape(i, [-1]) for i in index_tensors]
    slices = [reshape(d, concat([[-1], shape(d)[len(i._shape):]], 0))
              for i, d in zip(index_tensors, data_tensors)]
    all_rows = concat(rows, 0)
    stacked = concat(slices, 0)
    size = reduce_max(all_rows) + 1
    empty = zeros(concat([[size], shape(stacked)[1:]], 0), dtype=stacked.dtype)
    return tensor_scatter_nd_update(empty, expand_dims(all_rows, 1), stacked)


__all__ = ["dynamic_stitch", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
           "tensor_scatter_nd_update"]
