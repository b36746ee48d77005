"""RNN gradient: 100 steps of h = tanh(h@W + x_t@U + b) (hidden 64, input 32, batch 16),
loss sum(h_T^2), gradient w.r.t. W, U, b, written with `for t in tf.range(T)` — compiled
tf.function vs hand-written NumPy BPTT (and JAX lax.scan when installed). Also the
gradient with respect to the inputs xs too, at T=1000, compiled and eagerly (each step
reads a row of xs: its gradient must cost the rows, not the sequence, per step), and the
compile time of the first function for T=10 and T=1000: a loop compiles once."""

import os
import subprocess
import sys
import tempfile

import numpy as np

import tapeflow as tf

from common import Result, best_times

T, BATCH, INPUT, HIDDEN = 100, 16, 32, 64


def make_data(steps, seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(steps, BATCH, INPUT)).astype(np.float32)
    w = rng.normal(0, 0.1, (HIDDEN, HIDDEN)).astype(np.float32)
    u = rng.normal(0, 0.1, (INPUT, HIDDEN)).astype(np.float32)
    b = np.zeros(HIDDEN, np.float32)
    return xs, w, u, b


def make_tapeflow_grad():
    @tf.function
    def rnn_grad(xs, w, u, b):
        with tf.GradientTape() as tape:
            tape.watch([w, u, b])
            h = tf.zeros((BATCH, HIDDEN))
            for t in tf.range(tf.shape(xs)[0]):
                h = tf.tanh(h @ w + xs[t] @ u + b)
            loss = tf.reduce_sum(h * h)
        return tape.gradient(loss, [w, u, b])
    return rnn_grad


def make_tapeflow_input_grad():
    @tf.function
    def rnn_input_grad(xs, w, u, b):
        with tf.GradientTape() as tape:
            tape.watch([xs, w, u, b])
            h = tf.zeros((BATCH, HIDDEN))
            for t in tf.range(tf.shape(xs)[0]):
                h = tf.tanh(h @ w + xs[t] @ u + b)
            loss = tf.reduce_sum(h * h)
        return tape.gradient(loss, [xs, w, u, b])
    return rnn_input_grad


def eager_input_grad(xs, w, u, b):
    """The same gradient eagerly: a Python loop reading xs[t], recorded by the tape."""
    with tf.GradientTape() as tape:
        tape.watch([xs, w, u, b])
        h = tf.zeros((BATCH, HIDDEN))
        for t in range(xs.shape[0]):
            h = tf.tanh(h @ w + xs[t] @ u + b)
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, [xs, w, u, b])


def numpy_grad(xs, w, u, b, inputs=False):
    h = np.zeros((BATCH, HIDDEN), np.float32)
    hs = [h]
    for x in xs:
        h = np.tanh(h @ w + x @ u + b)
        hs.append(h)
    dh = 2 * h
    dxs = np.empty_like(xs) if inputs else None
    dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    for t in range(len(xs), 0, -1):
        dpre = dh * (1 - hs[t] * hs[t])
        dw += hs[t - 1].T @ dpre
        du += xs[t - 1].T @ dpre
        db += dpre.sum(axis=0)
        if inputs:
            dxs[t - 1] = dpre @ u.T
        dh = dpre @ w.T
    return (dxs, dw, du, db) if inputs else (dw, du, db)


def compile_seconds(steps):
    """Trace + compile time of the function for `steps` iterations: a fresh process with
    an empty compile cache, synchronous compile (import excluded)."""
    script = (
        "import time\nimport tapeflow as tf\nimport rnn\n"
        f"xs, w, u, b = [tf.constant(a) for a in rnn.make_data({steps})]\n"
        "grad = rnn.make_tapeflow_grad()\n"
        "start = time.perf_counter()\ngrad(xs, w, u, b)\n"
        "print(time.perf_counter() - start)\n")
    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache_dir, TAPEFLOW_COMPILE="sync")
        out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                             capture_output=True, text=True,
                             cwd=os.path.dirname(os.path.abspath(__file__)))
    return float(out.stdout.strip().splitlines()[-1])


def run(peers):
    xs, w, u, b = make_data(T)
    args = [tf.constant(a) for a in (xs, w, u, b)]
    grad = make_tapeflow_grad()
    for got, want in zip(grad(*args), numpy_grad(xs, w, u, b)):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=1e-4)
    calls = {"numpy": lambda: numpy_grad(xs, w, u, b), "tapeflow fn": lambda: grad(*args)}
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy

        def loss(params, xs):
            w, u, b = params
            def cell(h, x):
                return jnp.tanh(h @ w + x @ u + b), None
            h, _ = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN), jnp.float32), xs)
            return jnp.sum(h * h)
        jgrad = jax.jit(jax.grad(loss))
        params = [jnp.asarray(a) for a in (w, u, b)]
        jxs = jnp.asarray(xs)
        calls["jax lax.scan"] = lambda: jax.block_until_ready(jgrad(params, jxs))
    times = best_times(calls)
    name = f"RNN grad (T={T}, 16x32->64)"
    notes = {"tapeflow fn": "target <= 1.0x jax lax.scan"}
    results = [Result(name, impl, t, times["numpy"], notes.get(impl, ""))
               for impl, t in times.items()]
    results += _input_gradient_rows(peers)
    for steps in (10, 1000):
        seconds = compile_seconds(steps)
        results.append(Result(f"RNN trace+compile, T={steps}", "tapeflow fn",
                              seconds, seconds, "empty cache; should not grow with T"))
    return results


def _input_gradient_rows(peers, steps=1000):
    xs, w, u, b = make_data(steps)
    args = [tf.constant(a) for a in (xs, w, u, b)]
    grad = make_tapeflow_input_grad()
    for got, want in zip(grad(*args), numpy_grad(xs, w, u, b, inputs=True)):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=1e-4)
    for got, want in zip(eager_input_grad(*args), numpy_grad(xs, w, u, b, inputs=True)):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-3, atol=1e-4)
    calls = {"numpy": lambda: numpy_grad(xs, w, u, b, inputs=True),
             "tapeflow fn": lambda: grad(*args),
             "tapeflow eager": lambda: eager_input_grad(*args)}
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy

        def loss(xs, w, u, b):
            def cell(h, x):
                return jnp.tanh(h @ w + x @ u + b), None
            h, _ = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN), jnp.float32), xs)
            return jnp.sum(h * h)
        jgrad = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))
        jargs = [jnp.asarray(a) for a in (xs, w, u, b)]
        calls["jax lax.scan"] = lambda: jax.block_until_ready(jgrad(*jargs))
    times = best_times(calls)
    name = f"RNN grad incl. inputs (T={steps})"
    return [Result(name, impl, t, times["numpy"],
                   "xs[t]'s gradient: rows, not the sequence, per step"
                   if impl.startswith("tapeflow") else "")
            for impl, t in times.items()]
