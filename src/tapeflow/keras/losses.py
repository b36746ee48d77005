"""`tf.keras.losses`: Keras 3's losses, as functions (a value per sample) and as `Loss`
objects, which weight and reduce those values (`reduction`, `sample_weight`).

Every loss is composed of tapeflow ops, so it is differentiable, eagerly and inside
`tf.function`, and compiles with the rest of a training step. Formulas, the clipping of
probabilities to `[epsilon, 1 - epsilon]` and the conversions are Keras 3's.
"""

import inspect
import warnings

from .. import dtypes, ops
from ..tensor import Tensor, _Operators, constant, convert_to_tensor
from . import naming, notes
from .logits import logits_of

EPSILON = 1e-7  # keras.backend.epsilon()


def as_tensor(x, dtype=None):
    """Keras' `ops.convert_to_tensor(x, dtype)`: a tensor of another dtype is cast."""
    if isinstance(x, (Tensor, _Operators)):
        x = convert_to_tensor(x)
        return x if dtype is None or x.dtype is dtypes.as_dtype(dtype) else ops.cast(x, dtype)
    return convert_to_tensor(x, dtype=dtype)


def _mean(x, axis):
    """Keras' ops.mean: integers and booleans are averaged in float32."""
    if not x.dtype.is_floating:
        x = ops.cast(x, dtypes.float32)
    return ops.reduce_mean(x, axis=axis)


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Keras' rule: where the ranks differ by one and the longer ends in a dimension of 1,
    that dimension goes (or a rank-1 operand gains one)."""
    r1, r2 = len(x1.shape), len(x2.shape)
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = ops.expand_dims(x2, -1)
        else:
            x1 = ops.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = ops.expand_dims(x1, -1)
        else:
            x2 = ops.squeeze(x2, -1)
    return x1, x2


# -- reductions ----------------------------------------------------------------------------

REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


def standardize_reduction(reduction):
    if reduction not in REDUCTIONS:
        allowed = "{" + ", ".join(repr(r) for r in REDUCTIONS) + "}"
        raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                         f"{allowed}. Received: reduction={reduction}")
    return reduction


def apply_mask(sample_weight, mask, dtype, reduction):
    """Keras' merge of a mask into the sample weights: under a mean, the valid entries
    weigh total / valid, so that the mean is over the valid entries only."""
    if mask is None:
        return sample_weight
    if reduction in ("mean", "sum_over_batch_size"):
        total = ops.cast(ops.size(mask), dtype)
        valid = ops.reduce_sum(ops.cast(mask, dtype))
        float_mask = ops.where(ops.cast(mask, dtypes.bool), ops.divide_no_nan(total, valid),
                               ops.zeros_like(total))
    else:
        float_mask = ops.cast(mask, dtype)
    if sample_weight is None:
        return float_mask
    float_mask, sample_weight = squeeze_or_expand_to_same_rank(
        float_mask, ops.cast(sample_weight, dtype))
    return sample_weight * float_mask


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    if reduction in (None, "none") or tuple(values.shape) in ((), (0,)):
        return values
    loss = ops.reduce_sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = ops.cast(ops.reduce_sum(sample_weight), loss.dtype)
    else:
        divisor = ops.cast(ops.size(values), loss.dtype)
    return ops.divide_no_nan(loss, divisor)


def reduce_weighted_values(values, sample_weight=None, mask=None,
                           reduction="sum_over_batch_size", dtype=None):
    """The loss of per-sample `values`: weighted by `sample_weight` (broadcast after
    Keras' rank adjustment) and `mask`, then reduced."""
    reduction = standardize_reduction(reduction)
    values = as_tensor(values, dtype)
    if sample_weight is not None:
        sample_weight = as_tensor(sample_weight, dtype)
    sample_weight = apply_mask(sample_weight, mask, values.dtype, reduction)
    if sample_weight is not None:
        values, sample_weight = squeeze_or_expand_to_same_rank(
            values, ops.cast(sample_weight, values.dtype))
        values = values * sample_weight
    return reduce_values(values, sample_weight, reduction)


class Reduction:
    """Keras 2's reduction names, kept by tf.keras as `tf.keras.losses.Reduction`."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


# -- the loss functions ----------------------------------------------------------------------

def _operands(y_true, y_pred, same_rank=True):
    """y_pred as a tensor, y_true as one of its dtype (and rank, where Keras adjusts it)."""
    y_pred = as_tensor(y_pred)
    y_true = as_tensor(y_true, y_pred.dtype)
    if same_rank:
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """mean(square(y_true - y_pred), axis=-1)."""
    y_true, y_pred = _operands(y_true, y_pred)
    return _mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(abs(y_true - y_pred), axis=-1)."""
    y_true, y_pred = _operands(y_true, y_pred)
    return _mean(ops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(abs((y_true - y_pred) / maximum(abs(y_true), epsilon)), axis=-1)."""
    y_true, y_pred = _operands(y_true, y_pred)
    epsilon = constant(EPSILON, dtype=y_pred.dtype)
    diff = ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), epsilon))
    return 100.0 * _mean(diff, axis=-1)


def _float32_epsilon(dtype):
    # Keras makes this epsilon a float32 tensor, then widens it to the operands' dtype.
    return ops.cast(constant(EPSILON, dtype=dtypes.float32), dtype)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean(square(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)), axis=-1)."""
    y_true, y_pred = _operands(y_true, y_pred)
    epsilon = _float32_epsilon(y_pred.dtype)
    first_log = ops.log(ops.maximum(y_pred, epsilon) + 1.0)
    second_log = ops.log(ops.maximum(y_true, epsilon) + 1.0)
    return _mean(ops.square(first_log - second_log), axis=-1)


def _l2_normalize(x, axis):
    # Keras' ops.normalize: x * min(rsqrt(sum(x^2)), 1 / epsilon).
    if len(x.shape) == 0:
        x = ops.expand_dims(x, 0)
    inv_norm = ops.rsqrt(ops.reduce_sum(ops.square(x), axis=axis, keepdims=True))
    return x * ops.minimum(inv_norm, 1.0 / EPSILON)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for the same
    direction, 0 when either is a zero vector."""
    y_true, y_pred = _operands(y_true, y_pred)
    return -ops.reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis),
                           axis=axis)


def huber(y_true, y_pred, delta=1.0):
    """mean over the last axis of 0.5 * x^2 where |x| <= delta, else
    delta * |x| - 0.5 * delta^2 (x = y_pred - y_true)."""
    y_true, y_pred = _operands(y_true, y_pred)
    delta = as_tensor(delta, y_pred.dtype)
    error = y_pred - y_true
    abs_error = ops.abs(error)
    half = constant(0.5, dtype=y_pred.dtype)
    return _mean(ops.where(abs_error <= delta, half * ops.square(error),
                                     delta * abs_error - half * ops.square(delta)), axis=-1)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1), as x + softplus(-2x) - log(2)."""
    y_true, y_pred = _operands(y_true, y_pred)
    log2 = ops.cast(ops.log(constant(2.0)), y_pred.dtype)  # float32 log(2), as Keras'
    x = y_pred - y_true
    return _mean(x + ops.softplus(x * -2.0) - log2, axis=-1)


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [epsilon, 1]."""
    y_true, y_pred = _operands(y_true, y_pred, same_rank=False)
    y_true = ops.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = ops.clip_by_value(y_pred, EPSILON, 1.0)
    return ops.reduce_sum(y_true * ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + epsilon), axis=-1)."""
    y_true, y_pred = _operands(y_true, y_pred, same_rank=False)
    epsilon = constant(EPSILON, dtype=y_pred.dtype)
    return _mean(y_pred - y_true * ops.log(y_pred + epsilon), axis=-1)


def _hinge_labels(y_true):
    # Keras converts labels that are all 0 or 1 to -1 or 1 (a tf.cond there; a select of
    # the same values here).
    is_binary = ops.reduce_all(ops.logical_or(ops.equal(y_true, 0.0), ops.equal(y_true, 1.0)))
    return ops.where(is_binary, 2.0 * y_true - 1.0, y_true)


def _hinge_margins(y_true, y_pred):
    y_true, y_pred = _operands(y_true, y_pred, same_rank=False)
    return ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)


def hinge(y_true, y_pred):
    """mean(maximum(1 - y_true * y_pred, 0), axis=-1); labels of 0 and 1 become -1, 1."""
    return _mean(_hinge_margins(y_true, y_pred), axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(square(maximum(1 - y_true * y_pred, 0)), axis=-1)."""
    return _mean(ops.square(_hinge_margins(y_true, y_pred)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """maximum(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)."""
    y_true, y_pred = _operands(y_true, y_pred, same_rank=False)
    pos = ops.reduce_sum(y_true * y_pred, axis=-1)
    neg = ops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(neg - pos + 1.0, constant(0.0, dtype=y_pred.dtype))


# Cross-entropies: Keras' TensorFlow backend (keras/src/backend/tensorflow/nn.py).

def _check_same_shape(target, output, what="same shape"):
    if len(target.shape) != len(output.shape):
        raise ValueError(f"Arguments `target` and `output` must have the same rank (ndim). "
                         f"Received: target.shape={target.shape}, "
                         f"output.shape={output.shape}")
    for a, b in zip(target.shape, output.shape):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Arguments `target` and `output` must have the {what}. "
                             f"Received: target.shape={target.shape}, "
                             f"output.shape={output.shape}")


def _clipped(probabilities):
    return ops.clip_by_value(probabilities, EPSILON, 1.0 - EPSILON)


def _categorical_crossentropy(target, output, from_logits, axis):
    target, output = as_tensor(target), as_tensor(output)
    if len(target.shape) < 1:
        raise ValueError(f"Arguments `target` and `output` must be at least rank 1. "
                         f"Received: target.shape={target.shape}, "
                         f"output.shape={output.shape}")
    _check_same_shape(target, output)
    output, from_logits = logits_of(output, from_logits, "Softmax",
                                    "categorical_crossentropy")
    if from_logits:
        return ops.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    # Keras renormalizes the probabilities so that they sum to 1, then clips them.
    output = _clipped(output / ops.reduce_sum(output, axis=axis, keepdims=True))
    return -ops.reduce_sum(target * ops.log(output), axis=axis)


def _sparse_categorical_crossentropy(target, output, from_logits, axis):
    output = as_tensor(output)
    if axis != -1 and axis != len(output.shape) - 1:
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    output, from_logits = logits_of(output, from_logits, "Softmax",
                                    "sparse_categorical_crossentropy")
    target = ops.cast(as_tensor(target), dtypes.int64)
    if len(target.shape) == len(output.shape) and target.shape[-1] == 1:
        target = ops.squeeze(target, -1)
    if len(output.shape) < 1:
        raise ValueError(f"Argument `output` must be at least rank 1. Received: "
                         f"output.shape={output.shape}")
    if len(target.shape) != len(output.shape[:-1]):
        raise ValueError(f"Argument `output` must have rank (ndim) `target.ndim - 1`. "
                         f"Received: target.shape={target.shape}, "
                         f"output.shape={output.shape}")
    for a, b in zip(target.shape, output.shape[:-1]):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Arguments `target` and `output` must have the same shape up "
                             f"until the last dimension: target.shape={target.shape}, "
                             f"output.shape={output.shape}")
    if not from_logits:
        output = ops.log(_clipped(output))
    return ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


def _binary_crossentropy(target, output, from_logits):
    target, output = as_tensor(target), as_tensor(output)
    _check_same_shape(target, output)
    output, from_logits = logits_of(output, from_logits, "Sigmoid", "binary_crossentropy")
    if from_logits:
        return ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = _clipped(output)
    return -(target * ops.log(output) + (1.0 - target) * ops.log(1.0 - output))


def _check_axis(axis):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type "
                         f"{type(axis)}")


def _smoothed_one_hot(y_true, label_smoothing):
    # The targets move to label_smoothing / num_classes, the hit to 1 - that.
    num_classes = ops.cast(ops.shape(y_true)[-1], y_true.dtype)
    return y_true * (1.0 - label_smoothing) + label_smoothing / num_classes


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """-sum(y_true * log(y_pred), axis) of one-hot (or soft) labels: from the logits
    where `from_logits` (or y_pred came from a Keras softmax), else from probabilities
    renormalized and clipped to [epsilon, 1 - epsilon]."""
    _check_axis(axis)
    y_pred = as_tensor(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    if y_pred.shape and y_pred.shape[-1] == 1:
        warnings.warn(f"In loss categorical_crossentropy, expected y_pred.shape to be "
                      f"(batch_size, num_classes) with num_classes > 1. Received: "
                      f"y_pred.shape={y_pred.shape}. Consider using 'binary_crossentropy' "
                      f"if you only have 2 classes.", SyntaxWarning, stacklevel=2)
    if label_smoothing:
        y_true = _smoothed_one_hot(y_true, label_smoothing)
    return _categorical_crossentropy(y_true, y_pred, from_logits, axis)


def _ignored(y_true, y_pred, ignore_class, axis):
    """Keras' ignore_class: the labels and scores of the ignored class zeroed, and the mask
    of the entries kept, in the shape of the loss."""
    class_axis = axis % len(y_pred.shape)
    loss_shape = [d for i, d in enumerate(ops.shape(y_pred)) if i != class_axis]
    valid = ops.not_equal(y_true, ops.cast(ignore_class, y_true.dtype))
    y_true = ops.where(valid, y_true, ops.zeros_like(y_true))
    y_pred = ops.where(ops.expand_dims(valid, axis), y_pred, ops.zeros_like(y_pred))
    return y_true, y_pred, ops.reshape(valid, ops.stack(loss_shape) if loss_shape else [])


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """categorical_crossentropy with integer labels (a trailing dimension of 1 is
    squeezed); entries labelled `ignore_class` give 0 and are masked out of the mean."""
    y_true, y_pred = as_tensor(y_true), as_tensor(y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[axis] == 1:
        y_true = ops.squeeze(y_true, axis)
    valid = None
    if ignore_class is not None:
        y_true, y_pred, valid = _ignored(y_true, y_pred, ignore_class, axis)
    res = _sparse_categorical_crossentropy(y_true, y_pred, from_logits, axis)
    if valid is not None:
        res = notes.attach(ops.where(valid, res, ops.zeros_like(res)), "mask", valid)
    return res


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """mean over `axis` of -(y_true * log(p) + (1 - y_true) * log(1 - p)): from the
    logits where `from_logits` (or y_pred came from a Keras sigmoid), else from p
    clipped to [epsilon, 1 - epsilon]. Smoothing moves the labels towards 0.5."""
    y_pred = as_tensor(y_pred)
    y_true = ops.cast(as_tensor(y_true), y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return _mean(_binary_crossentropy(y_true, y_pred, from_logits), axis=axis)


# -- Loss objects ----------------------------------------------------------------------------

class FromConfig:
    """Keras' `from_config`: the object `get_config()` describes, made again."""

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Loss(FromConfig):
    """A loss: `loss(y_true, y_pred, sample_weight=None)` converts both to its dtype,
    computes `call(y_true, y_pred)` (a value per sample) and weights and reduces it.

    reduction: "sum_over_batch_size" (the default; also "mean"): the weighted sum over the
    number of values; "sum"; "mean_with_sample_weight": the weighted sum over the sum of
    the weights; "none" or None: the weighted values.

    Subclass it and write `call` for a loss of your own.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or naming.auto_name(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = dtypes.as_dtype(dtype or dtypes.float32).name

    @property
    def dtype(self):
        """The name of the dtype it computes in ('float32' unless given)."""
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = as_tensor(y_pred, self.dtype)
        y_true = as_tensor(y_true, self.dtype)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight=sample_weight,
                                      mask=notes.read(losses, "mask"),
                                      reduction=self.reduction, dtype=self.dtype)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must implement `call(y_true, "
                                  f"y_pred)`, which returns the loss of each sample.")

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


class LossFunctionWrapper(Loss):
    """A Loss computing `fn(y_true, y_pred, **kwargs)` per sample."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


class _NoOptions(LossFunctionWrapper):
    """A loss of `_fn`, a function with no options of its own."""

    _fn = _default_name = None

    def __init__(self, reduction="sum_over_batch_size", name=None, dtype=None):
        super().__init__(type(self)._fn, reduction=reduction, name=name or self._default_name,
                         dtype=dtype)


def _plain(class_name, fn):
    """A Loss class computing `fn`, a loss function with no options of its own, named
    after it by default."""
    return type(class_name, (_NoOptions,), {
        "_fn": staticmethod(fn), "_default_name": fn.__name__, "__module__": __name__,
        "__doc__": f"The reduced {fn.__name__}: {fn.__doc__}"})


MeanSquaredError = _plain("MeanSquaredError", mean_squared_error)
MeanAbsoluteError = _plain("MeanAbsoluteError", mean_absolute_error)
MeanAbsolutePercentageError = _plain("MeanAbsolutePercentageError",
                                     mean_absolute_percentage_error)
MeanSquaredLogarithmicError = _plain("MeanSquaredLogarithmicError",
                                     mean_squared_logarithmic_error)
LogCosh = _plain("LogCosh", log_cosh)
Hinge = _plain("Hinge", hinge)
SquaredHinge = _plain("SquaredHinge", squared_hinge)
CategoricalHinge = _plain("CategoricalHinge", categorical_hinge)
KLDivergence = _plain("KLDivergence", kl_divergence)
Poisson = _plain("Poisson", poisson)


class CosineSimilarity(LossFunctionWrapper):
    """-cosine of the angle between y_true and y_pred along `axis`, then reduced."""

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity",
                 dtype=None):
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype,
                         axis=axis)

    get_config = Loss.get_config  # Keras' config leaves out the axis


