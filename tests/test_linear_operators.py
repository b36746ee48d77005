"""tf.linalg.LinearOperator and its subclasses: values against TensorFlow 2.21's
(recorded from it), every method against the dense matrix, hints and TensorFlow's
errors, gradients by finite differences, and the same operators inside tf.function."""

import functools

import numpy as np
import pytest

import tapeflow as tf

L = tf.linalg
RNG = np.random.default_rng(7)
A2 = np.array([[2., 1.], [0.5, 3.]])
A3 = RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
D3 = RNG.uniform(-1, 1, (2, 3)) + 2.5
TRI = RNG.uniform(-1, 1, (2, 3, 3)) + np.array([[0.], [3.], [0.]])


def _c(x):
    return tf.constant(np.asarray(x, np.float64) if isinstance(x, list) else x)


# name: (operator, x, TensorFlow 2.21's solve(x)[:, 0], log|det|, to_dense()).
RECORDED = {
    "LowRankUpdate": (lambda: L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(_c([1., 2.])), _c([[1.], [0.5]])),
        [0.411765, 0.352941], 1.446919, [[2.0, 0.5], [0.5, 2.25]]),
    "Kronecker": (lambda: L.LinearOperatorKronecker(
        [L.LinearOperatorFullMatrix(_c(A2)), L.LinearOperatorDiag(_c([1., -2.]))]),
        [0.363636, -0.181818, 0.272727, -0.136364], 4.795791,
        [[2., 0., 1., 0.], [0., -4., 0., -2.], [0.5, 0., 3., 0.], [0., -1., 0., -6.]]),
    "Toeplitz": (lambda: L.LinearOperatorToeplitz(_c([1., 2., 3.]), _c([9., -1., -2.])),
                 [0.5, -0.166667, -0.166667], 1.791759,
                 [[1., -1., -2.], [2., 1., -1.], [3., 2., 1.]]),
    "Householder": (lambda: L.LinearOperatorHouseholder(_c([1., 1., 0.])),
                    [-1., -1., 1.], 0.0, [[0., -1., 0.], [-1., 0., 0.], [0., 0., 1.]]),
    "BlockLowerTriangular": (lambda: L.LinearOperatorBlockLowerTriangular(
        [[L.LinearOperatorFullMatrix(_c(A2))],
         [L.LinearOperatorFullMatrix(_c([[1., 2.]])), L.LinearOperatorDiag(_c([4.]))]]),
        [0.363636, 0.272727, 0.022727], 3.091042,
        [[2., 1., 0.], [0.5, 3., 0.], [1., 2., 4.]]),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_values_are_tensorflows(name):
    build, solved, log_det, dense = RECORDED[name]
    op = build()
    ones = tf.ones([op.domain_dimension, 1], tf.float64)
    np.testing.assert_allclose(op.solve(ones).numpy()[:, 0], solved, atol=1e-6)
    np.testing.assert_allclose(float(op.log_abs_determinant()), log_det, atol=1e-6)
    np.testing.assert_allclose(op.to_dense().numpy(), dense, atol=1e-12)


