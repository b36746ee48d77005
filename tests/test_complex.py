"""tf.complex64 and tf.complex128 as TensorFlow 2.21: dtypes, conversions, casts, and the
gradients TensorFlow gives for complex inputs (its conjugate convention), checked against
its printed numbers. The generated tests check every op that takes complex numbers."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

Z = np.array([1 + 2j, -0.5 + 0.3j])
W = np.array([0.7 - 0.2j, 2 + 1j])


def test_dtypes_are_tensorflows():
    assert tf.complex64.is_complex and not tf.complex64.is_floating
    assert tf.complex64.real_dtype == tf.float32 and tf.complex128.real_dtype == tf.float64
    assert tf.float32.real_dtype == tf.float32 and tf.complex64.is_numeric
    assert not tf.bool.is_numeric
    assert tf.as_dtype("complex64") is tf.complex64 and tf.as_dtype(np.complex128) is tf.complex128
    assert tf.complex128.size == 16
    with pytest.raises(TypeError, match="Cannot find minimum value of <dtype: 'complex64'>"):
        tf.complex64.min


def test_conversions_are_tensorflows():
    assert tf.constant(1 + 2j).dtype == tf.complex128
    assert tf.constant([1j, 2]).numpy().tolist() == [1j, 2 + 0j]
    assert tf.constant(np.complex64(1j)).dtype == tf.complex64
    assert tf.constant(1.5, tf.complex64).numpy() == 1.5 + 0j
    with pytest.raises(TypeError, match="Cannot convert 1j to EagerTensor of dtype float"):
        tf.constant(1j, tf.float32)
    z = tf.constant([1 + 2j, -3 - 4j], tf.complex64)
    assert (z + 1).numpy().tolist() == [2 + 2j, -2 - 4j]
    assert (2.0 * z).dtype == tf.complex64


def test_parts_and_casts_are_tensorflows():
    z = tf.constant([1 + 2j, -3 - 4j, 0j], tf.complex64)
    np.testing.assert_array_equal(tf.math.real(z).numpy(), np.float32([1, -3, 0]))
    np.testing.assert_array_equal(tf.math.imag(z).numpy(), np.float32([2, -4, 0]))
    np.testing.assert_allclose(tf.math.angle(z).numpy(), [1.1071488, -2.2142975, 0], rtol=1e-6)
    assert tf.abs(z).dtype == tf.float32
    np.testing.assert_allclose(tf.abs(z).numpy(), [2.236068, 5, 0], rtol=1e-6)
    assert tf.math.conj(z).numpy().tolist() == [1 - 2j, -3 + 4j, 0j]
    assert tf.cast(z, tf.int32).numpy().tolist() == [1, -3, 0]
    assert tf.cast(tf.constant([True]), tf.complex64).numpy().tolist() == [1 + 0j]
    assert tf.complex(1.0, 2.0).dtype == tf.complex64
    with pytest.raises(TypeError, match="incorrect types: float64 float32"):
        tf.complex(tf.constant(1.0, tf.float64), 2.0)
    m = tf.constant([[1 + 1j, 2], [3j, 4]])
    np.testing.assert_array_equal(tf.matmul(m, m, adjoint_a=True).numpy(),
                                  [[11, 2 - 14j], [2 + 14j, 20]])


def _gradients(f, *arrays):
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        y = f(*tensors)
    return [g.numpy() for g in tape.gradient(y, tensors)]


# Printed by TensorFlow 2.21 for the same calls.
@pytest.mark.parametrize("f, arrays, want", [
    (lambda z: tf.math.real(z * tf.math.conj(z)), [Z], [[2 + 4j, -1 + 0.6j]]),
    (tf.abs, [Z], [[0.4472136 + 0.89442719j, -0.85749293 + 0.51449576j]]),
    (tf.math.angle, [Z], [[-0.4 + 0.2j, -0.88235294 - 1.47058824j]]),
    (lambda z, w: z * w, [Z, W], [[0.7 + 0.2j, 2 - 1j], [1 - 2j, -0.5 - 0.3j]]),
    (tf.exp, [Z], [[-1.13120438 - 2.47172667j, 0.57944087 - 0.17924207j]]),
    (tf.sqrt, [Z], [[0.28443224 + 0.17578879j, 0.17478473 + 0.63102834j]]),
    (lambda z, w: z / w, [Z, W], [[1.32075472 - 0.37735849j, 0.4 + 0.2j],
                                  [0.39159843 + 4.2007832j, 0.012 + 0.116j]]),
    (lambda z, w: z ** w, [Z, W], [[0.51161492 + 0.49747652j, -0.07893861 - 0.0559006j],
                                   [0.04335471 - 2.99964199j, 0.06620275 - 0.01034605j]]),
    (tf.complex, [np.array([1.0, 2.0]), np.array(3.0)], [[1, 1], 0]),
    (lambda z: tf.cast(z, tf.float64), [Z], [[1, 1]]),
    (lambda z: tf.reduce_prod(z), [Z], [[-0.5 - 0.3j, 1 - 2j]]),
    (lambda a, b: tf.matmul(a, b), [np.array([[1 + 1j, 2], [3j, 4 - 1j]]),
                                    np.array([[1 + 1j, 3j], [2, 4 - 1j]])],
     [[[1 - 4j, 6 + 1j], [1 - 4j, 6 + 1j]], [[1 - 4j, 1 - 4j], [6 + 1j, 6 + 1j]]]),
])
def test_gradients_are_tensorflows(f, arrays, want):
    for got, expected in zip(_gradients(f, *arrays), want):
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-8)


def test_a_complex_target_is_seeded_with_ones():
    z = tf.constant(Z)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(z)
        y = z * z
        mean = tf.reduce_mean(z)
    np.testing.assert_allclose(tape.gradient(mean, z).numpy(), [0.5, 0.5])
    np.testing.assert_allclose(tape.jacobian(y, z).numpy(), np.diag(2 * np.conj(Z)))


def test_compiled_complex_arithmetic_and_gradient(monkeypatch):
    w = tf.Variable(np.array([0.5 - 1j, 1.5 + 0.25j], np.complex64))

    def step(z):
        with tf.GradientTape() as tape:
            y = tf.exp(z * w) / (z + 2.0) - tf.sqrt(z) * tf.math.conj(w)
            loss = tf.reduce_sum(tf.abs(y) + tf.math.real(tf.math.log(y * y)))
        return loss, tape.gradient(loss, w), tf.cast(y, tf.float32)

    assert_compiled_matches_eager(monkeypatch, step, tf.constant(Z, tf.complex64), rtol=1e-5)
