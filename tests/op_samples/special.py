"""Samplers and error cases for ops/special.py: inputs inside each function's smooth
domain (digamma and polygamma away from their poles, the scaled Bessel functions away from
their kink at 0, zeta and polygamma of integer orders)."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import special

from .common import Case, broadcast_shapes, floats, shapes
from .common import constant as _c
from .elementwise import _binary, _unary


def _integer_order(draw, shape):
    """polygamma's order: a float tensor of small integers, as TensorFlow's."""
    return np.floor(floats(draw, shape, (0.0, 3.99)))


def _polygamma(draw):
    """The gradient is checked in x only: TensorFlow has none for the order."""
    sa, sx = broadcast_shapes(draw)
    return Case([_integer_order(draw, sa), floats(draw, sx, (0.4, 4.0))], wrt=(1,))


def _zeta(draw):
    """Orders above 1 (the sum diverges at 1), integral or not; gradient in q only."""
    sx, sq = broadcast_shapes(draw)
    return Case([floats(draw, sx, (1.2, 5.0)), floats(draw, sq, (0.3, 4.0))], wrt=(1,))


def _igamma_grad_a(draw):
    """Values only: its gradient is TensorFlow's LookupError (tests/test_special.py)."""
    sa, sx = broadcast_shapes(draw)
    return Case([floats(draw, sa, (0.3, 4.0)), floats(draw, sx, (0.1, 6.0))], wrt=())


def _betainc(draw):
    """One shape, some inputs scalars (TensorFlow's rule); the gradient in x only, the
    one TensorFlow has."""
    shape = shapes(draw)
    sizes = [shape if draw(st.booleans()) else () for _ in range(2)] + [shape]
    return Case([floats(draw, sizes[0], (0.5, 4.0)), floats(draw, sizes[1], (0.5, 4.0)),
                 floats(draw, sizes[2], (0.05, 0.95))], wrt=(2,))


SAMPLES = {name: _unary(name) for name in
           ("Lgamma", "Digamma", "Erfinv", "Ndtri", "BesselI0", "BesselI1")}
SAMPLES.update({name: _unary(name, avoid=(0.0,)) for name in ("BesselI0e", "BesselI1e")})
SAMPLES.update({name: _binary(name) for name in ("Igamma", "Igammac")})
SAMPLES["Polygamma"] = _polygamma
SAMPLES["Zeta"] = _zeta
SAMPLES["IgammaGradA"] = _igamma_grad_a
SAMPLES["Betainc"] = _betainc

ERRORS = [
    (lambda: special.lgamma(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:Lgamma\]"),
    (lambda: special.igamma(_c([1.0, 2.0]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Igamma\]"),
    (lambda: special.zeta(_c([2.0]), _c([1.0], "float64")), InvalidArgumentError,
     r"expected to be a float32 tensor but is a float64 tensor \[Op:Zeta\]"),
    (lambda: special.betainc(_c([1.0, 2.0]), _c([1.0, 2.0]), _c([[0.5, 0.5]] * 3)),
     InvalidArgumentError,
     r"Shapes of a and x are inconsistent: \[2\] vs. \[3,2\] \[Op:Betainc\]"),
]
