"""Random ops drawn on the device (numba.cuda.random's xoroshiro128+ states, pooled per
seed pair and size): TensorFlow's dtypes, shapes and distributions, the same numbers for
the same seed eagerly and compiled, new numbers at each iteration of a compiled loop,
and gradients that replay what was drawn."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda.random import POOL
from tapeflow.device_tensor import DeviceTensor

pytestmark = pytest.mark.usefixtures("sync_compiles")
N = 3000  # each simulated thread draws ~50 numbers: a few tenths of a second per draw


def _drawn(draw, dtype, shape=(N,)):
    with tf.device("/GPU:0"):
        t = draw()
    assert type(t) is DeviceTensor and t.dtype == dtype and t.shape == shape
    return t.numpy()


def test_draws_have_tensorflows_dtypes_shapes_and_distributions(notes):
    x = _drawn(lambda: tf.random.normal([2, N // 2], mean=1.0, stddev=2.0), tf.float32,
               (2, N // 2))
    assert abs(x.mean() - 1.0) < 0.15 and abs(x.std() - 2.0) < 0.15
    x = _drawn(lambda: tf.random.uniform([N], dtype=tf.float64), tf.float64)
    assert 0.0 <= x.min() and x.max() < 1.0 and abs(x.mean() - 0.5) < 0.03
    assert abs(x.std() - np.sqrt(1 / 12)) < 0.02
    x = _drawn(lambda: tf.random.truncated_normal([N]), tf.float32)
    # A standard normal truncated at two standard deviations has std 0.8796.
    assert np.abs(x).max() <= 2.0 and abs(x.mean()) < 0.06 and abs(x.std() - 0.88) < 0.05
    x = _drawn(lambda: tf.random.uniform([N], 2, 9, dtype=tf.int64), tf.int64)
    assert set(np.unique(x)) == set(range(2, 9))
    x = _drawn(lambda: tf.nn.dropout(tf.ones([N]), 0.25), tf.float32)
    assert set(np.unique(x)) == {0.0, np.float32(1 / 0.75)}
    assert abs((x == 0).mean() - 0.25) < 0.04
    assert notes() == []  # none of them ran on the CPU


def test_a_seed_draws_the_same_numbers_eagerly_and_compiled():
    def draw():
        return tf.random.normal([40], seed=7)

    with tf.device("/GPU:0"):
        tf.random.set_seed(3)
        eager = [draw().numpy(), draw().numpy()]
        compiled = tf.function(draw)
        compiled()  # traced (which takes a counter of the op, as on the CPU)
        tf.random.set_seed(3)
        again = [compiled().numpy(), compiled().numpy()]
        tf.random.set_seed(4)
        other = draw().numpy()
    for a, b in zip(eager, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(eager[0], eager[1])  # the counter advances
    assert not np.array_equal(eager[0], other)


def _loop_with_draws(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y, first, last = x, tf.zeros_like(x), tf.zeros_like(x)
        for i in tf.range(3):
            u = tf.random.uniform([6], 0.5, 1.5, seed=4)
            y = y * u
            first, last = tf.where(i == 0, u, first), u
        y = tf.cond(tf.reduce_sum(y) > 0.0, lambda: y * tf.random.normal([6], seed=9),
                    lambda: y)
        loss = tf.reduce_sum(y)
    return y, tape.gradient(loss, x), first, last


def test_a_compiled_loop_draws_anew_each_iteration_and_its_gradient_replays_the_draws():
    x_host = np.linspace(0.5, 1.5, 6).astype(np.float32)
    with tf.device("/GPU:0"):
        f, x = tf.function(_loop_with_draws), tf.constant(x_host)
        f(x)
        runs = []
        for _ in range(2):
            tf.random.set_seed(5)
            runs.append([t.numpy() for t in f(x)])
        created = POOL.created
        for _ in range(3):
            f(x)
    y, grad, first, last = runs[0]
    np.testing.assert_allclose(grad, y / x_host, rtol=1e-5)  # d(x * prod(u))/dx, same u
    assert not np.array_equal(first, last)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    assert POOL.created == created  # later steps draw on from the pooled states