# name: (parameter, operator of it, the dense matrix of the parameter (NumPy)).
OPERATORS = {
    "FullMatrix": (A3, L.LinearOperatorFullMatrix, lambda p: p),
    "Diag": (D3, L.LinearOperatorDiag, lambda p: p[..., None] * np.eye(3)),
    "ScaledIdentity": (D3[:, 0], lambda p: L.LinearOperatorScaledIdentity(3, p),
                       lambda p: p[:, None, None] * np.eye(3)),
    "LowerTriangular": (A3, L.LinearOperatorLowerTriangular, np.tril),
    "Composition": (A3, lambda p: L.LinearOperatorComposition(
        [L.LinearOperatorFullMatrix(p), L.LinearOperatorDiag(_c(D3))]),
        lambda p: p * D3[:, None, :]),
    "Adjoint": (A3, lambda p: L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(p)),
                lambda p: np.swapaxes(p, -1, -2)),
    "Inversion": (A3, lambda p: L.LinearOperatorInversion(L.LinearOperatorFullMatrix(p)),
                  np.linalg.inv),
    "BlockDiag": (A3[:, :2, :2], lambda p: L.LinearOperatorBlockDiag(
        [L.LinearOperatorFullMatrix(p), L.LinearOperatorDiag(_c(D3[:, :1]))]),
        lambda p: np.block([[p, np.zeros((2, 2, 1))],
                            [np.zeros((2, 1, 2)), D3[:, :1, None]]])),
    "LowRankUpdate": (A3[..., :2], lambda p: L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(_c(D3)), p, diag_update=_c([0.5, 2.0])),
        lambda p: D3[..., None] * np.eye(3) + p @ np.diag([0.5, 2.0]) @ np.swapaxes(p, -1, -2)),
    "Tridiag": (TRI, L.LinearOperatorTridiag,
                lambda p: np.stack([np.diag(t[1]) + np.diag(t[0, :-1], 1) + np.diag(t[2, 1:], -1)
                                    for t in p])),
    "Permutation": (D3, lambda p: L.LinearOperatorPermutation(tf.constant([[2, 0, 1], [1, 0, 2]]),
                                                              dtype=tf.float64),
                    lambda p: np.eye(3)[[[2, 0, 1], [1, 0, 2]]]),
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_every_method_agrees_with_the_dense_matrix(name):
    param, build, dense_of = OPERATORS[name]
    op, dense = build(_c(param)), dense_of(param)
    x = RNG.uniform(-1, 1, (2, 3, 2))
    np.testing.assert_allclose(op.to_dense().numpy(), dense, atol=1e-12)
    np.testing.assert_allclose(op.matmul(x).numpy(), dense @ x, atol=1e-12)
    np.testing.assert_allclose((op @ _c(x)).numpy(), dense @ x, atol=1e-12)
    np.testing.assert_allclose(op.matmul(x, adjoint=True).numpy(),
                               np.swapaxes(dense, -1, -2) @ x, atol=1e-12)
    np.testing.assert_allclose(op.matvec(x[..., 0]).numpy(), (dense @ x)[..., 0], atol=1e-12)
    np.testing.assert_allclose(op.solve(x, adjoint=True).numpy(),
                               np.linalg.solve(np.swapaxes(dense, -1, -2), x), atol=1e-10)
    np.testing.assert_allclose(op.solvevec(x[..., 0]).numpy(),
                               np.linalg.solve(dense, x[..., :1])[..., 0], atol=1e-10)
    np.testing.assert_allclose(op.determinant().numpy(), np.linalg.det(dense), rtol=1e-10)
    np.testing.assert_allclose(op.log_abs_determinant().numpy(),
                               np.linalg.slogdet(dense)[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op.diag_part().numpy(), np.diagonal(dense, 0, -2, -1),
                               atol=1e-12)
    np.testing.assert_allclose(op.trace().numpy(), np.trace(dense, 0, -2, -1), atol=1e-12)
    np.testing.assert_allclose(op.add_to_tensor(x[..., :1] + 0 * dense).numpy(),
                               dense + x[..., :1], atol=1e-12)
    np.testing.assert_allclose(op.adjoint().to_dense().numpy(), np.swapaxes(dense, -1, -2),
                               atol=1e-12)
    np.testing.assert_allclose(op.inverse().to_dense().numpy(), np.linalg.inv(dense),
                               atol=1e-10)
    assert op.shape == (2, 3, 3) and op.batch_shape == (2,)
    assert (op.range_dimension, op.domain_dimension, op.tensor_rank) == (3, 3, 3)


@pytest.mark.parametrize("name", ["Composition", "LowRankUpdate", "Tridiag"])
def test_gradients_flow_through_operators(name):
    param, build, _ = OPERATORS[name]
    x = _c(RNG.uniform(-1, 1, (2, 3, 2)))

    def f(p):
        op = build(p)
        return (tf.reduce_sum(op.solve(x) * op.matmul(x))
                + tf.reduce_sum(op.log_abs_determinant()))

    p = _c(param)
    with tf.GradientTape() as tape:
        tape.watch(p)
        y = f(p)
    grad = tape.gradient(y, p).numpy()
    numeric = np.zeros_like(param)
    for i in np.ndindex(param.shape):
        step = np.zeros_like(param)
        step[i] = 1e-6
        numeric[i] = (float(f(_c(param + step))) - float(f(_c(param - step)))) / 2e-6
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


def test_operators_inside_a_function_with_gradients(monkeypatch):
    monkeypatch.setattr(tf.config.settings, "compile_mode", "off")
    x = _c(RNG.uniform(-1, 1, (2, 3, 2)))

    def f(p):
        with tf.GradientTape() as tape:
            tape.watch(p)
            op = L.LinearOperatorBlockLowerTriangular(
                [[L.LinearOperatorFullMatrix(p[:, :2, :2])],
                 [L.LinearOperatorFullMatrix(p[:, 2:, :2]),
                  L.LinearOperatorDiag(p[:, 2, 2:])]])
            y = tf.reduce_sum(op.solve(x)) + tf.reduce_sum(op.determinant())
        return y, tape.gradient(y, p)

    p = _c(A3)
    traced, eager = tf.function(f)(p), f(p)
    np.testing.assert_allclose(float(traced[0]), float(eager[0]), rtol=1e-12)
    np.testing.assert_allclose(traced[1].numpy(), eager[1].numpy(), rtol=1e-10)


def test_hints_and_derived_operators_are_tensorflows():
    spd = A3 @ np.swapaxes(A3, -1, -2)
    op = L.LinearOperatorFullMatrix(spd, is_self_adjoint=True, is_positive_definite=True)
    assert (op.is_non_singular, op.is_square) == (True, True)
    np.testing.assert_allclose(op.cholesky().to_dense().numpy(), np.linalg.cholesky(spd),
                               atol=1e-12)
    assert isinstance(op.cholesky(), L.LinearOperatorLowerTriangular)
    assert op.adjoint() is op  # self-adjoint
    diag = L.LinearOperatorDiag(_c(D3))
    assert isinstance(diag.inverse(), L.LinearOperatorDiag)
    assert isinstance(diag @ L.LinearOperatorDiag(_c(D3)), L.LinearOperatorDiag)
    assert isinstance(diag @ L.LinearOperatorFullMatrix(_c(A3)), L.LinearOperatorComposition)
    identity = L.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64)
    assert identity.inverse() is identity and identity @ diag is diag
    np.testing.assert_array_equal(identity.determinant().numpy(), [1., 1.])
    zeros = L.LinearOperatorZeros(3, 4)
    assert zeros.shape == (3, 4) and zeros.is_square is False
    np.testing.assert_array_equal(zeros.matmul(tf.ones([4, 2])).numpy(), np.zeros((3, 2)))
    householder = L.LinearOperatorHouseholder(_c([1., 1., 0.]))
    assert (householder.is_non_singular, householder.is_positive_definite) == (None, False)
    np.testing.assert_allclose(tf.sort(householder.eigvals()).numpy(), [-1., 1., 1.])


