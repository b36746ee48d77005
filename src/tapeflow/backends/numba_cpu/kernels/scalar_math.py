"""Scalar math the fused loops call: short polynomials LLVM can inline and vectorize.

The float32 transcendental helpers are short polynomials (Cephes' coefficients) with
branch-free handling of NaN, Inf, zero and denormals, so that a fused loop over them
vectorizes: the pip llvmlite has no SVML, and a libm call per element would make a fused
loop slower than NumPy. They agree with NumPy's float32 results to a few ulps (measured:
relative error <= 3e-7), NaN and Inf included, with one exception: sin, cos and tan reduce
their argument in float64 (Cody-Waite), exact to ~1e-9 for |x| < 2**30 and NaN past 2**50,
where NumPy still gives the (meaningless but exact) value. float64 uses libm (`math.*`),
as NumPy does. The helpers may contract a * b + c into an FMA (more accurate, never less).

This file's text is part of every generated kernel's cache key (numba_cpu/cache.py):
editing it invalidates the compiled kernels that call it.
"""

# ruff: noqa: PLR0124, FURB136 - `x != x` is the NaN test, and `a if a >= b else b` is
# not max(a, b) when b is NaN: both are explicit selects, branch-free, which LLVM vectorizes.
import math

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.extending import intrinsic, overload

from . import helper as _jit
from . import inlined_helper as _inlined
from .allocation import empty_array
from .views import reshaped

# -- bit casts ---------------------------------------------------------------------------

@intrinsic
def f32_as_i32(typingctx, x):
    """The bits of a float32, as an int32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def i32_as_f32(typingctx, x):
    """The float32 whose bits are the low 32 bits of the integer `x`."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = args[0]
        if x.bitwidth > 32:
            value = builder.trunc(value, ir.IntType(32))
        elif x.bitwidth < 32:
            value = builder.sext(value, ir.IntType(32))
        return builder.bitcast(value, ir.FloatType())
    return types.float32(x), codegen


if config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: kernels run as Python, for debugging
    def f32_as_i32(x):
        return np.asarray(x, np.float32).view(np.int32)[()]

    def i32_as_f32(x):
        return np.asarray(int(x) & 0xFFFFFFFF, np.uint32).view(np.float32)[()]

F32 = np.float32
F64 = np.float64


# -- float32 helpers ---------------------------------------------------------------------

@_jit
def pow2_f32(n):
    """2**n for an int32 n in [-126, 127], built from its bits."""
    return i32_as_f32(np.int32((n + np.int32(127)) << np.int32(23)))


@_jit
def exp_f32(x):
    # Cephes expf: x = n ln2 + r, |r| <= ln2 / 2; exp(r) by a degree-6 polynomial.
    xc = x if x < F32(89.0) else F32(89.0)  # not min(): an explicit select, NaN-safe
    xc = xc if xc > F32(-104.0) else F32(-104.0)
    n = np.floor(xc * F32(1.44269504088896341) + F32(0.5))
    r = xc - n * F32(0.693359375) - n * F32(-2.12194440e-4)
    z = r * r
    p = F32(1.9875691500e-4)
    p = p * r + F32(1.3981999507e-3)
    p = p * r + F32(8.3334519073e-3)
    p = p * r + F32(4.1665795894e-2)
    p = p * r + F32(1.6666665459e-1)
    p = p * r + F32(5.0000001201e-1)
    y = p * z + r + F32(1.0)
    # 2**n in two halves, so that overflow (inf) and denormal results come out right.
    k = np.int32(n)
    k1 = k >> np.int32(1)
    y = y * _pow2_f32_inlined(k1) * _pow2_f32_inlined(k - k1)
    return x if x != x else y


# Inlined where other helpers use them: as functions of their own, called, each was a
# compile of its own whose code was linked and optimized again in the caller all the
# same (tanh_f32's first compile 0.17 s before, 0.15 s after).
_pow2_f32_inlined = _inlined(pow2_f32.py_func)
_exp_f32_inlined = _inlined(exp_f32.py_func)


