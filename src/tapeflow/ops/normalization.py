"""tf.nn's statistics and normalizations written with the table's ops, as TensorFlow
writes them in Python: sufficient_statistics, weighted_moments, zero_fraction,
batch_norm_with_global_normalization and local_response_normalization (whose gradient,
the derivative of the composition, is TensorFlow's LRNGrad)."""

import numpy as np

from .. import dtypes
from . import rules
from .elementwise import cast, pow, square, squared_difference
from .nn_compositions import batch_normalization
from .reduce import count_nonzero, reduce_sum
from .shape import pad, squeeze


def _axes(axes, rank):
    return sorted(a % rank for a in np.reshape(axes, [-1]).tolist())


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over `axes`
    (tf.nn.sufficient_statistics); the count is x's dtype."""
    from .shape import shape
    x = rules.as_tensor(x)
    axes = _axes(axes, len(x._shape))
    dims = [x._shape[a] for a in axes]
    if None in dims:
        sizes = shape(x)
        count = cast(sizes[axes[0]], x.dtype)
        for a in axes[1:]:
            count = count * cast(sizes[a], x.dtype)
    else:
        count = rules.as_tensor(np.prod(dims, dtype=np.float64), x.dtype)
    if shift is not None:
        shift = rules.as_tensor(shift, x.dtype)
        centered = x - shift
        return (count, reduce_sum(centered, axes, keepdims),
                reduce_sum(square(centered), axes, keepdims), shift)
    return count, reduce_sum(x, axes, keepdims), reduce_sum(square(x), axes, keepdims), None


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """The frequency-weighted mean and variance over `axes` (tf.nn.weighted_moments);
    zero total weight gives 0, by div_no_nan, and float16 is computed in float32."""
    from .creation import zeros_like
    from .nonfinite import divide_no_nan as div_no_nan
    x = rules.as_tensor(x)
    needs_cast = x.dtype == dtypes.float16
    if needs_cast:
        x = cast(x, dtypes.float32)
    weights = rules.as_tensor(frequency_weights)
    if weights.dtype != x.dtype:
        weights = cast(weights, x.dtype)
    axes = _axes(axes, len(x._shape))
    total = reduce_sum(weights * x, axes, keepdims=True)
    weight_sum = reduce_sum(weights + zeros_like(x), axes, keepdims=True)
    mean = div_no_nan(total, weight_sum)
    variance = div_no_nan(reduce_sum(weights * squared_difference(x, mean), axes,
                                     keepdims=True), weight_sum)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if needs_cast:
        mean, variance = cast(mean, dtypes.float16), cast(variance, dtypes.float16)
    return mean, variance


def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, a float32 scalar (tf.nn.zero_fraction)."""
    from .shape import size
    x = rules.as_tensor(value)
    nonzero = cast(count_nonzero(x, dtype=dtypes.int64), dtypes.float32)
    return 1.0 - nonzero / cast(size(x, out_type=dtypes.int64), dtypes.float32)


def batch_norm_with_global_normalization(input, mean, variance, beta, gamma,  # noqa: A002
                                         variance_epsilon, scale_after_normalization,
                                         name=None):
    """batch_normalization with offset beta and, when scale_after_normalization, scale
    gamma (tf.nn.batch_norm_with_global_normalization)."""
    return batch_normalization(input, mean, variance, beta,
                               gamma if scale_after_normalization else None,
                               variance_epsilon)


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0,  # noqa: A002
                                 beta=0.5, name=None):
    """Each value over (bias + alpha * the sum of the squares of the 2 * depth_radius + 1
    channels around it) ** beta (tf.nn.local_response_normalization, NHWC)."""
    from .statistics import add_n
    op_name = "LRN"
    x = rules.as_tensor(input)
    rules.check_dtype_in(op_name, x, lambda d: d in (dtypes.float16, dtypes.float32),
                         "half, bfloat16, float")
    if len(x._shape) != 4:
        raise rules.op_error(op_name, f"input must be 4-dimensional: "
                                      f"{rules.kernel_dims(x._shape)}")
    radius = int(depth_radius)
    if radius < 0:
        raise rules.op_error(op_name, f"depth_radius = {radius} must be non-negative")
    depth = x._shape[3]
    squares = square(x)
    padded = pad(squares, [[0, 0], [0, 0], [0, 0], [radius, radius]])
    window = [padded[..., k:k + depth] for k in range(2 * radius + 1)] if radius else \
        [squares]
    sums = window[0] if len(window) == 1 else add_n(window)
    return x * pow(bias + alpha * sums, -float(beta))


lrn = local_response_normalization

__all__ = ["batch_norm_with_global_normalization", "local_response_normalization", "lrn",
           "sufficient_statistics", "weighted_moments", "zero_fraction"]
