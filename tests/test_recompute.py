"""tf.recompute_grad, tf.grad_pass_through and tf.no_gradient: gradients equal the plain
ones (variables included), what a tape keeps shrinks to the inputs, and the backward
pass of grad_pass_through is the identity."""

import tracemalloc

import numpy as np
import pytest

import tapeflow as tf

N = 250_000  # 1 MB per float32 array


def _chain(x):
    for _ in range(8):
        x = tf.sin(tf.exp(x) * 0.5)
    return x


def _kept_by_tape(fn, x):
    """Bytes allocated while recording that the tape still holds before its gradient."""
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(fn(x))
    kept = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    return kept, tape.gradient(y, x)


def test_recompute_grad_keeps_only_the_inputs_and_gives_the_same_gradient():
    x = tf.constant(np.linspace(0.0, 1.0, N, dtype=np.float32))
    plain, g_plain = _kept_by_tape(_chain, x)
    recomputed, g_recomputed = _kept_by_tape(tf.recompute_grad(_chain), x)
    np.testing.assert_allclose(g_recomputed.numpy(), g_plain.numpy(), rtol=1e-6)
    # the plain tape keeps about two arrays per step (16 MB); the recomputing one the
    # output and the sum
    assert plain > 10 * 4 * N and recomputed < 4 * 4 * N, (plain, recomputed)


def test_recompute_grad_reaches_the_variables_its_function_reads():
    layer = tf.keras.layers.Dense(3)
    layer.build((None, 2))
    block = tf.recompute_grad(lambda x: tf.nn.relu(layer(x)) * 2.0)
    x = tf.constant([[1.0, -2.0], [0.5, 0.25]])
    with tf.GradientTape(persistent=True) as tape:
        recomputed = tf.reduce_sum(block(x))
        plain = tf.reduce_sum(tf.nn.relu(layer(x)) * 2.0)
    for a, b in zip(tape.gradient(recomputed, layer.trainable_variables),
                    tape.gradient(plain, layer.trainable_variables)):
        np.testing.assert_allclose(a.numpy(), b.numpy())


def test_grad_pass_through_differentiates_as_the_identity():
    x = tf.Variable([0.3, 1.6])
    with tf.GradientTape() as tape:
        y = tf.grad_pass_through(tf.round)(x) * tf.constant([2.0, 5.0])
    assert y.numpy().tolist() == [0.0, 10.0]
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 5.0]


def test_no_gradient_stops_the_tape_at_that_op():
    name = "Expm1"
    x = tf.constant(1.0)
    try:
        tf.no_gradient(name)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.expm1(x) + x
        assert float(tape.gradient(y, x)) == 1.0
        with pytest.raises(KeyError, match="Registering two gradient"):
            tf.no_gradient(name)
    finally:
        from tapeflow.ops.registry import GRADIENT_OVERRIDES
        GRADIENT_OVERRIDES.pop(name, None)
