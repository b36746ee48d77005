"""Softmax, LogSoftmax (along any axis) and SparseSoftmaxCrossEntropyWithLogits (along the
last) on the device: one "rows" kernel per op, dtypes and block width. A row is the
elements of one (outer, inner) position along the axis; each block of threads takes a
row at a time, its threads striding over the row (adjacent threads on adjacent elements
when the axis is the last), and combines the row's maximum and its sum of exponentials
in shared memory. The arithmetic is in float64, so float32 results are the NumPy
kernel's to rounding, NaN and infinities included.

As TensorFlow's GPU kernel, the cross-entropy gives NaN loss and gradient rows for a
label outside [0, classes) where the CPU raises: the check costs no copy to the host."""

import math

from ...device_tensor import on_device
from ...ops.nn import LOG_SOFTMAX, SOFTMAX, SPARSE_SOFTMAX_XENT
from . import device, kernels
from .device import simulated

_FLOATS = frozenset({"float32", "float64"})


def _width():
    """Threads per block (a power of two: the tree combines halves). The simulator runs
    each thread as a Python thread, so one warp there."""
    return 32 if simulated() else 256


def _tree(lines, combine, width):
    """Lines that combine buf[0 .. width) into buf[0] (every thread has written its own)."""
    lines += ["        cuda.syncthreads()",
              f"        s = {width // 2}",
              "        while s > 0:",
              "            if tid < s:",
              f"                buf[tid] = {combine.format('buf[tid]', 'buf[tid + s]')}",
              "            cuda.syncthreads()",
              "            s //= 2"]


def _row_statistics(lines, width):
    """Lines that set `top` (the row's maximum, NaN if it holds one) and `total` (its sum
    of exp(x - top)) for the row at `base`, its elements `inner` apart."""
    lines += ["        top = -np.inf",
              f"        for a in range(tid, k, {width}):",
              "            top = maximum(top, np.float64(x[base + a * inner]))",
              "        buf[tid] = top"]
    _tree(lines, "maximum({}, {})", width)  # NaN wins, as NumPy's max
    lines += ["        top = buf[0]",
              "        cuda.syncthreads()",
              "        total = 0.0",
              f"        for a in range(tid, k, {width}):",
              "            total += exp_f64(np.float64(x[base + a * inner]) - top)",
              "        buf[tid] = total"]
    _tree(lines, "{} + {}", width)
    lines += ["        total = buf[0]",
              "        cuda.syncthreads()"]


def _xent_key(dtype, label_dtype, width):
    out = dtype.name
    lines = ["def kernel(rows, k, inner, loss, backprop, x, labels):",
             f"    buf = cuda.shared.array({width}, np.float64)",
             "    tid = cuda.threadIdx.x",
             "    for row in range(cuda.blockIdx.x, rows, cuda.gridDim.x):",
             "        base = row * k",
             "        label = labels[row]"]
    _row_statistics(lines, width)
    lines += ["        if label < 0 or label >= k:",  # the same for the whole block
              "            top = np.nan",
              f"        for a in range(tid, k, {width}):",
              "            p = exp_f64(np.float64(x[base + a]) - top) / total",
              f"            backprop[base + a] = np.{out}(p - 1.0 if a == label else p)",
              "        if tid == 0:",
              "            picked = np.nan if top != top else np.float64(x[base + label])",
              f"            loss[row] = np.{out}(log_f64(total) - (picked - top))"]
    types = ("int64",) * 3 + (f"array:{out}",) * 3 + (f"array:{label_dtype.name}",)
    return ("rows", "\n".join(lines) + "\n", types)


def _key(op, dtype, width):
    out = dtype.name
    write = ({SOFTMAX: f"np.{out}(exp_f64(v - top) / total)",
              LOG_SOFTMAX: f"np.{out}((v - top) - log_f64(total))"})[op]
    lines = ["def kernel(rows, k, inner, out, x):",
             f"    buf = cuda.shared.array({width}, np.float64)",
             "    tid = cuda.threadIdx.x",
             "    for row in range(cuda.blockIdx.x, rows, cuda.gridDim.x):",
             "        o = row // inner",
             "        base = o * k * inner + (row - o * inner)"]
    _row_statistics(lines, width)
    lines += [f"        for a in range(tid, k, {width}):",
              "            at = base + a * inner",
              "            v = np.float64(x[at])",
              f"            out[at] = {write}"]
    return ("rows", "\n".join(lines) + "\n", ("int64",) * 3 + (f"array:{out}",) * 2)


def _launch(key, rows, *args):
    """Launches a rows kernel: a block of `_width()` threads per row, as many blocks as
    fill the GPU."""
    width = _width()
    blocks = min(rows, device.launch_shape(rows * width)[0])
    device.launch_as(kernels.kernel(key), (blocks, width), rows, *args)


class Rows:
    """Softmax or LogSoftmax along `axis`."""

    def run(self, op, inputs, attrs, shape, dtype, index):
        (x,) = inputs
        if dtype.name not in _FLOATS:
            return None
        axis = attrs["axis"]
        k, inner = shape[axis], math.prod(shape[axis + 1:])
        rows = math.prod(shape) // k if k else 0
        out = device.empty(math.prod(shape), dtype)
        if rows:
            _launch(_key(op, dtype, _width()), rows, k, inner, out,
                    device.device_array_of(x, index))
        return on_device(out, shape, dtype, index)


class SparseCrossEntropy:
    """SparseSoftmaxCrossEntropyWithLogits: the loss per row and its gradient (softmax
    less one at the label), both outputs of one kernel."""

    outputs_all = True

    def run(self, op, inputs, attrs, shapes, out_dtypes, index):
        features, labels = inputs
        dtype = out_dtypes[0]
        if dtype.name not in _FLOATS:
            return None
        k = features._shape[-1]
        rows = math.prod(features._shape[:-1])
        loss, backprop = device.empty(rows, dtype), device.empty(rows * k, dtype)
        if rows and k:
            _launch(_xent_key(dtype, labels.dtype, _width()), rows, k, 1, loss, backprop,
                    device.device_array_of(features, index),
                    device.device_array_of(labels, index))
        elif rows:
            return None  # no classes: every label is out of range, and the CPU says so
        return (on_device(loss, shapes[0], dtype, index),
                on_device(backprop, shapes[1], dtype, index))


def attach(lowers):
    lowers(SOFTMAX, LOG_SOFTMAX)(Rows())
    lowers(SPARSE_SOFTMAX_XENT)(SparseCrossEntropy())