@_jit
def log_f32(x):
    # Cephes logf: x = m 2**e with m in [sqrt(1/2), sqrt(2)); log(m) by a polynomial.
    tiny = x < F32(1.17549435e-38)
    xs = x * F32(8388608.0) if tiny else x  # denormals: scale by 2**23 first
    bits = f32_as_i32(xs)
    e = ((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)
    e = e - np.int32(23) if tiny else e
    m = i32_as_f32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))  # [0.5, 1)
    low = m < F32(0.707106781186547524)
    e = e - np.int32(1) if low else e
    m = (m + m - F32(1.0)) if low else (m - F32(1.0))
    fe = F32(e)
    z = m * m
    y = F32(7.0376836292e-2)
    y = y * m + F32(-1.1514610310e-1)
    y = y * m + F32(1.1676998740e-1)
    y = y * m + F32(-1.2420140846e-1)
    y = y * m + F32(1.4249322787e-1)
    y = y * m + F32(-1.6668057665e-1)
    y = y * m + F32(2.0000714765e-1)
    y = y * m + F32(-2.4999993993e-1)
    y = y * m + F32(3.3333331174e-1)
    y = y * m * z
    y = y + fe * F32(-2.12194440e-4)
    y = y - F32(0.5) * z
    r = m + y + fe * F32(0.693359375)
    r = F32(-np.inf) if x == F32(0.0) else r
    r = F32(np.nan) if x < F32(0.0) else r
    return x if (x != x) or (x == F32(np.inf)) else r


@_jit
def _reduce_pio2(x):
    """(r, q): x = q pi/2 + r with |r| <= pi/4, in float64 (Cody-Waite, three parts)."""
    xd = F64(x)
    j = np.rint(xd * 0.636619772367581343)
    r = xd - j * 1.57079632673412561417e+00
    r = r - j * 6.07710050650619224932e-11
    r = r - j * 2.02226624879595063154e-21
    # Past 2**50 the three-part reduction has no correct bits left: NaN, not noise.
    r = r if abs(xd) < 1.125899906842624e15 else np.nan
    j = j if abs(xd) < 1.125899906842624e15 else 0.0
    return r, np.int64(j) & 3


@_jit
def _sin_poly(r):
    z = r * r
    p = 2.7557319223985893e-06
    p = p * z - 1.9841269841269841e-04
    p = p * z + 8.3333333333333333e-03
    p = p * z - 1.6666666666666667e-01
    return r + r * z * p


@_jit
def _cos_poly(r):
    z = r * r
    p = -2.7557319223985888e-07
    p = p * z + 2.4801587301587302e-05
    p = p * z - 1.3888888888888889e-03
    p = p * z + 4.1666666666666667e-02
    p = p * z - 0.5
    return 1.0 + z * p


@_jit
def sin_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = s if (q & 1) == 0 else c
    v = -v if q >= 2 else v
    return F32(v)


@_jit
def cos_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = c if (q & 1) == 0 else s
    v = -v if (q == 1 or q == 2) else v
    return F32(v)


@_jit
def tan_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = s / c if (q & 1) == 0 else -c / s
    return F32(v)


@_jit
def tanh_f32(x):
    # Cephes tanhf: a polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above.
    ax = abs(x)
    z = x * x
    p = F32(-5.70498872745e-3)
    p = p * z + F32(2.06390887954e-2)
    p = p * z + F32(-5.37397155531e-2)
    p = p * z + F32(1.33314422036e-1)
    p = p * z + F32(-3.33332819422e-1)
    small = p * z * x + x
    t = F32(1.0) - F32(2.0) / (_exp_f32_inlined(ax + ax) + F32(1.0))
    t = t if x > F32(0.0) else -t
    return small if ax < F32(0.625) else t


@_jit
def sigmoid_f32(x):
    return F32(1.0) / (F32(1.0) + _exp_f32_inlined(-x))


