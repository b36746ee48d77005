"""tf.random.gamma, tf.random.poisson and tf.random.stateless_gamma: shapes, dtypes,
distributions and TensorFlow's reparameterized gamma gradient."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops.shaped_draws import _reparameterized


def test_gamma_gradient_in_alpha_is_tensorflows_random_gamma_grad():
    alpha = tf.constant([0.5, 1.5, 4.0, 0.5])
    sample = tf.constant([0.1, 2.0, 3.5, 1.2])
    with tf.GradientTape() as tape:
        tape.watch(alpha)
        value = _reparameterized(sample, alpha)
    np.testing.assert_array_equal(value.numpy(), sample.numpy())
    # tf.raw_ops.RandomGammaGrad(alpha, sample) in TensorFlow 2.21
    np.testing.assert_allclose(tape.gradient(value, alpha).numpy(),
                               [0.509765625, 1.2846295833587646, 0.9743958711624146,
                                2.037088394165039], rtol=2e-6)


def test_gamma_moments_and_gradients():
    tf.random.set_seed(0)
    alpha, beta = tf.constant([0.5, 1.5, 4.0]), tf.constant([2.0, 1.0, 0.5])
    with tf.GradientTape() as tape:
        tape.watch([alpha, beta])
        mean = tf.reduce_mean(tf.random.gamma([20000], alpha, beta), 0)
    d_alpha, d_beta = tape.gradient(mean, [alpha, beta])
    # the mean is alpha / beta: d/dalpha 1 / beta, d/dbeta -alpha / beta**2 (sd < 1%)
    np.testing.assert_allclose(mean.numpy(), [0.25, 1.5, 8.0], rtol=0.04)
    np.testing.assert_allclose(d_alpha.numpy(), [0.5, 1.0, 2.0], rtol=0.04)
    np.testing.assert_allclose(d_beta.numpy(), [-0.125, -1.5, -16.0], rtol=0.04)


def test_stateless_gamma_is_deterministic_in_the_seed():
    a = tf.random.stateless_gamma([2000, 2], [1, 2], alpha=[1.0, 3.0], beta=2.0)
    b = tf.random.stateless_gamma([2000, 2], [1, 2], alpha=[1.0, 3.0], beta=2.0)
    c = tf.random.stateless_gamma([2000, 2], [1, 3], alpha=[1.0, 3.0], beta=2.0)
    assert a.shape == [2000, 2] and np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    np.testing.assert_allclose(tf.reduce_mean(a, 0).numpy(), [0.5, 1.5], rtol=0.1)


def test_poisson_shapes_dtypes_and_moments():
    tf.random.set_seed(1)
    draws = tf.random.poisson([20000], [0.5, 3.0, 30.0], dtype=tf.int32, seed=4)
    assert draws.shape == [20000, 3] and draws.dtype == tf.int32
    values = draws.numpy()
    np.testing.assert_allclose(values.mean(0), [0.5, 3.0, 30.0], rtol=0.05)
    np.testing.assert_allclose(values.var(0), [0.5, 3.0, 30.0], rtol=0.1)
    assert tf.random.poisson([2], 3.0).dtype == tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'dtype' of bool"):
        tf.random.poisson([3], [1.0], dtype=tf.bool)
