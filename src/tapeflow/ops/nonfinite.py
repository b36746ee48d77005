"""Ops about NaN, Inf and zeros: tf.math.is_nan / is_inf / is_finite, and the guarded
products and quotients (divide_no_nan, multiply_no_nan, xdivy, xlog1py) that give 0
where TensorFlow's do, with TensorFlow's gradients."""

import numpy as np

from .. import dtypes
from . import rules
from .elementwise import (LOGICAL_NOT, binary_entry, cast, equal, ones_like, operand_pair,
                          square, true_division_operands, unary_api, unary_entry,
                          zeros_like)
from .registry import bind
from .rules import is_float, unbroadcast

_FLOAT = dict(allowed=is_float, what="float types")
_TO_BOOL = dict(out_dtype=dtypes.bool, **_FLOAT)

IS_NAN = unary_entry("IsNan", np.isnan, "{0} != {0}", **_TO_BOOL)
IS_INF = unary_entry("IsInf", np.isinf, "isinf_f({0})", **_TO_BOOL)
IS_FINITE = unary_entry("IsFinite", np.isfinite, "isfinite_f({0})", **_TO_BOOL)


def _zero_where(condition, values):
    with np.errstate(all="ignore"):
        return np.where(condition, np.zeros((), values.dtype), values)


def _div_no_nan_grad(ctx, dy):
    gx = unbroadcast(divide_no_nan(dy, ctx.y), ctx.shapes[0]) if ctx.needs[0] else None
    gy = unbroadcast(dy * divide_no_nan(divide_no_nan(-ctx.x, ctx.y), ctx.y), ctx.shapes[1]) \
        if ctx.needs[1] else None
    return gx, gy


def _mul_no_nan_grad(ctx, dy):
    gx = unbroadcast(multiply_no_nan(dy, ctx.y), ctx.shapes[0]) if ctx.needs[0] else None
    gy = unbroadcast(multiply_no_nan(ctx.x, dy), ctx.shapes[1]) if ctx.needs[1] else None
    return gx, gy


def _x_not_zero(x):
    return cast(bind(LOGICAL_NOT, (equal(x, zeros_like(x)),)), x.dtype)


def _xdivy_grad(ctx, dy):
    gx = unbroadcast(dy * xdivy(_x_not_zero(ctx.x), ctx.y), ctx.shapes[0]) \
        if ctx.needs[0] else None
    gy = unbroadcast(dy * xdivy(-ctx.x, square(ctx.y)), ctx.shapes[1]) if ctx.needs[1] else None
    return gx, gy


def _xlog1py_grad(ctx, dy):
    gx = unbroadcast(dy * xlog1py(_x_not_zero(ctx.x), ctx.y), ctx.shapes[0]) \
        if ctx.needs[0] else None
    gy = unbroadcast(dy * xdivy(ctx.x, ctx.y + 1.0), ctx.shapes[1]) if ctx.needs[1] else None
    return gx, gy


DIV_NO_NAN = binary_entry(
    "DivNoNan", lambda x, y: _zero_where(y == 0, x / y), "(0 if {1} == 0 else {0} / {1})",
    grad=_div_no_nan_grad, smooth=False, **_FLOAT)
MUL_NO_NAN = binary_entry(
    "MulNoNan", lambda x, y: _zero_where(y == 0, x * y), "(0 if {1} == 0 else {0} * {1})",
    grad=_mul_no_nan_grad, **_FLOAT)
XDIVY = binary_entry(
    "Xdivy", lambda x, y: _zero_where(x == 0, x / y), "(0 if {0} == 0 else {0} / {1})",
    grad=_xdivy_grad, domain=(0.5, 2.0), **_FLOAT)
XLOG1PY = binary_entry(
    "Xlog1py", lambda x, y: _zero_where(x == 0, x * np.log1p(y)),
    "(0 if {0} == 0 else {0} * log1p_f({1}))", grad=_xlog1py_grad, domain=(-0.5, 2.0),
    **_FLOAT)

is_nan = unary_api(IS_NAN)
is_inf = unary_api(IS_INF)
is_finite = unary_api(IS_FINITE)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (tf.math.divide_no_nan); integers divide as floats, as
    in tf.math.truediv."""
    return bind(DIV_NO_NAN, true_division_operands(x, y, "tf.math.divide_no_nan"))


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 even where x is NaN or Inf (tf.math.multiply_no_nan)."""
    return bind(MUL_NO_NAN, operand_pair(x, y))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0 (tf.math.xdivy)."""
    return bind(XDIVY, operand_pair(x, y))


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (tf.math.xlog1py)."""
    return bind(XLOG1PY, operand_pair(x, y))


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0 (tf.math.reciprocal_no_nan)."""
    x = rules.as_tensor(x)
    return divide_no_nan(ones_like(x), x)


__all__ = ["is_nan", "is_inf", "is_finite", "divide_no_nan", "multiply_no_nan", "xdivy",
           "xlog1py", "reciprocal_no_nan"]
