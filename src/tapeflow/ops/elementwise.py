"""Elementwise ops: arithmetic, transcendental, comparison and logical, with their
gradient helpers (TanhGrad, SigmoidGrad, ...) as table entries of their own."""

import operator

import numpy as np
from .lazy_scipy import special

from .. import context, dtypes
from ..errors import InvalidArgumentError
from ..source import raised_while_tracing
from ..tensor import Tensor, _Operators, convert_to_tensor, scalar_operand
from . import rules
from .registry import OpDef, bind, register
from .rules import (any_dtype, is_bool, is_float, is_inexact, is_integer, is_number, is_numeric,
                    named, unbroadcast)


def _quiet(fn):
    """Runs a NumPy kernel without floating-point warnings: TensorFlow returns inf/nan
    silently for log(0), x/0 and friends."""
    def kernel(*arrays, **attrs):
        with np.errstate(all="ignore"):
            return fn(*arrays, **attrs)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def unary_entry(name, eager, emit, grad=None, saves=("x",), allowed=is_float,
                what="float types", out_dtype=None, **kw):
    return register(OpDef(
        name=name, args=("x",), infer=named(name, rules.unary(allowed, what, out_dtype)),
        eager=eager, emit=emit, grad=grad, saves=saves if grad else (), elementwise=True,
        differentiable=grad is not None, **kw))


def binary_entry(name, eager, emit, grad=None, saves=("x", "y"), allowed=is_numeric,
                 what="numeric types", out_dtype=None, args=("x", "y"), same_shape=False, **kw):
    return register(OpDef(
        name=name, args=args,
        infer=named(name, rules.binary(allowed, what, out_dtype, same_shape)),
        eager=eager, emit=emit, grad=grad, saves=saves if grad else (), elementwise=True,
        broadcasts=not same_shape, differentiable=grad is not None, **kw))


_SIGNED = "float or signed integer types"
_SIGNED_OR_COMPLEX = "float, signed integer or complex types"
_INEXACT = "float or complex types"
_NUMBER = "numeric or complex types"


def _is_signed(d):
    """TensorFlow's Abs and Sign: floats and signed integers, never uint8."""
    return d.is_floating or d._np.kind == "i"


def _is_signed_or_complex(d):
    """TensorFlow's Neg and Pow: floats, signed integers and complex numbers."""
    return d.is_floating or d._np.kind == "i" or d.is_complex


def _conj_values(a):
    """The complex conjugate of a complex array; a real one unchanged (no copy). The
    *Grad kernels conjugate as TensorFlow's do for complex dtypes."""
    return np.conjugate(a) if a.dtype.kind == "c" else a


def _is_wide_number(d):
    """TensorFlow's SquaredDifference: floats, int32 and int64."""
    return d.is_floating or d.name in ("int32", "int64")


def operand_pair(x, y):
    """Converts the two operands of a binary op; the Tensor side's dtype wins."""
    if type(x) is Tensor:
        if type(y) is Tensor:
            return x, y
        if type(y) is float or type(y) is int:  # `x * 2.0`: the hot case, skip the generic path
            return x, scalar_operand(y, x.dtype)
    elif type(y) is Tensor and (type(x) is float or type(x) is int):
        return scalar_operand(x, y.dtype), y
    return rules.as_tensors(x, y)


# -- the complex conjugate, which the gradient rules of complex functions apply ---------

CONJ = register(OpDef(
    name="Conj", args=("input",), infer=named("Conj", rules.unary(lambda d: d.is_complex,
                                                                 "complex64, complex128")),
    eager=np.conjugate, emit="{0}.conjugate()", elementwise=True,
    grad=lambda ctx, dy: (conj(dy),)))


def conj(x, name=None):
    """The complex conjugate of a complex tensor; a real or integer tensor itself, as
    tf.math.conj. Gradient rules write TensorFlow's convention for complex inputs with
    it (the gradient is the conjugate of the derivative times the incoming gradient),
    which is their real rule unchanged for real inputs."""
    x = x if type(x) is Tensor else rules.as_tensor(x)
    if x.dtype.is_complex:
        return bind(CONJ, (x,))
    if x.dtype.is_bool:
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}")
    return x


# -- gradient helper ops (TensorFlow's *Grad kernels, so the numbers match) ------------

TANH_GRAD = binary_entry(
    "TanhGrad", lambda y, dy: dy * (1 - y * y), "{1} * (1 - {0} * {0})",
    grad=lambda ctx, g: (g * ctx.dy * -2.0 * ctx.y, tanh_grad(ctx.y, g)),
    args=("y", "dy"), saves=("y", "dy"), same_shape=True, allowed=is_float, what="float types")
SIGMOID_GRAD = binary_entry(
    "SigmoidGrad", lambda y, dy: dy * (y * (1 - y)), "{1} * ({0} * (1 - {0}))",
    grad=lambda ctx, g: (g * ctx.dy * (1.0 - 2.0 * ctx.y), sigmoid_grad(ctx.y, g)),
    args=("y", "dy"), saves=("y", "dy"), same_shape=True, allowed=is_float, what="float types")


