"""`tf.keras.activations`: activation functions by name, as Keras 3 resolves them.

Each is built from tapeflow ops, so it is differentiable eagerly and inside `tf.function`;
defaults and formulas follow Keras 3 (`leaky_relu` slope 0.2, exact `gelu`,
`hard_sigmoid(x) = relu6(x + 3) / 6`).
"""

import math

from .. import ops
from ..tensor import convert_to_tensor
from . import logits


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


def sigmoid(x):
    # Keras keeps the logits of its sigmoid and softmax outputs for the cross-entropies.
    x = convert_to_tensor(x)
    return logits.remember(ops.sigmoid(x), x)


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


def gelu(x, approximate=False):
    """x * P(N(0, 1) <= x): exact (Keras 3's default) or with the tanh approximation."""
    x = convert_to_tensor(x)
    if approximate:
        inner = (x + 0.044715 * ops.pow(x, 3.0)) * math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + ops.tanh(inner))
    return 0.5 * x * ops.erfc(x * -math.sqrt(0.5))  # TensorFlow's formula


def _over_axis(fn, x, axis):
    # Keras' axis=None normalizes over every element (tf.nn's None means the last axis).
    x = convert_to_tensor(x)
    if axis is None:
        return ops.reshape(fn(ops.reshape(x, [-1]), axis=-1), ops.shape(x))
    return fn(x, axis=axis)


def softmax(x, axis=-1):
    x = convert_to_tensor(x)
    return logits.remember(_over_axis(ops.softmax, x, axis), x)


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