@_jit
def expm1_f32(x):
    # Taylor terms to x**8 below 0.5 (error < 1e-8), exp(x) - 1 above.
    p = F32(1.0 / 40320.0)
    p = p * x + F32(1.0 / 5040.0)
    p = p * x + F32(1.0 / 720.0)
    p = p * x + F32(1.0 / 120.0)
    p = p * x + F32(1.0 / 24.0)
    p = p * x + F32(1.0 / 6.0)
    p = p * x + F32(0.5)
    small = x + x * x * p
    big = exp_f32(x) - F32(1.0)
    return small if abs(x) < F32(0.5) else big


@_jit
def log1p_f32(x):
    # Goldberg: log(u) * x / (u - 1) with u = 1 + x is accurate near 0.
    u = F32(1.0) + x
    d = u - F32(1.0)
    d = d if d != F32(0.0) else F32(1.0)
    r = log_f32(u) * (x / d)
    r = x if u == F32(1.0) else r
    return x if x == F32(np.inf) else r


@_jit
def softplus_f32(x):
    """NumPy's logaddexp(0, x): max(x, 0) + log1p(exp(-|x|)).

    Generated code calls softplus_tail_f32(x, exp_f32(-abs(x))) instead: LLVM inlines two
    medium helpers into a loop, but not one helper that holds both exp and log."""
    return softplus_tail_f32(x, exp_f32(-abs(x)))


@_jit
def softplus_tail_f32(x, t):
    # log1p(t) for t = exp(-|x|) in (0, 1], by Goldberg's formula as in log1p_f32.
    m = x if x > F32(0.0) else F32(0.0)
    u = F32(1.0) + t
    d = u - F32(1.0)
    d = d if d != F32(0.0) else F32(1.0)
    lp = log_f32(u) * (t / d)
    return m + (t if u == F32(1.0) else lp)


@_jit
def sqrt_f32(x):
    return np.sqrt(x)


# -- float64 helpers: libm, as NumPy ---------------------------------------------------------

@_jit
def exp_f64(x):
    return math.exp(x)


@_jit
def log_f64(x):
    if x > 0.0 or x != x:
        return math.log(x)
    return -np.inf if x == 0.0 else np.nan


@_jit
def sin_f64(x):
    return math.sin(x) if abs(x) != np.inf else np.nan


@_jit
def cos_f64(x):
    return math.cos(x) if abs(x) != np.inf else np.nan


@_jit
def tan_f64(x):
    return math.tan(x) if abs(x) != np.inf else np.nan


@_jit
def tanh_f64(x):
    return math.tanh(x)


@_jit
def sigmoid_f64(x):
    return 1.0 / (1.0 + math.exp(-x))


@_jit
def expm1_f64(x):
    return math.expm1(x)


@_jit
def erf_f32(x):
    return F32(math.erf(x))


@_jit
def erfc_f32(x):
    return F32(math.erfc(x))


@_jit
def erf_f64(x):
    return math.erf(x)


@_jit
def erfc_f64(x):
    return math.erfc(x)


@_jit
def log1p_f64(x):
    if x > -1.0 or x != x:
        return math.log1p(x)
    return -np.inf if x == -1.0 else np.nan


@_jit
def softplus_f64(x):
    m = x if x > 0.0 else 0.0
    return m + math.log1p(math.exp(-abs(x)))


@_jit
def sqrt_f64(x):
    return np.sqrt(x)


# -- inverse trigonometric and hyperbolic: libm in both widths (rare in hot loops, so no
# polynomials of their own; NaN outside the domain, as NumPy)

@_jit
def asin_f32(x):
    return F32(math.asin(x))


@_jit
def asin_f64(x):
    return math.asin(x)


@_jit
def acos_f32(x):
    return F32(math.acos(x))


@_jit
def acos_f64(x):
    return math.acos(x)


@_jit
def atan_f32(x):
    return F32(math.atan(x))


@_jit
def atan_f64(x):
    return math.atan(x)


@_jit
def sinh_f32(x):
    return F32(math.sinh(x))


@_jit
def sinh_f64(x):
    return math.sinh(x)


