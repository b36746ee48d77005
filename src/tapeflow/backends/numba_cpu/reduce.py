"""Lowerings of the reductions that do not fuse: ArgMax / ArgMin and the scans (the
fusible reductions, Sum to Any, accumulate inside fused loops: loops.py)."""

from ...ops.reduce import ARG_MAX, ARG_MIN, CUMPROD, CUMSUM
from .generator import lowers
from .text import np_name, tuple_expr


@lowers(ARG_MAX, ARG_MIN)
def _argmax(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    axis = node.attrs["axis"] % x.rank
    x3, dims = cg.view3(x, axis)
    fn = "argmax3" if node.op is ARG_MAX else "argmin3"
    out = cg.assign(f"cast_array({fn}({x3}), {np_name(y.dtype)})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims[:axis] + dims[axis + 1:])})"))


@lowers(CUMSUM, CUMPROD)
def _scan(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        cg.define(y, x)
        return
    a = node.attrs
    axis = a["axis"] % x.rank
    x3, dims = cg.view3(x, axis)
    prod = node.op is CUMPROD
    out = cg.assign(f"scan3({x3}, {prod}, {bool(a['exclusive'])}, {bool(a['reverse'])})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims)})"))
