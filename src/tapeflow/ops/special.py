"""tf.math's special functions: lgamma, digamma, polygamma, zeta, erfinv, ndtri (and
erfcinv over it), the modified Bessel functions of order 0 and 1 (plain and
exponentially scaled), lbeta, the regularized incomplete gamma functions igamma and
igammac, the regularized incomplete beta function betainc, with TensorFlow's gradient
formulas, so that first and second derivatives match its numbers.

TensorFlow gives no gradient with respect to zeta's x, polygamma's order, or betainc's a
and b (None), and none for IgammaGradA, the derivative of igamma in a: differentiating
it raises LookupError, as in TensorFlow. The NumPy kernels are in special_kernels.py,
the compiled ones in backends/numba_cpu/kernels/special_math.py."""

import numpy as np

from ..errors import InvalidArgumentError
from . import rules
from . import special_kernels as kernels
from .elementwise import (
    binary_entry,
    equal,
    exp,
    log,
    operand_pair,
    reciprocal,
    sign,
    square,
    unary_api,
    unary_entry,
    where,
    xlogy,
)
from .nonfinite import xlog1py
from .reduce import reduce_sum
from .registry import OpDef, bind, register
from .rules import is_float, unbroadcast

_FLOAT = {"allowed": is_float, "what": "float types"}
_POSITIVE = (0.3, 4.0)


def _times(factor):
    """The gradient rule dy * factor(ctx) of a one-input entry."""
    return lambda ctx, dy: (dy * factor(ctx),)


# -- unary entries -------------------------------------------------------------------------

LGAMMA = unary_entry("Lgamma", kernels.lgamma, "lgamma_f({0})", domain=_POSITIVE,
                     grad=_times(lambda ctx: digamma(ctx.x)))
DIGAMMA = unary_entry("Digamma", kernels.digamma, "digamma_f({0})", domain=_POSITIVE,
                      grad=_times(lambda ctx: polygamma(1.0, ctx.x)))
ERFINV = unary_entry("Erfinv", kernels.erfinv, "erfinv_f({0})", saves=("out",),
                     domain=(-0.9, 0.9),
                     grad=_times(lambda ctx: np.sqrt(np.pi) / 2 * exp(square(ctx.out))))
NDTRI = unary_entry("Ndtri", kernels.ndtri, "ndtri_f({0})", saves=("out",),
                    domain=(0.05, 0.95),
                    grad=_times(lambda ctx: np.sqrt(2 * np.pi) * exp(square(ctx.out) / 2.0)))
# The scaled functions hold exp(-|x|): a kink at 0, which the samplers keep away from.
BESSEL_I0E = unary_entry("BesselI0e", kernels.bessel_i0e, "i0e_f({0})", saves=("x", "out"),
                         grad=_times(lambda ctx: bessel_i1e(ctx.x) - sign(ctx.x) * ctx.out))
BESSEL_I1E = unary_entry(
    "BesselI1e", kernels.bessel_i1e, "i1e_f({0})", saves=("x", "out"),
    # TensorFlow's: 1/2 at x = 0, where the general formula divides by 0.
    grad=_times(lambda ctx: where(equal(ctx.x, 0.0), 0.5 + 0.0 * ctx.x, bessel_i0e(ctx.x)
                                  - ctx.out * (sign(ctx.x) + reciprocal(ctx.x)))))
BESSEL_I0 = unary_entry("BesselI0", kernels.bessel_i0, "exp_f(abs({0})) * i0e_f({0})",
                        grad=_times(lambda ctx: bessel_i1(ctx.x)))
BESSEL_I1 = unary_entry(
    "BesselI1", kernels.bessel_i1, "exp_f(abs({0})) * i1e_f({0})", saves=("x", "out"),
    grad=_times(lambda ctx: where(equal(ctx.x, 0.0), 1.0 + 0.0 * ctx.x,
                                  bessel_i0(ctx.x) - ctx.out / ctx.x)))


# -- binary entries --------------------------------------------------------------------------

def _second_only(partial):
    """TensorFlow's rule for an op differentiable in its second input only."""
    def grad(ctx, dy):
        second = unbroadcast(dy * partial(ctx), ctx.shapes[1]) if ctx.needs[1] else None
        return None, second
    return grad


ZETA = binary_entry("Zeta", kernels.zeta, "zeta_f({0}, {1})", args=("x", "q"), saves=("x", "q"),
                    grad=_second_only(lambda ctx: -ctx.x * zeta(ctx.x + 1.0, ctx.q)),
                    **_FLOAT)
POLYGAMMA = binary_entry("Polygamma", kernels.polygamma, "polygamma_f({0}, {1})",
                         args=("a", "x"), saves=("a", "x"), domain=_POSITIVE,
                         grad=_second_only(lambda ctx: polygamma(ctx.a + 1.0, ctx.x)),
                         **_FLOAT)


def _no_registered_gradient(ctx, dy):
    raise LookupError("gradient registry has no entry for: IgammaGradA")


IGAMMA_GRAD_A = binary_entry("IgammaGradA", kernels.igamma_grad_a, "igammagrada_f({0}, {1})",
                             args=("a", "x"), grad=_no_registered_gradient, saves=(),
                             domain=_POSITIVE, smooth=False, **_FLOAT)


