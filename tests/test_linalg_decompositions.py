"""tf.linalg's decompositions and their composites beyond the generated op tests:
values and gradients against TensorFlow 2.21's (recorded from it on the same inputs),
sign-invariant identities, TensorFlow's NaN and inf conventions, and one compiled
function."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

RNG = np.random.default_rng(3)
A = RNG.uniform(-1, 1, (3, 3))
SPD = A @ A.T + 3 * np.eye(3)
RNG.uniform(-1, 1, (3, 2))  # a draw the recorded run made: B follows it
WIDE = RNG.uniform(-1, 1, (2, 4))
B = RNG.uniform(-1, 1, (3, 2))

# name: (f, input, TensorFlow 2.21's f(input), TensorFlow 2.21's gradient, to 5 places).
# Functions of |u|, |v|, |q| are sign-invariant where TensorFlow's Eigen kernels and
# LAPACK may pick opposite signs.
CASES = {
    "chol": (lambda x: tf.reduce_sum(tf.linalg.cholesky(x) * A),
        SPD, -2.559349,
        [[-0.19986, 0.07866, -0.02023],
         [0.07866, -0.18777, -0.19227],
         [-0.02023, -0.19227, 0.12495]]),
    "eigh": (lambda x: (tf.reduce_sum(tf.linalg.eigh(x)[0] * A[0])
             + tf.reduce_sum(tf.abs(tf.linalg.eigh(x)[1]))),
        SPD, 3.355063,
        [[0.07973, 0.0, 0.0],
         [0.47745, -0.82118, 0.0],
         [0.6679, 1.32076, -0.01108]]),
    "eigvalsh": (lambda x: tf.reduce_sum(tf.linalg.eigvalsh(x) * A[1]),
        SPD, -3.164946,
        [[-0.30654, 0.0, 0.0],
         [0.69864, -0.48351, 0.0],
         [0.02963, -0.51284, 0.00889]]),
    "svd_s": (lambda x: tf.reduce_sum(tf.linalg.svd(x, compute_uv=False) * A[0]),
        SPD, -4.170926,
        [[-0.56377, 0.11572, -0.43657],
         [0.11572, -0.28043, -0.50697],
         [-0.43657, -0.50697, 0.09168]]),
    "svd_uv": (lambda x: (tf.reduce_sum(tf.abs(tf.linalg.svd(x)[1]))
               + tf.reduce_sum(tf.linalg.svd(x)[0])),
        SPD, 16.618699,
        [[0.99643, -0.04138, -0.23947],
         [0.02466, 0.64211, 0.2769],
         [-0.20167, 0.36647, 1.36146]]),
    "qr": (lambda x: (tf.reduce_sum(tf.abs(tf.linalg.qr(x)[0]) * A)
           + tf.reduce_sum(tf.abs(tf.linalg.qr(x)[1]))),
        SPD, 12.920768,
        [[0.86063, 0.85202, 0.77383],
         [0.58315, 0.98349, 0.92009],
         [0.79596, 0.72634, 1.24685]]),
    "logdet": (lambda x: tf.linalg.logdet(x),
        SPD, 4.031231,
        [[0.23816, -0.00798, -0.04262],
         [-0.00798, 0.27495, -0.03456],
         [-0.04262, -0.03456, 0.28371]]),
    "slogdet": (lambda x: tf.linalg.slogdet(x)[1],
        SPD, 4.031231,
        [[0.23816, -0.00798, -0.04262],
         [-0.00798, 0.27495, -0.03456],
         [-0.04262, -0.03456, 0.28371]]),
    "pinv": (lambda x: tf.reduce_sum(tf.linalg.pinv(x) * A),
        SPD, -0.280308,
        [[0.05148, 0.02745, -0.04684],
         [-0.0167, 0.05217, 0.01191],
         [-0.00059, 0.04322, -0.03596]]),
    "lstsq": (lambda x: tf.reduce_sum(tf.linalg.lstsq(x, tf.constant(B), l2_regularizer=0.1)),
        SPD, 0.022241,
        [[-0.021, -0.00745, 0.02471],
         [-0.02603, -0.00935, 0.03044],
         [-0.02336, -0.00863, 0.02685]]),
    "trisolve": (lambda x: tf.reduce_sum(
        tf.linalg.triangular_solve(x, tf.constant(B), adjoint=True) * B),
        SPD, 0.537456,
        [[-0.04933, 0.0, 0.0],
         [-0.00092, -0.0009, 0.0],
         [0.05891, -0.01412, -0.09592]]),
    "band": (lambda x: tf.reduce_sum(tf.linalg.band_part(x, 1, 0) * A),
        SPD, -5.157371,
        [[-0.8287, 0.0, 0.0],
         [0.16432, -0.81174, 0.0],
         [0.0, -0.68052, 0.46915]]),
    "wide": (lambda x: (tf.reduce_sum(tf.linalg.qr(x)[1] * WIDE)
             + tf.reduce_sum(tf.linalg.lstsq(x, tf.constant(B[:2])))),
        WIDE, 1.378054,
        [[-1.28362, 0.4543, 0.37263, -0.50362],
         [0.20288, -1.13889, 1.07026, -0.13959]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_gradient_are_tensorflows(name):
    f, value, want_value, want_grad = CASES[name]
    x = tf.constant(value)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(float(y), want_value, atol=2e-6)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want_grad, atol=2e-5)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan():
    # TensorFlow 2.21's CPU kernel raises nothing: NaN on and below the diagonal.
    out = tf.linalg.cholesky(tf.constant([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 9.0], [2.0, 5.0]]]))
    assert np.isnan(out.numpy()[0][np.tril_indices(2)]).all()
    np.testing.assert_allclose(out.numpy()[1], [[2.0, 0.0], [1.0, 2.0]])  # upper unread


def test_triangular_solve_with_a_zero_pivot_gives_inf():
    out = tf.linalg.triangular_solve(tf.constant([[0.0, 0.0], [1.0, 1.0]]), tf.ones([2, 1]))
    np.testing.assert_array_equal(out.numpy(), [[np.inf], [-np.inf]])


def test_decompositions_reconstruct_batched_inputs():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3, 4, 3))
    q, r = tf.linalg.qr(x, full_matrices=True)
    np.testing.assert_allclose((q @ r).numpy(), x, atol=1e-12)
    s, u, v = tf.linalg.svd(x, full_matrices=True)
    assert u.shape == (2, 3, 4, 4) and v.shape == (2, 3, 3, 3)
    product = (u.numpy()[..., :3] * s.numpy()[..., None, :]) @ np.swapaxes(v.numpy(), -1, -2)
    np.testing.assert_allclose(product, x, atol=1e-12)
    sym = x[..., :3, :] + np.swapaxes(x[..., :3, :], -1, -2)
    e, w = tf.linalg.eigh(sym)
    product = (w.numpy() * e.numpy()[..., None, :]) @ np.swapaxes(w.numpy(), -1, -2)
    np.testing.assert_allclose(product, sym, atol=1e-12)


def test_lstsq_and_pinv_of_a_rank_deficient_matrix_are_minimum_norm():
    a = tf.constant([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    # TensorFlow 2.21 (its complete orthogonal decomposition): [[0.08571428], [0.17142856]]
    np.testing.assert_allclose(tf.linalg.lstsq(a, tf.ones([3, 1]), fast=False).numpy(),
                               [[0.08571428], [0.17142856]], rtol=1e-6)
    np.testing.assert_allclose(tf.linalg.pinv(a).numpy(), np.linalg.pinv(a.numpy()),
                               rtol=1e-5, atol=1e-7)


def test_compiled_composites_match_eager(monkeypatch):
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def f(x, rhs):
        chol = tf.linalg.cholesky(x)
        return tf.linalg.cholesky_solve(chol, rhs), tf.linalg.logdet(x)

    x, rhs = tf.constant(np.stack([SPD, 2 * SPD])), tf.constant(np.stack([B, -B]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tf.function(f)(x, rhs)
    assert not [w for w in caught if "not compiled" in str(w.message)]
    for a, b in zip(got, f(x, rhs)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    np.testing.assert_allclose(got[0].numpy(), np.linalg.solve(x.numpy(), rhs.numpy()))


def test_matrix_2_norm_is_the_largest_singular_value():
    # TensorFlow 2.21 on this input: [[[1.785225]], [[1.499372]]], gradient sum -0.3855.
    x = tf.constant(np.random.default_rng(1).uniform(-1, 1, (2, 3, 4)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.norm(x, ord=2, axis=(2, 1), keepdims=True)
    np.testing.assert_allclose(y.numpy(), [[[1.785225]], [[1.499372]]], atol=1e-6)
    assert abs(float(tf.reduce_sum(tape.gradient(y, x))) + 0.3855) < 1e-4
    np.testing.assert_allclose(tf.norm(x, ord=2, axis=(0, 2)).numpy(),
                               [1.550454, 1.072847, 1.341639], atol=1e-6)