def _zero_where_dy_is_zero(dy, grad):
    # TensorFlow's Sqrt/Rsqrt/Reciprocal gradient kernels give 0 where the incoming
    # gradient is 0, even at the pole: tf.where(x > 0, tf.sqrt(x), 0) has a finite
    # gradient at x = 0, not 0 * inf = nan.
    return np.where(dy == 0, np.zeros_like(grad), grad)


RECIPROCAL_GRAD = binary_entry(
    "ReciprocalGrad",
    lambda y, dy: _zero_where_dy_is_zero(dy, -dy * _conj_values(y) * _conj_values(y)),
    "(-{1} * conj_f({0}) * conj_f({0}) if {1} != 0 else 0)",
    grad=lambda ctx, g: (conj(g) * -2.0 * ctx.dy * conj(ctx.y),
                         reciprocal_grad(conj(ctx.y), g)),
    args=("y", "dy"), saves=("y", "dy"), same_shape=True, allowed=is_inexact, what=_INEXACT,
    domain=(0.5, 2.0))
SQRT_GRAD = binary_entry(
    "SqrtGrad", lambda y, dy: _zero_where_dy_is_zero(dy, dy * 0.5 / _conj_values(y)),
    "({1} * 0.5 / conj_f({0}) if {1} != 0 else 0)",
    grad=lambda ctx, g: (-conj(g) * ctx.dy * 0.5 / conj(ctx.y * ctx.y),
                         sqrt_grad(conj(ctx.y), g)),
    args=("y", "dy"), saves=("y", "dy"), same_shape=True, allowed=is_inexact, what=_INEXACT,
    domain=(0.2, 2.0))
RSQRT_GRAD = binary_entry(
    "RsqrtGrad", lambda y, dy: _zero_where_dy_is_zero(dy, dy * -0.5 * y * y * y),
    "({1} * -0.5 * {0} * {0} * {0} if {1} != 0 else 0)",
    grad=lambda ctx, g: (g * ctx.dy * -1.5 * ctx.y * ctx.y, rsqrt_grad(ctx.y, g)),
    args=("y", "dy"), saves=("y", "dy"), same_shape=True, allowed=is_float, what="float types",
    domain=(0.2, 2.0))
RELU_GRAD = binary_entry(
    # As TensorFlow's kernel, dy * (x > 0): NaN or Inf in dy stay NaN where x <= 0. (Also
    # faster than np.where on a random mask: perf/run.py mlp, eager, 1.36 -> 1.12 ms.)
    "ReluGrad", lambda dy, x: dy * (x > 0),
    "({0} if {1} > 0 else {0} * 0)",
    grad=lambda ctx, g: (relu_grad(g, ctx.y), zeros_like(ctx.y)), args=("dy", "y"),
    saves=("y",), same_shape=True, allowed=is_float, what="float types", smooth=False)
ELU_GRAD = binary_entry(
    "EluGrad", lambda dy, y: np.where(y < 0, dy * (y + 1), dy),
    "({0} * ({1} + 1) if {1} < 0 else {0})",
    grad=lambda ctx, g: (where(ctx.y < 0, g * (ctx.y + 1.0), g),
                         where(ctx.y < 0, g * ctx.dy, zeros_like(g))),
    args=("dy", "y"), saves=("dy", "y"), same_shape=True, allowed=is_float, what="float types", smooth=False)
SOFTPLUS_GRAD = binary_entry(
    "SoftplusGrad", lambda dy, x: dy * _sigmoid(x), "{0} * sigmoid_f({1})",
    grad=lambda ctx, g: (g * sigmoid(ctx.x), sigmoid_grad(sigmoid(ctx.x), g * ctx.dy)),
    args=("dy", "x"), saves=("dy", "x"), same_shape=True, allowed=is_float, what="float types")


def tanh_grad(y, dy):
    return bind(TANH_GRAD, (y, dy))


def sigmoid_grad(y, dy):
    return bind(SIGMOID_GRAD, (y, dy))


def reciprocal_grad(y, dy):
    return bind(RECIPROCAL_GRAD, (y, dy))


def rsqrt_grad(y, dy):
    return bind(RSQRT_GRAD, (y, dy))


def sqrt_grad(y, dy):
    return bind(SQRT_GRAD, (y, dy))


def relu_grad(dy, x):
    return bind(RELU_GRAD, (dy, x))


# -- arithmetic ---------------------------------------------------------------------

ADD = binary_entry("AddV2", operator.add, "{0} + {1}", saves=(), allowed=is_number, what=_NUMBER,
                   grad=lambda ctx, dy: (unbroadcast(dy, ctx.shapes[0]),
                                         unbroadcast(dy, ctx.shapes[1])))
SUB = binary_entry("Sub", operator.sub, "{0} - {1}", saves=(), allowed=is_number, what=_NUMBER,
                   grad=lambda ctx, dy: (unbroadcast(dy, ctx.shapes[0]),
                                         unbroadcast(-dy, ctx.shapes[1]) if ctx.needs[1] else None))