def _igamma_partials(ctx, dy, sign_):
    ga = gx = None
    if ctx.needs[0]:
        ga = unbroadcast(sign_ * dy * bind(IGAMMA_GRAD_A, (ctx.a, ctx.x)), ctx.shapes[0])
    if ctx.needs[1]:
        # In log space, as TensorFlow's: Gamma(a) and x**(a - 1) overflow separately.
        density = exp(-ctx.x + (ctx.a - 1.0) * log(ctx.x) - lgamma(ctx.a))
        gx = unbroadcast(sign_ * dy * density, ctx.shapes[1])
    return ga, gx


# The derivative in a is IgammaGradA, which has no gradient: second order raises.
IGAMMA = binary_entry("Igamma", kernels.igamma, "igamma_f({0}, {1})", args=("a", "x"),
                      saves=("a", "x"), domain=_POSITIVE, smooth=False,
                      grad=lambda ctx, dy: _igamma_partials(ctx, dy, 1.0), **_FLOAT)
IGAMMAC = binary_entry("Igammac", kernels.igammac, "igammac_f({0}, {1})", args=("a", "x"),
                       saves=("a", "x"), domain=_POSITIVE, smooth=False,
                       grad=lambda ctx, dy: _igamma_partials(ctx, dy, -1.0), **_FLOAT)


# -- the regularized incomplete beta function -------------------------------------------------

def _betainc_infer(a, b, x):
    # Broadcasting, so that batched (stacked) values run it too; betainc() checks
    # TensorFlow's narrower rule (equal shapes or scalars) on what users pass.
    rules.check_same_dtype("Betainc", (a, b, x))
    rules.check_dtype_in("Betainc", a, is_float, "float types")
    shape = rules.broadcast_shapes("Betainc", a._shape, b._shape)
    return rules.broadcast_shapes("Betainc", shape, x._shape), a.dtype


def _betainc_grad(ctx, dy):
    """TensorFlow's: in x only, in log space (xlogy and xlog1py give the tails at a = 1 or
    b = 1 their limits); None for a and b."""
    if not ctx.needs[2]:
        return None, None, None
    a, b, x = ctx.a, ctx.b, ctx.x
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    density = exp(xlog1py(b - 1.0, -x) + xlogy(a - 1.0, x) - log_beta)
    return None, None, unbroadcast(density * dy, ctx.shapes[2])


BETAINC = register(OpDef(
    name="Betainc", args=("a", "b", "x"), infer=_betainc_infer, eager=kernels.betainc,
    emit="betainc_f({0}, {1}, {2})", elementwise=True, saves=("a", "b", "x"),
    grad=_betainc_grad, domain=(0.05, 0.95)))

lgamma = unary_api(LGAMMA)
digamma = unary_api(DIGAMMA)
erfinv = unary_api(ERFINV)
ndtri = unary_api(NDTRI)
bessel_i0e = unary_api(BESSEL_I0E)
bessel_i1e = unary_api(BESSEL_I1E)
bessel_i0 = unary_api(BESSEL_I0)
bessel_i1 = unary_api(BESSEL_I1)
for _fn in (bessel_i0e, bessel_i1e, bessel_i0, bessel_i1):
    _fn.__name__ = _fn.__qualname__ = _fn.__name__.replace("bessel", "bessel_")


def zeta(x, q, name=None):
    """The Hurwitz zeta function, sum over n >= 0 of (q + n) ** -x (tf.math.zeta)."""
    return bind(ZETA, operand_pair(x, q))


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x, for a a non-negative integer held in a float
    tensor; NaN for other a (tf.math.polygamma)."""
    return bind(POLYGAMMA, operand_pair(a, x))


def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function P(a, x) (tf.math.igamma)."""
    return bind(IGAMMA, operand_pair(a, x))


def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
    (tf.math.igammac)."""
    return bind(IGAMMAC, operand_pair(a, x))


def _shape_text(x):
    return "[" + ",".join(str(d) for d in x._shape) + "]"


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b) (tf.math.betainc). As in
    TensorFlow, a, b and x have one shape, except that any of them may be a scalar."""
    a, b, x = rules.as_tensors(a, b, x)
    named = (("a", a), ("b", b), ("x", x))
    for i, (n1, t1) in enumerate(named):
        for n2, t2 in named[i + 1:]:
            known = None not in t1._shape + t2._shape
            if t1._shape and t2._shape and t1._shape != t2._shape and known:
                raise InvalidArgumentError(
                    f"Shapes of {n1} and {n2} are inconsistent: {_shape_text(t1)} vs. "
                    f"{_shape_text(t2)} [Op:Betainc]", op="Betainc")
    return bind(BETAINC, (a, b, x))


def erfcinv(x, name=None):
    """The inverse of erfc on [0, 2] (tf.math.erfcinv), TensorFlow's composition
    -ndtri(x / 2) / sqrt(2), whose gradient follows."""
    x = rules.as_tensor(x)
    return -ndtri(0.5 * x) * np.sqrt(0.5)


def lbeta(x, name=None):
    """log |Beta(x)| over the last axis: sum(lgamma(x)) - lgamma(sum(x)) (tf.math.lbeta);
    -inf for an empty last axis, as TensorFlow."""
    x = rules.as_tensor(x)
    return reduce_sum(lgamma(x), axis=[-1]) - lgamma(reduce_sum(x, axis=[-1]))


__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "betainc", "digamma",
           "erfcinv", "erfinv", "igamma", "igammac", "lbeta", "lgamma", "ndtri", "polygamma",
           "zeta"]
