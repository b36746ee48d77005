"""tf.roll, tf.repeat, tf.meshgrid, tf.sequence_mask and tf.boolean_mask: values against
NumPy, gradients through them, TensorFlow's errors, and compiled parity."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager
from tapeflow.errors import InvalidArgumentError

X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize("shift, axis", [(1, 1), (-1, 0), ([1, -2], [0, 1]), ([2, 3], [1, 1]),
                                         (7, -1)])
def test_roll_matches_numpy(shift, axis):
    want = np.roll(X, shift, tuple(axis) if isinstance(axis, list) else axis)
    np.testing.assert_array_equal(tf.roll(tf.constant(X), shift, axis).numpy(), want)


@pytest.mark.parametrize("repeats, axis", [(2, None), ([1, 0, 2], 0), (3, 1), ([2, 1, 1, 0], -1)])
def test_repeat_matches_numpy(repeats, axis):
    np.testing.assert_array_equal(tf.repeat(tf.constant(X), repeats, axis).numpy(),
                                  np.repeat(X, repeats, axis))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(indexing):
    a, b, c = [1, 2, 3], [4.0, 5.0], [6, 7, 8, 9]
    got = tf.meshgrid(tf.constant(a), tf.constant([4, 5]), tf.constant(c), indexing=indexing)
    for g, w in zip(got, np.meshgrid(a, [4, 5], c, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), w)
    x, y = tf.meshgrid(tf.constant(b), tf.constant(b), indexing=indexing)
    assert x.dtype == tf.float32 and x.shape == (2, 2)


def test_sequence_mask_and_boolean_mask():
    np.testing.assert_array_equal(tf.sequence_mask([1, 3, 0], 4).numpy(),
                                  np.arange(4) < np.array([[1], [3], [0]]))
    assert tf.sequence_mask([1, 3]).shape == (2, 3)
    assert tf.sequence_mask([[1], [2]], 3, dtype=tf.float32).dtype == tf.float32
    mask = X > 4.5
    np.testing.assert_array_equal(tf.boolean_mask(tf.constant(X), mask).numpy(), X[mask])
    np.testing.assert_array_equal(
        tf.boolean_mask(tf.constant(X), [True, False, True, True], axis=1).numpy(),
        X[:, [0, 2, 3]])


def test_gradients_flow_back_to_each_source_element():
    x = tf.Variable(X)
    weights = np.arange(1.0, 13.0).reshape(3, 4)
    with tf.GradientTape(persistent=True) as tape:
        rolled = tf.reduce_sum(tf.roll(x, 1, 1) * weights)
        repeated = tf.reduce_sum(tf.repeat(x, [2, 0, 1], axis=0) * np.ones((3, 4)))
        masked = tf.reduce_sum(tf.boolean_mask(x, X > 4.5) * 2.0)
    np.testing.assert_array_equal(tape.gradient(rolled, x).numpy(), np.roll(weights, -1, 1))
    np.testing.assert_array_equal(tape.gradient(repeated, x).numpy(),
                                  np.array([[2.0] * 4, [0.0] * 4, [1.0] * 4]))
    np.testing.assert_array_equal(tape.gradient(masked, x).numpy(), np.where(X > 4.5, 2.0, 0.0))


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.roll(tf.constant(X), [1, 2], [0]), InvalidArgumentError,
     r"shift and axis must have the same size \[Op:Roll\]"),
    (lambda: tf.roll(tf.constant(X), 1, 2), InvalidArgumentError, r"axis 2 is out of range"),
    (lambda: tf.repeat(tf.constant(X), [1, 2], axis=0), ValueError,
     "Dimensions 3 and 2 are not compatible"),
    (lambda: tf.boolean_mask(tf.constant(X), [True]), ValueError,
     r"Shapes \(3,\) and \(1,\) are incompatible"),
    (lambda: tf.boolean_mask(tf.constant(X), True), ValueError, "mask cannot be scalar"),
    (lambda: tf.meshgrid([1], indexing="yx"), ValueError, "either 'xy' or 'ij'"),
])
def test_errors_are_tensorflows(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_compiled_agrees_with_eager(monkeypatch):
    def rearranged(x):
        return (tf.roll(x, [1, -1], [0, 1]), tf.repeat(x, [1, 2, 0], axis=0),
                tf.meshgrid(x[0], x[1]), tf.sequence_mask([1, 3], 4))

    assert_compiled_matches_eager(monkeypatch, rearranged, tf.constant(X))
