"""tf.nn's gelu, crelu, batch_normalization, normalize_moments, embedding_lookup, the
weighted and Poisson losses, depth_to_space / space_to_depth, compute_average_loss and
tf.math's real / imag / conj / angle: TensorFlow 2.21's values (obtained from it),
gradients, and compiled parity."""

import numpy as np

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

X = tf.constant([-1.0, 0.5, 2.0])
TABLE = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def test_values_match_tensorflow():
    np.testing.assert_allclose(tf.nn.gelu(X), [-0.15865526, 0.34573123, 1.9544997], rtol=1e-6)
    np.testing.assert_allclose(tf.nn.gelu(X, approximate=True),
                               [-0.15880799, 0.345714, 1.9545977], rtol=1e-6)
    assert tf.nn.crelu(tf.constant([[-1.0, 2.0]])).numpy().tolist() == [[0.0, 2.0, 1.0, 0.0]]
    np.testing.assert_allclose(tf.nn.batch_normalization(X, 1.0, 4.0, 0.5, 2.0, 1e-3),
                               [-1.4997501, 6.2465668e-05, 1.4998751], rtol=1e-5, atol=1e-7)
    assert tf.nn.embedding_lookup(TABLE, [[1], [2]]).numpy().tolist() == [[[3.0, 4.0]],
                                                                          [[5.0, 6.0]]]
    split = [tf.constant([[1.0, 1.0], [3.0, 3.0]]), tf.constant([[2.0, 2.0]])]
    assert tf.nn.embedding_lookup(split, [0, 1, 2]).numpy().tolist() == [
        [1.0, 1.0], [3.0, 3.0], [2.0, 2.0]]
    np.testing.assert_allclose(tf.nn.embedding_lookup(TABLE, [2, 0], max_norm=1.0),
                               [[0.6401844, 0.7682213], [0.4472136, 0.8944272]], rtol=1e-6)
    mean, variance = tf.nn.normalize_moments(tf.constant(4.0), tf.constant([8.0, 4.0]),
                                             tf.constant([20.0, 6.0]), None)
    assert mean.numpy().tolist() == [2.0, 1.0] and variance.numpy().tolist() == [1.0, 0.5]
    np.testing.assert_allclose(tf.nn.weighted_cross_entropy_with_logits(
        tf.constant([1.0, 0.0]), tf.constant([0.5, -1.0]), 2.0), [0.948154, 0.3132617],
        rtol=1e-6)
    np.testing.assert_allclose(tf.nn.log_poisson_loss(
        tf.constant([1.0, 3.0]), tf.constant([0.5, 1.0]), compute_full_loss=True),
        [1.1487212, 1.4823633], rtol=1e-6)
    pixels = tf.reshape(tf.range(16.0), [1, 2, 2, 4])
    spread = tf.nn.depth_to_space(pixels, 2)
    assert spread.shape == (1, 4, 4, 1)
    assert spread.numpy().reshape(-1).tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13,
                                                   10, 11, 14, 15]
    np.testing.assert_array_equal(tf.nn.space_to_depth(tf.reshape(tf.range(16.0), [1, 4, 4, 1]),
                                                       2).numpy().reshape(-1),
                                  spread.numpy().reshape(-1))
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]))) == 2.0
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]),
                                            global_batch_size=6)) == 1.0
    np.testing.assert_allclose(tf.math.angle(tf.constant([-1.0, 2.0, 0.0])), [np.pi, 0, 0])
    assert tf.math.imag(tf.constant([1.0, 2.0])).numpy().tolist() == [0.0, 0.0]
    assert tf.math.conj(tf.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]


def test_gradients():
    x = tf.Variable([-1.0, 0.5, 2.0], dtype=tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        g = tf.reduce_sum(tf.nn.gelu(x))
        table = tf.Variable(TABLE)
        looked_up = tf.reduce_sum(tf.nn.embedding_lookup(table, [2, 0, 2]))
    xv = x.numpy()
    want = 0.5 * (1 + np.vectorize(__import__("math").erf)(xv / np.sqrt(2))) + xv * np.exp(
        -xv * xv / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(tape.gradient(g, x).numpy(), want, rtol=1e-12)
    assert tape.gradient(looked_up, table).numpy().tolist() == [[1, 1], [0, 0], [2, 2]]


def test_compiled_agrees_with_eager(monkeypatch):
    def composed(x, table):
        return (tf.nn.gelu(x), tf.nn.crelu(x), tf.nn.batch_normalization(x, 0.5, 2.0, 0.1, 3.0, 1e-3),
                tf.nn.embedding_lookup(table, [2, 0]),
                tf.nn.depth_to_space(tf.reshape(tf.range(16.0), [1, 2, 2, 4]), 2))

    assert_compiled_matches_eager(monkeypatch, composed, X, TABLE, rtol=1e-6)
