"""Lowering of TopKV2 (ops/sorting.py; tf.sort and tf.argsort are built on it): each row
of the input viewed as (rows, last axis) goes through kernels/arrays.py's top_k_rows."""

from ...ops.sorting import TOP_K
from .generator import lowers
from .text import np_name, tuple_expr


@lowers(TOP_K)
def _top_k(cg, node):
    x = cg.val(node.inputs[0])
    dims = cg.dims(x)
    k = node.attrs["k"]
    rows = cg.assign(f"reshaped({cg.contiguous(x)}, ({cg.product(dims[:-1])}, {dims[-1]}))")
    found = cg.assign(f"top_k_rows({rows}, {k})")
    shape = tuple_expr(dims[:-1] + [str(k)])
    cg.output(node, cg.assign(f"reshaped({found}[0], {shape})"), k=0)
    index_type = np_name(node.outputs[1].dtype)
    cg.output(node, cg.assign(f"reshaped(cast_array({found}[1], {index_type}), {shape})"),
              k=1)
