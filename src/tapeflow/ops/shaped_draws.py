"""`tf.random.gamma`, `tf.random.poisson` and `tf.random.stateless_gamma`: draws shaped
`shape + parameters' shape` (gamma, poisson) or `shape` (stateless).

The stateful draws are random entries (RandomGamma, RandomPoissonV2) on the seeded NumPy
generator of ops/random.py; StatelessRandomGammaV2 draws from a NumPy generator made of
its seed alone, so it is deterministic in the seed. None are TensorFlow's numbers.

A gamma sample's gradient is TensorFlow's implicit reparameterization (RandomGammaGrad):
d sample / d alpha = -(d igamma(alpha, sample) / d alpha) / density(sample), summed over
the sample dimensions, added as `(alpha - stop_gradient(alpha)) * partial`, which is 0
in value; beta's gradient comes from the division by beta.
"""


import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .creation import _shape_tuple
from .elementwise import exp, log, maximum, stop_gradient, where
from .nonfinite import is_finite
from .random import _random_op, _seed_attrs
from .registry import OpDef, bind, register
from .shape import broadcast_to
from .special import IGAMMA_GRAD_A, LGAMMA

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)
_POISSON_DTYPES = _FLOATS + (dtypes.int32, dtypes.int64)
# NumPy's largest Poisson rate (random_poisson's POISSON_LAM_MAX): it raises beyond it.
POISSON_RATE_MAX = np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10


def _check_dtype(op_name, attr, dtype, allowed):
    if dtype not in allowed:
        names = ", ".join(map(dtypes.kernel_name, allowed))
        raise InvalidArgumentError(
            f"Value for attr '{attr}' of {dtype.name} is not in the list of allowed values: "
            f"{names} [Op:{op_name}]", op=op_name)


def _gamma_infer(alpha, shape, seed, seed2, counter):
    # TensorFlow's signature: alpha:T -> output:T, T in half, float, double.
    _check_dtype("RandomGamma", "T", alpha.dtype, _FLOATS)
    return tuple(shape) + tuple(alpha._shape), alpha.dtype


def _poisson_infer(rate, shape, dtype, seed, seed2, counter):
    _check_dtype("RandomPoissonV2", "R", rate.dtype, _POISSON_DTYPES)
    _check_dtype("RandomPoissonV2", "dtype", dtype, _POISSON_DTYPES)
    return tuple(shape) + tuple(rate._shape), dtype


def gamma_values(gen, alpha, size):
    """Standard gamma draws (float64) of `alpha` broadcast to `size`, in C order. Only a
    finite positive concentration draws; the others give TensorFlow's values without
    drawing: NaN for NaN and negative ones, 0 for 0, inf for inf (as kernels/draws.py's
    gamma_draws, so the compiled tier draws the same numbers)."""
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), size)
    drawn = (alpha > 0) & (alpha < np.inf)
    out = np.where(alpha >= 0, alpha, np.nan)
    out[drawn] = gen.standard_gamma(alpha[drawn])
    return out


def poisson_values(gen, rate, size):
    """Poisson draws (float64) of `rate` broadcast to `size`, in C order. Only a
    positive rate up to NumPy's largest (about 9.2e18) draws; the others give, without
    drawing: 0 for 0 and negative rates (as TensorFlow), inf for inf (as TensorFlow), the
    rate itself beyond NumPy's largest (the draw's standard deviation is under 3.3e-10 of
    it), NaN for NaN (TensorFlow's kernel never returns). As kernels/draws.py's
    poisson_draws, so the compiled tier draws the same numbers."""
    rate = np.broadcast_to(np.asarray(rate, np.float64), size)
    drawn = (rate > 0) & (rate <= POISSON_RATE_MAX)
    out = np.where(rate > 0, rate, np.where(rate <= 0, 0.0, np.nan))
    out[drawn] = gen.poisson(rate[drawn])
    return out


def poisson_overflow_message(dtype):
    """RandomPoissonV2's error for an integer `dtype` and a draw it cannot hold."""
    return (f"a Poisson draw of a NaN rate, or beyond the range of {dtype.name}, has no "
            f"{dtype.name} value")


def integer_limit(dtype):
    """The least float64 that an integer `dtype` cannot hold."""
    return 2.0 ** (8 * dtype.size - 1)


def cast_draws(values, dtype, op_name):
    """float64 draws as `dtype`: float overflow gives inf silently (as TensorFlow's
    cast); an integer dtype refuses NaN and values it cannot hold."""
    if dtype.is_integer:
        if not (values < integer_limit(dtype)).all():
            raise InvalidArgumentError(f"{poisson_overflow_message(dtype)} [Op:{op_name}]",
                                       op=op_name)
        return values.astype(dtype._np)
    with np.errstate(over="ignore"):
        return values.astype(dtype._np)


def _gamma_draw(gen, arrays, attrs):
    (alpha,) = arrays
    alpha = np.asarray(alpha)
    values = gamma_values(gen, alpha, tuple(attrs["shape"]) + alpha.shape)
    return cast_draws(values, dtypes.as_dtype(alpha.dtype), "RandomGamma")


def _poisson_draw(gen, arrays, attrs):
    rate = np.asarray(arrays[0])
    values = poisson_values(gen, rate, tuple(attrs["shape"]) + rate.shape)
    return cast_draws(values, attrs["dtype"], "RandomPoissonV2")


