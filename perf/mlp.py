"""MLP gradient step: x (128, 784) -> relu(x@W1 + b1) @ W2 + b2 (256 hidden, 10 out), mean
softmax cross-entropy, gradient w.r.t. W1, b1, W2, b2, float32 — compiled tf.function vs a
hand-written NumPy forward/backward (and JAX jit(grad) when installed)."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

BATCH, INPUT, HIDDEN, OUT = 128, 784, 256, 10


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, INPUT)).astype(np.float32)
    labels = np.eye(OUT, dtype=np.float32)[rng.integers(0, OUT, BATCH)]
    params = [rng.normal(0, 0.05, (INPUT, HIDDEN)).astype(np.float32),
              np.zeros(HIDDEN, np.float32),
              rng.normal(0, 0.05, (HIDDEN, OUT)).astype(np.float32),
              np.zeros(OUT, np.float32)]
    return x, labels, params


def loss_fn(x, labels, w1, b1, w2, b2):
    logits = tf.nn.relu(x @ w1 + b1) @ w2 + b2
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, logits))


def tapeflow_step(variables):
    @tf.function
    def step(x, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(x, labels, *variables)
        return tape.gradient(loss, variables)
    return step


def eager_step(variables):
    def step(x, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(x, labels, *variables)
        return tape.gradient(loss, variables)
    return step


def numpy_step(x, labels, w1, b1, w2, b2):
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    probs = e / e.sum(axis=1, keepdims=True)
    dlogits = (probs - labels) / np.float32(BATCH)
    dw2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh = dlogits @ w2.T
    dpre = dh * (pre > 0)
    dw1 = x.T @ dpre
    db1 = dpre.sum(axis=0)
    return dw1, db1, dw2, db2


def jax_step(jax):
    import jax.numpy as jnp

    def loss(params, x, labels):
        w1, b1, w2, b2 = params
        logits = jnp.maximum(x @ w1 + b1, 0) @ w2 + b2
        return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), axis=1))

    return jax.jit(jax.grad(loss))


def run(peers):
    x, labels, params = make_data()
    variables = [tf.Variable(p) for p in params]
    step = tapeflow_step(variables)
    xt, lt = tf.constant(x), tf.constant(labels)
    got = step(xt, lt)
    want = numpy_step(x, labels, *params)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=2e-3, atol=1e-5)
    eager = eager_step(variables)
    calls = {"numpy": lambda: numpy_step(x, labels, *params),
             "tapeflow fn": lambda: step(xt, lt),
             "tapeflow eager": lambda: eager(xt, lt)}
    if "jax" in peers:
        jax = peers["jax"]
        grad = jax_step(jax)
        jparams = [jax.numpy.asarray(p) for p in params]
        jx, jl = jax.numpy.asarray(x), jax.numpy.asarray(labels)
        calls["jax jit(grad)"] = lambda: jax.block_until_ready(grad(jparams, jx, jl))
    times = best_times(calls)
    name = "MLP grad step (128x784x256x10)"
    notes = {"tapeflow fn": "target <= 1.0x jax jit"}
    return [Result(name, impl, t, times["numpy"], notes.get(impl, ""))
            for impl, t in times.items()]
