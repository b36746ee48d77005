"""A backward walk adds the rows that gathers and `x[k]` slices read into their tensor's
gradient once (autodiff/backprop.py, OpDef.row_grad), not a dense gradient per read."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.autodiff import backprop
from tapeflow.ops import dynamic

RNG = np.random.default_rng(0)
XS = tf.constant(RNG.normal(size=(5, 2, 3)).astype(np.float32))
W = tf.constant(RNG.normal(0, 0.5, (3, 3)).astype(np.float32))
TABLE = tf.constant(RNG.normal(size=(6, 3)).astype(np.float32))


def sequence_loss(xs, dense_use=False):
    h = tf.zeros((2, 3))
    for t in range(5):  # a Python loop: xs[t] is a slice of row t
        h = tf.tanh(h @ W + xs[t] + 0.5 * xs[-1 - t, :, :])
    loss = tf.reduce_sum(h * h) + tf.reduce_sum(xs[1:4:2] ** 2)
    return loss + tf.reduce_mean(xs) if dense_use else loss


def lookup_loss(table):
    ids = tf.constant([[1, 4], [4, 0]])
    return tf.reduce_sum(tf.gather(table, ids) ** 3) + tf.reduce_sum(tf.gather(table, 4))


def _gradient(loss, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    return tape.gradient(y, x)


@pytest.mark.parametrize("loss, x", [(sequence_loss, XS), (lookup_loss, TABLE),
                                     (lambda xs: sequence_loss(xs, dense_use=True), XS)])
def test_rows_add_up_to_the_dense_gradient(monkeypatch, loss, x):
    got = _gradient(loss, x)
    monkeypatch.setattr(backprop, "_row_grads", lambda entry, dys, needs: None)
    want = _gradient(loss, x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert got.shape == x.shape and got.dtype == x.dtype


def test_the_rows_of_every_read_are_added_once(monkeypatch):
    calls = []
    summed = dynamic.segment_summed

    def counted(*args):
        calls.append(args)
        return summed(*args)
    monkeypatch.setattr(dynamic, "segment_summed", counted)
    _gradient(sequence_loss, XS)
    assert len(calls) == 1
    rows, indices, length = calls[0]
    assert rows.shape == (12, 2, 3) and length == 5  # 5 + 5 rows, and 2 of xs[1:4:2]


def test_a_single_read_takes_its_ops_own_rule(monkeypatch):
    calls = []
    monkeypatch.setattr(dynamic, "segment_summed", lambda *args: calls.append(args))
    got = _gradient(lambda x: tf.reduce_sum(x[2] * 3.0), XS)
    want = np.zeros(XS.shape, np.float32)
    want[2] = 3.0
    np.testing.assert_array_equal(got.numpy(), want)
    assert calls == []


def test_a_traced_gradient_keeps_the_dense_rule():
    # The constant row indices of a Python loop's steps would keep a compiled kernel
    # from rolling the steps back into a loop.
    graph = tf.function(lambda xs: _gradient(sequence_loss, xs)).get_concrete_function(
        XS).graph
    ops = [node.op.name for node in graph.all_nodes()]
    assert ops.count("StridedSliceGrad") == 11 and "UnsortedSegmentSum" not in ops


def test_gradient_of_a_gradient_through_rows():
    def both(xs):
        with tf.GradientTape() as outer:
            outer.watch(xs)
            g = _gradient(sequence_loss, xs)
            norm = tf.reduce_sum(g * g)
        return g, outer.gradient(norm, xs)

    got = both(XS)
    want = tf.function(both)(XS)  # traced: the same rules on symbolic values
    for g, h in zip(got, want):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-5, atol=1e-6)


def test_a_gathered_value_that_is_itself_a_target():
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(TABLE)
        row = tf.gather(TABLE, 2)
    np.testing.assert_array_equal(tape.gradient(row, row).numpy(), np.ones(3))
    want = np.zeros((6, 3), np.float32)
    want[2] = 1.0
    np.testing.assert_array_equal(tape.gradient(row, TABLE).numpy(), want)
