"""Random draws inside tensor conds and loops of a tf.function: the gradient sees the
numbers the forward pass drew (its replay of a branch or a loop step never draws again),
with the tape inside the function or around the call, and in nested control flow.

Each function returns the draws it made (a list it appends them to), and the expected
gradient is computed from them in NumPy."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

X = np.array([0.3, -1.2, 2.0], np.float32)


def _steps(x, draws, kinds):
    """h after steps of kind "draw" (h = sin(h) * u) and "scale" (h = 1.5 h), and dh/dx."""
    h, dh = x.astype(np.float64), np.ones_like(x, np.float64)
    draws = iter(draws)
    for kind in kinds:
        if kind == "draw":
            u = next(draws).astype(np.float64)
            h, dh = np.sin(h) * u, np.cos(h) * u * dh
        else:
            h, dh = 1.5 * h, 1.5 * dh
    return h, dh


def _loop(x):
    h, us = x, []
    for _ in tf.range(4):
        u = tf.random.uniform([3])
        us.append(u)
        h = tf.sin(h) * u
    return tf.reduce_sum(h), tf.stack(us)


def _cond_in_loop(x):
    h, us = x, []
    for i in tf.range(5):
        if i % 2 == 0:
            u = tf.random.normal([3])
            us.append(u)
            h = tf.sin(h) * u
        else:
            h = h * 1.5
    return tf.reduce_sum(h), tf.stack(us)


def _loop_in_loop(x):
    h, us = x, []
    for _ in tf.range(3):
        for _ in tf.range(2):
            u = tf.random.uniform([3], minval=0.5, maxval=1.5)
            us.append(u)
            h = tf.sin(h) * u
    return tf.reduce_sum(h), tf.stack(us)


CASES = {
    "loop": (_loop, ["draw"] * 4),
    "cond in loop": (_cond_in_loop, ["draw", "scale"] * 2 + ["draw"]),
    "loop in loop": (_loop_in_loop, ["draw"] * 6),
}


def _inner_tape(body):
    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y, draws = body(x)
        return y, tape.gradient(y, x), draws
    return f


def _outer_tape(body):
    f = tf.function(body)

    def call(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y, draws = f(x)
        return y, tape.gradient(y, x), draws
    return call


@pytest.mark.parametrize("where", ["inner", "outer"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_through_draws_in_loops_uses_the_forward_draws(case, where):
    body, kinds = CASES[case]
    f = (_inner_tape if where == "inner" else _outer_tape)(body)
    x = tf.constant(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for _ in range(2):  # the first call traces; both must hold
            y, grad, draws = f(x)
            h, dh = _steps(X, draws.numpy(), kinds)
            np.testing.assert_allclose(y.numpy(), h.sum(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(grad.numpy(), dh, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("where", ["inner", "outer"])
def test_gradient_through_draws_in_a_cond_uses_the_forward_draws(where):
    def body(x):
        if tf.reduce_sum(x) > 0:
            u = tf.random.uniform([3])
            h = tf.sin(x) * u
        else:
            u = tf.zeros([3])
            h = x
        return tf.reduce_sum(h), u
    f = (_inner_tape if where == "inner" else _outer_tape)(body)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, grad, u = f(tf.constant(X))
        np.testing.assert_allclose(grad.numpy(), np.cos(X) * u.numpy(), rtol=1e-5)
        y, grad, u = f(tf.constant(-X))
        np.testing.assert_allclose(grad.numpy(), np.ones(3), rtol=1e-6)


def test_gradient_through_a_drawing_loop_inside_a_cond():
    def body(x):
        h = x
        if tf.reduce_sum(x) > 0:
            us = []
            for _ in tf.range(3):
                u = tf.random.uniform([3])
                us.append(u)
                h = tf.sin(h) * u
            drawn = tf.stack(us)
        else:
            drawn = tf.zeros([3, 3])
        return tf.reduce_sum(h), drawn
    f = _inner_tape(body)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        y, grad, draws = f(tf.constant(X))
    h, dh = _steps(X, draws.numpy(), ["draw"] * 3)
    np.testing.assert_allclose(grad.numpy(), dh, rtol=1e-4, atol=1e-6)


def test_a_cond_output_nothing_differentiates_gets_no_gradient_of_ones():
    # A branch output whose shape is unknown while tracing and that the loss does not
    # use has no gradient (None): the cond's gradient must treat it as zero.
    @tf.function
    def f(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            rows = []
            for _ in tf.range(n):
                rows.append(x)
            stacked = tf.stack(rows)
            y, unused = tf.cond(n > 0, lambda: (tf.reduce_sum(x * x), stacked),
                                lambda: (tf.reduce_sum(x), stacked))
        return tape.gradient(y, x)
    np.testing.assert_allclose(f(tf.constant(X), tf.constant(2)).numpy(), 2 * X, rtol=1e-6)