def _mul_grad(ctx, dy):
    # bind() directly rather than `*`: this rule runs for every recorded product.
    needs = ctx.needs
    return (unbroadcast(bind(MUL, (dy, conj(ctx.y))), ctx.shapes[0]) if needs[0] else None,
            unbroadcast(bind(MUL, (conj(ctx.x), dy)), ctx.shapes[1]) if needs[1] else None)


MUL = binary_entry("Mul", operator.mul, "{0} * {1}", grad=_mul_grad, allowed=is_number,
                   what=_NUMBER)
REAL_DIV = binary_entry(
    "RealDiv", operator.truediv, "{0} / {1}", allowed=is_inexact, what=_INEXACT,
    grad=lambda ctx, dy: (unbroadcast(dy / conj(ctx.y), ctx.shapes[0]) if ctx.needs[0] else None,
                          unbroadcast(dy * conj((-ctx.x / ctx.y) / ctx.y), ctx.shapes[1])
                          if ctx.needs[1] else None),
    domain=(0.5, 2.0))
def _int_division(fn, name):
    """x // y and x % y: integer division by zero is an error, as in TensorFlow's CPU
    kernels (floats give inf/nan silently)."""
    def kernel(x, y):
        if x.dtype.kind in "iu" and not np.all(y):
            raise InvalidArgumentError(f"Integer division by zero [Op:{name}]", op=name)
        with np.errstate(all="ignore"):
            return fn(x, y)
    return kernel


FLOOR_DIV = binary_entry("FloorDiv", _int_division(np.floor_divide, "FloorDiv"), "{0} // {1}")
FLOOR_MOD = binary_entry(
    "FloorMod", _int_division(np.mod, "FloorMod"), "{0} % {1}",
    grad=lambda ctx, dy: (unbroadcast(dy, ctx.shapes[0]),
                          unbroadcast(dy * -floordiv(ctx.x, ctx.y), ctx.shapes[1])
                          if ctx.needs[1] else None),
    smooth=False, domain=(0.5, 2.0))


def _pow_grad(ctx, dy):
    x, y = ctx.x, ctx.y
    gx = unbroadcast(dy * conj(y * ctx.x ** (y - 1)), ctx.shapes[0]) if ctx.needs[0] else None
    gy = None
    if ctx.needs[1]:
        # log x where it is defined: x > 0 for real x, x != 0 for complex x.
        defined = bind(NOT_EQUAL, (x, zeros_like(x))) if x.dtype.is_complex else x > 0
        safe_log = where(defined, log(where(defined, x, ones_like(x))), zeros_like(x))
        gy = unbroadcast(dy * conj(safe_log * ctx.out), ctx.shapes[1])
    return gx, gy


def _pow_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(np.asarray(y) < 0):
        raise InvalidArgumentError("Integers to negative integer powers are not allowed "
                                   "[Op:Pow]", op="Pow")
    with np.errstate(all="ignore"):
        return np.power(x, y)


POW = binary_entry("Pow", _pow_kernel, "{0} ** {1}", grad=_pow_grad, saves=("x", "y", "out"),
                   allowed=_is_signed_or_complex, what=_SIGNED_OR_COMPLEX, domain=(0.5, 2.0))


def _maximum_grad(ctx, dy):
    x_wins = ctx.x >= ctx.y  # ties go to the first argument, as in TensorFlow
    zeros = zeros_like(dy)
    return (unbroadcast(where(x_wins, dy, zeros), ctx.shapes[0]),
            unbroadcast(where(x_wins, zeros, dy), ctx.shapes[1]))


def _minimum_grad(ctx, dy):
    x_wins = ctx.x <= ctx.y
    zeros = zeros_like(dy)
    return (unbroadcast(where(x_wins, dy, zeros), ctx.shapes[0]),
            unbroadcast(where(x_wins, zeros, dy), ctx.shapes[1]))


MAXIMUM = binary_entry("Maximum", np.maximum, "max({0}, {1})", grad=_maximum_grad, smooth=False)
MINIMUM = binary_entry("Minimum", np.minimum, "min({0}, {1})", grad=_minimum_grad, smooth=False)
SQUARED_DIFFERENCE = binary_entry(
    "SquaredDifference", lambda x, y: np.square(x - y), "({0} - {1}) * ({0} - {1})",
    allowed=_is_wide_number, what="float, int32 or int64 types",
    grad=lambda ctx, dy: (unbroadcast(dy * (2.0 * (ctx.x - ctx.y)), ctx.shapes[0]),
                          unbroadcast(dy * (2.0 * (ctx.y - ctx.x)), ctx.shapes[1])))

def _xlogy_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, np.zeros_like(x), x * np.log(y))


