"""tf.linalg's matrix functions, LU, tridiagonal and banded solvers and small
compositions beyond the generated op tests: values and gradients against TensorFlow
2.21's (recorded from it on the same inputs), finite differences where TensorFlow has
no gradient (Lu) or differentiates an iteration (eigh_tridiagonal's bisection), and
TensorFlow's errors."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

X = np.array([[0.5, -1.0, 0.3], [0.8, 0.2, -0.4], [-0.6, 0.9, 1.1]])
# Compact diagonals whose first pivot is smaller than the subdiagonal: rows interchange.
D = np.array([[0.5, -0.4, 0.0], [0.1, 2.0, -0.3], [0.0, 1.5, 0.7]])
RHS = np.array([[1.0, -2.0], [0.5, 0.3], [-0.7, 1.2]])


def _weighted(y):
    """sum(y * 0.1 * (1, 2, 3, ...)): every output element weighs differently."""
    weights = 0.1 * np.arange(1, y.numpy().size + 1).reshape(y.shape)
    return tf.reduce_sum(y * weights)


def _value_and_gradient(f, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        total = _weighted(y)
    return y.numpy(), float(total), tape.gradient(total, x).numpy()


def _finite_differences(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (float(_weighted(f(tf.constant(x + step))))
                   - float(_weighted(f(tf.constant(x - step))))) / (2 * eps)
    return grad


# name: (f, x, TensorFlow 2.21's f(x), its weighted sum, its gradient of that sum).
CASES = {
    "expm": (tf.linalg.expm, 3 * X,
             [[-1.681555, 7.229808, 7.51897], [0.098561, -2.879517, 1.498721],
              [4.570085, 11.333896, 8.71238]], 23.13971446370935,
             [[1.81683, 0.66875, 4.38831], [5.60841, 2.38333, 16.18989],
              [6.65562, 2.07888, 18.93956]]),
    "sqrtm": (tf.linalg.sqrtm, X + 2 * np.eye(3),
              [[1.61106, -0.325491, 0.076399], [0.247491, 1.520798, -0.127141],
               [-0.195804, 0.253811, 1.774043]], 2.5646633291547314,
              [[0.04003, 0.06753, 0.08829], [0.12476, 0.14846, 0.1673],
               [0.2279, 0.23962, 0.25319]]),
    "tridiagonal_solve": (lambda d: tf.linalg.tridiagonal_solve(d, tf.constant(RHS)), D,
                          [[-0.544041, 2.305699], [2.108808, -4.46114],
                           [7.253886, -14.409326]], -5.763730569948188,
                          [[10.38176, -0.70187, 0.0], [-7.14194, -0.23789, -15.79301],
                           [0.0, 0.20497, -5.09042]]),
    "tridiagonal_solve_rhs": (
        lambda r: tf.linalg.tridiagonal_solve(tf.constant(D), r, partial_pivoting=False),
        RHS, [[-0.544041, 2.305699], [2.108808, -4.46114], [7.253886, -14.409326]],
        -5.763730569948188, [[3.25389, 3.86528], [-0.15026, -0.12435], [-1.46632, -1.8342]]),
    "tridiagonal_matmul": (lambda d: tf.linalg.tridiagonal_matmul(d, tf.constant(RHS)), D,
                           [[0.35, -0.05], [2.78, -2.88], [0.56, -0.15]], -0.103,
                           [[0.11, 0.27, 0.0], [-0.3, 0.27, 0.37], [0.0, -0.5, 0.43]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_gradient_are_tensorflows(name):
    f, x, want, want_total, want_grad = CASES[name]
    y, total, grad = _value_and_gradient(f, x)
    np.testing.assert_allclose(y, want, atol=2e-6)
    np.testing.assert_allclose(total, want_total, rtol=1e-9)
    np.testing.assert_allclose(grad, want_grad, atol=2e-5)


def test_expm_in_single_precision_uses_the_order_7_approximant():
    # TensorFlow 2.21, float32: the same matrix as above.
    y = tf.linalg.expm(tf.constant(3 * X, tf.float32))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy()[0], [-1.681555, 7.229808, 7.51897], rtol=2e-6)
    nan = tf.linalg.expm(tf.constant([[np.inf, 0.0], [0.0, 1.0]]))
    assert np.isnan(nan.numpy()).all()


def test_tridiagonal_solve_formats_agree():
    # The sequence and matrix formats are the compact one rearranged (TensorFlow's
    # Python); rhs as a vector and transposed.
    dense = np.diag(D[1]) + np.diag(D[0, :-1], 1) + np.diag(D[2, 1:], -1)
    want = np.linalg.solve(dense, RHS)
    sequence = [tf.constant(D[0, :-1]), tf.constant(D[1]), tf.constant(D[2, 1:])]
    got = [tf.linalg.tridiagonal_solve(sequence, RHS, diagonals_format="sequence"),
           tf.linalg.tridiagonal_solve(dense + np.triu(np.ones((3, 3)), 2), RHS,
                                       diagonals_format="matrix"),
           tf.linalg.tridiagonal_solve(D, RHS.T, transpose_rhs=True)]
    for g in got:
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    vector = tf.linalg.tridiagonal_solve(D, RHS[:, 0])
    np.testing.assert_allclose(vector.numpy(), want[:, 0], rtol=1e-12)
    singular = tf.linalg.tridiagonal_solve(tf.constant([[1., 2., 0.], [0., 0., 0.],
                                                        [0., 3., 4.]]), tf.ones([3]))
    assert np.isnan(singular.numpy()).all()  # as TensorFlow 2.21: no error
    # TensorFlow 2.21 with perturb_singular on a singular matrix:
    perturbed = tf.linalg.tridiagonal_solve(
        tf.constant([[1., 1., 0.], [1., 1., 1.], [0., 1., 1.]], tf.float64),
        tf.ones([3], tf.float64), perturb_singular=True)
    assert np.isfinite(perturbed.numpy()).all()


def test_lu_packs_tensorflows_factors_and_differentiates():
    x = tf.constant([[1., 2., 3.], [4., 5., 6.], [7., 8., 10.]])
    packed, perm = tf.linalg.lu(x)
    # TensorFlow 2.21:
    np.testing.assert_allclose(packed.numpy(), [[7., 8., 10.], [0.142857, 0.857143, 1.571429],
                                                [0.571429, 0.5, -0.5]], atol=1e-6)
    np.testing.assert_array_equal(perm.numpy(), [2, 0, 1])
    assert tf.linalg.lu(x, output_idx_type=tf.int64).p.dtype == tf.int64
    np.testing.assert_allclose(tf.linalg.lu_reconstruct(packed, perm).numpy(), x.numpy(),
                               atol=1e-6)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (2, 3, 3)) + 2 * np.eye(3)
    b = rng.uniform(-1, 1, (2, 3, 2))
    lu_a = tf.linalg.lu(a)
    np.testing.assert_allclose(tf.linalg.lu_solve(*lu_a, b).numpy(), np.linalg.solve(a, b),
                               rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.lu_matrix_inverse(*lu_a).numpy(), np.linalg.inv(a),
                               rtol=1e-12)
    # TensorFlow has no gradient for Lu; tapeflow's is the derivative of the factors.
    _, _, grad = _value_and_gradient(lambda t: tf.linalg.lu(t)[0], a)
    np.testing.assert_allclose(grad, _finite_differences(lambda t: tf.linalg.lu(t)[0], a),
                               atol=1e-6)
    with pytest.raises(InvalidArgumentError, match=r"Input is not invertible. \[Op:Lu\]"):
        tf.linalg.lu(tf.zeros([2, 2]))


def test_banded_triangular_solve_is_tensorflows_and_differentiates():
    bands = np.array([[2., 3., 4., 5.], [-1., -2., -3., -4.]])
    # TensorFlow 2.21's documented example: two superdiagonals of a 4 x 4 matrix.
    got = tf.linalg.banded_triangular_solve(bands, tf.ones([4, 1], tf.float64), lower=False)
    np.testing.assert_allclose(got.numpy()[:, 0], [-4., -1.5, -0.6666667, -0.25], rtol=1e-6)
    rhs = np.linspace(-1, 1, 8).reshape(4, 2)
    lower_bands = np.array([[3., 4., 5., 6.], [0.5, -1., 0.7, 0.2]])  # diagonal first
    for lower, adjoint, x in ((True, False, lower_bands), (False, True, lower_bands[::-1])):
        def f(t, lower=lower, adjoint=adjoint):
            return tf.linalg.banded_triangular_solve(t, tf.constant(rhs), lower, adjoint)
        _, _, grad = _value_and_gradient(f, x.copy())
        np.testing.assert_allclose(grad, _finite_differences(f, x.copy()), atol=1e-6)


def test_eigh_tridiagonal_values_vectors_and_selections():
    alpha, beta = tf.constant([0.1, 2.0, -0.3]), tf.constant([0.5, -0.4])
    # TensorFlow 2.21:
    np.testing.assert_allclose(tf.linalg.eigh_tridiagonal(alpha, beta).numpy(),
                               [-0.385533, 0.001187, 2.184345], atol=2e-6)
    values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    dense = np.diag(alpha.numpy()) + np.diag(beta.numpy(), 1) + np.diag(beta.numpy(), -1)
    np.testing.assert_allclose(dense @ vectors.numpy(), vectors.numpy() * values.numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(
        tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2]).numpy(),
        values.numpy()[1:], atol=1e-6)
    np.testing.assert_allclose(
        tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[0.0, 3.0]).numpy(),
        values.numpy()[1:], atol=1e-6)
    # The derivative of the eigenvalues (TensorFlow differentiates its bisection).
    def f(d):
        return tf.linalg.eigh_tridiagonal(d[0], d[1, :2])
    _, _, grad = _value_and_gradient(f, D)
    np.testing.assert_allclose(grad, _finite_differences(f, D), atol=1e-6)


def test_small_compositions_match_tensorflow():
    np.testing.assert_array_equal(
        tf.linalg.matrix_rank(tf.constant([[[1., 2.], [2., 4.]], [[1., 0.], [0., 1.]]])),
        [1, 2])
    unit, length = tf.linalg.normalize(tf.constant([[3., 4.]]), axis=1)
    np.testing.assert_allclose(unit.numpy(), [[0.6, 0.8]])
    np.testing.assert_allclose(length.numpy(), [[5.]])
    full = tf.linalg.tensor_diag(tf.constant([[1., 2.], [3., 4.]]))
    assert full.shape == (2, 2, 2, 2) and float(full[1, 0, 1, 0]) == 3.0
    np.testing.assert_array_equal(tf.linalg.tensor_diag_part(full).numpy(), [[1., 2.], [3., 4.]])
    with pytest.raises(InvalidArgumentError, match=r"Input must be at least rank 1, got 0"):
        tf.linalg.tensor_diag(tf.constant(1.))
    with pytest.raises(InvalidArgumentError,
                       match=r"Invalid shape \[2,3\]: dimensions 0 and 1 do not match."):
        tf.linalg.tensor_diag_part(tf.ones([2, 3]))
    with pytest.raises(ValueError, match="tf.linalg.expm does not support matrices of type"):
        tf.linalg.expm(tf.ones([2, 2], tf.int32))


def test_expm_in_a_function_differentiates_through_its_squaring_loop(monkeypatch):
    # Traced, the squarings are a while loop of data-dependent length and the cond on a
    # finite norm an If: the gradient runs back through both.
    monkeypatch.setattr(tf.config.settings, "compile_mode", "off")
    x = tf.constant(np.stack([3 * X, 0.01 * X]))

    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.linalg.expm(x) * x)
        return y, tape.gradient(y, x)

    traced, eager = tf.function(f)(x), f(x)
    np.testing.assert_allclose(float(traced[0]), float(eager[0]), rtol=1e-12)
    np.testing.assert_allclose(traced[1].numpy(), eager[1].numpy(), rtol=1e-10, atol=1e-12)
