"""Neural-network ops (`tf.nn`): softmax, cross-entropies, losses, bias_add and the
activations that elementwise.py does not already hold (leaky_relu, relu6, selu, ...)."""

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .elementwise import (
    add,
    cast,
    exp,
    expm1,
    log1p,
    minimum,
    multiply,
    negative,
    rsqrt,
    sigmoid,
    softplus,
    square,
    where,
    zeros_like,
)
from .random import uniform
from .registry import OpDef, bind, register
from .rules import is_float, is_numeric, kernel_dims, named, unbroadcast


def _float_only(op_name, x):
    if not is_float(x.dtype):
        rules.check_dtype_in(op_name, x, is_float, "half, bfloat16, float, double")


def _quiet(fn):
    """Runs a kernel without NumPy warnings: TensorFlow returns inf/nan silently."""
    def kernel(*arrays, **attrs):
        with np.errstate(all="ignore"):
            return fn(*arrays, **attrs)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _precise(x):
    """The array a float16 kernel computes in (float32, as TensorFlow's kernels do)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _reduce_sum(x, axis, keepdims=False):
    from .reduce import reduce_sum
    return reduce_sum(x, axis=axis, keepdims=keepdims)


def _expand_dims(x, axis):
    from .shape import expand_dims
    return expand_dims(x, axis)


# -- Softmax and LogSoftmax (an `axis` attr: no transposes around the kernel) -----------

def _softmax_infer(op_name):
    def infer(logits, axis):
        _float_only(op_name, logits)
        if not logits._shape:
            raise InvalidArgumentError(f"logits must have >= 1 dimension, got shape=[] "
                                       f"[Op:{op_name}]", op=op_name)
        return logits._shape, logits.dtype
    return infer


def _softmax_kernel(logits, axis):
    if logits.size == 0:
        return logits.copy()
    x = _precise(logits)
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        out = e / np.sum(e, axis=axis, keepdims=True)
    return out.astype(logits.dtype, copy=False)


def log_softmax_kernel(logits, axis):
    if logits.size == 0:
        return logits.copy()
    x = _precise(logits)
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        out = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return out.astype(logits.dtype, copy=False)


def _softmax_grad(ctx, dy):
    axis, out = ctx.attrs["axis"], ctx.out
    return ((dy - _reduce_sum(dy * out, axis, keepdims=True)) * out,)


def _log_softmax_grad(ctx, dy):
    axis = ctx.attrs["axis"]
    return (dy - _reduce_sum(dy, axis, keepdims=True) * exp(ctx.out),)


SOFTMAX = register(OpDef(
    name="Softmax", args=("logits",), infer=_softmax_infer("Softmax"), eager=_softmax_kernel,
    saves=("out",), grad=_softmax_grad))
LOG_SOFTMAX = register(OpDef(
    name="LogSoftmax", args=("logits",), infer=_softmax_infer("LogSoftmax"),
    eager=log_softmax_kernel, saves=("out",), grad=_log_softmax_grad))


def _class_axis(axis, rank, op_name):
    if axis is None:
        axis = -1
    elif isinstance(axis, (list, tuple)):
        raise TypeError(f"{op_name}: axis must be an integer, got {axis!r}")
    elif isinstance(axis, (float, np.floating)):
        # TensorFlow builds the class-axis permutation from a float axis: its
        # Transpose/Range ops reject it.
        raise InvalidArgumentError(f"axis must be an integer, got {axis!r} [Op:{op_name}]",
                                   op=op_name)
    else:
        axis = int(axis)
    if rank == 0:
        return 0  # infer reports the scalar
    if not -rank <= axis < rank:
        raise InvalidArgumentError(
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of "
            f"dimensions in the input. Received: dim={axis}", op=op_name)
    return axis % rank


def softmax(logits, axis=None, name=None):
    """exp(logits) / reduce_sum(exp(logits), axis), computed stably, as `tf.nn.softmax`.

    >>> import tapeflow as tf
    >>> tf.nn.softmax(tf.constant([0.0, 0.0]))
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 0.5], dtype=float32)>
    """
    x = rules.as_tensor(logits)
    return bind(SOFTMAX, (x,), {"axis": _class_axis(axis, len(x._shape), "Softmax")})


def log_softmax(logits, axis=None, name=None):
    """logits - log(reduce_sum(exp(logits), axis)), computed stably, as
    `tf.nn.log_softmax`."""
    x = rules.as_tensor(logits)
    return bind(LOG_SOFTMAX, (x,), {"axis": _class_axis(axis, len(x._shape), "LogSoftmax")})


# -- softmax cross-entropies: two outputs (loss, backprop) as in TensorFlow ---------------

def _xent_infer(features, labels, axis):
    op_name = "SoftmaxCrossEntropyWithLogits"
    _float_only(op_name, features)
    rules.check_same_dtype(op_name, (features, labels))
    if not features._shape:
        raise InvalidArgumentError(f"logits must have >= 1 dimension, got shape=[] "
                                   f"[Op:{op_name}]", op=op_name)
    if features._shape != labels._shape:
        raise InvalidArgumentError(
            f"logits and labels must be broadcastable: logits_size={kernel_dims(features._shape)} "
            f"labels_size={kernel_dims(labels._shape)} [Op:{op_name}]", op=op_name)
    loss_shape = tuple(d for i, d in enumerate(features._shape) if i != axis)
    return [(loss_shape, features.dtype), (features._shape, features.dtype)]


def _xent_kernel(features, labels, axis):
    x, y = _precise(features), _precise(labels)
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True) if x.size else x
        e = np.exp(shifted)
        sum_exp = np.sum(e, axis=axis, keepdims=True)
        loss = np.sum(y * (np.log(sum_exp) - shifted), axis=axis)
        backprop = e / sum_exp - y
    dt = features.dtype
    return np.asarray(loss).astype(dt, copy=False), backprop.astype(dt, copy=False)


def _second_order_term(features, grad_grad, axis):
    # The gradient flowing into the `backprop` output (softmax - labels): only when
    # differentiating a gradient. softmax's Jacobian applied to grad_grad.
    sm = bind(SOFTMAX, (features,), {"axis": axis})
    return (grad_grad - _reduce_sum(grad_grad * sm, axis, keepdims=True)) * sm


def _sum_of_present(*terms):
    """The sum of the terms that are not None (the rules below get None for an output
    nobody differentiated: the backprop output, except for second derivatives)."""
    present = [t for t in terms if t is not None]
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


def _xent_grad(ctx, grad_loss, grad_grad):
    axis = ctx.attrs["axis"]
    dl = None if grad_loss is None else _expand_dims(grad_loss, axis)
    g_features = g_labels = None
    if ctx.needs[0]:
        g_features = _sum_of_present(
            None if dl is None else dl * ctx.out1,
            None if grad_grad is None else _second_order_term(ctx.features, grad_grad, axis))
    if ctx.needs[1] and dl is None:  # a second derivative only: TensorFlow's zeros
        g_labels = unbroadcast(zeros_like(ctx.out1), ctx.shapes[1])
    elif ctx.needs[1]:
        # As TensorFlow, the gradient reaching the backprop output (a second derivative)
        # does not flow to the labels: d(softmax * sum(labels) - labels)/d(labels) sums
        # to zero for the loss's own gradient.
        g_labels = dl * negative(bind(LOG_SOFTMAX, (ctx.features,), {"axis": axis}))
    return g_features, g_labels


SOFTMAX_XENT = register(OpDef(
    name="SoftmaxCrossEntropyWithLogits", args=("features", "labels"), infer=_xent_infer,
    eager=_xent_kernel, n_out=2, saves=("features", "out1"),
    grad=_xent_grad, none_dys=True))


def _sparse_xent_infer(features, labels):
    op_name = "SparseSoftmaxCrossEntropyWithLogits"
    _float_only(op_name, features)
    if labels.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(
            f"Value for attr 'Tlabels' of {labels.dtype.name} is not in the list of allowed "
            f"values: int32, int64 [Op:{op_name}]", op=op_name)
    if not features._shape:
        raise ValueError(f"Logits cannot be scalars - received shape {features._shape}.")
    if len(labels._shape) != len(features._shape) - 1:
        raise ValueError(
            f"Rank mismatch: Rank of labels (received {len(labels._shape)}) should equal "
            f"rank of logits minus 1 (received {len(features._shape)}).")
    if labels._shape != features._shape[:-1]:
        raise ValueError(
            f"Shape mismatch: The shape of labels (received {labels._shape}) should equal "
            f"the shape of logits except for the last dimension (received "
            f"{features._shape}).")
    return [(labels._shape, features.dtype), (features._shape, features.dtype)]


def _sparse_xent_kernel(features, labels):
    depth = features.shape[-1]
    bad = (labels < 0) | (labels >= depth)
    if np.any(bad):
        op_name = "SparseSoftmaxCrossEntropyWithLogits"
        raise InvalidArgumentError(
            f"Received a label value of {labels[bad].flat[0]} which is outside the valid "
            f"range of [0, {depth}).  Label values: {' '.join(map(str, labels.ravel()))} "
            f"[Op:{op_name}]", op=op_name)
    x = _precise(features)
    with np.errstate(all="ignore"):
        shifted = x - np.max(x, axis=-1, keepdims=True) if x.size else x
        e = np.exp(shifted)
        sum_exp = np.sum(e, axis=-1, keepdims=True)
        picked = np.take_along_axis(shifted, labels[..., None].astype(np.intp), axis=-1)
        loss = (np.log(sum_exp) - picked)[..., 0]
        backprop = e / sum_exp
    np.put_along_axis(backprop, labels[..., None].astype(np.intp),
                      np.take_along_axis(backprop, labels[..., None].astype(np.intp), -1) - 1,
                      axis=-1)
    dt = features.dtype
    return np.asarray(loss).astype(dt, copy=False), backprop.astype(dt, copy=False)


def _sparse_xent_grad(ctx, grad_loss, grad_grad):
    axis = len(ctx.shapes[0]) - 1
    return _sum_of_present(
        None if grad_loss is None else _expand_dims(grad_loss, -1) * ctx.out1,
        None if grad_grad is None else _second_order_term(ctx.features, grad_grad, axis)), None


SPARSE_SOFTMAX_XENT = register(OpDef(
    name="SparseSoftmaxCrossEntropyWithLogits", args=("features", "labels"),
    infer=_sparse_xent_infer, eager=_sparse_xent_kernel,
    n_out=2, saves=("features", "out1"), grad=_sparse_xent_grad, none_dys=True))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-reduce_sum(labels * log_softmax(logits), axis), as
    `tf.nn.softmax_cross_entropy_with_logits` (labels are cast to the logits' dtype and
    are differentiable too). As in TensorFlow, the gradient for logits is
    softmax(logits) - labels, exact when each labels vector sums to one.

    >>> import tapeflow as tf
    >>> tf.nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[0.0, 0.0]])
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([0.6931472], dtype=float32)>
    """
    logits = rules.as_tensor(logits)
    labels = rules.as_tensor(labels, dtype_hint=logits.dtype)
    if labels.dtype is not logits.dtype and logits.dtype.is_floating:
        labels = cast(labels, logits.dtype)
    if labels._shape != logits._shape:
        try:
            ok = rules.broadcast_shapes("", logits._shape, labels._shape) == logits._shape
        except InvalidArgumentError:
            ok = False
        if ok:  # TensorFlow's kernel broadcasts labels against logits
            from .shape import broadcast_to
            labels = broadcast_to(labels, logits._shape)
    axis = _class_axis(axis, len(logits._shape), "SoftmaxCrossEntropyWithLogits")
    return bind(SOFTMAX_XENT, (logits, labels), {"axis": axis})[0]


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Softmax cross-entropy with integer class `labels` (shape: logits' without the last
    axis), as `tf.nn.sparse_softmax_cross_entropy_with_logits`.

    Raises:
      InvalidArgumentError: a label outside [0, num_classes).
      ValueError: labels whose shape is not logits.shape[:-1].
    """
    logits = rules.as_tensor(logits)
    labels = rules.as_tensor(labels)
    return bind(SPARSE_SOFTMAX_XENT, (logits, labels))[0]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and labels z, TensorFlow's
    stable formula, as `tf.nn.sigmoid_cross_entropy_with_logits`."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    logits, labels = rules.as_tensors(logits, labels)
    if logits._shape != labels._shape:
        raise ValueError(f"`logits` and `labels` must have the same shape, received "
                         f"({logits.shape} vs {labels.shape}).")
    zeros = zeros_like(logits)
    cond = logits >= zeros
    relu_logits = where(cond, logits, zeros)
    neg_abs_logits = where(cond, negative(logits), logits)
    return add(relu_logits - logits * labels, log1p(exp(neg_abs_logits)))


# -- L2Loss, BiasAdd -----------------------------------------------------------------------

def _l2_loss_infer(t):
    _float_only("L2Loss", t)
    return (), t.dtype


def _l2_loss_kernel(t):
    acc = np.float64 if t.dtype != np.float64 else t.dtype
    return np.asarray(np.sum(np.square(t, dtype=acc)) / 2).astype(t.dtype)


L2_LOSS = register(OpDef(
    name="L2Loss", args=("t",), infer=_l2_loss_infer, eager=_quiet(_l2_loss_kernel),
    saves=("t",), grad=lambda ctx, dy: (ctx.t * dy,)))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, as `tf.nn.l2_loss`."""
    return bind(L2_LOSS, (rules.as_tensor(t),))


