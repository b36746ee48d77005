"""Samplers and error cases for ops/nonfinite.py."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import nonfinite as nf

from .common import Case, bools, broadcast_shapes, floats, shapes
from .common import constant as _c


def _special_floats(draw):
    """Floats with NaN, +Inf and -Inf mixed in, float32 or float64."""
    shape = shapes(draw)
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    specials = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).choice(
        [np.nan, np.inf, -np.inf, 0.0], size=shape)
    return Case([np.where(bools(draw, shape), specials, floats(draw, shape)).astype(dtype)])


def _zeros_in(draw, shape, values):
    """`values` with some elements set to exactly 0."""
    return np.where(bools(draw, shape), 0.0, values)


def _guarded_by_y(draw):
    """DivNoNan, MulNoNan: y is 0 in places (then only x's gradient is checked: the op is
    0 around there in x) or kept away from 0 (both gradients)."""
    sx, sy = broadcast_shapes(draw)
    x = floats(draw, sx)
    y = floats(draw, sy, (0.5, 2.0)) * np.where(bools(draw, sy), 1.0, -1.0)
    if draw(st.booleans()):
        return Case([x, _zeros_in(draw, sy, y)], wrt=(0,))
    return Case([x, y])


def _mul_no_nan_special(draw):
    """MulNoNan gives 0 where y is 0 even for NaN and Inf in x."""
    sx, sy = broadcast_shapes(draw)
    x = np.where(bools(draw, sx), np.inf, np.nan) * np.where(bools(draw, sx), 1.0, -1.0)
    return Case([np.where(bools(draw, sx), x, floats(draw, sx)), _zeros_in(draw, sy, floats(draw, sy))],
                wrt=())


def _guarded_by_x(domain):
    """Xdivy, Xlog1py: x is 0 in places, y in the op's domain. At x = 0 TensorFlow's
    gradient in x is 0 (not the limit of the quotient), so only y's is checked there."""
    def sample(draw):
        sx, sy = broadcast_shapes(draw)
        y = floats(draw, sy, domain)
        if draw(st.booleans()):
            return Case([_zeros_in(draw, sx, floats(draw, sx)), y], wrt=(1,))
        return Case([floats(draw, sx), y])
    return sample


def _either(*samplers):
    def sample(draw):
        return draw(st.sampled_from(samplers))(draw)
    return sample


SAMPLES = {
    "IsNan": _special_floats,
    "IsInf": _special_floats,
    "IsFinite": _special_floats,
    "DivNoNan": _guarded_by_y,
    "MulNoNan": _either(_guarded_by_y, _mul_no_nan_special),
    "Xdivy": _guarded_by_x((0.5, 2.0)),
    "Xlog1py": _guarded_by_x((-0.5, 2.0)),
}

ERRORS = [
    (lambda: nf.is_nan(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:IsNan\]"),
    (lambda: nf.divide_no_nan(_c([1, 2]), _c([1.0, 0.0])), TypeError,
     r"same dtype.*int32.*float32"),
    (lambda: nf.xdivy(_c([1.0, 2.0]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Xdivy\]"),
]