class Huber(LossFunctionWrapper):
    """Quadratic for errors up to `delta`, linear beyond; reduced."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss",
                 dtype=None):
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)

    get_config = Loss.get_config  # Keras' config leaves out delta


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy of probabilities (or of logits: `from_logits=True`)."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy of one-hot labels and probabilities (or logits)."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy of integer labels and probabilities (or logits)."""

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 axis=-1, name="sparse_categorical_crossentropy", dtype=None):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         dtype=dtype, from_logits=from_logits, ignore_class=ignore_class,
                         axis=axis)


# Keras' short names and the Keras 2 names tf.keras keeps.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh

_LOSS_CLASSES = (
    Loss, LossFunctionWrapper, KLDivergence, Poisson, BinaryCrossentropy,
    CategoricalCrossentropy, SparseCategoricalCrossentropy, MeanSquaredError,
    MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    CosineSimilarity, LogCosh, Huber, Hinge, SquaredHinge, CategoricalHinge)
_LOSS_FUNCTIONS = (
    kl_divergence, poisson, binary_crossentropy, categorical_crossentropy,
    sparse_categorical_crossentropy, mean_squared_error, mean_absolute_error,
    mean_absolute_percentage_error, mean_squared_logarithmic_error, cosine_similarity,
    log_cosh, huber, hinge, squared_hinge, categorical_hinge)
