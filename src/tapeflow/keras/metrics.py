"""`tf.keras.metrics`: Keras 3's streaming metrics, whose state lives in Variables, and
the metric functions they average.

`update_state(...)` adds a batch, `result()` reads the value, `reset_state()` starts over
and calling a metric does the first two. The state is non-trainable `tf.keras.Variable`s,
so a metric updated inside a `tf.function` keeps counting across calls, as in Keras.
"""

from .. import dtypes, ops
from ..variable import Variable
from . import losses, naming, notes
from .losses import (as_tensor, binary_crossentropy, categorical_crossentropy,
                     categorical_hinge, hinge, kl_divergence, log_cosh, mean_absolute_error,
                     mean_absolute_percentage_error, mean_squared_error,
                     mean_squared_logarithmic_error, poisson, sparse_categorical_crossentropy,
                     squared_hinge, squeeze_or_expand_to_same_rank)
from .losses import (KLD, MAE, MAPE, MSE, MSLE, kld, kullback_leibler_divergence,  # noqa: F401
                     logcosh, mae, mape, mse, msle)  # Keras' short names of the functions
from .variables import KerasVariable

_FLOATX = dtypes.float32


# -- metric functions --------------------------------------------------------------------------

def accuracy(y_true, y_pred):
    """1.0 where y_true == y_pred, else 0.0."""
    y_pred = as_tensor(y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(as_tensor(y_true, y_pred.dtype), y_pred)
    return ops.cast(ops.equal(y_true, y_pred), _FLOATX)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where y_true equals (y_pred > threshold), else 0.0."""
    y_true, y_pred = squeeze_or_expand_to_same_rank(as_tensor(y_true), as_tensor(y_pred))
    y_pred = ops.cast(ops.greater(y_pred, ops.cast(threshold, y_pred.dtype)), y_true.dtype)
    return ops.cast(ops.equal(y_true, y_pred), _FLOATX)


def _argmax_matches(y_true, y_pred, squeeze_true):
    """1.0 where argmax(y_pred) equals the label y_true; a label column of 1 (where
    `squeeze_true` allows) is matched as the labels and the result keeps its shape."""
    y_pred = as_tensor(y_pred)
    y_true = as_tensor(y_true, y_pred.dtype)
    true_shape = ops.shape(y_true)
    reshape = len(y_true.shape) == len(y_pred.shape) and squeeze_true(y_true)
    if reshape:
        y_true = ops.squeeze(y_true, -1)
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), y_true.dtype)
    matches = ops.cast(ops.equal(y_true, predicted), _FLOATX)
    return ops.reshape(matches, true_shape) if reshape else matches


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_true) == argmax(y_pred) (one-hot labels), else 0.0."""
    y_true = ops.argmax(as_tensor(y_true), axis=-1)
    return _argmax_matches(y_true, y_pred, lambda labels: True)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the integer label y_true == argmax(y_pred), else 0.0."""
    matches = _argmax_matches(y_true, y_pred, lambda labels: labels.shape[-1] == 1)
    if len(matches.shape) > 1 and matches.shape[-1] == 1:
        matches = ops.squeeze(matches, -1)
    return matches


def in_top_k(targets, predictions, k):
    """TensorFlow's in_top_k: whether each target's score is among the k largest of its
    row, ties at the boundary counting as in, a non-finite score as out."""
    predictions = as_tensor(predictions)
    hit = ops.cast(ops.one_hot(ops.cast(targets, dtypes.int32), predictions.shape[-1]),
                   dtypes.bool)
    score = ops.reduce_sum(ops.where(hit, predictions, ops.zeros_like(predictions)), axis=-1)
    higher = ops.reduce_sum(ops.cast(predictions > ops.expand_dims(score, -1), dtypes.int32),
                            axis=-1)
    return ops.logical_and(higher < k, ops.is_finite(score))


def _top_k_matches(labels, y_pred, k):
    labels_shape = ops.shape(labels)
    if len(y_pred.shape) > 2:
        y_pred = ops.reshape(y_pred, [-1, y_pred.shape[-1]])
    matches = ops.cast(in_top_k(ops.reshape(labels, [-1]), y_pred, k), _FLOATX)
    return ops.reshape(matches, labels_shape) if len(labels.shape) > 1 else matches


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the one-hot label's class is among the k highest scores."""
    y_pred = as_tensor(y_pred)
    return _top_k_matches(ops.argmax(as_tensor(y_true, y_pred.dtype), axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1.0 where the integer label is among the k highest scores (or, `from_sorted_ids`,
    among the first k class ids of y_pred)."""
    y_pred = as_tensor(y_pred)
    if not from_sorted_ids:
        return _top_k_matches(as_tensor(y_true, dtypes.int32), y_pred, k)
    y_true = as_tensor(y_true, y_pred.dtype)
    labels_shape = ops.shape(y_true)
    y_true = ops.reshape(y_true, [-1])
    matches = ops.cast(ops.reduce_any(ops.equal(ops.expand_dims(y_true, 1), y_pred[:, :k]),
                                      axis=1), _FLOATX)
    return ops.reshape(matches, labels_shape) if len(labels_shape) > 1 else matches


# -- the base classes ---------------------------------------------------------------------------

class Metric(losses.FromConfig):
    """A streaming metric: its state is Variables made by `add_variable` (or assigned as
    attributes), summed up by `update_state` and read by `result`."""

    def __init__(self, dtype=None, name=None):
        object.__setattr__(self, "_variables", [])
        object.__setattr__(self, "_metrics", [])
        self.name = name or naming.auto_name(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype or _FLOATX).name

    def __setattr__(self, name, value):
        # Keras tracks the Variables and metrics a metric holds as attributes.
        if isinstance(value, Variable) and not any(v is value for v in self._variables):
            self._variables.append(value)
        elif isinstance(value, Metric) and value not in self._metrics:
            self._metrics.append(value)
        object.__setattr__(self, name, value)

    @property
    def dtype(self):
        """The name of the dtype it computes in ('float32' unless given)."""
        return self._dtype

    @property
    def variables(self):
        """Its state: its own Variables, then those of the metrics it holds."""
        variables = list(self._variables)
        for metric in self._metrics:
            variables.extend(metric.variables)
        return variables

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """A non-trainable Variable of the metric's state, with a path under its name.
        (`aggregation` matters only for distributed training, which tapeflow has not.)"""
        from ..graph.trace import init_scope
        from . import initializers
        init = initializers.get(initializer)
        with init_scope(), naming.name_scope(self.name.replace("/", ">"), self):
            variable = KerasVariable(init, shape=shape, dtype=dtype or self.dtype,
                                     trainable=False, name=name)
        self._variables.append(variable)
        return variable

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    def reset_state(self):
        """Sets every state Variable back to zeros."""
        for v in self.variables:
            v.assign(ops.zeros(v.shape, dtype=v.dtype))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must implement "
                                  f"`update_state`, which accumulates a batch.")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `result`, "
                                  f"which computes the metric from its state.")

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"

    __str__ = __repr__


def reduce_to_samplewise_values(values, sample_weight, reduce_fn, dtype):
    """Keras' reduction of a batch of values to one per sample: values beyond the
    weights' rank are reduced by `reduce_fn`, then multiplied by the (broadcast) weights,
    which are reduced to one per sample too."""
    values = ops.cast(as_tensor(values), dtype)
    if sample_weight is not None:
        sample_weight = as_tensor(sample_weight, dtype)
        mask = notes.read(values, "mask")
        if mask is not None:
            sample_weight = losses.apply_mask(sample_weight, mask, dtype, "sum")
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = len(sample_weight.shape), len(values.shape)
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=list(range(weight_ndim, values_ndim)))
        sample_weight = ops.broadcast_to(sample_weight, ops.shape(values))
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=list(range(1, weight_ndim)))
    if len(values.shape) > 1:
        values = reduce_fn(values, axis=list(range(1, len(values.shape))))
    return values, sample_weight


class Sum(Metric):
    """The (weighted) sum of every value given."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, ops.reduce_sum,
                                                self.dtype)
        self.total.assign_add(ops.reduce_sum(values))

    def reset_state(self):
        self.total.assign(ops.zeros((), self.dtype))

    def result(self):
        return ops.cast(self.total, self.dtype)


class Mean(Metric):
    """The (weighted) mean of every value given: total / count, 0 before any value."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, values, sample_weight=None):
        values, sample_weight = reduce_to_samplewise_values(values, sample_weight,
                                                            ops.reduce_mean, self.dtype)
        self.total.assign_add(ops.reduce_sum(values))
        if sample_weight is not None:
            num_samples = ops.reduce_sum(sample_weight)
        elif len(values.shape) >= 1:
            num_samples = ops.shape(values)[0]
        else:
            num_samples = 1
        self.count.assign_add(ops.cast(num_samples, self.dtype))

    def reset_state(self):
        self.total.assign(ops.zeros((), self.dtype))
        self.count.assign(ops.zeros((), self.dtype))

    def result(self):
        return ops.divide_no_nan(self.total, ops.cast(self.count, self.dtype))


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over every sample given."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or naming.auto_name(type(self).__name__), dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = notes.read(y_pred, "mask")
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        sample_weight = losses.apply_mask(sample_weight, mask, self.dtype, "sum")
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}


class _Wrapper(MeanMetricWrapper):
    """The mean of `_fn`, a metric function of no options of its own."""

    _fn_of_class = _default_name = None

    def __init__(self, name=None, dtype=None):
        super().__init__(type(self)._fn_of_class, name=name or self._default_name,
                         dtype=dtype)

    def get_config(self):
        return Metric.get_config(self)


# -- accuracies ----------------------------------------------------------------------------------

def _plain(class_name, fn, default_name):
    """A metric class averaging `fn`, a metric function with no options of its own."""
    return type(class_name, (_Wrapper,), {
        "_fn_of_class": staticmethod(fn), "_default_name": default_name,
        "__module__": __name__, "__doc__": f"The mean of {fn.__name__}: {fn.__doc__}"})


Accuracy = _plain("Accuracy", accuracy, "accuracy")
CategoricalAccuracy = _plain("CategoricalAccuracy", categorical_accuracy,
                             "categorical_accuracy")
SparseCategoricalAccuracy = _plain("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                   "sparse_categorical_accuracy")


class BinaryAccuracy(MeanMetricWrapper):
    """How often (y_pred > threshold) equals the 0/1 label."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's class is among the k highest scores."""

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the k highest scores."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None,
                 from_sorted_ids=False):
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k,
                         from_sorted_ids=from_sorted_ids)
        self.k, self.from_sorted_ids = k, from_sorted_ids

    def get_config(self):
        config = {"name": self.name, "dtype": self.dtype, "k": self.k}
        return {**config, "from_sorted_ids": True} if self.from_sorted_ids else config


