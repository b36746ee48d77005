"""Samplers and error cases for ops/trigonometric.py."""

from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import trigonometric as trig

from .common import Case, broadcast_shapes, floats
from .common import constant as _c
from .elementwise import _unary


def _atan2(draw):
    """y kept away from 0: where x < 0 atan2 jumps from pi to -pi as y crosses it."""
    sy, sx = broadcast_shapes(draw)
    y = floats(draw, sy, (-2.0, 2.0), avoid=(0.0,))
    x = floats(draw, sx, (-2.0, 2.0), avoid=(0.0,))
    return Case([y, x] if draw(st.booleans()) else [y, x * 0.5])


SAMPLES = {name: _unary(name) for name in
           ("Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh")}
SAMPLES["Atan2"] = _atan2

ERRORS = [
    (lambda: trig.asin(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:Asin\]"),
    (lambda: trig.atan2(_c([1.0, 2.0]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Atan2\]"),
]
