"""Elementwise gradient: f = sum(sin(x) * exp(-x*x) + tanh(x) * x) on 4,000,000 float32,
gradient w.r.t. x — compiled tf.function vs hand-written NumPy (and JAX when installed)."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

N = 4_000_000


@tf.function
def tapeflow_grad(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        f = tf.reduce_sum(tf.math.sin(x) * tf.exp(-x * x) + tf.tanh(x) * x)
    return tape.gradient(f, x)


def numpy_grad(x):
    s, c, e, t = np.sin(x), np.cos(x), np.exp(-x * x), np.tanh(x)
    return c * e - 2 * x * s * e + (1 - t * t) * x + t


def run(peers):
    x = np.random.default_rng(0).uniform(-2, 2, N).astype(np.float32)
    xt = tf.constant(x)
    np.testing.assert_allclose(tapeflow_grad(xt).numpy(), numpy_grad(x), rtol=1e-4,
                               atol=1e-5)
    calls = {"numpy": lambda: numpy_grad(x), "tapeflow fn": lambda: tapeflow_grad(xt)}
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        grad = jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(v) * jnp.exp(-v * v)
                                                  + jnp.tanh(v) * v)))
        jx = jnp.asarray(x)
        calls["jax jit(grad)"] = lambda: jax.block_until_ready(grad(jx))
    times = best_times(calls, repeat=5)
    name = "elementwise grad (4e6 float32)"
    notes = {"tapeflow fn": "target <= 0.75x jax jit"}
    return [Result(name, impl, t, times["numpy"], notes.get(impl, ""))
            for impl, t in times.items()]