# -- losses as metrics -------------------------------------------------------------------------

def _mean_of(loss_class, class_name=None, default_name=None):
    """The metric averaging the function of `loss_class` (a loss of no options), named
    as the loss unless Keras names it otherwise."""
    return _plain(class_name or loss_class.__name__, loss_class._fn,
                  default_name or loss_class._default_name)


MeanSquaredError = _mean_of(losses.MeanSquaredError)
MeanAbsoluteError = _mean_of(losses.MeanAbsoluteError)
MeanAbsolutePercentageError = _mean_of(losses.MeanAbsolutePercentageError)
MeanSquaredLogarithmicError = _mean_of(losses.MeanSquaredLogarithmicError)
LogCoshError = _mean_of(losses.LogCosh, "LogCoshError", "logcosh")
KLDivergence = _mean_of(losses.KLDivergence)
Poisson = _mean_of(losses.Poisson)
Hinge = _mean_of(losses.Hinge)
SquaredHinge = _mean_of(losses.SquaredHinge)
CategoricalHinge = _mean_of(losses.CategoricalHinge)


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean of the squared errors."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = squeeze_or_expand_to_same_rank(as_tensor(y_true, self.dtype),
                                                        as_tensor(y_pred, self.dtype))
        return super().update_state(ops.square(y_pred - y_true), sample_weight=sample_weight)

    def result(self):
        return ops.sqrt(ops.divide_no_nan(self.total, self.count))


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean binary cross-entropy over the samples."""

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0):
        super().__init__(binary_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean categorical cross-entropy over the samples."""

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False,
                 label_smoothing=0, axis=-1):
        super().__init__(categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean sparse categorical cross-entropy over the samples."""

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False,
                 ignore_class=None, axis=-1):
        super().__init__(sparse_categorical_crossentropy, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)


_CLASSES = (
    Mean, Sum, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy,
    SparseCategoricalAccuracy, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, LogCoshError, KLDivergence, Poisson,
    Hinge, SquaredHinge, CategoricalHinge, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy)
_FUNCTIONS = (
    accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy, mean_squared_error,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error,
    kl_divergence, poisson, hinge, squared_hinge, categorical_hinge, log_cosh,
    binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy)
# As Keras': a class's name and its snake_case name give the class, also where a function
# has that name (`"accuracy"` is an Accuracy metric); the short names give classes too.
BY_NAME = {fn.__name__: fn for fn in _FUNCTIONS}
BY_NAME.update({cls.__name__: cls for cls in _CLASSES})
BY_NAME.update({naming.to_snake_case(cls.__name__): cls for cls in _CLASSES})
BY_NAME.update(bce=BinaryCrossentropy, BCE=BinaryCrossentropy, mse=MeanSquaredError,
               MSE=MeanSquaredError, mae=MeanAbsoluteError, MAE=MeanAbsoluteError,
               mape=MeanAbsolutePercentageError, MAPE=MeanAbsolutePercentageError,
               msle=MeanSquaredLogarithmicError, MSLE=MeanSquaredLogarithmicError)


def get(identifier):
    """A metric from its name (a class's name gives an instance), a
    `{"class_name": ..., "config": {...}}` dict, or a callable; None stays None."""
    return losses.lookup(identifier, BY_NAME, "metric")