def _channel_axis(data_format, rank):
    return 1 if data_format and data_format.startswith("NC") and rank > 2 else rank - 1


def _bias_add_infer(value, bias, data_format):
    op_name = "BiasAdd"
    rules.check_same_dtype(op_name, (value, bias))
    if not is_numeric(value.dtype):
        rules.check_dtype_in(op_name, value, is_numeric, "numeric types")
    if len(value._shape) < 2:
        raise InvalidArgumentError(f"Input tensor must be at least 2D: {kernel_dims(value._shape)} "
                                   f"[Op:{op_name}]", op=op_name)
    if len(bias._shape) != 1:
        raise InvalidArgumentError(f"Biases must be 1D: {kernel_dims(bias._shape)} [Op:{op_name}]",
                                   op=op_name)
    channels = value._shape[_channel_axis(data_format, len(value._shape))]
    if bias._shape[0] != channels:
        raise InvalidArgumentError(
            "Must provide as many biases as the last dimension of the input tensor: "
            f"{kernel_dims(bias._shape)} vs. {kernel_dims(value._shape)} [Op:{op_name}]",
            op=op_name)
    return value._shape, value.dtype


def _bias_add_kernel(value, bias, data_format):
    axis = _channel_axis(data_format, value.ndim)
    return value + bias.reshape((-1,) + (1,) * (value.ndim - 1 - axis))


