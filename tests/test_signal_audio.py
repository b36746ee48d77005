"""tf.signal's windows, modified DCT, mel filterbank, MFCCs and n-dimensional Fourier
transforms against TensorFlow 2.21's numbers (the n-dimensional ones against NumPy's
fftn family, which TensorFlow's GPU kernels compute: its CPU build has none)."""

import numpy as np
import pytest

import tapeflow as tf

SIGNAL = np.sin(np.arange(16) * 0.37)


def test_kaiser_windows_match_numpy_and_tensorflow():
    np.testing.assert_allclose(tf.signal.kaiser_window(7, dtype=tf.float64), np.kaiser(7, 12.),
                               atol=1e-12)
    np.testing.assert_allclose(tf.signal.kaiser_window(6, beta=3., dtype=tf.float64),
                               np.kaiser(6, 3.), atol=1e-12)
    assert tf.signal.kaiser_window(1).numpy().tolist() == [1.0]
    # Printed by TensorFlow 2.21.
    np.testing.assert_allclose(tf.signal.kaiser_bessel_derived_window(7).numpy(),
                               [0.00713, 0.70711, 0.99997, 0.99997, 0.70711, 0.00713], atol=1e-5)
    np.testing.assert_allclose(tf.signal.vorbis_window(6, dtype=tf.float64).numpy(),
                               [0.10503, 0.70711, 0.99447, 0.99447, 0.70711, 0.10503], atol=1e-5)
    with pytest.raises(ValueError, match="dtype must be a floating point type"):
        tf.signal.kaiser_window(4, dtype=tf.int32)


def test_kaiser_window_gradient_in_beta():
    beta = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch(beta)
        y = tf.reduce_sum(tf.signal.kaiser_window(5, beta) * tf.range(5.))
    np.testing.assert_allclose(tape.gradient(y, beta).numpy(), -0.6521, atol=1e-4)


def test_mdct_and_its_gradient_match_tensorflow():
    got = tf.signal.mdct(tf.constant(SIGNAL), 8).numpy()
    np.testing.assert_allclose(got, [
        [-5.2622108293, 0.5978654407, -0.4067688207, 0.0154764522],
        [-0.0260993297, 1.9325529649, 0.1104506198, 0.0408336011],
        [5.257477892, -0.2474100073, 0.426798295, -0.0080715543]], atol=1e-9)
    x = tf.constant(np.sin(np.arange(16) * 0.7))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.signal.mdct(x, 8) ** 2 * tf.range(4, dtype=tf.float64))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [
        -0.6814010922, -5.1031074682, 9.6874086891, 11.3839673687, 5.6593098928,
        -6.5729170884, -15.2440801897, -10.0096354724, -5.6363612554, 6.8328535903,
        13.4255866567, 7.7388255455, 4.6715963533, -9.0805331047, -4.7834191567,
        0.2796240321], atol=1e-8)
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(tf.constant(SIGNAL), 6)


@pytest.mark.parametrize("window_fn", [tf.signal.vorbis_window,
                                       tf.signal.kaiser_bessel_derived_window, None])
def test_inverse_mdct_reconstructs_the_signal(window_fn):
    x = np.random.RandomState(0).randn(40)
    padded = np.pad(x, (4, 8))
    coefficients = tf.signal.mdct(tf.constant(padded), 8, window_fn=window_fn, norm="ortho")
    back = tf.signal.inverse_mdct(coefficients, window_fn=window_fn, norm="ortho").numpy()
    np.testing.assert_allclose(back[4:44], x, atol=1e-10)


def test_inverse_mdct_ortho_matches_tensorflow():
    got = tf.signal.inverse_mdct(tf.reshape(tf.constant(SIGNAL[:12]), [3, 4]), norm="ortho")
    np.testing.assert_allclose(got.numpy()[:6], [0.0220382435, -0.1709555197, 0.3245308858,
                                                 -0.3681864444, 0.8763542593, -0.5948741459],
                               atol=1e-9)


