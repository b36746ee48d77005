"""tf.map_fn, tf.scan, tf.foldl, tf.foldr and tf.vectorized_map: TensorFlow 2.21's
values (obtained from it) eagerly and inside tf.function, gradients through the loop
they build, compiled parity, and vectorized_map's fallback to a loop."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

ROWS = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def test_values_match_tensorflow():
    assert tf.map_fn(lambda x: x * 2, tf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [2, 4, 6]
    pairs = (tf.constant([1, 2]), tf.constant([3, 4]))
    assert tf.map_fn(lambda t: t[0] + t[1], pairs,
                     fn_output_signature=tf.int32).numpy().tolist() == [4, 6]
    assert tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4])).numpy().tolist() == [1, 3, 6, 10]
    assert tf.scan(lambda a, x: a * x, tf.constant([1.0, 2.0, 3.0]), initializer=tf.constant(2.0),
                   reverse=True).numpy().tolist() == [12.0, 12.0, 6.0]
    both = tf.scan(lambda a, x: (a[0] + x, a[1] * x), tf.constant([1, 2, 3]),
                   initializer=(tf.constant(0), tf.constant(1)))
    assert [t.numpy().tolist() for t in both] == [[1, 3, 6], [1, 2, 6]]
    assert int(tf.foldl(lambda a, x: a - x, tf.constant([1, 2, 3]))) == -4
    assert int(tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3]))) == 0
    assert int(tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3]), initializer=10)) == 16
    with pytest.raises(ValueError, match="not scalars"):
        tf.map_fn(lambda x: x, tf.constant(1.0))


def test_gradients_through_the_loops_inside_a_function():
    @tf.function
    def combined(x):
        return (tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_sum(r * r), x))
                + tf.reduce_sum(tf.scan(lambda a, r: a + r, x))
                + tf.reduce_sum(tf.foldr(lambda a, r: a * r, x)))

    v = tf.Variable(ROWS[:2])
    with tf.GradientTape() as tape:
        y = combined(v)
    # 2x (map_fn) + (2, 1) per row (scan: row 0 counted twice) + the other row (foldr)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(),
                               [[2 + 2 + 3, 4 + 2 + 4], [6 + 1 + 1, 8 + 1 + 2]])


def test_vectorized_map_runs_once_on_the_stacks_or_falls_back_to_a_loop():
    squares = tf.vectorized_map(lambda x: tf.reduce_sum(x * x), tf.constant(ROWS))
    assert squares.numpy().tolist() == [5.0, 25.0, 61.0]
    constant = tf.vectorized_map(lambda x: tf.constant(1.0), tf.constant(ROWS))
    assert constant.numpy().tolist() == [1.0, 1.0, 1.0]
    counts = tf.vectorized_map(lambda x: tf.size(tf.unique(x)[0]), tf.constant([[1, 1], [1, 2]]))
    assert counts.numpy().tolist() == [1, 2]  # Unique has no vectorized form: a loop


def test_compiled_agrees_with_eager(monkeypatch):
    def mapped(x):
        return (tf.map_fn(lambda r: r * 2.0, x), tf.scan(lambda a, r: a * r, x),
                tf.foldl(lambda a, r: a + r, x))

    assert_compiled_matches_eager(monkeypatch, mapped, tf.constant(ROWS))
