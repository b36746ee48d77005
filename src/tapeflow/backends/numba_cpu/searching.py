"""Lowerings of LowerBound / UpperBound and Unique / UniqueWithCounts (ops/searching.py)
over kernels/arrays.py's searchsorted_rows and unique_first."""

from ...ops.searching import LOWER_BOUND, UNIQUE, UNIQUE_WITH_COUNTS, UPPER_BOUND
from .generator import lowers
from .text import np_name, tuple_expr


@lowers(LOWER_BOUND, UPPER_BOUND)
def _bound(cg, node):
    sorted_inputs, values = (cg.val(x) for x in node.inputs)
    s_dims, v_dims = cg.dims(sorted_inputs), cg.dims(values)
    rows = cg.product(v_dims[:-1])
    s2 = cg.assign(f"reshaped({cg.contiguous(sorted_inputs)}, ({rows}, {s_dims[-1]}))")
    v2 = cg.assign(f"reshaped({cg.contiguous(values)}, ({rows}, {v_dims[-1]}))")
    found = cg.assign(f"searchsorted_rows({s2}, {v2}, {node.op is UPPER_BOUND})")
    out_type = np_name(node.outputs[0].dtype)
    cg.output(node, cg.assign(f"reshaped(cast_array({found}, {out_type}), {tuple_expr(v_dims)})"))


@lowers(UNIQUE, UNIQUE_WITH_COUNTS)
def _unique(cg, node):
    x = cg.val(node.inputs[0])
    found = cg.assign(f"unique_first({cg.contiguous(x)})")
    index_type = np_name(node.outputs[1].dtype)
    cg.output(node, cg.assign(f"{found}[0]"), k=0)
    for k in range(1, len(node.outputs)):
        cg.output(node, cg.assign(f"cast_array({found}[{k}], {index_type})"), k=k)
