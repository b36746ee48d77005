"""`tf.keras.activations`: activation functions by name, as Keras 3 resolves them.

Each is built from tapeflow ops, so it is differentiable eagerly and inside `tf.function`;
defaults and formulas follow Keras 3 (`leaky_relu` slope 0.2, exact `gelu`,
`hard_sigmoid(x) = relu6(x + 3) / 6`).
"""

import math

from .. import ops
from ..tensor import convert_to_tensor


def linear(x):
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), or with Keras' options: `x` above `threshold` (else 0), capped at
    `max_value`, plus `negative_slope * (x - threshold)` below `threshold`."""
    x = convert_to_tensor(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return ops.relu(x)
    if negative_slope != 0.0 and max_value is None and threshold == 0.0:
        return ops.leaky_relu(x, alpha=negative_slope)
    return _relu_with_options(x, negative_slope, max_value, threshold)


def _relu_with_options(x, negative_slope, max_value, threshold):
    # Keras' ReLU.static_call, step for step, so that values and gradients at the kinks
    # (x == threshold, x == max_value) come out as Keras' do.
    negative_part = ops.relu(threshold - x) if negative_slope != 0.0 else None
    clip_max = max_value is not None
    if threshold != 0.0:
        x = ops.where(x > threshold, x, ops.zeros_like(x))
    elif max_value == 6:
        x, clip_max = ops.relu6(x), False
    else:
        x = ops.relu(x)
    if clip_max:
        x = ops.clip_by_value(x, ops.cast(0.0, x.dtype), ops.cast(max_value, x.dtype))
    if negative_part is not None:
        x = x - negative_part * negative_slope
    return x


def leaky_relu(x, negative_slope=0.2):
    return ops.leaky_relu(x, alpha=negative_slope)


def relu6(x):
    return ops.relu6(x)


sigmoid = ops.sigmoid
tanh = ops.tanh
softplus = ops.softplus


def elu(x, alpha=1.0):
    y = ops.elu(x)
    if alpha == 1.0:
        return y
    return ops.where(convert_to_tensor(x) > 0, y, y * alpha)


def selu(x):
    return ops.selu(x)


def silu(x):
    return ops.silu(x)


swish = silu


def softsign(x):
    """x / (1 + |x|)."""
    x = convert_to_tensor(x)
    return x / (1.0 + ops.abs(x))


def hard_sigmoid(x):
    """Keras 3's definition, relu6(x + 3) / 6 (Keras 2's was clip(0.2 x + 0.5, 0, 1))."""
    return ops.relu6(convert_to_tensor(x) + 3.0) / 6.0


def exponential(x):
    return ops.exp(x)


# W. J. Cody's rational approximations of erf and erfc (Math. Comp. 1969, as in Netlib's
# CALERF), highest power first: about float64 precision, and differentiating them gives
# erfc's derivative as closely. tapeflow has no erf op to build exact gelu from.
_ERF_SMALL_NUMERATOR = (1.85777706184603153e-1, 3.16112374387056560e00,
                        1.13864154151050156e02, 3.77485237685302021e02,
                        3.20937758913846947e03)
_ERF_SMALL_DENOMINATOR = (1.0, 2.36012909523441209e01, 2.44024637934444173e02,
                          1.28261652607737228e03, 2.84423683343917062e03)
_ERFC_MIDDLE_NUMERATOR = (2.15311535474403846e-8, 5.64188496988670089e-1,
                          8.88314979438837594e00, 6.61191906371416295e01,
                          2.98635138197400131e02, 8.81952221241769090e02,
                          1.71204761263407058e03, 2.05107837782607147e03,
                          1.23033935479799725e03)
_ERFC_MIDDLE_DENOMINATOR = (1.0, 1.57449261107098347e01, 1.17693950891312499e02,
                            5.37181101862009858e02, 1.62138957456669019e03,
                            3.29079923573345963e03, 4.36261909014324716e03,
                            3.43936767414372164e03, 1.23033935480374942e03)
_ERFC_LARGE_NUMERATOR = (1.63153871373020978e-2, 3.05326634961232344e-1,
                         3.60344899949804439e-1, 1.25781726111229246e-1,
                         1.60837851487422766e-2, 6.58749161529837803e-4)
_ERFC_LARGE_DENOMINATOR = (1.0, 2.56852019228982242e00, 1.87295284992346725e00,
                           5.27905102951428412e-1, 6.05183413124413191e-2,
                           2.33520497626869185e-3)
_SMALL, _LARGE = 0.46875, 4.0


def _horner(x, coefficients):
    result = coefficients[0]
    for c in coefficients[1:]:
        result = result * x + c
    return result


def _erf_small(x):
    """erf(x) for |x| < 0.46875."""
    square = x * x
    return x * (_horner(square, _ERF_SMALL_NUMERATOR) /
                _horner(square, _ERF_SMALL_DENOMINATOR))


def _erfc_middle(y):
    """erfc(y) for 0.46875 <= y <= 4."""
    return ops.exp(-(y * y)) * (_horner(y, _ERFC_MIDDLE_NUMERATOR) /
                                _horner(y, _ERFC_MIDDLE_DENOMINATOR))


def _erfc_large(y):
    """erfc(y) for y > 4."""
    inverse_square = 1.0 / (y * y)
    correction = inverse_square * (_horner(inverse_square, _ERFC_LARGE_NUMERATOR) /
                                   _horner(inverse_square, _ERFC_LARGE_DENOMINATOR))
    return ops.exp(-(y * y)) * (1.0 / math.sqrt(math.pi) - correction) / y


def _erfc(x):
    """erfc(x). Each range is evaluated at an input clipped into it, so that the ranges
    `where` discards give no inf or NaN gradients."""
    magnitude = ops.abs(x)
    is_small = magnitude < _SMALL
    small = 1.0 - _erf_small(ops.where(is_small, x, ops.zeros_like(x)))
    middle = _erfc_middle(ops.clip_by_value(magnitude, ops.cast(_SMALL, x.dtype),
                                            ops.cast(_LARGE, x.dtype)))
    large = _erfc_large(ops.maximum(magnitude, ops.cast(_LARGE, x.dtype)))
    tail = ops.where(magnitude <= _LARGE, middle, large)  # erfc(|x|)
    return ops.where(is_small, small, ops.where(x > 0, tail, 2.0 - tail))


def gelu(x, approximate=False):
    """x * P(N(0, 1) <= x): exact (Keras 3's default) or with the tanh approximation."""
    x = convert_to_tensor(x)
    if approximate:
        inner = (x + 0.044715 * ops.pow(x, 3.0)) * math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + ops.tanh(inner))
    return 0.5 * x * _erfc(x * -math.sqrt(0.5))  # TensorFlow's formula


def _over_axis(fn, x, axis):
    # Keras' axis=None normalizes over every element (tf.nn's None means the last axis).
    x = convert_to_tensor(x)
    if axis is None:
        return ops.reshape(fn(ops.reshape(x, [-1]), axis=-1), ops.shape(x))
    return fn(x, axis=axis)


def softmax(x, axis=-1):
    return _over_axis(ops.softmax, x, axis)


def log_softmax(x, axis=-1):
    return _over_axis(ops.log_softmax, x, axis)


_BY_NAME = {fn.__name__: fn for fn in (
    linear, relu, leaky_relu, relu6, sigmoid, tanh, softplus, elu, selu, silu, softsign,
    hard_sigmoid, exponential, gelu, softmax, log_softmax)}
_BY_NAME["swish"] = silu


def get(identifier):
    """An activation function from a name, a callable, or None (linear)."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    try:
        return _BY_NAME[identifier]
    except (KeyError, TypeError):
        raise ValueError(f"Could not interpret activation function identifier: "
                         f"{identifier!r}. Known: {sorted(_BY_NAME)}") from None
