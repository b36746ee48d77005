"""Reductions on the device (Sum, Mean, Max, Min, Prod, All, Any over any axes), as
"reduce" kernels (kernels.py). When there are too few outputs to fill the GPU, each
output's block is split into `parts` interleaved slices, one thread each, and further
launches reduce the slices the same way, at least _GRAIN times fewer each time, until
one value per output is left. Float32 sums accumulate in float64, as the NumPy kernel
does for long axes, so both agree to float32 rounding."""

import math

from ... import dtypes
from ...device_tensor import on_device
from ...ops.reduce import ALL, ANY, MAX, MEAN, MIN, PROD, SUM
from . import device, kernels
from .elementwise import SUPPORTED, _strides

_GRAIN = 64  # each thread of a splitting launch reduces at least this many elements


def _accumulator(kind, dtype):
    if kind in ("sum", "mean"):
        if dtype.is_floating:
            return "float64"
        return "int64" if dtype.is_integer else dtype.name
    if kind == "prod" and dtype.is_integer:
        return "int64"  # wraps as the integer type does once stored
    return dtype.name


def _blocks(shape, axis):
    """(kept sizes, kept strides, reduced sizes, reduced strides) of a contiguous input,
    adjacent dimensions of one kind merged and size-1 ones dropped: fewer index
    computations per element, and fewer distinct kernels."""
    groups = {False: [], True: []}
    previous = None
    for d, (size, stride) in enumerate(zip(shape, _strides(shape))):
        if size == 1:
            continue
        reduced = d in axis
        if previous is reduced:
            groups[reduced][-1] = [groups[reduced][-1][0] * size, stride]
        else:
            groups[reduced].append([size, stride])
        previous = reduced
    # An empty tuple is numba's Tuple(), not the kernels' UniTuple(int64 x 0): a block of
    # no dimensions is one of size 1.
    kept, red = groups[False] or [[1, 0]], groups[True] or [[1, 0]]
    return (tuple(s for s, _ in kept), tuple(t for _, t in kept),
            tuple(s for s, _ in red), tuple(t for _, t in red))


def _parts(m, k):
    """Into how many slices each of `m` blocks of `k` elements is split: one thread per
    output when there are enough outputs to fill the GPU. The GPU's width is that of a
    launch over all `m * k` elements: one sized for the `m` outputs alone is a single
    block when they are few, and a whole-matrix sum then ran on 256 threads."""
    blocks, threads = device.launch_shape(m * k)
    total = blocks * threads
    return 1 if m >= total else max(1, min(k // _GRAIN, total // m))


def reduce_levels(first_level, m, k, reductions):
    """Reduces `m` blocks of `k` elements each into the outputs of `reductions`, a list
    of (kind, accumulator dtype name, out array, out dtype). `first_level(targets,
    parts, last)` launches the first level, which reads the input (a reduction kernel,
    or a fused chain ending in these reductions) and writes `parts` partial results per
    block into each target (the outputs themselves when `last`); further launches reduce
    those slices, at least _GRAIN times fewer each time."""
    count = k  # mean divides by the whole block's size, at the last launch
    sources = None
    while m:
        parts = _parts(m, k)
        last = parts == 1
        targets = [out if last else device.empty(m * parts, dtypes.as_dtype(acc))
                   for _, acc, out, _ in reductions]
        if sources is None:
            first_level(targets, parts, last)
        else:
            # The slices of each output, side by side: reduced again along that axis.
            for (kind, acc, _, dtype), target, source in zip(reductions, targets, sources):
                key = ("reduce", kind, acc, acc, dtype.name if last else acc, 1, 1, last,
                       False)  # each output's slices are adjacent: its last axis is reduced
                device.launch(kernels.kernel(key), m * parts, target, m, parts, k, (m,),
                              (k,), (k,), (1,), source, count)
        if last:
            return
        sources, k = targets, parts


class Reduction:
    """A reduction entry (its `reduction` flag says how it accumulates)."""

    def run(self, op, inputs, attrs, shape, dtype, index):
        (x,) = inputs
        if x.dtype.name not in SUPPORTED:
            return None
        kind = op.reduction
        kshape, kstride, rshape, rstride = _blocks(x._shape, tuple(attrs["axis"]))
        m, k = math.prod(kshape), math.prod(rshape)
        out = device.empty(m, dtype)
        acc = _accumulator(kind, x.dtype)
        source = device.device_array_of(x, index)

        def first_level(targets, parts, last):
            key = ("reduce", kind, x.dtype.name, acc, dtype.name if last else acc,
                   len(kshape), len(rshape), last, kstride[-1] == 1)
            device.launch(kernels.kernel(key), m * parts, targets[0], m, parts, k, kshape,
                          kstride, rshape, rstride, source, k)

        reduce_levels(first_level, m, k, [(kind, acc, out, dtype)])
        return on_device(out, shape, dtype, index)


def attach(lowers):
    lowers(SUM, MEAN, MAX, MIN, PROD, ALL, ANY)(Reduction())