def _bias_add_grad(ctx, dy):
    rank = len(ctx.shapes[0])
    axis = _channel_axis(ctx.attrs["data_format"], rank)
    return dy, (_reduce_sum(dy, [i for i in range(rank) if i != axis]) if ctx.needs[1]
                else None)


BIAS_ADD = register(OpDef(
    name="BiasAdd", args=("value", "bias"), infer=_bias_add_infer,
    eager=_quiet(_bias_add_kernel), saves=(), grad=_bias_add_grad))


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with the 1-D `bias` on the channel axis (last, or axis 1 for
    'NC...' data formats), as `tf.nn.bias_add`."""
    if data_format is not None and not (data_format.startswith("NC") or
                                        data_format.startswith("N") and data_format.endswith("C")):
        raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got "
                         f"{data_format!r}.")
    value, bias = rules.as_tensors(value, bias)
    return bind(BIAS_ADD, (value, bias), {"data_format": data_format})


# -- activations ----------------------------------------------------------------------------

def _leaky_relu_kernel(features, alpha):
    return np.where(features > 0, features, features * features.dtype.type(alpha))


def _leaky_relu_grad_kernel(gradients, features, alpha):
    return np.where(features > 0, gradients, gradients * gradients.dtype.type(alpha))


LEAKY_RELU_GRAD = register(OpDef(
    name="LeakyReluGrad", args=("gradients", "features"),
    infer=named("LeakyReluGrad", rules.binary(is_float, "float types")),
    eager=_quiet(_leaky_relu_grad_kernel), emit="({0} if {1} > 0 else {0} * alpha)",
    elementwise=True, saves=("features",),
    grad=lambda ctx, g: (unbroadcast(bind(LEAKY_RELU_GRAD, (g, ctx.features), ctx.attrs),
                                     ctx.shapes[0]), None),
    smooth=False))
LEAKY_RELU = register(OpDef(
    name="LeakyRelu", args=("features",),
    infer=named("LeakyRelu", rules.unary(is_float, "float types")),
    eager=_quiet(_leaky_relu_kernel), emit="({0} if {0} > 0 else {0} * alpha)",
    elementwise=True, saves=("features",),
    grad=lambda ctx, dy: (bind(LEAKY_RELU_GRAD, (dy, ctx.features), ctx.attrs),),
    smooth=False))


def leaky_relu(features, alpha=0.2, name=None):
    """max(features, alpha * features) for alpha <= 1: `tf.nn.leaky_relu` (integer
    features are cast to float32 first, as in TensorFlow)."""
    x = rules.as_tensor(features)
    if x.dtype.is_integer:
        x = cast(x, dtypes.float32)
    if isinstance(alpha, np.ndarray):
        alpha = alpha.item()
    return bind(LEAKY_RELU, (x,), {"alpha": float(alpha)})


def _relu6_grad_kernel(gradients, features):
    # As TensorFlow's kernel, a product: NaN or Inf gradients stay NaN outside (0, 6).
    return gradients * ((features > 0) & (features < 6))


RELU6_GRAD = register(OpDef(
    name="Relu6Grad", args=("gradients", "features"),
    infer=named("Relu6Grad", rules.binary(is_float, "float types")),
    eager=_quiet(_relu6_grad_kernel), emit="({0} if 0 < {1} < 6 else {0} * 0)", elementwise=True,
    saves=("features",),
    grad=lambda ctx, g: (unbroadcast(bind(RELU6_GRAD, (g, ctx.features)), ctx.shapes[0]),
                         None),
    smooth=False))
RELU6 = register(OpDef(
    name="Relu6", args=("features",),
    infer=named("Relu6", rules.unary(is_numeric, "numeric types")),
    eager=_quiet(lambda features: np.clip(features, 0, 6).astype(features.dtype, copy=False)),
    emit="min(max({0}, 0), 6)", elementwise=True, saves=("out",),
    grad=lambda ctx, dy: (bind(RELU6_GRAD, (dy, ctx.out)),), smooth=False,
    domain=(-2.0, 8.0)))


def relu6(features, name=None):
    """min(max(features, 0), 6), as `tf.nn.relu6`."""
    return bind(RELU6, (rules.as_tensor(features),))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None):
    """scale * (x if x > 0 else alpha * (exp(x) - 1)), as `tf.nn.selu` (its gradient at 0
    is `scale`, as TensorFlow's SeluGrad gives)."""
    x = rules.as_tensor(features)
    negative_part = expm1(minimum(x, zeros_like(x))) * (_SELU_SCALE * _SELU_ALPHA)
    return where(x < zeros_like(x), negative_part, x * _SELU_SCALE)


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features), as `tf.nn.silu` (also `tf.nn.swish`)."""
    x = rules.as_tensor(features)
    return x * sigmoid(x * beta) if beta != 1.0 else x * sigmoid(x)


swish = silu


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), computed stably, as `tf.math.log_sigmoid`."""
    return negative(softplus(negative(rules.as_tensor(x))))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(reduce_sum(x ** 2, axis), epsilon)), as `tf.math.l2_normalize`."""
    from .elementwise import maximum
    x = rules.as_tensor(x)
    if axis is None:
        axis = dim
    square_sum = _reduce_sum(square(x), axis, keepdims=True)
    return multiply(x, rsqrt(maximum(square_sum, epsilon)))


def softsign(features, name=None):
    """features / (1 + |features|), as tf.nn.softsign."""
    from .elementwise import abs as _abs
    features = rules.as_tensor(features)
    return features / (1.0 + _abs(features))


def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among its k largest predictions (tf.math.in_top_k;
    tied values straddling the k-th place all count as in it, a non-finite target's
    prediction never does).

    >>> import tapeflow as tf
    >>> scores = tf.constant([[0.5, 0.5, 0.1], [0.3, 0.3, 0.4]])
    >>> tf.math.in_top_k(tf.constant([0, 1]), scores, 1).numpy()
    array([ True, False])
    """
    from .elementwise import greater, less, logical_and
    from .indexing import gather
    from .nonfinite import is_finite
    targets, predictions = rules.as_tensor(targets), rules.as_tensor(predictions)
    target_values = gather(predictions, targets, axis=1, batch_dims=1)
    above = _reduce_sum(cast(greater(predictions, _expand_dims(target_values, 1)),
                             dtypes.int32), 1)
    return logical_and(is_finite(target_values),
                       less(above, rules.int_scalar(k, "InTopKV2", "k")))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate),
    as `tf.nn.dropout`; elements share a draw along the axes where `noise_shape` is 1.

    >>> import tapeflow as tf
    >>> kept = tf.nn.dropout(tf.ones([1000]), rate=0.25, seed=1).numpy()
    >>> sorted({round(float(v), 4) for v in kept})
    [0.0, 1.3333]
    """
    x = rules.as_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. "
                         f"Received: x_dtype={x.dtype!r}")
    if isinstance(rate, (int, float)) and not 0 <= rate < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                         f"Received: rate={rate}")
    rate = rules.as_tensor(rate, x.dtype) if not isinstance(rate, (int, float)) else rate
    shape = x._shape if noise_shape is None else tuple(np.asarray(noise_shape).tolist())
    keep = cast(uniform(shape, dtype=x.dtype, seed=seed) >= rate, x.dtype)
    return multiply(multiply(x, 1.0 / (1.0 - rate)), keep)


__all__ = [
    "bias_add",
    "dropout",
    "in_top_k",
    "l2_loss",
    "l2_normalize",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "relu6",
    "selu",
    "sigmoid_cross_entropy_with_logits",
    "silu",
    "softmax",
    "softsign",
    "softmax_cross_entropy_with_logits",
    "sparse_softmax_cross_entropy_with_logits",
    "swish",
]
