"""A tensor loop's gradient with respect to a tensor its body reads a row of at each step
(ops/loop_rows.py): the rows' gradients are kept and added once, after the reverse loop,
not a dense gradient of the whole tensor at every step."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings

RNG = np.random.default_rng(0)
XS = tf.constant(RNG.normal(size=(6, 2, 3)).astype(np.float32))
W = tf.constant(RNG.normal(0, 0.5, (4, 4)).astype(np.float32))
U = tf.constant(RNG.normal(0, 0.5, (3, 4)).astype(np.float32))


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "off")


def rnn_gradients(xs, extra_dense_read=False):
    """The gradients of an RNN's loss with respect to its inputs and weights."""
    with tf.GradientTape() as tape:
        tape.watch([xs, W])
        h = tf.zeros((2, 4))
        for t in tf.range(tf.shape(xs)[0]):
            pre = h @ W + xs[t] @ U + 0.5 * xs[tf.maximum(t - 1, 0)] @ U
            if extra_dense_read:  # a read of the whole tensor: its gradient stays dense
                pre += tf.reduce_mean(xs)
            h = tf.tanh(pre)
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, [xs, W])


def rnn_gradients_with_a_dense_read(xs):
    return rnn_gradients(xs, extra_dense_read=True)


def _reverse_loop_carries_a_copy_of(graph, value):
    # The gradient's reverse loop is the While whose loop variables hold gradients.
    loops = [node for node in graph.all_nodes() if node.op.name == "While"]
    return any(x._shape == value._shape and x.dtype == value.dtype
               for node in loops for x in node.inputs[:node.attrs["n_vars"]])


def test_the_reverse_loop_carries_no_dense_gradient_of_the_rows_tensor():
    graph = tf.function(rnn_gradients).get_concrete_function(XS).graph
    assert not _reverse_loop_carries_a_copy_of(graph, XS)
    dense = tf.function(rnn_gradients_with_a_dense_read)
    assert _reverse_loop_carries_a_copy_of(dense.get_concrete_function(XS).graph, XS)


@pytest.mark.parametrize("compile_mode", ["off", "sync"])
@pytest.mark.parametrize("extra_dense_read", [False, True])
def test_gradients_are_those_of_the_eager_loop(monkeypatch, compile_mode, extra_dense_read):
    want = rnn_gradients(XS, extra_dense_read)  # eagerly: a Python loop, a gather per step
    monkeypatch.setattr(settings, "compile_mode", compile_mode)
    got = tf.function(rnn_gradients_with_a_dense_read if extra_dense_read
                      else rnn_gradients)(XS)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-5, atol=1e-6)


def test_gradient_of_the_gradient_through_the_rows():
    xs = XS[:, 0, :]
    w = W[:3, :3]

    def both(xs):
        with tf.GradientTape() as outer:
            outer.watch(xs)
            with tf.GradientTape() as inner:
                inner.watch(xs)
                h = tf.zeros([3])
                for t in tf.range(6):
                    h = tf.tanh(tf.linalg.matvec(w, h) + xs[t] * xs[t])
                loss = tf.reduce_sum(h)
            g = inner.gradient(loss, xs)
            norm = tf.reduce_sum(g * g)
        return g, outer.gradient(norm, xs)

    for got, want in zip(tf.function(both)(xs), both(xs)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_rows_of_a_sequence_of_unknown_length():
    f = tf.function(rnn_gradients,
                    input_signature=[tf.TensorSpec([None, 2, 3], tf.float32)])
    for length in (1, 6):
        got, want = f(XS[:length]), rnn_gradients(XS[:length])
        for g, h in zip(got, want):
            np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-5, atol=1e-6)
