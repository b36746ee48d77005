"""Lowerings of Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (ops/convolution.py)
over the im2col kernels of kernels/windows.py. The kernels take NHWC arrays: an NCHW
operand is transposed on the way in and the result on the way out. The window's
geometry is computed while compiling (the spatial sizes are known then) and passed in
as run-time ints, so graphs that differ only in shapes share their code."""

from ...ops.convolution import (CONV2D, CONV2D_BACKPROP_FILTER, CONV2D_BACKPROP_INPUT,
                                kernel_geometry)
from .generator import lowers
from .text import tuple_expr

_KERNELS = {CONV2D: "conv2d_nhwc", CONV2D_BACKPROP_INPUT: "conv2d_input_grad_nhwc",
            CONV2D_BACKPROP_FILTER: "conv2d_filter_grad_nhwc"}


def nhwc(cg, v, data_format):
    """The name of an NHWC C-contiguous array holding v, of `data_format`."""
    name = cg.contiguous(v)
    if data_format == "NHWC":
        return name
    return cg.assign(f"contiguous(transposed({name}, (0, 2, 3, 1)))")


def from_nhwc(cg, name, data_format):
    if data_format == "NHWC":
        return name
    return cg.assign(f"contiguous(transposed({name}, (0, 3, 1, 2)))")


def geometry_expr(cg, geo):
    return tuple_expr(cg.runtime_ints(geo))


def _nhwc_dims(shape, data_format):
    n, a, b, c = shape
    return (n, a, b, c) if data_format == "NHWC" else (n, b, c, a)


@lowers(CONV2D, CONV2D_BACKPROP_INPUT, CONV2D_BACKPROP_FILTER)
def _convolution(cg, node):
    first, second = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    fmt = node.attrs["data_format"]
    if node.op is CONV2D:  # (input, filter)
        image, filter_shape = first.shape, second.shape
        args = [nhwc(cg, first, fmt), cg.contiguous(second)]
    elif node.op is CONV2D_BACKPROP_INPUT:  # (filter, out_backprop) -> the input's shape
        image, filter_shape = node.outputs[0]._shape, first.shape
        args = [cg.contiguous(first), nhwc(cg, second, fmt)]
        args += cg.runtime_ints(_nhwc_dims(image, fmt)[1:])
    else:  # (input, out_backprop) -> the filter's shape
        image, filter_shape = first.shape, node.attrs["filter_sizes"]
        args = [nhwc(cg, first, fmt), nhwc(cg, second, fmt)]
        args += cg.runtime_ints(filter_shape[:3])
    geo = kernel_geometry(node.op.name, image, filter_shape, node.attrs)
    out = cg.assign(f"{_KERNELS[node.op]}({', '.join(args)}, {geometry_expr(cg, geo)})")
    cg.output(node, out if node.op is CONV2D_BACKPROP_FILTER else from_nhwc(cg, out, fmt))
