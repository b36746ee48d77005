"""Two small compiled workloads where fixed costs show:
- a call of a tiny tf.function (tanh(x) * 2 + 1 on 3 floats): the per-call overhead, against
  the same NumPy expression, and JAX jit / PyTorch when installed;
- the gradient of mean softmax cross-entropy over (128, 10) logits: the softmax kernels,
  against a hand-written NumPy gradient (and JAX jit(grad))."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

ROWS, CLASSES = 128, 10


def tiny_call_rows(peers):
    x = np.array([0.1, 0.2, 0.3], np.float32)
    xt = tf.constant(x)

    @tf.function
    def tiny(v):
        return tf.tanh(v) * 2.0 + 1.0

    np.testing.assert_allclose(tiny(xt).numpy(), np.tanh(x) * 2 + 1, rtol=1e-6)
    calls = {"numpy": lambda: np.tanh(x) * 2 + 1, "tapeflow fn": lambda: tiny(xt)}
    if "jax" in peers:
        jax = peers["jax"]
        jtiny = jax.jit(lambda v: jax.numpy.tanh(v) * 2.0 + 1.0)
        jx = jax.numpy.asarray(x)
        calls["jax jit"] = lambda: jax.block_until_ready(jtiny(jx))
    if "torch" in peers:
        torch = peers["torch"]
        tx = torch.from_numpy(x)
        calls["torch eager"] = lambda: torch.tanh(tx) * 2.0 + 1.0
    times = best_times(calls)
    name = "tiny tf.function call (3 floats)"
    return [Result(name, impl, t, times["numpy"]) for impl, t in times.items()]


def numpy_xent_grad(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return (e / e.sum(axis=1, keepdims=True) - labels) / np.float32(len(logits))


def xent_rows(peers):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(ROWS, CLASSES)).astype(np.float32)
    labels = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, ROWS)]
    lt, yt = tf.constant(logits), tf.constant(labels)

    @tf.function
    def grad(z, y):
        with tf.GradientTape() as tape:
            tape.watch(z)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, z))
        return tape.gradient(loss, z)

    np.testing.assert_allclose(grad(lt, yt).numpy(), numpy_xent_grad(logits, labels),
                               rtol=1e-4, atol=1e-7)
    calls = {"numpy": lambda: numpy_xent_grad(logits, labels),
             "tapeflow fn": lambda: grad(lt, yt)}
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy

        def loss(z, y):
            return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(z), axis=1))
        jgrad = jax.jit(jax.grad(loss))
        jz, jy = jnp.asarray(logits), jnp.asarray(labels)
        calls["jax jit(grad)"] = lambda: jax.block_until_ready(jgrad(jz, jy))
    times = best_times(calls)
    name = f"softmax xent grad ({ROWS}x{CLASSES})"
    return [Result(name, impl, t, times["numpy"]) for impl, t in times.items()]


def run(peers):
    return tiny_call_rows(peers) + xent_rows(peers)