BY_NAME = {obj.__name__: obj for obj in _LOSS_CLASSES + _LOSS_FUNCTIONS}
BY_NAME.update(bce=binary_crossentropy, BCE=binary_crossentropy, kld=kl_divergence,
               KLD=kl_divergence, mae=mae, MAE=mae, mse=mse, MSE=mse, mape=mape, MAPE=mape,
               msle=msle, MSLE=msle)


def lookup(identifier, by_name, what):
    """Keras' `get` of losses and metrics: a name in `by_name` (a class gives an
    instance), a `{"class_name": ..., "config": {...}}` dict, or a callable; None stays
    None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls = by_name.get(identifier.get("class_name"))
        if not inspect.isclass(cls):
            raise ValueError(f"Could not interpret {what} identifier: {identifier}")
        return cls.from_config(identifier.get("config", {}))
    obj = by_name.get(identifier) if isinstance(identifier, str) else identifier
    if not callable(obj):
        raise ValueError(f"Could not interpret {what} identifier: {identifier}")
    return obj() if inspect.isclass(obj) else obj


def get(identifier):
    """A loss from its name (a function's name gives the function, a class's name an
    instance), a `{"class_name": ..., "config": {...}}` dict, or a callable."""
    return lookup(identifier, BY_NAME, "loss")