RANDOM_GAMMA = _random_op("RandomGamma", _gamma_draw, None, _gamma_infer, args=("alpha",))
RANDOM_POISSON = _random_op("RandomPoissonV2", _poisson_draw, None, _poisson_infer,
                            args=("rate",))


def _stateless_gamma_infer(seed, alpha, shape):
    op_name = "StatelessRandomGammaV2"
    rules.check_int_dtype(op_name, seed, "seed")
    # TensorFlow's signature: alpha:dtype -> output:dtype, dtype in half, float, double.
    _check_dtype(op_name, "dtype", alpha.dtype, _FLOATS)
    if tuple(seed._shape) != (2,):
        raise InvalidArgumentError(f"seed must have shape [2], not "
                                   f"{rules.kernel_dims(seed._shape)} [Op:{op_name}]",
                                   op=op_name)
    return tuple(shape), alpha.dtype


def stateless_generator(seed):
    """The NumPy Generator StatelessRandomGammaV2 draws from: one of `seed`'s values
    alone (a compiled kernel is passed it when the seed is a constant)."""
    words = [int(v) % 2**64 for v in np.asarray(seed).reshape(-1)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def stateless_gamma_values(seed, alpha, shape):
    """StatelessRandomGammaV2's draws in float64."""
    return gamma_values(stateless_generator(seed), alpha, tuple(shape))


def stateless_gamma_kernel(seed, alpha, shape):
    """StatelessRandomGammaV2's NumPy kernel."""
    alpha = np.asarray(alpha)
    return cast_draws(stateless_gamma_values(seed, alpha, shape), dtypes.as_dtype(alpha.dtype),
                      "StatelessRandomGammaV2")


STATELESS_GAMMA = register(OpDef(
    name="StatelessRandomGammaV2", args=("seed", "alpha"), infer=_stateless_gamma_infer,
    eager=stateless_gamma_kernel, differentiable=False))


def _reparameterized(sample, alpha):
    """`sample` with TensorFlow's gradient to `alpha` (broadcast to the sample's trailing
    dimensions)."""
    density_log = (alpha - 1.0) * log(sample) - sample - bind(LGAMMA, (alpha,), {})
    partial = -bind(IGAMMA_GRAD_A, (broadcast_to(alpha, sample.shape), sample), {}) / exp(
        density_log)
    partial = stop_gradient(where(is_finite(partial), partial, 0.0))
    # alpha - stop_gradient(alpha) is 0 but at inf (NaN), where the sample stays inf
    zero = where(is_finite(alpha), alpha - stop_gradient(alpha), 0.0)
    return stop_gradient(sample) + zero * partial


def _tiny(x):
    return float(np.finfo(x.dtype._np).tiny)


def gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma samples of concentration `alpha` and rate `beta`, shaped `shape +
    broadcast(alpha, beta).shape`, as `tf.random.gamma`, differentiable in alpha and beta
    as TensorFlow's.

    >>> import tapeflow as tf
    >>> tf.random.gamma([5], alpha=[0.5, 1.5]).shape
    TensorShape([5, 2])
    """
    dtype = dtypes.as_dtype(dtype)
    shape = _shape_tuple(shape, "RandomGamma")
    alpha = rules.as_tensor(alpha, dtype)
    beta = rules.as_tensor(1.0 if beta is None else beta, dtype)
    alpha = alpha * (beta * 0.0 + 1.0) if beta._shape != alpha._shape else alpha
    drawn = bind(RANDOM_GAMMA, (stop_gradient(alpha),), {"shape": shape, **_seed_attrs(seed)})
    return maximum(_tiny(drawn), _reparameterized(drawn, alpha) / beta)


def poisson(shape, lam, dtype=dtypes.float32, seed=None, name=None):
    """Poisson samples of rate `lam`, shaped `shape + lam.shape`, as `tf.random.poisson`.

    >>> import tapeflow as tf
    >>> tf.random.poisson([3], [1.0, 2.0], dtype=tf.int32).shape
    TensorShape([3, 2])
    """
    lam = rules.as_tensor(lam, dtypes.float32)
    return bind(RANDOM_POISSON, (stop_gradient(lam),),
                {"shape": _shape_tuple(shape, "RandomPoissonV2"), "dtype": dtypes.as_dtype(dtype),
                 **_seed_attrs(seed)})


def stateless_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma samples shaped `shape` (alpha and beta broadcast to its trailing
    dimensions) that depend only on `seed`, as `tf.random.stateless_gamma`, with the
    gradient of tf.random.gamma."""
    dtype = dtypes.as_dtype(dtype)
    shape = _shape_tuple(shape, "StatelessRandomGammaV2")
    alpha = rules.as_tensor(alpha, dtype)
    beta = rules.as_tensor(1.0 if beta is None else beta, dtype)
    alpha = broadcast_to(alpha * (beta * 0.0 + 1.0), shape)
    drawn = bind(STATELESS_GAMMA, (rules.as_tensor(seed), stop_gradient(alpha)),
                 {"shape": shape})
    return maximum(_tiny(drawn), _reparameterized(drawn, alpha) / beta)


__all__ = ["gamma", "poisson", "stateless_gamma"]