@_jit
def cosh_f32(x):
    return F32(math.cosh(x))


@_jit
def cosh_f64(x):
    return math.cosh(x)


@_jit
def asinh_f32(x):
    return F32(math.asinh(x))


@_jit
def asinh_f64(x):
    return math.asinh(x)


@_jit
def acosh_f32(x):
    return F32(math.acosh(x))


@_jit
def acosh_f64(x):
    return math.acosh(x)


@_jit
def atanh_f32(x):
    return F32(math.atanh(x))


@_jit
def atanh_f64(x):
    return math.atanh(x)


@_jit
def atan2_f32(y, x):
    return F32(math.atan2(y, x))


@_jit
def atan2_f64(y, x):
    return math.atan2(y, x)


@_jit
def isinf_f32(x):
    return abs(x) == F32(np.inf)


@_jit
def isinf_f64(x):
    return abs(x) == np.inf


@_jit
def isfinite_f32(x):
    return abs(x) < F32(np.inf)  # False for NaN too


@_jit
def isfinite_f64(x):
    return abs(x) < np.inf


# -- helpers for any dtype -------------------------------------------------------------------

@_jit
def maximum(a, b):
    """np.maximum: NaN wins, ties give a. (Not Python's max(), which drops a NaN b.)"""
    r = a if a >= b else b
    return a if a != a else r


@_jit
def minimum(a, b):
    """np.minimum: NaN wins, ties give a."""
    r = a if a <= b else b
    return a if a != a else r


@_jit
def sign(x):
    """np.sign: -1, 0 or 1 (NaN stays NaN), in x's type."""
    one = x - x + 1
    return one if x > 0 else (-one if x < 0 else x)


@_jit
def rint(x):
    return np.rint(x)


@_jit
def floor(x):
    return np.floor(x)


@_jit
def ceil(x):
    return np.ceil(x)


@_jit
def ipow(x, y):
    """Integer power with wrap-around, as np.power on int32/int64 (y >= 0)."""
    result = x - x + 1
    base = x
    e = y
    while e > 0:
        if e & 1:
            result = result * base
        base = base * base
        e >>= 1
    return result


@_jit
def radd(a, b):
    """a + b where reassociation is allowed: only the accumulator of a reduction."""
    return a + b


@_jit
def rmul(a, b):
    return a * b


# Only the accumulation of a sum (or product) may be reassociated: that lets LLVM
# vectorize the loop, while every other operation keeps IEEE semantics (NaN and Inf
# included). The flags live on these two tiny functions; LLVM inlines them.
radd_fast = _jit(getattr(radd, "py_func", radd), fastmath=("reassoc", "contract"))
rmul_fast = _jit(getattr(rmul, "py_func", rmul), fastmath=("reassoc", "contract"))


@_jit
def int_mean(total, n):
    """TensorFlow's integer mean: truncated toward zero."""
    q = abs(total) // max(n, 1)
    return q if total >= 0 else -q


@_jit
def int_mean_array(total, n):
    out = empty_array(total.shape, total.dtype)
    flat = reshaped(total, total.size)
    o = reshaped(out, total.size)
    for i in range(flat.size):
        o[i] = int_mean(flat[i], n)
    return out


# A dtype-generic exp / log for the array kernels below.
def exp_t(x):
    return exp_f32(x) if isinstance(x, np.float32) else math.exp(x)


@overload(exp_t, jit_options={"error_model": "numpy"})
def _exp_t(x):
    if x == types.float32:
        return lambda x: exp_f32(x)
    return lambda x: math.exp(x)


def log_t(x):
    return log_f32(x) if isinstance(x, np.float32) else log_f64(x)


@overload(log_t, jit_options={"error_model": "numpy"})
def _log_t(x):
    if x == types.float32:
        return lambda x: log_f32(x)
    return lambda x: log_f64(x)


@_jit
def nextafter_f32(x, y):
    return F32(np.nextafter(F32(x), F32(y)))


@_jit
def nextafter_f64(x, y):
    return math.nextafter(x, y)
