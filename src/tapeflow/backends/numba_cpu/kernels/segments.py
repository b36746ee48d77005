"""Kernels of the segment reductions (ops/segment_reductions.py): checks of sorted ids,
and one fold for every kind (0 sum, 1 mean, 2 max, 3 min, 4 prod). Errors raise their
node's code, as arrays.py's kernels do."""

import numpy as np

from . import array_helper as _array_jit
from .allocation import full_array, zeros_array
from .scalar_math import maximum, minimum


@_array_jit
def sorted_segments(ids, rows, size_code, negative_code, order_code):
    """The number of segments of sorted `ids` (last id + 1), after TensorFlow's checks."""
    if ids.shape[0] != rows:
        raise ValueError(size_code)
    if ids.shape[0] == 0:
        return 0
    if ids[0] < 0:
        raise ValueError(negative_code, ids[0])
    for j in range(1, ids.shape[0]):
        if ids[j] < ids[j - 1]:
            raise ValueError(order_code)
    return ids[ids.shape[0] - 1] + 1


@_array_jit
def segment_reduce(data, ids, n, kind, empty, zero_if_empty, range_code):
    """data: (rows, inner); the (n, inner) fold of the rows into their segments. Negative
    ids drop their row; an id past n raises; an empty segment holds `empty`, or 0 with
    `zero_if_empty`; a mean divides by the count (truncating integers, as TensorFlow)."""
    for j in range(ids.shape[0]):
        if ids[j] >= n:
            raise IndexError(range_code, ids[j], n, j)
    out = full_array((n, data.shape[1]), empty, data.dtype)
    counts = zeros_array(n, np.int64)
    for j in range(ids.shape[0]):
        k = ids[j]
        if k < 0:
            continue
        counts[k] += 1
        for c in range(data.shape[1]):
            v = data[j, c]
            if kind == 2:
                out[k, c] = maximum(out[k, c], v)
            elif kind == 3:
                out[k, c] = minimum(out[k, c], v)
            elif kind == 4:
                out[k, c] = out[k, c] * v
            else:
                out[k, c] = out[k, c] + v
    for k in range(n):
        if counts[k] == 0 and zero_if_empty:
            out[k, :] = 0
        elif kind == 1 and counts[k] > 1:
            for c in range(data.shape[1]):
                out[k, c] = out[k, c] / counts[k]
    return out
