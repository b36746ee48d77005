"""Statistics and sums composed of the table's ops, as TensorFlow composes them:
tf.math.reduce_variance, reduce_std, reduce_euclidean_norm, add_n and polyval, and
tf.nn.moments."""

from .. import dtypes
from . import rules
from .elementwise import (add, cast, equal, greater, greater_equal, multiply, sqrt, square,
                          squared_difference, stop_gradient, subtract, zeros_like)
from .reduce import reduce_all, reduce_mean, reduce_sum
from .shape import reshape, squeeze


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over `axis` (the mean squared deviation, no Bessel correction).

    >>> import tapeflow as tf
    >>> tf.math.reduce_variance(tf.constant([[1., 2.], [3., 4.]]), axis=0).numpy()
    array([1., 1.], dtype=float32)
    """
    x = rules.as_tensor(input_tensor)
    if x.dtype.is_integer:  # TensorFlow checks in Python; bool fails in the Mean kernel
        raise TypeError(f"Input must be either real or complex. Received integer type "
                        f"{x.dtype!r}.")
    deviations = subtract(x, reduce_mean(x, axis=axis, keepdims=True))
    return reduce_mean(square(deviations), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over `axis`: the square root of reduce_variance."""
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x**2)) over `axis`. Integers give the integer part, as TensorFlow's
    EuclideanNorm kernel does for them.

    >>> import tapeflow as tf
    >>> int(tf.math.reduce_euclidean_norm(tf.constant([3, 4])))
    5
    """
    x = rules.as_tensor(input_tensor)
    if x.dtype.is_integer:
        wide = cast(x, dtypes.float64)
        return cast(sqrt(reduce_sum(square(wide), axis=axis, keepdims=keepdims)), x.dtype)
    return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """The mean and variance of `x` over `axes` (tf.nn.moments). As TensorFlow, the
    variance's gradient does not flow through the mean (it sums to zero there anyway),
    and float16 is computed in float32.

    >>> import tapeflow as tf
    >>> mean, variance = tf.nn.moments(tf.constant([[1., 2.], [3., 5.]]), axes=[0])
    >>> mean.numpy(), variance.numpy()
    (array([2. , 3.5], dtype=float32), array([1.  , 2.25], dtype=float32))
    """
    x = rules.as_tensor(x)
    y = cast(x, dtypes.float32) if x.dtype is dtypes.float16 else x
    mean = reduce_mean(y, axis=axes, keepdims=True)
    variance = reduce_mean(squared_difference(y, stop_gradient(mean)), axis=axes,
                           keepdims=True)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if x.dtype is dtypes.float16:
        mean, variance = cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance


def add_n(inputs, name=None):
    """The elementwise sum of tensors of one shape and dtype (tf.math.add_n).

    >>> import tapeflow as tf
    >>> tf.math.add_n([tf.constant([1., 2.]), tf.constant([3., 4.])]).numpy()
    array([4., 6.], dtype=float32)
    """
    try:
        tensors = [rules.as_tensor(x) for x in inputs]
    except TypeError:
        tensors = []
    if not tensors:
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape.")
    rules.check_same_dtype("AddN", tensors)
    first = tensors[0]._shape
    for i, x in enumerate(tensors[1:], 1):
        known = len(x._shape) == len(first) and all(
            a is None or b is None or a == b for a, b in zip(first, x._shape))
        if not known:
            raise rules.op_error("AddN", f"Inputs to operation AddN of type AddN must have "
                                         f"the same size and shape.  Input 0: {list(first)} "
                                         f"!= input {i}: {list(x._shape)}")
    total = tensors[0]
    for x in tensors[1:]:
        total = add(total, x)
    return total


def polyval(coeffs, x, name=None):
    """The polynomial coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule
    (tf.math.polyval); 0 for no coefficients.

    >>> import tapeflow as tf
    >>> tf.math.polyval([1., 2., 3.], tf.constant([2.0, 1.0])).numpy()
    array([11.,  6.], dtype=float32)
    """
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    x = rules.as_tensor(x)
    if not coeffs:
        return zeros_like(x)
    value = rules.as_tensor(coeffs[0])
    for c in coeffs[1:]:
        value = add(c, multiply(value, x))
    return value


accumulate_n = add_n  # TensorFlow's other name for it


def zero_fraction(value, name=None):
    """The fraction of `value`'s elements that are 0, as float32 (tf.math.zero_fraction)."""
    value = rules.as_tensor(value)
    return reduce_mean(cast(equal(value, zeros_like(value)), dtypes.float32))


def _monotone(x, compare):
    flat = reshape(rules.as_tensor(x), [-1])
    if flat.dtype.is_bool:
        raise TypeError(f"Expected x to be numeric, got {flat.dtype!r}")
    return reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    """Whether x, in row-major order, never decreases (True when it has < 2 elements)."""
    return _monotone(x, greater_equal)


def is_strictly_increasing(x, name=None):
    """Whether x, in row-major order, always increases (True when it has < 2 elements)."""
    return _monotone(x, greater)


__all__ = ["reduce_variance", "reduce_std", "reduce_euclidean_norm", "moments", "add_n",
           "accumulate_n", "polyval", "zero_fraction", "is_non_decreasing",
           "is_strictly_increasing"]
