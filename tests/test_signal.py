"""tf.signal's Fourier transforms against TensorFlow 2.21's numbers (its gradients
included: RFFT's and IRFFT's have their own weights for the Hermitian half), the ops
without a gradient, the shifts, and one compiled function. The generated tests check
every transform's values, finite-difference gradients, batching and compiled parity."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

X = np.array([0.5, -1.25, 2.0, 0.75, -0.5, 1.5])
W4 = np.array([0.5 + 1j, -1 + 0.25j, 2 - 1j, 0.5 + 0.5j])
W22 = np.array([[1 + 1j, 2 - 1j], [0.5j, -1 + 0j]])
Z = X[:4] + 1j * X[2:]


def _gradient(f, a, weights):
    a = tf.constant(a)
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = f(a)
    return tape.gradient(y, a, output_gradients=tf.constant(weights)).numpy()


# Printed by TensorFlow 2.21 for the same calls.
@pytest.mark.parametrize("f, a, weights, want", [
    (tf.signal.rfft, X, W4,
     [2.0, -0.8504809471616709, -0.5825317547305482, 3.0, 1.5825317547305482,
      -2.149519052838329]),
    (lambda a: tf.signal.rfft(a, fft_length=[8]), X, np.array([1, 1j, -1, 0.5, 2 + 0j]),
     [2.5, -2.0606601717798214, 3.0, -1.3535533905932737, 1.5, 0.06066017177982141]),
    (tf.signal.irfft, W4, X,
     [0.5, -0.29166666666666663 + 0.07216878364870327j,
      0.125 + 1.5155444566227676j, 0.16666666666666666]),
    (lambda a: tf.signal.irfft(a, fft_length=[5]), W4[:3], X[:5],
     [0.30000000000000004, -0.9062305898749057 - 0.00857567125769054j,
      1.1062305898749054 + 0.6518638338353187j]),
    (tf.signal.rfft2d, X.reshape(2, 3), W22,
     [[2.0, 1.3660254037844386, -0.3660254037844386],
      [3.9999999999999996, 0.36602540378443854, -1.3660254037844384]]),
    (tf.signal.irfft2d, W22, X.reshape(2, 3)[:, :2], [[-0.125, 0.75], [-0.25, 0.125]]),
    (tf.signal.fft, Z, W4, [2 + 0.75j, -1.25 + 0.5j, 3 - 0.75j, -1.75 + 3.5j]),
    (tf.signal.ifft, Z, W4, [0.5 + 0.1875j, -0.4375 + 0.875j, 0.75 - 0.1875j,
                             -0.3125 + 0.125j]),
])
def test_gradients_are_tensorflows(f, a, weights, want):
    np.testing.assert_allclose(_gradient(f, a, weights), want, rtol=1e-12, atol=1e-12)


def test_values_and_dtypes_are_numpys():
    x32 = tf.constant(X, tf.float32)
    spectrum = tf.signal.rfft(x32)
    assert spectrum.dtype == tf.complex64 and spectrum.shape == (4,)
    np.testing.assert_allclose(spectrum.numpy(), np.fft.rfft(X), rtol=1e-6)
    back = tf.signal.irfft(spectrum)
    assert back.dtype == tf.float32
    np.testing.assert_allclose(back.numpy(), X, rtol=1e-5, atol=1e-6)
    cube = tf.constant(np.arange(24.0).reshape(2, 3, 4) + 1j)
    np.testing.assert_allclose(tf.signal.ifft3d(tf.signal.fft3d(cube)).numpy(), cube.numpy(),
                               atol=1e-12)
    cut = tf.signal.rfft(tf.constant(X), fft_length=[4])
    np.testing.assert_allclose(cut.numpy(), np.fft.rfft(X, 4), atol=1e-12)


@pytest.mark.parametrize("f, a", [(tf.signal.rfft3d, np.ones((2, 2, 2))),
                                  (tf.signal.irfft3d, np.ones((2, 2, 2), np.complex128))])
def test_three_dimensional_real_transforms_have_no_gradient(f, a):
    a = tf.constant(a)
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = f(a)
    with pytest.raises(LookupError, match="gradient registry has no entry for: I?RFFT3D"):
        tape.gradient(y, a)


def test_shifts_are_tensorflows():
    grid = tf.constant(np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(tf.signal.fftshift(grid, axes=-1).numpy(),
                                  [[2, 0, 1], [5, 3, 4]])
    np.testing.assert_array_equal(tf.signal.ifftshift(tf.range(5)).numpy(), [2, 3, 4, 0, 1])
    x = tf.constant(np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(tf.signal.ifftshift(tf.signal.fftshift(x)).numpy(), x.numpy())


def test_a_compiled_spectral_filter_and_its_gradient(monkeypatch):
    w = tf.Variable(np.linspace(0.5, 1.5, 5))

    def step(x):
        with tf.GradientTape() as tape:
            spectrum = tf.signal.rfft(x) * tf.complex(w, tf.zeros_like(w))
            y = tf.signal.irfft(spectrum, fft_length=[8])
            loss = tf.reduce_sum(tf.abs(tf.signal.fft(tf.complex(y, y))))
        return loss, tape.gradient(loss, w)

    assert_compiled_matches_eager(monkeypatch, step, tf.constant(np.sin(np.arange(16.0))
                                                                 .reshape(2, 8)), rtol=1e-9)
