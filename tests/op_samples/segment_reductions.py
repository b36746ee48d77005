"""Samplers and error cases for ops/segment_reductions.py."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import segment_reductions as seg

from .common import Case, floats, ints, seed, shapes
from .common import constant as _c


def _ids(draw, rows, sorted_ids, segments, cover):
    """Segment ids for `rows` rows; with `cover`, every segment gets a row (an empty
    unsorted max holds the dtype's lowest value, too large for finite differences)."""
    rng = np.random.default_rng(seed(draw))
    if sorted_ids:
        return np.sort(rng.integers(0, segments, size=rows)).astype(np.int32)
    ids = rng.integers(-1, segments, size=rows)  # -1 drops a row
    if cover:
        ids[:segments] = np.arange(segments)
        rng.shuffle(ids)
    return ids.astype(np.int32)


def _segments(kind, sorted_ids):
    """Rows of distinct floats (no ties for max/min; away from 0 for prod), sometimes
    integers (values only)."""
    def sample(draw):
        cover = kind in ("max", "min") and not sorted_ids
        segments = draw(st.integers(1, 4))
        rows = draw(st.integers(segments if cover else 0, 5))
        inner = shapes(draw, max_dims=2, max_side=3)
        ids = _ids(draw, rows, sorted_ids, segments, cover)
        attrs = {} if sorted_ids else {"num_segments": segments}
        if draw(st.integers(0, 3)) == 0:
            return Case([ints(draw, (rows,) + inner, -3, 3), ids], attrs, wrt=())
        domain = (0.5, 1.5) if kind == "prod" else (-2.0, 2.0)
        data = floats(draw, (rows,) + inner, domain)
        if kind == "prod":
            data = data * np.where(ints(draw, data.shape, 0, 2) == 0, -1.0, 1.0)
        return Case([data, ids], attrs, wrt=(0,))
    return sample


SAMPLES = {op.name: _segments(kind, sorted_ids)
           for (kind, sorted_ids), op in seg.SEGMENT_OPS.items()}

ERRORS = [
    (lambda: seg.segment_sum(_c([1.0, 2.0, 3.0]), [0, 2, 1]), InvalidArgumentError,
     r"segment ids are not increasing \[Op:SegmentSum\]"),
    (lambda: seg.segment_max(_c([1.0, 2.0]), [-1, 0]), InvalidArgumentError,
     r"Segment id -1 out of range \[0, 1\), possibly because 'segment_ids' input is not "
     r"sorted. \[Op:SegmentMax\]"),
    (lambda: seg.segment_prod(_c([1.0, 2.0]), [0, 0, 0]), InvalidArgumentError,
     r"segment_ids should be the same size as dimension 0 of input. \[Op:SegmentProd\]"),
    (lambda: seg.unsorted_segment_max(_c([1.0, 2.0]), [0, 5], 3), InvalidArgumentError,
     r"segment_ids\[1\] = 5 is out of range \[0, 3\) \[Op:UnsortedSegmentMax\]"),
]
