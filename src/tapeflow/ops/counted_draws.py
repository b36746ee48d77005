"""Stateless draws composed of the Philox uniform draw (ops/stateless.py) and the table's
ops, so they are deterministic in the seed, traced and compiled like their parts:

- binomial: the successes among `counts` Bernoulli trials (one uniform each);
- poisson: the arrivals of a unit-rate Poisson process before time `lam` (exponential
  gaps: -log of uniforms), with room for lam + 8 sqrt(lam) + 16 arrivals, beyond which
  the probability is below 1e-15;
- categorical: the Gumbel-max trick, as tf.random.categorical (ops/sampling.py);
- parameterized truncated normal: the inverse CDF of a uniform in [cdf(min), cdf(max)).

The numbers are not TensorFlow's for these (its kernels sample by rejection); the
distributions are. The number of trials or arrivals sets a shape, so `counts` and `lam`
must be known when the function is traced (constants).
"""

import math

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .creation import _shape_tuple
from .elementwise import cast, erf, less, less_equal, log1p, logical_and, negative
from .reduce import cumsum, reduce_sum
from .shape import broadcast_to, expand_dims
from .special import ndtri
from .stateless import STATELESS_UNIFORM, draw, key_counter
from .creation import range as tf_range


def _known_max(value, op_name, what):
    """The largest value of a tensor known now (eagerly, or a constant while tracing)."""
    try:
        values = np.asarray(value)
    except Exception:  # noqa: BLE001 - a symbolic tensor has no value yet
        raise InvalidArgumentError(f"{op_name}: {what} must be known when the function is "
                                   f"traced (a constant) [Op:{op_name}]", op=op_name) from None
    return float(values.max()) if values.size else 0.0


def _trailing(x, shape, op_name):
    """`x` broadcast to `shape` (its dimensions must match shape's rightmost ones)."""
    try:
        return broadcast_to(x, shape)
    except (InvalidArgumentError, ValueError):
        raise InvalidArgumentError(
            f"{op_name}: shape {list(shape)} is not compatible with the parameters' shape "
            f"{list(x.shape)} [Op:{op_name}]", op=op_name) from None


def binomial_from_key_counter(key, counter, shape, counts, probs, dtype):
    op_name = "StatelessRandomBinomial"
    probs = rules.as_tensor(probs, dtype_hint=dtypes.float32)
    counts = cast(rules.as_tensor(counts, dtype_hint=probs.dtype), probs.dtype)
    trials = max(0, math.ceil(_known_max(counts, op_name, "counts")))
    counts, probs = _trailing(counts, shape, op_name), _trailing(probs, shape, op_name)
    u = draw(STATELESS_UNIFORM, key, counter, tuple(shape) + (trials,), probs.dtype)
    counted = logical_and(less(u, expand_dims(probs, -1)),
                          less(cast(tf_range(trials), probs.dtype), expand_dims(counts, -1)))
    return reduce_sum(cast(counted, dtypes.as_dtype(dtype)), axis=-1)


def stateless_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """Binomial draws that depend only on `seed`, as `tf.random.stateless_binomial`.

    >>> import tapeflow as tf
    >>> tf.random.stateless_binomial([4], [1, 2], counts=10.0, probs=0.5).shape
    TensorShape([4])
    """
    shape = _shape_tuple(shape, "StatelessRandomBinomial")
    key, counter = key_counter(seed)
    return binomial_from_key_counter(key, counter, shape, counts, probs, output_dtype)


def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson draws of rate `lam` that depend only on `seed`, as
    `tf.random.stateless_poisson` (lam's shape matches shape's rightmost dimensions)."""
    op_name = "StatelessRandomPoisson"
    shape = _shape_tuple(shape, op_name)
    lam = rules.as_tensor(lam, dtype_hint=dtypes.float32)
    if not lam.dtype.is_floating:
        lam = cast(lam, dtypes.float32)
    top = max(0.0, _known_max(lam, op_name, "lam"))
    arrivals = int(top + 8 * math.sqrt(top) + 16)
    lam = _trailing(lam, shape, op_name)
    key, counter = key_counter(seed)
    u = draw(STATELESS_UNIFORM, key, counter, tuple(shape) + (arrivals,), lam.dtype)
    times = cumsum(negative(log1p(negative(u))), axis=-1)  # -log(1 - u) > 0
    return reduce_sum(cast(less_equal(times, expand_dims(lam, -1)), dtypes.as_dtype(dtype)),
                      axis=-1)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`num_samples` class indices per row of `logits` that depend only on `seed`, as
    `tf.random.stateless_categorical`."""
    from .sampling import gumbel_max

    def uniform(shape, dtype):
        key, counter = key_counter(seed)
        return draw(STATELESS_UNIFORM, key, counter, tuple(shape), dtype) * (1.0 - 1e-20) \
            + 1e-20
    return gumbel_max(logits, num_samples, dtype, uniform)


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0,
                                             minvals=-2.0, maxvals=2.0, name=None):
    """Normal values of the given means and deviations restricted to [minvals, maxvals],
    depending only on `seed`, as `tf.random.stateless_parameterized_truncated_normal`."""
    op_name = "StatelessParameterizedTruncatedNormal"
    shape = _shape_tuple(shape, op_name)
    means, stddevs, minvals, maxvals = rules.as_tensors(means, stddevs, minvals, maxvals)
    rules.check_dtype_in(op_name, means, rules.is_float, "float types")
    key, counter = key_counter(seed)
    u = draw(STATELESS_UNIFORM, key, counter, shape, means.dtype)
    root_half = math.sqrt(0.5)

    def cdf(z):
        return 0.5 * (1.0 + erf(z * root_half))
    low = cdf((minvals - means) / stddevs)
    high = cdf((maxvals - means) / stddevs)
    z = ndtri(low + u * (high - low))
    return _trailing(means + stddevs * z, shape, op_name)


__all__ = ["stateless_binomial", "stateless_categorical",
           "stateless_parameterized_truncated_normal", "stateless_poisson"]
