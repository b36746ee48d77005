"""Reductions on the device (Sum, Mean, Max, Min, Prod, All, Any over any axes), as
"reduce" kernels (kernels.py): each output element's reduced block is split into
`parts` interleaved slices, one thread each, when there are too few outputs to fill the
GPU; a second launch combines the slices. Float32 sums accumulate in float64, as the
NumPy kernel does for long axes, so both agree to float32 rounding."""

import math

from ... import dtypes
from ...device_tensor import on_device
from ...ops.reduce import ALL, ANY, MAX, MEAN, MIN, PROD, SUM
from . import device, kernels
from .elementwise import SUPPORTED, _strides


def _accumulator(kind, dtype):
    if kind in ("sum", "mean"):
        if dtype.is_floating:
            return "float64"
        return "int64" if dtype.is_integer else dtype.name
    if kind == "prod" and dtype.is_integer:
        return "int64"  # wraps as the integer type does once stored
    return dtype.name


class Reduction:
    """A reduction entry (its `reduction` flag says how it accumulates)."""

    def run(self, op, inputs, attrs, shape, dtype, index):
        (x,) = inputs
        if x.dtype.name not in SUPPORTED:
            return None
        kind = op.reduction
        axis = tuple(attrs["axis"])
        in_shape = x._shape
        strides = _strides(in_shape)
        kept = [d for d in range(len(in_shape)) if d not in axis]
        kshape = tuple(in_shape[d] for d in kept)
        rshape = tuple(in_shape[d] for d in axis)
        m, k = math.prod(kshape), math.prod(rshape)
        out = device.empty(m, dtype)
        if m:
            acc = _accumulator(kind, x.dtype)
            source = device.device_array_of(x, index)
            blocks, threads = device.launch_shape(m)
            total = blocks * threads
            parts = 1 if m >= total else max(1, min(k, total // m))
            first = (kind, x.dtype.name, acc, dtype.name if parts == 1 else acc,
                     len(kshape), len(rshape), parts == 1)
            partial = out if parts == 1 else device.empty(m * parts, dtypes.as_dtype(acc))
            self._launch(first, partial, m, parts, k, kshape,
                         tuple(strides[d] for d in kept), rshape,
                         tuple(strides[d] for d in axis), source, k)
            if parts > 1:
                self._launch((kind, acc, acc, dtype.name, 1, 1, True), out, m, 1, parts,
                             (m,), (parts,), (parts,), (1,), partial, k)
        return on_device(out, shape, dtype, index)

    @staticmethod
    def _launch(key_tail, out, m, parts, k, kshape, kstride, rshape, rstride, source, count):
        blocks, threads = device.launch_shape(m * parts)
        kernels.kernel(("reduce",) + key_tail)[blocks, threads](
            out, m, parts, k, kshape, kstride, rshape, rstride, source, count)


def attach(lowers):
    lowers(SUM, MEAN, MAX, MIN, PROD, ALL, ANY)(Reduction())