def test_errors_are_tensorflows():
    with pytest.raises(ValueError, match="A positive definite matrix is always non-singular."):
        L.LinearOperatorFullMatrix(A3, is_positive_definite=True, is_non_singular=False)
    with pytest.raises(ValueError, match="A real diagonal operator is always self adjoint."):
        L.LinearOperatorDiag(D3, is_self_adjoint=False)
    with pytest.raises(ValueError, match="An identity operator is always non-singular."):
        L.LinearOperatorIdentity(3, is_non_singular=False)
    with pytest.raises(TypeError, match="Argument matrix must have dtype in"):
        L.LinearOperatorFullMatrix(tf.constant([[1, 2], [3, 4]]))
    with pytest.raises(TypeError, match="Expected argument to have dtype"):
        L.LinearOperatorFullMatrix(A3).matmul(tf.ones([2, 3, 1]))
    with pytest.raises(ValueError, match="Dimensions 3 and 4 are not compatible"):
        L.LinearOperatorFullMatrix(A3).matmul(tf.ones([2, 4, 1], tf.float64))
    with pytest.raises(ValueError, match="Operators are incompatible. Expected `x` to have "
                                         "dimension 3 but got 2."):
        L.LinearOperatorComposition([L.LinearOperatorFullMatrix(A3),
                                     L.LinearOperatorFullMatrix(A3[:, :2])])
    with pytest.raises(NotImplementedError, match="Exact solve not implemented for an "
                                                  "operator that is expected to be singular."):
        L.LinearOperatorZeros(3).solve(tf.ones([3, 1]))
    with pytest.raises(ValueError, match="Cannot take the Cholesky decomposition: Not a "
                                         "positive definite self adjoint matrix."):
        L.LinearOperatorFullMatrix(A3).cholesky()
    with pytest.raises(ValueError, match="Expected a non-empty list of operators. Found: "):
        L.LinearOperatorBlockDiag([])


