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


# -- the functions TensorFlow writes in Python -------------------------------------------

def test_frames_windows_and_overlap_add_are_tensorflows():
    x = tf.constant(np.arange(10.0))
    assert tf.signal.frame(x, 4, 3).numpy().tolist() == [[0, 1, 2, 3], [3, 4, 5, 6],
                                                         [6, 7, 8, 9]]
    assert tf.signal.frame(x, 4, 3, pad_end=True, pad_value=-1).numpy()[-1].tolist() == \
        [9, -1, -1, -1]
    assert tf.signal.frame(tf.reshape(x, (2, 5)), 2, 2, axis=0).shape == (1, 2, 5)
    frames = tf.constant(np.arange(12.0).reshape(3, 4))
    assert tf.signal.overlap_and_add(frames, 2).numpy().tolist() == [0, 1, 6, 8, 14, 16, 10,
                                                                     11]
    np.testing.assert_allclose(tf.signal.hann_window(5).numpy(), [0, 0.5, 1, 0.5, 0],
                               atol=1e-7)
    np.testing.assert_allclose(tf.signal.hann_window(4, periodic=False, dtype=tf.float64),
                               [0, 0.75, 0.75, 0], atol=1e-15)
    assert tf.signal.hamming_window(1).numpy().tolist() == [1.0]
    with pytest.raises(ValueError, match="dtype must be a floating point type"):
        tf.signal.hann_window(3, dtype=tf.int32)


@pytest.mark.parametrize("kind, dct_want, idct_want", [
    (1, [6, 1, 3, -8], [6, 1, 3, -8]),
    (2, [10, -1.39942, 4.24264, -7.07401], [5.5774, -1.59833, 6.42676, -6.40583]),
    (3, [5.5774, -1.59833, 6.42676, -6.40583], [10, -1.39942, 4.24264, -7.07401]),
    (4, [5.34685, -0.48927, 1.78664, -9.37975], [5.34685, -0.48927, 1.78664, -9.37975]),
])
def test_cosine_transforms_are_tensorflows(kind, dct_want, idct_want):
    x = tf.constant([1.0, 2.0, -1.0, 3.0])
    np.testing.assert_allclose(tf.signal.dct(x, type=kind).numpy(), dct_want, atol=2e-5)
    np.testing.assert_allclose(tf.signal.idct(x, type=kind).numpy(), idct_want, atol=2e-5)


def test_cosine_transform_arguments_are_checked_as_tensorflow():
    with pytest.raises(ValueError, match=r"Types I, II, III and IV \(I\)DCT are supported"):
        tf.signal.dct(tf.constant([1.0]), type=5)
    with pytest.raises(ValueError, match="Normalization is not supported for the Type-I"):
        tf.signal.dct(tf.constant([1.0, 2.0]), type=1, norm="ortho")
    with pytest.raises(NotImplementedError, match="axis must be -1"):
        tf.signal.dct(tf.constant([1.0, 2.0]), axis=0)


def _spectral_losses(x):
    s = tf.signal.stft(x, 6, 3, pad_end=True)
    r = tf.signal.inverse_stft(s, 6, 3)
    return [tf.reduce_sum(tf.abs(s)), tf.reduce_sum(r * r),
            tf.reduce_sum(tf.signal.dct(x, type=2, norm="ortho")
                          * tf.range(12.0, dtype=tf.float64)),
            tf.reduce_sum(tf.signal.idct(x[:5], type=4) ** 2)
            + tf.reduce_sum(tf.signal.dct(x, type=1) * x)]


def test_stft_and_cosine_transform_gradients_are_tensorflows():
    x = tf.constant(np.sin(np.arange(12.0)) + 0.1 * np.arange(12.0))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        losses = _spectral_losses(x)
    # Printed by TensorFlow 2.21 for the same losses.
    want = [
        [0, -0.11828326127760334, 3.4380241221777186, 0.9752095346876389,
         0.6128246646707936, -1.3071236755444242, 2.098781914098594, 1.8305278780178533,
         3.5787522423547506, 1.9089071403061102, 1.7188144392523181, 0.9986696144077336],
        [0, 0.00735524206881166, 0.7019772779131263, 0.8822400161197345,
         -0.27875194945931925, -0.3585345895805766, 0.6411690036021482, 1.060145780249055,
         1.3979361301745161, 2.6242369704835133, 0.3562335071176802, 0.07813265113226293],
        [13.512162552428123, -14.99600994584716, 6.228170988782603, -5.488812131271052,
         3.335256821487822, -3.0278751816851273, 1.9675880917629687, -1.78432570025487,
         1.0810718686150163, -0.9453123281971386, 0.3811335297705862, -0.2630485655917758],
        [20.933584700552622, 12.887088939691278, 27.853284948414025, 22.31914110091045,
         -20.452087000051204, -4.813726598002987, -2.3545048508235813, -2.1513259599806838,
         -1.3018857813907836, -1.5407940607775674, -1.0171385264899615, -1.0230852862355877],
    ]
    for loss, expected in zip(losses, want):
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected, rtol=1e-10,
                                   atol=1e-12)


def test_compiled_stft_round_trip_and_gradients(monkeypatch):
    def losses_and_gradients(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            total = tf.add_n(_spectral_losses(x)[:2])  # stft and back: few ops to compile
        return total, tape.gradient(total, x)

    assert_compiled_matches_eager(monkeypatch, losses_and_gradients,
                                  tf.constant(np.cos(np.arange(12.0))), rtol=1e-9)