def _xlogy_grad(ctx, dy):
    # TensorFlow's _XLogyGrad: where x is 0 both partials are 0, whatever y is.
    x_is_zero = bind(EQUAL, (ctx.x, zeros_like(ctx.x)))
    gx = gy = None
    if ctx.needs[0]:
        x_not_zero = cast(bind(LOGICAL_NOT, (x_is_zero,)), ctx.x.dtype)
        gx = unbroadcast(dy * xlogy(x_not_zero, ctx.y), ctx.shapes[0])
    if ctx.needs[1]:
        ratio = ctx.x / ctx.y
        gy = unbroadcast(dy * where(x_is_zero, zeros_like(ratio), ratio), ctx.shapes[1])
    return gx, gy


XLOGY = binary_entry("Xlogy", _xlogy_kernel, "(0 if {0} == 0 else {0} * log_f({1}))",
                     grad=_xlogy_grad, allowed=is_float, what="float types", domain=(0.2, 3.0))

# TensorFlow's _NextAfterGrad: the step is too small to matter, so x1 passes the
# gradient through and x2 gets none.
NEXT_AFTER = binary_entry(
    "NextAfter", np.nextafter, "nextafter_f({0}, {1})", args=("x1", "x2"),
    saves=(), allowed=lambda d: d.name in ("float32", "float64"), what="float32, float64",
    grad=lambda ctx, dy: (unbroadcast(dy, ctx.shapes[0]),
                          unbroadcast(zeros_like(dy), ctx.shapes[1])))


NEG = unary_entry("Neg", operator.neg, "-{0}", saves=(), allowed=_is_signed_or_complex,
                  what=_SIGNED_OR_COMPLEX, grad=lambda ctx, dy: (-dy,))
SQUARE = unary_entry("Square", np.square, "{0} * {0}", allowed=is_number, what=_NUMBER,
                     grad=lambda ctx, dy: (dy * conj(ctx.x * 2.0),))
SQRT = unary_entry("Sqrt", np.sqrt, "sqrt_f({0})", saves=("out",), allowed=is_inexact,
                   what=_INEXACT, grad=lambda ctx, dy: (sqrt_grad(ctx.out, dy),),
                   domain=(0.2, 3.0))
RSQRT = unary_entry("Rsqrt", lambda x: 1 / np.sqrt(x), "1 / sqrt_f({0})", saves=("out",),
                    grad=lambda ctx, dy: (rsqrt_grad(ctx.out, dy),), domain=(0.2, 3.0))
RECIPROCAL = unary_entry("Reciprocal", np.reciprocal, "1 / {0}", saves=("out",),
                         allowed=is_inexact, what=_INEXACT,
                         grad=lambda ctx, dy: (reciprocal_grad(ctx.out, dy),), domain=(0.5, 2.0))
EXP = unary_entry("Exp", np.exp, "exp_f({0})", saves=("out",), allowed=is_inexact,
                  what=_INEXACT, grad=lambda ctx, dy: (bind(MUL, (dy, conj(ctx.out))),))
EXPM1 = unary_entry("Expm1", np.expm1, "expm1_f({0})",
                    grad=lambda ctx, dy: (dy * exp(ctx.x),))
# erf'(x) = 2/sqrt(pi) exp(-x^2); erfc = 1 - erf.
_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
ERF = unary_entry("Erf", lambda x: special.erf(x).astype(x.dtype, copy=False), "erf_f({0})",
                  grad=lambda ctx, dy: (dy * (_TWO_OVER_SQRT_PI * exp(-square(ctx.x))),))
ERFC = unary_entry("Erfc", lambda x: special.erfc(x).astype(x.dtype, copy=False), "erfc_f({0})",
                   grad=lambda ctx, dy: (dy * (-_TWO_OVER_SQRT_PI * exp(-square(ctx.x))),))
LOG = unary_entry("Log", np.log, "log_f({0})", allowed=is_inexact, what=_INEXACT,
                  grad=lambda ctx, dy: (dy * reciprocal(conj(ctx.x)),), domain=(0.2, 3.0))
LOG1P = unary_entry("Log1p", np.log1p, "log1p_f({0})",
                    grad=lambda ctx, dy: (dy * reciprocal(1.0 + ctx.x),), domain=(-0.5, 2.0))
SIN = unary_entry("Sin", np.sin, "sin_f({0})",
                  grad=lambda ctx, dy: (bind(MUL, (dy, bind(COS, (ctx.x,)))),))
COS = unary_entry("Cos", np.cos, "cos_f({0})",
                  grad=lambda ctx, dy: (bind(MUL, (bind(NEG, (dy,)), bind(SIN, (ctx.x,)))),))
TAN = unary_entry("Tan", np.tan, "tan_f({0})",
                  grad=lambda ctx, dy: (dy * square(reciprocal(cos(ctx.x))),), domain=(-1.2, 1.2))
TANH = unary_entry("Tanh", np.tanh, "tanh_f({0})", saves=("out",),
                   grad=lambda ctx, dy: (tanh_grad(ctx.out, dy),), domain=(-3.0, 3.0))


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


SIGMOID = unary_entry("Sigmoid", _sigmoid, "sigmoid_f({0})", saves=("out",),
                      grad=lambda ctx, dy: (sigmoid_grad(ctx.out, dy),), domain=(-4.0, 4.0))