def test_circulant_operators_are_tensorflows():
    # TensorFlow 2.21 (a real spectrum, not Hermitian: the result's real part is kept).
    x = _c([[1.], [2.], [-1.]])
    spectrum = _c([6., -1., 2.])
    op = L.LinearOperatorCirculant(spectrum, input_output_dtype=tf.float64)
    np.testing.assert_allclose(op.to_dense().numpy(), [[2.333333, 1.833333, 1.833333],
                                                       [1.833333, 2.333333, 1.833333],
                                                       [1.833333, 1.833333, 2.333333]],
                               atol=1e-6)
    np.testing.assert_allclose(float(op.log_abs_determinant()), 2.4849066497880004)
    np.testing.assert_allclose(op.solve(x).numpy()[:, 0], [0.027778, -0.222222, 0.527778],
                               atol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(spectrum)
        y = tf.reduce_sum(L.LinearOperatorCirculant(
            spectrum, input_output_dtype=tf.float64).solve(x) * x)
    np.testing.assert_allclose(float(y), -0.9444444444444444, rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(y, spectrum).numpy(),
                               [-0.037037, -2.333333, -0.583333], atol=1e-6)
    two = L.LinearOperatorCirculant2D(_c([[5., 1.], [2., 3.]]), input_output_dtype=tf.float64)
    np.testing.assert_allclose(two.to_dense().numpy(), [[2.75, 0.75, 0.25, 1.25],
                                                        [0.75, 2.75, 1.25, 0.25],
                                                        [0.25, 1.25, 2.75, 0.75],
                                                        [1.25, 0.25, 0.75, 2.75]])
    complex_op = L.LinearOperatorCirculant(tf.constant([3 + 1j, 2 - 1j, 1 + 0.5j]),
                                           input_output_dtype=tf.complex128)
    np.testing.assert_allclose(
        complex_op.matvec(tf.constant([1, 1j, 0])).numpy(),
        [1.872008 + 0.233654j, 0.766346 + 2.705342j, -0.638355 + 1.061004j], atol=1e-6)
    assert complex_op.is_self_adjoint is None and op.is_self_adjoint is True
    three = L.LinearOperatorCirculant3D(tf.ones([2, 2, 2], tf.complex64))
    assert three.shape == (8, 8) and three.block_depth == 3


def test_conjugate_gradient_is_tensorflows(monkeypatch):
    a = np.random.default_rng(0).uniform(-1, 1, (2, 4, 4))
    a = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    op = L.LinearOperatorFullMatrix(a, is_self_adjoint=True, is_positive_definite=True)
    preconditioner = L.LinearOperatorDiag(1 / np.diagonal(a, 0, 1, 2))
    # TensorFlow 2.21, three preconditioned steps:
    want_x = [[0.1737522350521929, 0.21867210675539353, 0.14153871165359877,
               0.15703213049615142],
              [0.26038076501340796, 0.22518998276962565, 0.15488774336995675,
               0.2355233372430246]]
    want_gamma = [1.630625808969195e-07, 5.285562656405927e-07]
    run = functools.partial(L.experimental.conjugate_gradient, op,
                            preconditioner=preconditioner, max_iter=3)
    state = run(tf.ones([2, 4], tf.float64))
    assert type(state).__name__ == "CGState" and int(state.i) == 3
    np.testing.assert_allclose(state.x.numpy(), want_x, rtol=1e-12)
    np.testing.assert_allclose(state.gamma.numpy(), want_gamma, rtol=1e-9)
    monkeypatch.setattr(tf.config.settings, "compile_mode", "off")
    traced = tf.function(lambda b: run(b).x)(tf.ones([2, 4], tf.float64))
    np.testing.assert_allclose(traced.numpy(), want_x, rtol=1e-12)
    with pytest.raises(ValueError, match="Expected a self-adjoint, positive definite operator."):
        L.experimental.conjugate_gradient(L.LinearOperatorFullMatrix(a), tf.ones([2, 4]))
