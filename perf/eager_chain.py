"""Eager overhead: a 100-step scalar chain y = sin(y) * x + 0.5 under a tape, forward and
gradient, against the same chain and its hand-written derivative in NumPy."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

STEPS = 100
OPS_PER_STEP = 3  # sin, mul, add


def tapeflow_chain():
    x = tf.constant(0.7)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(STEPS):
            y = tf.math.sin(y) * x + 0.5
    return tape.gradient(y, x)


def numpy_chain():
    x = np.float32(0.7)
    y = x
    ys = []
    for _ in range(STEPS):
        ys.append(y)
        y = np.sin(y) * x + np.float32(0.5)
    # reverse mode by hand: dy_{k+1} = cos(y_k) * x * dy_k ; dx += sin(y_k) * dy_{k+1}
    dy = np.float32(1.0)
    dx = np.float32(0.0)
    for yk in reversed(ys):
        dx += np.sin(yk) * dy
        dy = np.cos(yk) * x * dy
    return dx + dy  # y_0 is x itself


def torch_chain(torch):
    x = torch.tensor(0.7, requires_grad=True)
    y = x
    for _ in range(STEPS):
        y = torch.sin(y) * x + 0.5
    (g,) = torch.autograd.grad(y, x)
    return g


def run(peers):
    n_ops = STEPS * OPS_PER_STEP
    reference = float(numpy_chain())
    got = float(tapeflow_chain())
    assert abs(got - reference) <= 1e-4 * max(1.0, abs(reference)), (got, reference)
    calls = {"numpy": numpy_chain, "tapeflow eager": tapeflow_chain}
    if "torch" in peers:
        calls["torch eager"] = lambda: torch_chain(peers["torch"])
    times = best_times(calls)
    name = "eager chain, fwd+grad, per op"
    notes = {"tapeflow eager": "target <= 8 µs/op"}
    return [Result(name, impl, t / n_ops, times["numpy"] / n_ops, notes.get(impl, ""))
            for impl, t in times.items()]