ABS = unary_entry("Abs", np.abs, "abs({0})", allowed=_is_signed, what=_SIGNED,
                  grad=lambda ctx, dy: (dy * sign(ctx.x),), smooth=False)
SIGN = unary_entry("Sign", np.sign, "sign_f({0})", allowed=_is_signed, what=_SIGNED,
                   saves=(), grad=lambda ctx, dy: (zeros_like(dy),), smooth=False)
ROUND = unary_entry("Round", np.round, "round_f({0})", allowed=is_numeric, what="numeric types")
FLOOR = unary_entry("Floor", np.floor, "floor_f({0})")
CEIL = unary_entry("Ceil", np.ceil, "ceil_f({0})")
RELU = unary_entry("Relu", lambda x: np.maximum(x, np.zeros((), x.dtype)), "max({0}, 0)",
                   allowed=is_numeric, what="numeric types", saves=("out",),
                   grad=lambda ctx, dy: (relu_grad(dy, ctx.out),), smooth=False)


def _elu(x):
    with np.errstate(over="ignore"):
        return np.where(x > 0, x, np.expm1(np.minimum(x, 0))).astype(x.dtype, copy=False)


ELU = unary_entry("Elu", _elu, "({0} if {0} > 0 else expm1_f({0}))", saves=("out",),
                  grad=lambda ctx, dy: (bind(ELU_GRAD, (dy, ctx.out)),), smooth=False)


def _softplus(x):
    with np.errstate(over="ignore"):
        return (np.logaddexp(0, x)).astype(x.dtype, copy=False)


SOFTPLUS = unary_entry("Softplus", _softplus, "softplus_f({0})",
                       grad=lambda ctx, dy: (bind(SOFTPLUS_GRAD, (dy, ctx.x)),), domain=(-4.0, 4.0))

IDENTITY = unary_entry("Identity", lambda x: x, "{0}", allowed=any_dtype, what="any type",
                       saves=(), grad=lambda ctx, dy: (dy,))
STOP_GRADIENT = unary_entry("StopGradient", lambda x: x, "{0}", allowed=any_dtype,
                            what="any type")


def _cast_infer(x, dtype):
    return x._shape, dtype


