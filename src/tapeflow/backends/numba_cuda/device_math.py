"""The device functions that elementwise templates name once expanded (`exp_f({0})` ->
exp_f32 or exp_f64; `max` -> maximum; `round_f` -> rint), on libdevice through `math.*`: one per helper and float dtype, each returning
its dtype, so float32 stays float32 and the simulator keeps NumPy's float semantics (a
Python float would raise on x / 0 there). `inline="always"` lets them compile for a
real target without a device present; fastmath stays off (in numba-cuda any truthy
value turns on flush-to-zero and approximate division, sqrt and tanh).

Under numba-cuda's simulator the device functions are plain Python, where math.*
raises on a domain error (log(0), sqrt(-1), exp(1000)); there the helpers call NumPy's
ufuncs on scalars instead, which return inf and NaN as the device does (and which would
not compile for a real target).

Imported only when a kernel is first generated: it loads numba-cuda.
"""

import math
import types

import numpy as np

from .device import cuda, simulated

_device = cuda().jit(device=True, inline="always")

# 2**52: every float64 at or above it is an integer already (float32 values are
# widened to float64 exactly before rounding).
_INTEGRAL = 4503599627370496.0


_UNARY_NAMES = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "erf", "erfc",
                "exp", "expm1", "log", "log1p", "sin", "sinh", "sqrt", "tan", "tanh")
_NAMES = _UNARY_NAMES + ("atan2", "pow", "nextafter", "isfinite", "isinf", "fmod",
                         "copysign")
# NumPy spells three of them differently; erf and erfc it lacks (math's never raise).
_NUMPY_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
                "atan": "arctan", "atanh": "arctanh", "atan2": "arctan2", "pow": "power"}


def _scalar_power(x, y):
    """NumPy scalars' `**`: C's pow, as the device's ((-inf) ** 0.5 is inf), where the
    np.power ufunc on scalars gives NaN."""
    return x ** y


def _library():
    if not simulated():
        return {name: getattr(math, name) for name in _NAMES}
    return {name: getattr(math, name) if name in ("erf", "erfc")
            else _scalar_power if name == "pow"
            else getattr(np, _NUMPY_NAMES.get(name, name)) for name in _NAMES}


_LIB = _library()
_exp, _log1p = _LIB["exp"], _LIB["log1p"]
_fmod, _copysign = _LIB["fmod"], _LIB["copysign"]


def _floor(x):
    if not abs(x) < _INTEGRAL:  # integral, inf or NaN: itself
        return x
    return float(math.floor(x))


def _ceil(x):
    if not abs(x) < _INTEGRAL:
        return x
    return float(math.ceil(x))


def _rint(x):
    """Rounds half to even, as np.round and TensorFlow's Round."""
    if not abs(x) < _INTEGRAL:
        return x
    r = float(math.floor(x + 0.5))
    if r - x == 0.5 and r - 2.0 * float(math.floor(r * 0.5)) != 0.0:
        r -= 1.0
    return r


def _softplus_tail(x, t):
    """softplus(x) given t = exp(-|x|), the form the template expansion calls."""
    return max(x, 0.0) + _log1p(t)


def _sigmoid(x):
    return 1.0 / (1.0 + _exp(-x))


def _softplus(x):
    """NumPy's logaddexp(0, x): max(x, 0) + log1p(exp(-|x|))."""
    return max(x, 0.0) + _log1p(_exp(-abs(x)))


# Template helper name -> the function of one float argument it computes.
UNARY = {**{name: _LIB[name] for name in _UNARY_NAMES}, "sigmoid": _sigmoid,
         "softplus": _softplus}
BINARY = {"atan2": _LIB["atan2"], "pow": _LIB["pow"], "nextafter": _LIB["nextafter"],
          "softplus_tail": _softplus_tail}
PREDICATES = {"isfinite": _LIB["isfinite"], "isinf": _LIB["isinf"]}

_FLOATS = {"f32": np.float32, "f64": np.float64}


def _typed_unary(fn, kind):
    def helper(x):
        return kind(fn(x))
    return helper


def _typed_binary(fn, kind):
    def helper(x, y):
        return kind(fn(x, y))
    return helper


def _predicate(fn):
    def helper(x):
        return fn(x)
    return helper


def _callable_on_device(fn):
    """math.* (and NumPy's ufuncs) are; tapeflow's own become device functions."""
    return _device(fn) if isinstance(fn, types.FunctionType) else fn


def _helpers():
    found = {}
    for suffix, kind in _FLOATS.items():
        for name, fn in UNARY.items():
            found[f"{name}_{suffix}"] = _device(_typed_unary(_callable_on_device(fn), kind))
        for name, fn in BINARY.items():
            found[f"{name}_{suffix}"] = _device(_typed_binary(_callable_on_device(fn), kind))
        for name, fn in PREDICATES.items():
            found[f"{name}_{suffix}"] = _device(_predicate(fn))
    return found


@_device
def maximum(x, y):
    """NumPy's maximum: NaN if either is NaN."""
    return x if x > y or x != x else y


@_device
def minimum(x, y):
    return x if x < y or x != x else y


@_device
def ipow(x, y):
    """An integer to a non-negative integer power, by squaring (wrapping as TensorFlow's)."""
    result = x - x + 1
    while y > 0:
        if y & 1:
            result *= x
        x *= x
        y >>= 1
    return result


_FLOOR = _device(_floor)


def _floor_division(kind):
    """NumPy's floor_divide and remainder of floats (its npy_divmod) in `kind`, from fmod,
    which libdevice computes exactly. Python's `//` and `%` compile to LLVM's frem, which
    the device expands as x - y * trunc(x / y): NaN for an infinite divisor where NumPy
    and TensorFlow give x, and inexact for large quotients."""
    zero, one, half = kind(0.0), kind(1.0), kind(0.5)
    floor = _FLOOR

    @_device
    def quotient_and_remainder(a, b):
        mod = _fmod(a, b)
        div = (a - mod) / b
        if mod != zero:  # NaN too, as C's `if (mod)`
            if (b < zero) != (mod < zero):
                mod += b
                div -= one
        else:
            mod = _copysign(zero, b)  # a zero remainder takes the divisor's sign
        if div != zero:
            quotient = kind(floor(div))
            if div - quotient > half:
                quotient += one
        else:
            quotient = _copysign(zero, a / b)
        return quotient, mod

    def floordiv(a, b):
        if b == zero:
            return a / b  # inf or NaN, as NumPy's
        return quotient_and_remainder(a, b)[0]

    def floormod(a, b):
        if b == zero:
            return _fmod(a, b)  # NaN
        return quotient_and_remainder(a, b)[1]
    return _device(floordiv), _device(floormod)


def _division_helpers():
    found = {}
    for suffix, kind in _FLOATS.items():
        found[f"floordiv_{suffix}"], found[f"floormod_{suffix}"] = _floor_division(kind)
    return found


# Rounding to integers in the float's own type (the expansion's rint, floor, ceil).
HELPERS = {**_helpers(), "maximum": maximum, "minimum": minimum, "ipow": ipow,
           "rint": _device(_rint), "floor": _FLOOR, "ceil": _device(_ceil),
           **_division_helpers()}


def _special_helpers():
    """ops/special.py's helpers, from the CPU helpers' source (special_math.py)."""
    from .device import simulated
    from .special_math import device_helpers
    return device_helpers(_device, _floor, simulated())


HELPERS.update(_special_helpers())


def _random_helpers():
    """random.py's draws (device_random.py)."""
    from .device_random import HELPERS as random
    return random


HELPERS.update(_random_helpers())
