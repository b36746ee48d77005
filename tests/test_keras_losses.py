"""tf.keras.losses against TensorFlow 2.21 (Keras 3): per-sample values, reductions,
sample weights, the cross-entropies' options and clipping, Keras' use of the logits
behind a softmax or sigmoid, errors, gradients, and one compiled training step.

The expected numbers are what TensorFlow 2.21 printed for the same calls, hard-coded.
"""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

L = tf.keras.losses

Y_TRUE = [[0.3, 1.2, -0.5], [2.0, 0.1, 0.0]]
Y_PRED = [[0.1, 1.5, 0.5], [1.0, -0.2, 0.4]]
WEIGHTS = [0.7, 0.3]

# TensorFlow 2.21's values: (reduction=None, the default reduction with WEIGHTS,
# "sum" with WEIGHTS, "mean_with_sample_weight" with WEIGHTS).
REGRESSION = {
    'MeanSquaredError': ([0.37666667, 0.41666666], 0.19433333, 0.38866666, 0.38866666),
    'MeanAbsoluteError': ([0.5, 0.56666666], 0.25999999, 0.51999998, 0.51999998),
    'MeanAbsolutePercentageError': ([97.222214, 133333450.0], 20000052.0, 40000104.0,
                                    40000104.0),
    'MeanSquaredLogarithmicError': ([0.06955009, 0.095566481], 0.038677506, 0.077355012,
                                    0.077355012),
    'Huber': ([0.18833333, 0.20833333], 0.097166665, 0.19433333, 0.19433333),
    'LogCosh': ([0.16599651, 0.18535839], 0.085902542, 0.17180508, 0.17180508),
    'CosineSimilarity': ([-0.74749839, -0.90261477], -0.39701664, -0.79403329, -0.79403329),
    'Hinge': ([0.74000001, 0.67333335], 0.36000001, 0.72000003, 0.72000003),
    'SquaredHinge': ([0.8344667, 0.68013334], 0.39408332, 0.78816664, 0.78816664),
    'CategoricalHinge': ([0.16999996, 0.0], 0.059499983, 0.11899997, 0.11899997),
    'KLDivergence': ([0.32958215, 1.3815496], 0.32258621, 0.64517242, 0.64517242),
    'Poisson': ([0.6525479, np.nan], np.nan, np.nan, np.nan),  # log of a negative y_pred
}

P = [[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]]
ONE_HOT = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
LABELS = [1, 2]
LOGITS = [[2.0, -1.0, 0.5], [0.1, 0.2, 3.0]]
BT = [[0.0, 1.0], [0.0, 0.0]]
BP = [[0.6, 0.4], [0.4, 0.6]]