def _cast_kernel(x, dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real  # TensorFlow's Cast keeps a complex number's real part
    with np.errstate(all="ignore"):
        return x.astype(dtype._np)


def _cast_grad(ctx, dy):
    # TensorFlow's _CastGrad: only between float and complex dtypes (a complex gradient
    # cast to a real source keeps its real part).
    if is_inexact(ctx.dtypes[0]) and is_inexact(dy.dtype):
        return (cast(dy, ctx.dtypes[0]),)
    return (None,)


CAST = register(OpDef(
    name="Cast", args=("x",), infer=_cast_infer, eager=_cast_kernel, emit="cast({0})",
    elementwise=True, saves=(), grad=_cast_grad))

# -- comparison and logic -------------------------------------------------------------

_CMP = dict(out_dtype=dtypes.bool, allowed=is_numeric, what="numeric types")
LESS = binary_entry("Less", operator.lt, "{0} < {1}", **_CMP)
LESS_EQUAL = binary_entry("LessEqual", operator.le, "{0} <= {1}", **_CMP)
GREATER = binary_entry("Greater", operator.gt, "{0} > {1}", **_CMP)
GREATER_EQUAL = binary_entry("GreaterEqual", operator.ge, "{0} >= {1}", **_CMP)
EQUAL = binary_entry("Equal", np.equal, "{0} == {1}", out_dtype=dtypes.bool, allowed=any_dtype,
                     what="any type")
NOT_EQUAL = binary_entry("NotEqual", np.not_equal, "{0} != {1}", out_dtype=dtypes.bool,
                         allowed=any_dtype, what="any type")
LOGICAL_AND = binary_entry("LogicalAnd", np.logical_and, "{0} and {1}", allowed=is_bool,
                           what="bool")
LOGICAL_OR = binary_entry("LogicalOr", np.logical_or, "{0} or {1}", allowed=is_bool, what="bool")
LOGICAL_NOT = unary_entry("LogicalNot", np.logical_not, "not {0}", allowed=is_bool, what="bool")


def _select_infer(condition, x, y):
    if not condition.dtype.is_bool:
        raise InvalidArgumentError(
            f"condition must be bool, got {rules.describe(condition)} [Op:SelectV2]",
            op="SelectV2")
    rules.check_same_dtype("SelectV2", (x, y))
    shape = rules.broadcast_shapes("SelectV2", x._shape, y._shape)
    return rules.broadcast_shapes("SelectV2", condition._shape, shape), x.dtype


def _select_grad(ctx, dy):
    zeros = zeros_like(dy)
    return (None,
            unbroadcast(where(ctx.condition, dy, zeros), ctx.shapes[1]) if ctx.needs[1]
            else None,
            unbroadcast(where(ctx.condition, zeros, dy), ctx.shapes[2]) if ctx.needs[2]
            else None)


SELECT = register(OpDef(
    name="SelectV2", args=("condition", "x", "y"), infer=_select_infer, eager=np.where,
    emit="({1} if {0} else {2})", elementwise=True, saves=("condition",), grad=_select_grad,
    smooth=False))


def _clip_infer(t, clip_value_min, clip_value_max):
    rules.check_same_dtype("ClipByValue", (t, clip_value_min, clip_value_max))
    if not is_numeric(t.dtype):
        rules.check_dtype_in("ClipByValue", t, is_numeric, "numeric types")
    for bound in (clip_value_min, clip_value_max):
        if rules.broadcast_shapes("ClipByValue", t._shape, bound._shape) != t._shape:
            raise InvalidArgumentError(
                f"clip_value_min and clip_value_max must be scalars or have the shape of t: "
                f"t {list(t._shape)}, bound {list(bound._shape)} [Op:ClipByValue]",
                op="ClipByValue")
    return t._shape, t.dtype


def _clip_grad(ctx, dy):
    # TensorFlow's clip_by_value is maximum(minimum(t, max), min), differentiated as
    # those two ops: t keeps the gradient where t <= max and min(t, max) >= min (so a NaN
    # t gives it to min, and min > max gives every element to min).
    zeros = zeros_like(dy)
    not_above = ctx.t <= ctx.clip_value_max
    not_below = minimum(ctx.t, ctx.clip_value_max) >= ctx.clip_value_min
    return (where(logical_and(not_above, not_below), dy, zeros),
            unbroadcast(where(not_below, zeros, dy), ctx.shapes[1]) if ctx.needs[1] else None,
            unbroadcast(where(logical_and(not_below, logical_not(not_above)), dy, zeros),
                        ctx.shapes[2]) if ctx.needs[2] else None)


CLIP_BY_VALUE = register(OpDef(
    name="ClipByValue", args=("t", "clip_value_min", "clip_value_max"), infer=_clip_infer,
    eager=lambda t, lo, hi: np.maximum(np.minimum(t, hi), lo), emit="max(min({0}, {2}), {1})",
    elementwise=True, saves=("t", "clip_value_min", "clip_value_max"), grad=_clip_grad,
    smooth=False))

# -- public wrappers --------------------------------------------------------------------


def add(x, y, name=None):
    """x + y elementwise, with broadcasting; dtypes must match (no promotion).

    As TensorFlow's add, a Python `y` takes a tensor `x`'s dtype only as a hint: one it
    cannot hold (`int_tensor + 1.5`, `x + (1 + 2j)`) is AddV2's InvalidArgumentError
    about the two dtypes, where the other operators raise the conversion's TypeError."""
    try:
        operands = operand_pair(x, y)
    except TypeError:
        if not isinstance(x, _Operators) or isinstance(y, _Operators):
            raise
        if np.asarray(y).dtype.kind in "US":
            _no_string_tensor(x)
        operands = x, convert_to_tensor(y)
    return bind(ADD, operands)


def _no_string_tensor(x):
    """AddV2's error for `x + y`, `y` a string: tapeflow has no string tensors, so this
    is raised here rather than by infer."""
    error = rules.dtype_error(
        f"cannot compute AddV2 as input #1(zero-based) was expected to be a "
        f"{x.dtype.name} tensor but is a string tensor [Op:AddV2]", "AddV2")
    if context.current_graph.get() is not None:
        error = raised_while_tracing(error)
    raise error


def subtract(x, y, name=None):
    return bind(SUB, operand_pair(x, y))


def multiply(x, y, name=None):
    return bind(MUL, operand_pair(x, y))


def _float_for_int(dtype):
    return dtypes.float32 if dtype.size <= 2 and dtype.is_integer else dtypes.float64


def truediv(x, y, name=None):
    """x / y; integers are first cast to float64 (float32 for 8/16-bit), as TensorFlow."""
    return bind(REAL_DIV, true_division_operands(x, y, "__truediv__"))


def true_division_operands(x, y, where):
    """x and y for a true division (`where` names it in errors): integers cast to float64
    (float32 for 8/16-bit). TensorFlow checks these in Python, before any kernel: a
    TypeError, not the kernel's InvalidArgumentError."""
    x, y = operand_pair(x, y)
    if x.dtype is not y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != "
                        f"{y.dtype!r}.")
    if x.dtype.is_bool:
        raise TypeError(f"Invalid dtype {x.dtype!r} in {where}. Expected one of the "
                        f"integer, floating or complex types.")
    if x.dtype.is_integer:
        target = _float_for_int(x.dtype)
        x, y = cast(x, target), cast(y, target)
    return x, y


def divide(x, y, name=None):
    return truediv(x, y)


def realdiv(x, y, name=None):
    return bind(REAL_DIV, operand_pair(x, y))


def floordiv(x, y, name=None):
    x, y = operand_pair(x, y)
    if x.dtype.is_floating and x.dtype is y.dtype:
        return floor(bind(REAL_DIV, (x, y)))
    return bind(FLOOR_DIV, (x, y))


