"""Lowerings of the segment reductions of ops/segment_reductions.py over
kernels/segments.py: the rows viewed as (rows, inner), one fold into the segments."""

import numpy as np

from ...ops.segment_reductions import SEGMENT_OPS, _empty_value
from .generator import lowers
from .text import literal, tuple_expr

_KIND_CODES = {"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}


def _lowering(kind, sorted_ids):
    def lower(cg, node):
        data, ids = cg.val(node.inputs[0]), cg.val(node.inputs[1])
        y = node.outputs[0]
        dd = cg.dims(data)
        k = ids.rank
        rows, inner = cg.product(dd[:k]), cg.product(dd[k:])
        d2 = cg.assign(f"reshaped({cg.contiguous(data)}, ({rows}, {inner}))")
        i1 = cg.assign(f"reshaped({cg.contiguous(ids)}, {rows})")
        if sorted_ids:
            codes = [cg.error(name, node) for name in
                     ("segment_size", "segment_negative", "segment_order")]
            n = cg.assign(f"sorted_segments({i1}, {dd[0] if dd else 1}, {', '.join(map(str, codes))})")
        else:
            n = cg.runtime_ints([node.attrs["num_segments"]])[0]
        empty = _empty_value(kind, np.dtype(y.dtype.as_numpy_dtype), sorted_ids=False)
        zero_if_empty = sorted_ids and kind in ("max", "min")
        code = cg.error("segment", node, ids.shape)
        out = cg.assign(f"segment_reduce({d2}, {i1}, {n}, {_KIND_CODES[kind]}, "
                        f"{literal(empty, y.dtype)}, {zero_if_empty}, {code})")
        cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr([n] + dd[k:])})"))
    return lower


for (_kind, _sorted), _op in SEGMENT_OPS.items():
    lowers(_op)(_lowering(_kind, _sorted))