def test_inverse_stft_window_fn_inverts_stft():
    window = tf.signal.inverse_stft_window_fn(3)(8, dtype=tf.float64)
    np.testing.assert_allclose(window.numpy(), [0., 0.1404233979, 0.5109583236, 0.8722604191,
                                                0.958870939, 0.8722604191, 0.5109583236,
                                                0.1404233979], atol=1e-9)
    x = tf.constant(np.random.RandomState(1).randn(64))
    spectra = tf.signal.stft(x, 16, 4)
    back = tf.signal.inverse_stft(spectra, 16, 4,
                                  window_fn=tf.signal.inverse_stft_window_fn(4)).numpy()
    np.testing.assert_allclose(back[12:-12], x.numpy()[12:len(back) - 12], atol=1e-10)


def test_mel_weights_and_mfccs_match_tensorflow():
    weights = tf.signal.linear_to_mel_weight_matrix(4, 9, 16000, 200., 6000., tf.float64)
    want = np.zeros((9, 4))
    want[1, :2] = [0.4159429854, 0.5840570146]
    want[2, 1:3] = [0.2636867296, 0.7363132704]
    want[3, 2:] = [0.4789144691, 0.5210855309]
    want[4:6, 3] = [0.8830651603, 0.4026000618]
    np.testing.assert_allclose(weights.numpy(), want, atol=1e-9)
    assert tf.signal.linear_to_mel_weight_matrix().shape == (129, 20)
    with pytest.raises(ValueError, match="Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(5, 17, 8000, 100., 7000.)
    with pytest.raises(ValueError, match="num_mel_bins must be positive"):
        tf.signal.linear_to_mel_weight_matrix(0)
    mfccs = tf.signal.mfccs_from_log_mel_spectrograms(tf.reshape(tf.constant(SIGNAL), [2, 8]))
    np.testing.assert_allclose(mfccs.numpy()[:, :3], [[2.6046839454, -0.52730444196,
                                                       -0.72306201675],
                                                      [-2.4287298059, 0.85512298882,
                                                       0.67421702918]], atol=1e-9)


X = np.random.RandomState(0).randn(2, 3, 4)
Z = X + 0.5j * np.random.RandomState(1).randn(2, 3, 4)


@pytest.mark.parametrize("ours, numpys, a, kwargs", [
    (tf.signal.fftnd, np.fft.fftn, Z, {}),
    (tf.signal.fftnd, np.fft.fftn, Z, {"fft_length": [5, 2], "axes": [-1, 1], "norm": "ortho"}),
    (tf.signal.ifftnd, np.fft.ifftn, Z, {"fft_length": [3, 2], "axes": [0, 1],
                                         "norm": "forward"}),
    (tf.signal.rfftnd, np.fft.rfftn, X, {}),
    (tf.signal.rfftnd, np.fft.rfftn, X, {"fft_length": [4, 5], "axes": [0, 1]}),
    (tf.signal.irfftnd, np.fft.irfftn, Z, {}),
    (tf.signal.irfftnd, np.fft.irfftn, Z, {"fft_length": [3, 5], "axes": [1, 2],
                                           "norm": "ortho"}),
])
def test_nd_transforms_match_numpy(ours, numpys, a, kwargs):
    numpy_kwargs = {"s" if k == "fft_length" else k: v for k, v in kwargs.items()}
    np.testing.assert_allclose(ours(tf.constant(a), **kwargs).numpy(), numpys(a, **numpy_kwargs),
                               atol=1e-12)


def test_nd_transforms_top_level_errors_and_gradient():
    np.testing.assert_allclose(tf.fftnd(tf.constant(Z), [3, 4], [1, 2]).numpy(),
                               np.fft.fftn(Z, axes=[1, 2]), atol=1e-12)
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 3 is out of range"):
        tf.signal.fftnd(tf.constant(Z), axes=[3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tcomplex"):
        tf.signal.fftnd(tf.constant(X))
    with pytest.raises(ValueError, match="RFFT requires tf.float32"):
        tf.signal.rfftnd(tf.constant(Z))
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.abs(tf.signal.fftnd(tf.complex(x, tf.zeros_like(x)))) ** 2)
    # Parseval: the squared spectrum sums to N times the squared signal.
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * X.size * X, atol=1e-10)


def test_nd_transforms_in_a_function():
    @tf.function
    def round_trip(v):
        return tf.signal.irfftnd(tf.signal.rfftnd(v, axes=[0, 2]), fft_length=[2, 4], axes=[0, 2])
    np.testing.assert_allclose(round_trip(tf.constant(X)).numpy(), X, atol=1e-12)