CROSSENTROPY = {  # name: (computation, TensorFlow 2.21's value)
    "cce": (lambda: L.CategoricalCrossentropy(reduction=None)(ONE_HOT, P),
            [0.051293306, 2.3025851]),
    "cce_sw": (lambda: L.CategoricalCrossentropy()(ONE_HOT, P, sample_weight=[0.3, 0.7]),
               0.81359881),
    "cce_logits": (lambda: L.CategoricalCrossentropy(from_logits=True, reduction=None)(
        ONE_HOT, LOGITS), [3.2413113, 0.10960147]),
    "cce_smooth": (lambda: L.CategoricalCrossentropy(label_smoothing=0.1, reduction=None)(
        ONE_HOT, P), [0.68500137, 2.2332704]),
    "cce_smooth_logits": (lambda: L.CategoricalCrossentropy(
        from_logits=True, label_smoothing=0.2)(ONE_HOT, LOGITS), 1.7154565),
    "cce_axis0": (lambda: L.CategoricalCrossentropy(axis=0, reduction=None)(ONE_HOT, P),
                  [0.0, 0.61090916, 1.1920929e-07]),
    "cce_unnormalized": (lambda: L.categorical_crossentropy(
        ONE_HOT, [[0.5, 1.0, 0.5], [1.0, 1.0, 2.0]]), [0.69314718, 0.69314718]),
    "scce": (lambda: L.SparseCategoricalCrossentropy(reduction=None)(LABELS, P),
             [0.051293444, 2.3025851]),
    "scce_sw": (lambda: L.SparseCategoricalCrossentropy()(LABELS, P, sample_weight=[0.3, 0.7]),
                0.81359881),
    "scce_logits": (lambda: L.SparseCategoricalCrossentropy(from_logits=True, reduction=None)(
        LABELS, LOGITS), [3.2413113, 0.10960147]),
    "scce_column": (lambda: L.SparseCategoricalCrossentropy(from_logits=True)(
        [[1], [2]], LOGITS), 1.6754564),
    "scce_ignore": (lambda: L.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)(
        LABELS, LOGITS), 3.2413113),
    "scce_ignore_none": (lambda: L.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=2, reduction=None)(LABELS, LOGITS), [3.2413113, 0.0]),
    "scce_ignore_sum": (lambda: L.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=2, reduction="sum")(LABELS, LOGITS), 3.2413113),
    "bce": (lambda: L.BinaryCrossentropy(reduction=None)(BT, BP), [0.91629076, 0.7135582]),
    "bce_sw": (lambda: L.BinaryCrossentropy()(BT, BP, sample_weight=[1.0, 0.0]), 0.45814538),
    "bce_logits": (lambda: L.BinaryCrossentropy(from_logits=True)(
        [0.0, 1.0, 0.0, 0.0], [-18.6, 0.51, 2.94, -12.8]), 0.86545801),
    "bce_smooth": (lambda: L.BinaryCrossentropy(label_smoothing=0.2)(BT, BP), 0.79465121),
    "bce_smooth_logits": (lambda: L.BinaryCrossentropy(from_logits=True, label_smoothing=0.2)(
        BT, [[2.0, -1.0], [0.1, 0.2]]), 1.1631813),
    "bce_column": (lambda: L.BinaryCrossentropy()([1.0, 0.0, 1.0], [[0.9], [0.2], [0.4]]),
                   0.41493163),
    "bce_clipped": (lambda: L.BinaryCrossentropy(reduction=None)([1.0, 0.0], [0.0, 1.0]),
                    [16.030239]),
    "bce_axis0": (lambda: L.binary_crossentropy(tf.constant(BT), tf.constant(BP), axis=0),
                  [0.7135582, 0.91629076]),
    # Keras computes from the logits where the probabilities came from its own softmax or
    # sigmoid (also a Dense layer's activation), and not from tf.nn's outside a function.
    "keras_softmax": (lambda: L.CategoricalCrossentropy()(
        [[1.0, 0.0, 0.0]], tf.keras.activations.softmax(tf.constant([[1.0, 2.0, 30.0]]))),
        29.0),
    "nn_softmax": (lambda: L.CategoricalCrossentropy()(
        [[1.0, 0.0, 0.0]], tf.nn.softmax(tf.constant([[1.0, 2.0, 30.0]]))), 16.118095),
    "keras_sigmoid": (lambda: L.BinaryCrossentropy()(
        [[1.0, 0.0]], tf.keras.activations.sigmoid(tf.constant([[-20.0, 30.0]]))), 25.0),
    "nn_sigmoid": (lambda: L.BinaryCrossentropy()(
        [[1.0, 0.0]], tf.sigmoid(tf.constant([[-20.0, 30.0]]))), 16.030239),
}


def assert_tf_value(actual, expected, dtype=tf.float32):
    assert actual.dtype == dtype
    np.testing.assert_allclose(np.ravel(actual.numpy()), np.ravel(expected), rtol=2e-6,
                               atol=1e-7)


@pytest.mark.parametrize("name", sorted(REGRESSION))
def test_regression_losses_reductions_and_weights(name):
    cls = getattr(L, name)
    y_true, y_pred = tf.constant(Y_TRUE), tf.constant(Y_PRED)
    per_sample, default, summed, weighted_mean = REGRESSION[name]
    assert_tf_value(cls(reduction=None)(y_true, y_pred), per_sample)
    assert_tf_value(cls(reduction="none")(y_true, y_pred), per_sample)
    assert_tf_value(cls()(y_true, y_pred, sample_weight=WEIGHTS), default)
    assert_tf_value(cls(reduction="sum")(y_true, y_pred, sample_weight=WEIGHTS), summed)
    assert_tf_value(cls(reduction="mean_with_sample_weight")(
        y_true, y_pred, sample_weight=WEIGHTS), weighted_mean)
    # Unweighted, the default reduction is the mean of the per-sample values.
    assert_tf_value(cls()(y_true, y_pred), np.mean(per_sample))


