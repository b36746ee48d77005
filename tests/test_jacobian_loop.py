"""Jacobians with experimental_use_pfor=False inside tf.function: one tensor loop whose
body is one backward pass, as in TensorFlow's graph, so the graph (and the kernel) does
not grow with the number of rows."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "off")


def _data(rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    a = tf.constant(rng.normal(0, 0.5, (rows, cols)).astype(np.float32))
    x = tf.constant(rng.normal(size=cols).astype(np.float32))
    return a, x


def _tanh_jacobian(a):
    @tf.function
    def jacobian(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(a, x))
        return tape.jacobian(y, x, experimental_use_pfor=False)
    return jacobian


def _node_count(graph):
    return sum(1 for _ in graph.all_nodes())


def test_the_graph_does_not_grow_with_the_rows():
    sizes = []
    for rows in (3, 40):
        a, x = _data(rows, 4)
        sizes.append(_node_count(_tanh_jacobian(a).get_concrete_function(x).graph))
    assert sizes[0] == sizes[1]


@pytest.mark.parametrize("compile_mode", ["off", "sync"])
def test_looped_jacobian_is_the_closed_form(monkeypatch, compile_mode):
    monkeypatch.setattr(settings, "compile_mode", compile_mode)
    a, x = _data(6, 5)
    got = _tanh_jacobian(a)(x).numpy()
    y = np.tanh(a.numpy() @ x.numpy())
    np.testing.assert_allclose(got, (1 - y ** 2)[:, None] * a.numpy(), rtol=1e-5, atol=1e-6)


def test_sources_it_does_not_reach_are_none_or_zeros():
    a, x = _data(3, 2)
    unused = tf.constant([1.0, 2.0, 3.0])

    @tf.function
    def jacobians(x, unused):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, unused])
            y = tf.reshape(tf.linalg.matvec(a, x), (3, 1)) * 2.0
        return (tape.jacobian(y, [x, unused], experimental_use_pfor=False),
                tape.jacobian(y, [x, unused], experimental_use_pfor=False,
                              unconnected_gradients=tf.UnconnectedGradients.ZERO))

    (j_x, j_none), (z_x, z_unused) = jacobians(x, unused)
    want = 2.0 * a.numpy().reshape(3, 1, 2)
    np.testing.assert_allclose(j_x.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(z_x.numpy(), want, rtol=1e-6)
    assert j_none is None
    np.testing.assert_array_equal(z_unused.numpy(), np.zeros((3, 1, 3)))


def test_looped_batch_jacobian_matches_the_vectorized_one():
    rng = np.random.default_rng(1)
    w = tf.constant(rng.normal(0, 0.5, (3, 4)).astype(np.float32))
    x = tf.constant(rng.normal(size=(5, 3)).astype(np.float32))

    def batch_jacobian(x, use_pfor):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x @ w) * tf.reduce_sum(x, axis=1, keepdims=True)
        return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)

    looped = tf.function(lambda x: batch_jacobian(x, False))(x)
    assert looped.shape == (5, 4, 3)
    np.testing.assert_allclose(looped.numpy(), batch_jacobian(x, True).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_hessian_of_nested_tapes_and_a_gradient_through_the_loop():
    a, x = _data(5, 4)

    def hessian(x, use_pfor):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_logsumexp(tf.linalg.matvec(a, x)) + tf.reduce_sum(x ** 3)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x, experimental_use_pfor=use_pfor)

    np.testing.assert_allclose(tf.function(lambda x: hessian(x, False))(x).numpy(),
                               hessian(x, True).numpy(), rtol=1e-5, atol=1e-5)

    def jacobian_norm_gradient(x, use_pfor):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.tanh(tf.linalg.matvec(a, x))
            j = inner.jacobian(y, x, experimental_use_pfor=use_pfor)
            norm = tf.reduce_sum(j * j)
        return outer.gradient(norm, x)

    np.testing.assert_allclose(
        tf.function(lambda x: jacobian_norm_gradient(x, False))(x).numpy(),
        jacobian_norm_gradient(x, True).numpy(), rtol=1e-5, atol=1e-5)


def test_complex_target():
    _, x = _data(1, 3)

    def jacobian(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.complex(x, 2.0 * x) * tf.complex(x, x)
        return tape.jacobian(y, x, experimental_use_pfor=False)

    np.testing.assert_allclose(tf.function(jacobian)(x).numpy(), jacobian(x).numpy(),
                               rtol=1e-6)
