"""tf.math.reduce_variance, reduce_std, reduce_euclidean_norm, add_n, polyval, and
tf.nn.moments and dropout: values and gradients against NumPy's formulas, eagerly and
compiled, and TensorFlow's errors."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager
from tapeflow.errors import InvalidArgumentError

X = np.array([[1.0, 2.5, -0.5], [3.0, 0.25, 2.0]])


@pytest.mark.parametrize("axis", [None, 0, 1, [0, 1], -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_values_match_numpy(axis, keepdims):
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    x = tf.constant(X)
    np.testing.assert_allclose(tf.math.reduce_variance(x, axis, keepdims).numpy(),
                               np.var(X, axis=np_axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(tf.math.reduce_std(x, axis, keepdims).numpy(),
                               np.std(X, axis=np_axis, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(tf.math.reduce_euclidean_norm(x, axis, keepdims).numpy(),
                               np.sqrt(np.sum(X * X, axis=np_axis, keepdims=keepdims)),
                               rtol=1e-12)


def test_gradients_match_their_formulas():
    x = tf.Variable(X)
    with tf.GradientTape(persistent=True) as tape:
        variance = tf.math.reduce_variance(x, axis=1)
        std = tf.math.reduce_std(x, axis=1)
        norm = tf.math.reduce_euclidean_norm(x, axis=1)
    n = X.shape[1]
    deviation = X - X.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(tape.gradient(variance, x).numpy(), 2 * deviation / n)
    np.testing.assert_allclose(tape.gradient(std, x).numpy(),
                               deviation / (n * X.std(axis=1, keepdims=True)))
    np.testing.assert_allclose(tape.gradient(norm, x).numpy(),
                               X / np.sqrt((X * X).sum(axis=1, keepdims=True)))


def test_integer_norm_is_its_integer_part_and_integer_variance_is_refused():
    assert tf.math.reduce_euclidean_norm(tf.constant([3, 5])).numpy() == 5
    assert tf.math.reduce_euclidean_norm(tf.constant([3, 5])).dtype == tf.int32
    with pytest.raises(TypeError, match="Received integer type"):
        tf.math.reduce_variance(tf.constant([1, 2]))


def test_add_n_and_polyval_values_and_gradients():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    x = tf.Variable([2.0, -1.0])
    with tf.GradientTape(persistent=True) as tape:
        total = tf.math.add_n([a, b, a])
        p = tf.math.polyval([1.0, 2.0, 3.0], x)
    np.testing.assert_allclose(total.numpy(), [5.0, 8.0])
    np.testing.assert_allclose(tape.gradient(total, a).numpy(), [2.0, 2.0])
    np.testing.assert_allclose(tape.gradient(total, b).numpy(), [1.0, 1.0])
    np.testing.assert_allclose(p.numpy(), [11.0, 2.0])
    np.testing.assert_allclose(tape.gradient(p, x).numpy(), [6.0, 0.0])  # 2x + 2
    np.testing.assert_allclose(tf.math.polyval([], x).numpy(), [0.0, 0.0])


def test_moments_are_mean_and_variance_and_the_variance_gradient_skips_the_mean():
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        mean, variance = tf.nn.moments(x, axes=[1])
    np.testing.assert_allclose(mean.numpy(), X.mean(axis=1))
    np.testing.assert_allclose(variance.numpy(), X.var(axis=1))
    deviation = X - X.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(tape.gradient(variance, x).numpy(), 2 * deviation / X.shape[1])
    mean, variance = tf.nn.moments(tf.constant(X, tf.float16), axes=[0, 1], keepdims=True)
    assert mean.shape == (1, 1) and mean.dtype == tf.float16 and variance.dtype == tf.float16


def test_dropout_keeps_about_one_minus_rate_scaled_and_its_gradient_is_the_mask():
    tf.random.set_seed(7)
    x = tf.Variable(tf.ones([100, 100]))
    with tf.GradientTape() as tape:
        y = tf.nn.dropout(x, rate=0.3)
    kept = y.numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.03
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.7, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), kept / np.float32(0.7), rtol=1e-6)
    rows = tf.nn.dropout(tf.ones([50, 4]), rate=0.5, noise_shape=[50, 1]).numpy()
    assert (rows == rows[:, :1]).all() and 0 < (rows[:, 0] == 0).sum() < 50


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.nn.dropout(tf.ones([2]), 1.0), ValueError, r"range \[0, 1\)"),
    (lambda: tf.nn.dropout(tf.constant([1, 2]), 0.5), ValueError, "floating point"),
    (lambda: tf.math.add_n([]), ValueError, "at least one Tensor"),
    (lambda: tf.math.add_n([tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])]),
     InvalidArgumentError, r"same size and shape.  Input 0: \[2\] != input 1: \[3\]"),
    (lambda: tf.math.add_n([tf.constant([1.0]), tf.constant([1])]), InvalidArgumentError,
     r"input #1\(zero-based\).*int32 tensor \[Op:AddN\]"),
    (lambda: tf.math.polyval(tf.constant([1.0]), 2.0), ValueError, "must be list type"),
])
def test_errors_are_tensorflows(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_compiled_agrees_with_eager(monkeypatch):
    def statistics(x):
        return (tf.math.reduce_std(x, axis=0), tf.math.reduce_euclidean_norm(x, axis=1),
                tf.math.add_n([x, x * 2.0]), tf.math.polyval([0.5, x, 1.0], x))

    x = tf.constant(X, tf.float32)  # polyval's float coefficients convert to float32
    assert_compiled_matches_eager(monkeypatch, statistics, x, rtol=1e-6)