@pytest.mark.parametrize("name", sorted(CROSSENTROPY))
def test_crossentropies(name):
    compute, expected = CROSSENTROPY[name]
    assert_tf_value(compute(), expected)


def test_function_forms_keep_the_dtype_of_y_pred():
    y_true, y_pred = tf.constant(Y_TRUE, tf.float64), tf.constant(Y_PRED, tf.float64)
    for fn, name in [(L.mse, "MeanSquaredError"), (L.mae, "MeanAbsoluteError"),
                     (L.msle, "MeanSquaredLogarithmicError"), (L.kld, "KLDivergence"),
                     (L.logcosh, "LogCosh"), (L.huber, "Huber"), (L.hinge, "Hinge"),
                     (L.cosine_similarity, "CosineSimilarity")]:
        np.testing.assert_allclose(fn(y_true, y_pred).numpy(), REGRESSION[name][0], rtol=1e-6)
        assert fn(y_true, y_pred).dtype == tf.float64
    # A Loss object computes in its dtype: float32 unless given.
    assert L.MeanSquaredError()(y_true, y_pred).dtype == tf.float32
    assert L.MeanSquaredError(dtype="float64")(y_true, y_pred).dtype == tf.float64
    assert L.mean_squared_error is L.mse is L.MSE
    # Integers are averaged in float32, as Keras' mean does (TensorFlow: [6.5]).
    assert_tf_value(L.mse(tf.constant([[1, 2]]), tf.constant([[3, 5]])), [6.5])


def test_rank_adjustment_and_hinge_labels():
    # y_true (3,) against y_pred (3, 1): Keras gives y_true the trailing dimension.
    assert_tf_value(L.MeanSquaredError()([1.0, 2.0, 3.0], [[1.5], [2.0], [2.0]]), 0.41666666)
    # Hinge turns 0/1 labels into -1/1 (TensorFlow: the same values with -1/1 labels).
    pred = [[0.1, 1.5], [1.0, -0.2]]
    np.testing.assert_allclose(L.hinge(tf.constant([[0.0, 1.0], [1.0, 0.0]]), pred).numpy(),
                               L.hinge(tf.constant([[-1.0, 1.0], [1.0, -1.0]]), pred).numpy())
    # A zero vector has cosine similarity 0.
    assert_tf_value(L.cosine_similarity(tf.constant([[0.0, 0.0], [1.0, 1.0]]),
                                        tf.constant([[1.0, 2.0], [1.0, 1.0]])),
                    [0.0, -0.99999994])
    assert_tf_value(L.Huber(delta=0.3)(Y_TRUE, Y_PRED), 0.11583333)
    assert_tf_value(L.MeanSquaredError()(tf.zeros([0, 2]), tf.zeros([0, 2])), [])


def test_names_configs_and_get():
    assert L.MeanSquaredError().name == "mean_squared_error"
    assert L.Huber().name == "huber_loss"
    assert L.CategoricalCrossentropy(from_logits=True).get_config() == {
        "name": "categorical_crossentropy", "reduction": "sum_over_batch_size",
        "from_logits": True, "label_smoothing": 0.0, "axis": -1}
    assert L.Huber().get_config() == {"name": "huber_loss", "reduction": "sum_over_batch_size"}
    assert repr(L.MeanSquaredError()).startswith(
        "<LossFunctionWrapper(<function mean_squared_error at ")
    assert L.get("mse") is L.mean_squared_error
    assert L.get("categorical_crossentropy") is L.categorical_crossentropy
    assert type(L.get("CategoricalCrossentropy")) is L.CategoricalCrossentropy
    assert L.get({"class_name": "CategoricalCrossentropy",
                  "config": {"from_logits": True}}).get_config()["from_logits"] is True
    assert L.get(None) is None
    with pytest.raises(ValueError, match="Could not interpret loss identifier: nope"):
        L.get("nope")
    assert L.Reduction.all() == ("auto", "none", "sum", "sum_over_batch_size")


