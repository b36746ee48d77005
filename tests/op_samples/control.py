"""Samplers for the structural ops of ops/control.py (If, While).

Their nodes exist only in graphs, so a sample is a small program: its inputs, `build`,
which makes the node through tf.cond / tf.while_loop (traced in a graph, or run eagerly),
and `reference`, the same computation in NumPy. The programs keep their derivatives
smooth: a branch or a trip count is fixed by integer or boolean inputs, never by floats.
"""

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from .common import apart, bools, floats, shapes


@dataclass
class Program:
    """inputs: NumPy arrays; build(*tensors) -> list of Tensors; reference(*arrays) ->
    list of arrays; wrt: the inputs whose gradient is checked (float ones)."""

    name: str
    inputs: list
    build: object
    reference: object
    wrt: tuple


def _tf():
    import tapeflow as tf
    return tf


# -- If ------------------------------------------------------------------------------------

def _two_outputs(draw):
    """Branches computing two outputs from values of the enclosing graph (captures)."""
    full = shapes(draw, max_dims=2)
    part = full if draw(st.booleans()) else ()
    x, y = floats(draw, full), floats(draw, part, domain=(0.5, 2.0))
    pred = bools(draw, ())
    tf = _tf()

    def build(pred, x, y):
        return list(tf.cond(pred, lambda: (tf.sin(x) * y, x * x),
                            lambda: (x / y, tf.exp(y) + x)))

    def reference(pred, x, y):
        if pred:
            return [np.sin(x) * y, x * x]
        return [x / y, np.exp(y) + x]

    return Program("two outputs", [pred, x, y], build, reference, (1, 2))


def _passes_one_through(draw):
    """One branch returns its input unchanged: the gradient passes straight through."""
    x = floats(draw, shapes(draw, max_dims=2))
    pred = bools(draw, ())
    tf = _tf()

    def build(pred, x):
        return [tf.cond(pred, lambda: x, lambda: tf.tanh(x) * 3.0)]

    def reference(pred, x):
        return [x if pred else np.tanh(x) * 3.0]

    return Program("passes one through", [pred, x], build, reference, (1,))


def _nested(draw):
    """A cond inside a branch of another: nested If nodes and their gradients."""
    x = floats(draw, shapes(draw, max_dims=2))
    outer, inner = bools(draw, ()), bools(draw, ())
    tf = _tf()

    def build(outer, inner, x):
        return [tf.cond(outer,
                        lambda: tf.cond(inner, lambda: tf.sin(x), lambda: x * x) + 1.0,
                        lambda: -x)]

    def reference(outer, inner, x):
        if outer:
            return [(np.sin(x) if inner else x * x) + 1.0]
        return [-x]

    return Program("nested", [outer, inner, x], build, reference, (2,))


# -- While ---------------------------------------------------------------------------------

def _trip_count(draw):
    return np.asarray(draw(st.integers(0, 4)), np.int32)


def _recurrence(draw):
    """x <- sin(x) * w + x / 2, n times (n may be 0: the loop does not run)."""
    full = shapes(draw, max_dims=2)
    x, w = floats(draw, full), floats(draw, full)
    n = _trip_count(draw)
    tf = _tf()

    def build(n, x, w):
        _, out = tf.while_loop(lambda i, x: i < n,
                               lambda i, x: (i + 1, tf.sin(x) * w + x / 2.0),
                               (tf.constant(0), x))
        return [out]

    def reference(n, x, w):
        for _ in range(int(n)):
            x = np.sin(x) * w + x / 2.0
        return [x]

    return Program("recurrence", [n, x, w], build, reference, (1, 2))


def _accumulator(draw):
    """Two float loop variables: a state and a running sum of products with it."""
    full = shapes(draw, max_dims=2)
    x = floats(draw, full)
    w = apart(draw, 0.0, full, gap=(0.2, 1.0))
    n = _trip_count(draw)
    tf = _tf()

    def build(n, x, w):
        _, state, total = tf.while_loop(
            lambda i, s, t: i < n,
            lambda i, s, t: (i + 1, tf.tanh(s * w), t + s * w),
            (tf.constant(0), x, tf.zeros_like(x)))
        return [state, total]

    def reference(n, x, w):
        total = np.zeros_like(x)
        for _ in range(int(n)):
            x, total = np.tanh(x * w), total + x * w
        return [x, total]

    return Program("accumulator", [n, x, w], build, reference, (1, 2))


def _sampler(*programs):
    def sample(draw):
        return draw(st.sampled_from(programs))(draw)
    return sample


STRUCTURAL_SAMPLES = {
    "If": _sampler(_two_outputs, _passes_one_through, _nested),
    "While": _sampler(_recurrence, _accumulator),
}

__all__ = ["STRUCTURAL_SAMPLES", "Program"]