floor_div = floordiv


def floormod(x, y, name=None):
    return bind(FLOOR_MOD, operand_pair(x, y))


mod = floormod


def pow(x, y, name=None):  # noqa: A001 - TensorFlow's name
    return bind(POW, operand_pair(x, y))


def maximum(x, y, name=None):
    return bind(MAXIMUM, operand_pair(x, y))


def minimum(x, y, name=None):
    return bind(MINIMUM, operand_pair(x, y))


def squared_difference(x, y, name=None):
    return bind(SQUARED_DIFFERENCE, operand_pair(x, y))


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0 (even where y is 0), as tf.math.xlogy."""
    return bind(XLOGY, operand_pair(x, y))


def nextafter(x1, x2, name=None):
    """The next representable float after x1 towards x2, elementwise (tf.math.nextafter,
    C's nextafter); float32 or float64."""
    return bind(NEXT_AFTER, operand_pair(x1, x2))


def unary_api(op):
    def public(x, name=None):
        return bind(op, (x if type(x) is Tensor else rules.as_tensor(x),))
    public.__name__ = public.__qualname__ = op.name.lower()
    public.__doc__ = f"Elementwise {op.name} (TensorFlow's tf.math op of that name)."
    return public


def _activation_api(op):
    """A tf.nn activation: TensorFlow names its argument `features`."""
    def public(features, name=None):
        return bind(op, (features if type(features) is Tensor else rules.as_tensor(features),))
    public.__name__ = public.__qualname__ = op.name.lower()
    public.__doc__ = f"Elementwise {op.name} (tf.nn.{op.name.lower()}(features))."
    return public


negative = unary_api(NEG)
square = unary_api(SQUARE)
sqrt = unary_api(SQRT)
rsqrt = unary_api(RSQRT)
reciprocal = unary_api(RECIPROCAL)
exp = unary_api(EXP)
expm1 = unary_api(EXPM1)
erf = unary_api(ERF)
erfc = unary_api(ERFC)
log = unary_api(LOG)
log1p = unary_api(LOG1P)
sin = unary_api(SIN)
cos = unary_api(COS)
tan = unary_api(TAN)
tanh = unary_api(TANH)
sigmoid = unary_api(SIGMOID)
def abs(x, name=None):  # noqa: A001 - TensorFlow's name
    """|x| elementwise; of complex numbers their modulus, a real tensor (ComplexAbs)."""
    x = x if type(x) is Tensor else rules.as_tensor(x)
    if x.dtype.is_complex:
        from .complex_parts import complex_abs
        return complex_abs(x)
    return bind(ABS, (x,))
sign = unary_api(SIGN)
round = unary_api(ROUND)  # noqa: A001
rint = round  # TensorFlow's Round already rounds half to even, as rint
floor = unary_api(FLOOR)
ceil = unary_api(CEIL)
relu = _activation_api(RELU)
elu = _activation_api(ELU)
softplus = _activation_api(SOFTPLUS)
logical_not = unary_api(LOGICAL_NOT)


def identity(input, name=None):  # noqa: A002
    return bind(IDENTITY, (rules.as_tensor(input),))


def scalar_mul(scalar, x, name=None):
    """scalar * x, for a scalar (tf.math.scalar_mul)."""
    scalar = rules.as_tensor(scalar, getattr(x, "dtype", None))
    if scalar._shape:
        raise ValueError(f"Only scalar multiply works, got shape {list(scalar._shape)}")
    return multiply(scalar, x)


def stop_gradient(input, name=None):  # noqa: A002
    """Passes `input` through; no gradient flows back through it."""
    return bind(STOP_GRADIENT, (rules.as_tensor(input),))


def cast(x, dtype, name=None):
    """Casts `x` to `dtype`; casting to the same dtype returns `x` unchanged."""
    dtype = dtypes.as_dtype(dtype)
    x = rules.as_tensor(x) if not isinstance(x, _Operators) else convert_to_tensor(x)
    if x.dtype is dtype:
        return x
    return bind(CAST, (x,), {"dtype": dtype})


def less(x, y, name=None):
    return bind(LESS, operand_pair(x, y))


def less_equal(x, y, name=None):
    return bind(LESS_EQUAL, operand_pair(x, y))


def greater(x, y, name=None):
    return bind(GREATER, operand_pair(x, y))


def greater_equal(x, y, name=None):
    return bind(GREATER_EQUAL, operand_pair(x, y))


def equal(x, y, name=None):
    return bind(EQUAL, operand_pair(x, y))


def not_equal(x, y, name=None):
    return bind(NOT_EQUAL, operand_pair(x, y))


def logical_and(x, y, name=None):
    return bind(LOGICAL_AND, operand_pair(x, y))


def logical_or(x, y, name=None):
    return bind(LOGICAL_OR, operand_pair(x, y))


def logical_xor(x, y, name=None):
    """x ^ y of bool tensors, built as TensorFlow builds it: (x | y) & ~(x & y)."""
    x, y = operand_pair(x, y)
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


# -- bitwise ops: what `&`, `|`, `^` and `~` run on integer tensors (no gradient, as TF) --

BITWISE_AND = binary_entry("BitwiseAnd", np.bitwise_and, "{0} & {1}", allowed=is_integer,
                           what="integer types")
BITWISE_OR = binary_entry("BitwiseOr", np.bitwise_or, "{0} | {1}", allowed=is_integer,
                          what="integer types")
BITWISE_XOR = binary_entry("BitwiseXor", np.bitwise_xor, "{0} ^ {1}", allowed=is_integer,
                           what="integer types")
INVERT = unary_entry("Invert", np.invert, "~{0}", allowed=is_integer, what="integer types")


# -- what the Python operators run where TensorFlow's operator differs from its tf.* op ---

def and_operator(x, y):
    """`x & y`: logical_and when x is bool, else TensorFlow's bitwise and."""
    x, y = operand_pair(x, y)
    return bind(LOGICAL_AND if x.dtype.is_bool else BITWISE_AND, (x, y))


def or_operator(x, y):
    """`x | y`: logical_or when x is bool, else TensorFlow's bitwise or."""
    x, y = operand_pair(x, y)
    return bind(LOGICAL_OR if x.dtype.is_bool else BITWISE_OR, (x, y))


def xor_operator(x, y):
    """`x ^ y`: logical_xor when x is bool, else TensorFlow's bitwise xor."""
    x, y = operand_pair(x, y)
    return logical_xor(x, y) if x.dtype.is_bool else bind(BITWISE_XOR, (x, y))


def invert_operator(x):
    """`~x`: logical_not of a bool tensor, else TensorFlow's bitwise invert."""
    x = rules.as_tensor(x)
    return bind(LOGICAL_NOT if x.dtype.is_bool else INVERT, (x,))


def multiply_operator(x, y):
    """`x * y`: tf.multiply, except that with a bool tensor on either side both operands
    are multiplied as int32 and the product is cast back to bool, as TensorFlow's
    operator does (tf.multiply itself rejects bool). A Python value on the left (`2.5 *
    t`, the reflected operator) is first converted to t's dtype, as TensorFlow does, so
    `2.5 * bool_tensor` fails while `bool_tensor * 2.5` works."""
    try:
        return bind(MUL, operand_pair(x, y))
    except (InvalidArgumentError, TypeError):
        # Raised by the conversion or by infer, before anything was recorded; the common
        # path pays nothing for this rare case.
        if not any(isinstance(v, _Operators) and v.dtype.is_bool for v in (x, y)):
            raise
    if not isinstance(x, (_Operators, np.ndarray, np.generic)):
        x = convert_to_tensor(x, dtype=y.dtype)
    return cast(multiply(cast(x, dtypes.int32), cast(y, dtypes.int32)), dtypes.bool)


def _equality(op, x, y):
    # `==` on Tensors is elementwise; shapes that cannot broadcast compare unequal, and a
    # value that cannot be converted is simply not equal, as in TensorFlow.
    try:
        x, y = operand_pair(x, y)
        if x.dtype is not y.dtype:
            return op is NOT_EQUAL
        rules.broadcast_shapes(op.name, x._shape, y._shape)
    except (InvalidArgumentError, TypeError, ValueError):
        return op is NOT_EQUAL
    return bind(op, (x, y))


def tensor_equals(x, y):
    if y is None:
        return False
    return _equality(EQUAL, x, y)


def tensor_not_equals(x, y):
    if y is None:
        return True
    return _equality(NOT_EQUAL, x, y)


def where(condition, x=None, y=None, name=None):
    """Elementwise choice between x and y; with only `condition`, the indices of True."""
    if x is None and y is None:
        from .indexing import where_indices
        return where_indices(condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    condition = rules.as_tensor(condition)
    x, y = operand_pair(x, y)
    return bind(SELECT, (condition, x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips values to [min, max]; the gradient passes through inside, bounds included."""
    t, lo, hi = rules.as_tensors(t, clip_value_min, clip_value_max)
    return bind(CLIP_BY_VALUE, (t, lo, hi))


def zeros_like(x):
    from .creation import zeros_like as _zeros_like
    return _zeros_like(x)


def ones_like(x):
    from .creation import ones_like as _ones_like
    return _ones_like(x)


__all__ = [
    "add", "subtract", "multiply", "truediv", "divide", "realdiv", "floordiv", "floormod",
    "pow", "maximum", "minimum", "squared_difference", "xlogy", "identity", "stop_gradient", "cast",
    "rint", "scalar_mul", "conj",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
    "logical_or", "tensor_equals", "tensor_not_equals", "where", "clip_by_value", "floor_div",
    "mod", "negative", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1", "erf", "erfc", "log", "log1p",
    "sin", "cos", "tan", "tanh", "sigmoid", "abs", "sign", "round", "floor", "ceil", "relu",
    "elu", "softplus", "logical_not", "logical_xor", "and_operator", "or_operator",
    "xor_operator", "invert_operator", "multiply_operator"]