def test_errors_as_keras():
    with pytest.raises(ValueError, match=r"Invalid value for argument `reduction`\. Expected "
                                         r"one of .*Received: reduction=avg"):
        L.MeanSquaredError(reduction="avg")
    with pytest.raises(ValueError, match=r"Arguments `target` and `output` must have the same "
                                         r"shape\. Received: target\.shape=\(2, 3\), "
                                         r"output\.shape=\(2, 2\)"):
        L.categorical_crossentropy(tf.constant(ONE_HOT), tf.constant(P)[:, :2])
    with pytest.raises(ValueError, match=r"`axis` must be of type `int`"):
        L.categorical_crossentropy(ONE_HOT, P, axis=True)
    with pytest.raises(ValueError, match=r"must have the same shape up until the last "
                                         r"dimension: target\.shape=\(3,\), "
                                         r"output\.shape=\(2, 3\)"):
        L.sparse_categorical_crossentropy(tf.constant([1, 2, 0]), tf.constant(P))
    with pytest.raises(ValueError, match=r"must have the same shape\. Received: "
                                         r"target\.shape=\(2, 2\), output\.shape=\(2, 1\)"):
        L.binary_crossentropy(tf.constant(BT), tf.constant(BP)[:, :1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        L.MeanSquaredError()(tf.ones([2, 3]), tf.ones([2, 4]))


def test_from_logits_on_softmax_output_warns_and_uses_the_logits():
    probs = tf.keras.activations.softmax(tf.constant([[1.0, 2.0, 30.0]]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = L.CategoricalCrossentropy(from_logits=True)([[1.0, 0.0, 0.0]], probs)
    assert_tf_value(value, 29.0)
    assert "received `from_logits=True`, but the `output` argument was produced by a " \
           "Softmax activation" in str(caught[0].message)


def test_custom_loss_subclass():
    class AbsoluteError(L.Loss):
        def call(self, y_true, y_pred):
            return tf.abs(y_true - y_pred)

    loss = AbsoluteError()
    assert loss.name.startswith("absolute_error")
    assert_tf_value(loss([1.0, 2.0], [3.0, 5.0]), 2.5)
    assert_tf_value(AbsoluteError(reduction="sum")([1.0, 2.0], [3.0, 5.0], [1.0, 2.0]), 8.0)


def test_gradients_of_the_losses():
    # d/dp of mean((p - t)^2) and of the logits' cross-entropy (softmax - one_hot) / batch.
    pred = tf.Variable(Y_PRED)
    with tf.GradientTape() as tape:
        loss = L.MeanSquaredError()(Y_TRUE, pred)
    grad = tape.gradient(loss, pred)
    np.testing.assert_allclose(grad.numpy(), 2 * (np.array(Y_PRED) - Y_TRUE) / 6, rtol=1e-6)
    logits = tf.Variable(LOGITS)
    with tf.GradientTape() as tape:
        loss = L.SparseCategoricalCrossentropy(from_logits=True)(LABELS, logits)
    expected = (tf.nn.softmax(LOGITS).numpy() - np.eye(3)[LABELS]) / 2
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), expected, rtol=1e-5)


def test_in_a_function_tf_nn_softmax_is_read_back_to_its_logits():
    # As TensorFlow: inside tf.function the Softmax op's input is used (29.0, not 16.1).
    @tf.function
    def loss(x):
        return L.CategoricalCrossentropy()([[1.0, 0.0, 0.0]], tf.nn.softmax(x))
    assert_tf_value(loss(tf.constant([[1.0, 2.0, 30.0]])), 29.0)


def test_compiled_losses_match_eager(monkeypatch):
    def losses(y, p, labels, logits):
        return (L.BinaryCrossentropy()(y, p), L.MeanSquaredError()(y, p),
                L.SparseCategoricalCrossentropy(from_logits=True)(labels, logits),
                L.CategoricalCrossentropy(label_smoothing=0.1)(tf.one_hot(labels, 3),
                                                               tf.nn.softmax(logits)))
    assert_compiled_matches_eager(monkeypatch, losses, tf.constant(BT), tf.constant(BP),
                                  tf.constant(LABELS), tf.constant(LOGITS), rtol=1e-6)
