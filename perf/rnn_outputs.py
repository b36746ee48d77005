"""RNN that collects its outputs: 1000 steps of h = tanh(0.5 h + x) over 64 floats, each h
appended to a Python list in a `for t in tf.range(T)` loop, loss mean(stack(outputs)^2),
gradient w.r.t. x — compiled tf.function vs hand-written NumPy (and JAX lax.scan with
stacked outputs when installed). The list is a loop variable that grows by one row per
step: its forward and its gradient must stay linear in T."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

T, WIDTH = 1000, 64


def make_tapeflow_grad():
    @tf.function
    def grad(x, steps):
        with tf.GradientTape() as tape:
            tape.watch(x)
            h, outputs = x, []
            for _ in tf.range(steps):
                h = tf.tanh(h * 0.5 + x)
                outputs.append(h)
            loss = tf.reduce_mean(tf.stack(outputs) ** 2)
        return tape.gradient(loss, x)
    return grad


def numpy_grad(x, steps):
    hs = np.empty((steps, x.size), np.float32)
    h = x
    for t in range(steps):
        h = np.tanh(h * np.float32(0.5) + x)
        hs[t] = h
    d_outputs = hs * np.float32(2.0 / hs.size)
    dx = np.zeros_like(x)
    dh = np.zeros_like(x)
    for t in range(steps - 1, -1, -1):
        dpre = (dh + d_outputs[t]) * (1 - hs[t] * hs[t])
        dx += dpre
        dh = dpre * np.float32(0.5)
    return dx + dh  # the first step's h was x itself


def run(peers):
    x = np.random.default_rng(0).uniform(-1, 1, WIDTH).astype(np.float32)
    xt, steps = tf.constant(x), tf.constant(T)
    grad = make_tapeflow_grad()
    np.testing.assert_allclose(grad(xt, steps).numpy(), numpy_grad(x, T), rtol=2e-3,
                               atol=1e-6)
    calls = {"numpy": lambda: numpy_grad(x, T), "tapeflow fn": lambda: grad(xt, steps)}
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy

        def loss(x):
            def cell(h, _):
                h = jnp.tanh(h * 0.5 + x)
                return h, h
            _, outputs = jax.lax.scan(cell, x, None, length=T)
            return jnp.mean(outputs ** 2)
        jgrad = jax.jit(jax.grad(loss))
        jx = jnp.asarray(x)
        calls["jax lax.scan"] = lambda: jax.block_until_ready(jgrad(jx))
    times = best_times(calls)
    name = f"RNN outputs list grad (T={T}, 64)"
    return [Result(name, impl, t, times["numpy"], "") for impl, t in times.items()]
