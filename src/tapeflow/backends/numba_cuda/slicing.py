"""StridedSlice and StridedSliceGrad on the device. A slice spec (integers, slices, None,
Ellipsis: NumPy's basic indexing) takes a view of its input: an offset and a stride per
output dimension, which NumPy computes for us on a probe array of the input's shape
whose memory is never read. StridedSlice reads the input at those positions; its
gradient writes dy there into zeros (a basic slice never takes a position twice, so the
writes do not race)."""

import math

import numpy as np

from ...device_tensor import on_device
from ...ops.indexing import STRIDED_SLICE, STRIDED_SLICE_GRAD, numpy_key
from . import device, elementwise, kernels
from .elementwise import SUPPORTED


def view_of(shape, key):
    """(offset, shape, strides) in elements of the view that slice spec `key` takes of a
    C-ordered array of `shape`, the view's rank at least 1."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    # One byte of memory, with the strides of `shape` counted in elements: indexing it
    # only does the arithmetic of the view. A new last axis keeps the result a view when
    # the key takes a single element (NumPy would read that element).
    base = np.zeros(1, np.uint8)
    probe = np.lib.stride_tricks.as_strided(base, shape=shape, strides=strides[::-1])
    key = numpy_key(key)
    view = probe[(*key, None) if Ellipsis in key else (*key, Ellipsis, None)]
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if view.ndim == 1:
        return offset, (1,), (0,)
    return offset, view.shape[:-1], view.strides[:-1]


def _key(kind, dtype, rank):
    """("slice", text, types): `out[i] = inp[at]` (kind "read") or `out[at] = inp[i]`
    ("write"), for `at` the position of element i of the view in the sliced array."""
    lines = ["def kernel(n, offset, shape, strides, out, inp):",
             "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):"]
    kernels._unravel(lines, "i", rank, "shape", "q")
    lines.append(f"        at = offset + {kernels._offset(rank, 'q', 'strides')}")
    lines.append("        out[i] = inp[at]" if kind == "read" else "        out[at] = inp[i]")
    types = ("int64", "int64", f"ints{rank}", f"ints{rank}") + (f"array:{dtype.name}",) * 2
    return ("slice", "\n".join(lines) + "\n", types)


class StridedSlice:
    def run(self, op, inputs, attrs, shape, dtype, index):
        (x,) = inputs
        if dtype.name not in SUPPORTED:
            return None
        n = math.prod(shape)
        out = device.empty(n, dtype)
        if n:
            offset, view_shape, strides = view_of(x._shape, attrs["key"])
            device.launch(kernels.kernel(_key("read", dtype, len(view_shape))), n, n, offset,
                          view_shape, strides, out, device.device_array_of(x, index))
        return on_device(out, shape, dtype, index)


class StridedSliceGrad:
    def run(self, op, inputs, attrs, shape, dtype, index):
        (dy,) = inputs
        if dtype.name not in SUPPORTED:
            return None
        taken = math.prod(dy._shape)
        out = elementwise.zeros(math.prod(shape), dtype)
        if taken:
            offset, view_shape, strides = view_of(tuple(shape), attrs["key"])
            device.launch(kernels.kernel(_key("write", dtype, len(view_shape))), taken,
                          taken, offset, view_shape, strides, out,
                          device.device_array_of(dy, index))
        return on_device(out, shape, dtype, index)


def attach(lowers):
    lowers(STRIDED_SLICE)(StridedSlice())
    lowers(STRIDED_SLICE_GRAD)(StridedSliceGrad())
