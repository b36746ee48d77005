"""Lowerings of the pooling ops (ops/pooling.py) over the loops of kernels/windows.py,
NHWC as the convolutions' (an NCHW operand transposed in, the result out)."""

from ...ops.pooling import (AVG_POOL, AVG_POOL_GRAD, MAX_POOL, MAX_POOL_GRAD,
                            MAX_POOL_GRAD_GRAD, kernel_geometry)
from .convolution import from_nhwc, geometry_expr, nhwc
from .generator import lowers

@lowers(MAX_POOL, AVG_POOL)
def _pool(cg, node):
    x = cg.val(node.inputs[0])
    fmt = node.attrs["data_format"]
    geo = geometry_expr(cg, kernel_geometry(node.op.name, x.shape, node.attrs))
    kernel = "max_pool_nhwc" if node.op is MAX_POOL else "avg_pool_nhwc"
    out = cg.assign(f"{kernel}({nhwc(cg, x, fmt)}, {geo})")
    cg.output(node, from_nhwc(cg, out, fmt))


@lowers(MAX_POOL_GRAD, MAX_POOL_GRAD_GRAD)
def _max_pool_grads(cg, node):
    x, grad = cg.val(node.inputs[0]), cg.val(node.inputs[2])
    fmt = node.attrs["data_format"]
    geo = geometry_expr(cg, kernel_geometry(node.op.name, x.shape, node.attrs))
    out = cg.assign(f"max_pool_grad_nhwc({nhwc(cg, x, fmt)}, {nhwc(cg, grad, fmt)}, {geo}, "
                    f"{node.op is MAX_POOL_GRAD})")
    cg.output(node, from_nhwc(cg, out, fmt))


@lowers(AVG_POOL_GRAD)
def _avg_pool_grad(cg, node):
    grad = cg.val(node.inputs[0])
    fmt = node.attrs["data_format"]
    sizes = node.outputs[0]._shape
    geo = geometry_expr(cg, kernel_geometry(node.op.name, sizes, node.attrs))
    h, w = (sizes[1], sizes[2]) if fmt == "NHWC" else (sizes[2], sizes[3])
    out = cg.assign(f"avg_pool_grad_nhwc({nhwc(cg, grad, fmt)}, "
                    f"{', '.join(cg.runtime_ints([h, w]))}, {geo})")
    cg.output(node, from_nhwc(cg, out, fmt))
