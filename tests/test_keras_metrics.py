"""tf.keras.metrics against TensorFlow 2.21 (Keras 3): update_state / result /
reset_state, sample weights, the accuracies, losses as metrics, names, variables and
configs, and metrics updated inside tf.function.

The expected numbers are what TensorFlow 2.21 printed for the same calls, hard-coded.
"""

import numpy as np
import pytest

import tapeflow as tf

M = tf.keras.metrics

P3 = [[0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.2, 0.5, 0.3]]

CASES = {  # name: (computation, TensorFlow 2.21's result)
    "sum": (lambda: M.Sum()([[1.0, 2.0], [3.0, 4.0]]), 10.0),
    "sum_weighted": (lambda: M.Sum()([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.0]), 3.0),
    "mean_weighted": (lambda: M.Mean()([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.0]),
                      1.5),
    "mean_weighted_2d": (lambda: M.Mean()([[1.0, 2.0], [3.0, 4.0]],
                                          sample_weight=[[1.0, 0.0], [0.5, 0.5]]), 2.25),
    "mean_scalar_weight": (lambda: M.Mean()([[1.0, 2.0], [3.0, 4.0]], sample_weight=2.0), 2.5),
    "mean_int": (lambda: M.Mean()(tf.constant([1, 2, 4])), 2.3333333),
    "mean_3d": (lambda: M.Mean()(tf.reshape(tf.range(12.0), [2, 3, 2]),
                                 sample_weight=[1.0, 3.0]), 7.0),
    "sparse_categorical": (lambda: M.SparseCategoricalAccuracy()([1, 2, 0], P3), 0.6666667),
    "sparse_categorical_float": (lambda: M.SparseCategoricalAccuracy()(
        tf.constant([1.0, 0.0]), tf.constant([[0.1, 0.9], [0.2, 0.8]])), 0.5),
    "sparse_categorical_3d": (lambda: M.SparseCategoricalAccuracy()(
        tf.constant([[1, 0], [0, 0]]),
        tf.constant([[[0.1, 0.9], [0.2, 0.8]], [[0.6, 0.4], [0.7, 0.3]]])), 0.75),
    "categorical": (lambda: M.CategoricalAccuracy()([[0, 1, 0], [1, 0, 0]],
                                                    [[0.1, 0.8, 0.1], [0.3, 0.6, 0.1]]), 0.5),
    "binary": (lambda: M.BinaryAccuracy()([[1], [0], [1]], [[0.7], [0.6], [0.3]]), 0.33333334),
    "binary_threshold": (lambda: M.BinaryAccuracy(threshold=0.2)(
        [[1], [0], [1]], [[0.7], [0.6], [0.3]]), 0.6666667),
    "binary_at_threshold": (lambda: M.BinaryAccuracy()([1.0, 0.0], [0.5, 0.5]), 0.5),
    "binary_rank_1_and_2": (lambda: M.BinaryAccuracy()([1.0, 0.0, 1.0], [[0.9], [0.6], [0.1]]),
                            0.33333334),
    "accuracy": (lambda: M.Accuracy()([1, 2, 3, 4], [0, 2, 3, 4]), 0.75),
    "accuracy_2d": (lambda: M.Accuracy()([[1, 2], [3, 4]], [[1, 2], [3, 5]]), 0.75),
    "mse": (lambda: M.MeanSquaredError()([[0.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 0.0]]),
            0.5),
    "mae_weighted": (lambda: M.MeanAbsoluteError()([[0.0, 1.0], [0.0, 0.0]],
                                                   [[1.0, 1.0], [1.0, 0.0]],
                                                   sample_weight=[1, 0]), 0.5),
    "mape": (lambda: M.MeanAbsolutePercentageError()([[1.0, 2.0], [3.0, 4.0]],
                                                     [[1.5, 2.0], [1.0, 4.0]]), 29.166668),
    "msle": (lambda: M.MeanSquaredLogarithmicError()([[1.0, 2.0], [3.0, 4.0]],
                                                     [[1.5, 2.0], [1.0, 4.0]]), 0.13256152),
    "rmse": (lambda: M.RootMeanSquaredError()([[1.0], [0.0]], [[0.8], [0.3]]), 0.25495097),
    "rmse_weighted": (lambda: M.RootMeanSquaredError()([[1.0], [0.0]], [[0.8], [0.3]],
                                                       sample_weight=[3.0, 1.0]), 0.22912878),
    "logcosh": (lambda: M.LogCoshError()([[1.0], [0.0]], [[0.8], [0.3]]), 0.032104403),
    "kld": (lambda: M.KLDivergence()([[0.3, 0.7]], [[0.5, 0.5]]), 0.082282856),
    "poisson": (lambda: M.Poisson()([[1.0, 2.0]], [[0.5, 2.5]]), 0.93028271),
    "hinge": (lambda: M.Hinge()([[0.0, 1.0]], [[0.3, -0.4]]), 1.35),
    "squared_hinge": (lambda: M.SquaredHinge()([[0.0, 1.0]], [[0.3, -0.4]]), 1.8249998),
    "categorical_hinge": (lambda: M.CategoricalHinge()([[0.0, 1.0]], [[0.3, -0.4]]), 1.7),
    "top_k_1": (lambda: M.TopKCategoricalAccuracy(k=1)(
        [[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]), 0.5),
    "top_k_2": (lambda: M.TopKCategoricalAccuracy(k=2)(
        [[0, 0, 1], [0, 1, 0], [1, 0, 0]], [[0.5, 0.4, 0.1], [0.3, 0.3, 0.4],
                                            [0.2, 0.5, 0.3]]), 0.33333334),
    "sparse_top_k_2": (lambda: M.SparseTopKCategoricalAccuracy(k=2)(
        [2, 1, 0], [[0.5, 0.4, 0.1], [0.3, 0.3, 0.4], [0.2, 0.5, 0.3]]), 0.33333334),
    "sparse_top_k_tie": (lambda: M.SparseTopKCategoricalAccuracy(k=1)([1], [[0.5, 0.5, 0.1]]),
                         1.0),
    "sparse_top_k_sorted_ids": (lambda: M.SparseTopKCategoricalAccuracy(
        k=2, from_sorted_ids=True)([2, 1], [[2, 0, 1], [0, 2, 1]]), 0.5),
    "categorical_crossentropy": (lambda: M.CategoricalCrossentropy()(
        [[0.0, 1.0], [1.0, 0.0]], [[0.2, 0.8], [0.6, 0.4]]), 0.36698455),
    "sparse_categorical_crossentropy": (lambda: M.SparseCategoricalCrossentropy(
        from_logits=True)(tf.constant([1, 0]), tf.constant([[0.2, 0.8], [0.6, 0.4]])),
        0.51781344),
    "binary_crossentropy": (lambda: M.BinaryCrossentropy()([[1.0], [0.0]], [[0.8], [0.3]]),
                            0.28990924),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_values(name):
    compute, expected = CASES[name]
    value = compute()
    assert value.dtype == tf.float32 and value.shape == ()
    np.testing.assert_allclose(value.numpy(), expected, rtol=2e-6)


def test_mean_accumulates_and_resets():
    m = M.Mean(name="train_loss")
    assert (repr(m), str(m), m.name, m.dtype) == (
        "<Mean name=train_loss>", "<Mean name=train_loss>", "train_loss", "float32")
    assert [repr(v) for v in m.variables] == [
        "<Variable path=train_loss/total, shape=(), dtype=float32, value=0.0>",
        "<Variable path=train_loss/count, shape=(), dtype=float32, value=0.0>"]
    assert not any(v.trainable for v in m.variables)
    assert float(m.result()) == 0.0                       # nothing seen: 0, not NaN
    assert float(m(2.0)) == 2.0
    assert m.update_state([1.0, 2.0, 3.0], sample_weight=[1.0, 0.0, 2.0]) is None
    assert float(m.result()) == 2.25                      # (2 + 1 + 6) / (1 + 1 + 2)
    m.reset_state()
    assert float(m.result()) == 0.0 and float(m.count) == 0.0
    assert M.Mean(dtype="float64")(3).dtype == tf.float64
    accuracy = M.SparseCategoricalAccuracy()
    accuracy([1, 2, 0], P3)
    accuracy([[1], [0]], [[0.1, 0.8, 0.1], [0.6, 0.3, 0.1]], sample_weight=[0.5, 2.0])
    np.testing.assert_allclose(accuracy.result().numpy(), 0.8181818, rtol=1e-6)
    assert [v.path for v in accuracy.variables] == ["sparse_categorical_accuracy/total",
                                                    "sparse_categorical_accuracy/count"]


def test_names_configs_and_get():
    assert [M.Mean().name, M.Sum().name, M.MeanSquaredError().name,
            M.RootMeanSquaredError().name, M.LogCoshError().name] == [
        "mean", "sum", "mean_squared_error", "root_mean_squared_error", "logcosh"]
    assert M.BinaryAccuracy().get_config() == {"name": "binary_accuracy", "dtype": "float32",
                                               "threshold": 0.5}
    assert M.TopKCategoricalAccuracy().get_config() == {
        "name": "top_k_categorical_accuracy", "dtype": "float32", "k": 5}
    assert repr(M.get("accuracy")) == "<Accuracy name=accuracy>"
    assert repr(M.get("mse")) == "<MeanSquaredError name=mean_squared_error>"
    assert repr(M.get("categorical_crossentropy")) == (
        "<CategoricalCrossentropy name=categorical_crossentropy>")
    assert M.get(M.binary_accuracy) is M.binary_accuracy
    with pytest.raises(ValueError, match="Could not interpret metric identifier: nope"):
        M.get("nope")


def test_custom_metric_tracks_its_variables():
    class Total(M.Metric):
        def __init__(self, name="total_seen", **kwargs):
            super().__init__(name=name, **kwargs)
            self.n = self.add_variable(shape=(), initializer="zeros", name="n")
            self.extra = tf.keras.Variable(1.0, name="extra")

        def update_state(self, x):
            self.n.assign_add(tf.reduce_sum(x))

        def result(self):
            return tf.identity(self.n)

    metric = Total()
    assert float(metric([1.0, 2.0])) == 3.0
    assert [v.path for v in metric.variables] == ["total_seen/n", "extra"]
    metric.reset_state()
    assert [float(v) for v in metric.variables] == [0.0, 0.0]


def test_metrics_inside_tf_function_keep_counting():
    loss_metric, accuracy = M.Mean(), M.SparseCategoricalAccuracy()

    @tf.function
    def step(labels, probs):
        loss_metric.update_state(tf.keras.losses.sparse_categorical_crossentropy(labels, probs))
        accuracy.update_state(labels, probs)
        return accuracy.result()

    first = step(tf.constant([1, 0]), tf.constant([[0.2, 0.8], [0.3, 0.7]]))
    second = step(tf.constant([1, 0]), tf.constant([[0.2, 0.8], [0.9, 0.1]]))
    assert (float(first), float(second)) == (0.5, 0.75)    # TensorFlow: 0.5, 0.75
    assert float(loss_metric.count) == 4.0
    assert step.experimental_get_tracing_count() == 1
