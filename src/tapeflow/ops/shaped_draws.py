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


def _parameter_infer(op_name, allowed, names):
    def infer(parameter, shape, dtype, seed, seed2, counter):
        if dtype not in allowed:
            raise InvalidArgumentError(
                f"Value for attr 'dtype' of {dtype.name} is not in the list of allowed "
                f"values: {names} [Op:{op_name}]", op=op_name)
        return tuple(shape) + tuple(parameter._shape), dtype
    return infer


def _gamma_draw(gen, arrays, attrs):
    (alpha,) = arrays
    size = tuple(attrs["shape"]) + alpha.shape
    return gen.standard_gamma(np.broadcast_to(alpha.astype(np.float64), size)).astype(
        attrs["dtype"]._np)


def _poisson_draw(gen, arrays, attrs):
    (lam,) = arrays
    size = tuple(attrs["shape"]) + lam.shape
    return gen.poisson(np.broadcast_to(np.maximum(lam.astype(np.float64), 0), size)).astype(
        attrs["dtype"]._np)


RANDOM_GAMMA = _random_op("RandomGamma", _gamma_draw, None,
                          _parameter_infer("RandomGamma", _FLOATS, "half, float, double"),
                          args=("alpha",))
RANDOM_POISSON = _random_op(
    "RandomPoissonV2", _poisson_draw, None,
    _parameter_infer("RandomPoissonV2", _FLOATS + (dtypes.int32, dtypes.int64),
                     "half, float, double, int32, int64"), args=("rate",))


def _stateless_gamma_infer(seed, alpha, shape, dtype):
    op_name = "StatelessRandomGammaV2"
    rules.check_int_dtype(op_name, seed, "seed")
    if tuple(seed._shape) != (2,):
        raise InvalidArgumentError(f"seed must have shape [2], not "
                                   f"{rules.kernel_dims(seed._shape)} [Op:{op_name}]",
                                   op=op_name)
    return tuple(shape), dtype


def stateless_generator(seed):
    """The NumPy Generator StatelessRandomGammaV2 draws from: one of `seed`'s values
    alone (a compiled kernel is passed it when the seed is a constant)."""
    words = [int(v) % 2**64 for v in np.asarray(seed).reshape(-1)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def stateless_gamma_kernel(seed, alpha, shape, dtype=dtypes.float64):
    """StatelessRandomGammaV2's NumPy kernel."""
    gen = stateless_generator(seed)
    return gen.standard_gamma(np.broadcast_to(alpha.astype(np.float64), shape)).astype(
        dtype._np)


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
    return stop_gradient(sample) + (alpha - stop_gradient(alpha)) * partial


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
    drawn = bind(RANDOM_GAMMA, (stop_gradient(alpha),),
                 {"shape": shape, "dtype": dtype, **_seed_attrs(seed)})
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
                 {"shape": shape, "dtype": dtype})
    return maximum(_tiny(drawn), _reparameterized(drawn, alpha) / beta)


__all__ = ["gamma", "poisson", "stateless_gamma"]
