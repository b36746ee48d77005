"""Inverse trigonometric and hyperbolic ops (tf.math.asin ... atanh, atan2), with
TensorFlow's gradient formulas, so that first and second derivatives match its numbers."""

import numpy as np

from .elementwise import (binary_entry, operand_pair, reciprocal, rsqrt, square, unary_api,
                          unary_entry)
from .registry import bind
from .rules import is_float, unbroadcast

_INSIDE_UNIT = (-0.9, 0.9)  # asin, acos and atanh are defined on (-1, 1)

ASIN = unary_entry("Asin", np.arcsin, "asin_f({0})", domain=_INSIDE_UNIT,
                   grad=lambda ctx, dy: (dy * rsqrt(1.0 - square(ctx.x)),))
ACOS = unary_entry("Acos", np.arccos, "acos_f({0})", domain=_INSIDE_UNIT,
                   grad=lambda ctx, dy: (-dy * rsqrt(1.0 - square(ctx.x)),))
ATAN = unary_entry("Atan", np.arctan, "atan_f({0})",
                   grad=lambda ctx, dy: (dy * reciprocal(1.0 + square(ctx.x)),))
SINH = unary_entry("Sinh", np.sinh, "sinh_f({0})",
                   grad=lambda ctx, dy: (dy * bind(COSH, (ctx.x,)),))
COSH = unary_entry("Cosh", np.cosh, "cosh_f({0})",
                   grad=lambda ctx, dy: (dy * bind(SINH, (ctx.x,)),))
# The inverse hyperbolic gradients read the output, as TensorFlow's: 1 / cosh(asinh(x)).
ASINH = unary_entry("Asinh", np.arcsinh, "asinh_f({0})", saves=("out",),
                    grad=lambda ctx, dy: (dy / bind(COSH, (ctx.out,)),))
ACOSH = unary_entry("Acosh", np.arccosh, "acosh_f({0})", saves=("out",), domain=(1.2, 3.0),
                    grad=lambda ctx, dy: (dy / bind(SINH, (ctx.out,)),))
ATANH = unary_entry("Atanh", np.arctanh, "atanh_f({0})", domain=_INSIDE_UNIT,
                    grad=lambda ctx, dy: (dy * reciprocal(1.0 - square(ctx.x)),))


def _atan2_grad(ctx, dy):
    scaled = dy / (square(ctx.x) + square(ctx.y))
    gy = unbroadcast(ctx.x * scaled, ctx.shapes[0]) if ctx.needs[0] else None
    gx = unbroadcast(-ctx.y * scaled, ctx.shapes[1]) if ctx.needs[1] else None
    return gy, gx


ATAN2 = binary_entry("Atan2", np.arctan2, "atan2_f({0}, {1})", grad=_atan2_grad,
                     args=("y", "x"), saves=("y", "x"), allowed=is_float, what="float types")

asin = unary_api(ASIN)
acos = unary_api(ACOS)
atan = unary_api(ATAN)
sinh = unary_api(SINH)
cosh = unary_api(COSH)
asinh = unary_api(ASINH)
acosh = unary_api(ACOSH)
atanh = unary_api(ATANH)


def atan2(y, x, name=None):
    """The angle of the point (x, y), in (-pi, pi], elementwise (tf.math.atan2)."""
    return bind(ATAN2, operand_pair(y, x))


__all__ = ["asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh"]
