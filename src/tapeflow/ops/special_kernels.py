"""The NumPy kernels of ops/special.py: SciPy's special functions with TensorFlow's
values at the poles and domain edges (where SciPy answers differently), and the
derivative of the regularized incomplete gamma function in a (TensorFlow's IgammaGradA),
which SciPy lacks. Every kernel keeps its input's float dtype and computes silently, as
TensorFlow's: NaN outside the domain, Inf at the poles."""

import numpy as np
from .lazy_scipy import special


def _float_result(fn):
    def kernel(*arrays):
        dtype = np.result_type(*arrays)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(np.asarray(a, np.float64) for a in arrays)), dtype)
    kernel.__name__ = fn.__name__
    return kernel


def _is_integer(x):
    return x == np.floor(x)


@_float_result
def lgamma(x):
    return np.where(x == -np.inf, np.inf, special.gammaln(x))


@_float_result
def digamma(x):
    return np.where((x <= 0) & _is_integer(x), np.nan, special.psi(x))


@_float_result
def zeta(x, q):
    # Eigen's order of cases: x = 1, x < 1, then q at a pole (inf only where x is even).
    pole = np.where(_is_integer(x) & (np.fmod(x, 2.0) == 0), np.inf, np.nan)
    negative_base = (q < 0) & ~_is_integer(x)
    value = np.where(negative_base, np.nan, np.where(q == np.inf, 0.0 * x, special.zeta(x, q)))
    value = np.where((q <= 0) & _is_integer(q), pole, value)
    return np.where(x == 1, np.inf, np.where(x < 1, np.nan, value))


@_float_result
def polygamma(n, x):
    sign = np.where(np.fmod(n, 2.0) == 0, -1.0, 1.0)
    higher = sign * np.exp(special.gammaln(n + 1)) * zeta(n + 1, x)
    value = np.where(n == 0, digamma(x), higher)
    return np.where(_is_integer(n) & (n >= 0), value, np.nan)


# Named functions rather than scipy's own: scipy.special is imported at the first call.
def ndtri(p):
    return special.ndtri(p)


def i0e(x):
    return special.i0e(x)


def i1e(x):
    return special.i1e(x)


ndtri = _float_result(ndtri)
bessel_i0e = _float_result(i0e)
bessel_i1e = _float_result(i1e)


@_float_result
def erfinv(y):
    return special.erfinv(y) + 0.0  # +0.0 at -0.0, as TensorFlow


def _unscaled(scaled):
    """TensorFlow's I_nu(x) = exp(|x|) * (its scaled form): NaN (inf * 0) at +-inf."""
    def kernel(x):
        return np.exp(np.abs(x)) * scaled(x)
    kernel.__name__ = scaled.__name__.removesuffix("e")
    return _float_result(kernel)


bessel_i0 = _unscaled(i0e)
bessel_i1 = _unscaled(i1e)


def _igamma_invalid(a, x):
    return (x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x)


@_float_result
def igamma(a, x):
    value = np.where(a == np.inf, 0.0, special.gammainc(a, x))
    value = np.where(_igamma_invalid(a, x), np.nan, value)
    return np.where(x == 0, 0.0, value)


@_float_result
def igammac(a, x):
    value = np.where(x == np.inf, 0.0, np.where(a == np.inf, 1.0, special.gammaincc(a, x)))
    return np.where(_igamma_invalid(a, x), np.nan, value)


@_float_result
def igamma_grad_a(a, x):
    """dP(a, x)/da: the power series (x <= 1 or x <= a) or Legendre's continued fraction
    for Q = 1 - P, each differentiated term by term, as the compiled helper
    (kernels/special_math.py), on every element at once."""
    a, x = np.broadcast_arrays(a, x)
    fraction = (x > 1) & (x > a)
    edge = (x == 0) | (x == np.inf) | (a == np.inf)
    valid = ~_igamma_invalid(a, x) & ~edge
    out = np.where(valid | (edge & ~_igamma_invalid(a, x)) | (x == 0), 0.0, np.nan)
    pick = valid & ~fraction
    out[pick] = _series_grad(a[pick], x[pick])
    pick = valid & fraction
    out[pick] = -_fraction_grad(a[pick], x[pick])
    return out


_EPS = np.finfo(np.float64).eps / 2


def _prefactor(a, x):
    """x**a exp(-x) / Gamma(a) and its log-derivative in a, log x - digamma(a)."""
    log_x = np.log(x)
    ax = a * log_x - x - special.gammaln(a)
    return np.where(ax < -709.78, 0.0, np.exp(ax)), log_x - special.psi(a)


def _series_grad(a, x):
    pre, dlog = _prefactor(a, x)
    r, c, dc, s, ds = a.copy(), np.ones_like(a), np.zeros_like(a), np.ones_like(a), \
        np.zeros_like(a)
    for _ in range(100000):
        r = r + 1
        c = c * (x / r)
        dc = dc * (x / r) - c / r
        s = s + c
        ds = ds + dc
        if np.all((c <= _EPS * s) & (np.abs(dc) <= _EPS * np.abs(ds))):
            break
    value = pre * s / a
    return value * dlog + pre * (ds / a - s / (a * a))


def _fraction_grad(a, x):
    pre, dlog = _prefactor(a, x)
    y = 1 - a
    z = x + y + 1
    c = np.zeros_like(a)
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1, z * x
    dpkm2, dqkm2, dpkm1, dqkm1 = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a), -x
    ans = pkm1 / qkm1
    dans = (dpkm1 - ans * dqkm1) / qkm1
    for _ in range(2000):
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        nonzero = qk != 0
        safe = np.where(nonzero, qk, 1.0)
        r = np.where(nonzero, pk / safe, ans)
        dr = np.where(nonzero, (dpk - r * dqk) / safe, dans)
        converged = (np.abs(ans - r) <= _EPS * np.abs(r)) & (np.abs(dans - dr) <= _EPS * np.abs(dr))
        ans, dans = r, dr
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1, dpk, dqkm1, dqk
        scale = np.where(np.abs(pk) > 4.503599627370496e15, 2.0 ** -52, 1.0)
        pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm2 * scale, dpkm1 * scale, dqkm2 * scale, dqkm1 * scale
        if np.all(converged):
            break
    value = pre * ans
    return value * dlog + pre * dans


@_float_result
def betainc(a, b, x):
    valid = (a > 0) & (a < np.inf) & (b > 0) & (b < np.inf) & (x >= 0) & (x <= 1)
    return np.where(valid, special.betainc(a, b, x), np.nan)
