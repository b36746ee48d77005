"""tf.sort and tf.argsort (built on TopKV2, whose own values, gradients and compiled
parity the generated op tests check): NumPy's stable order, NaN last, integers at
their limits, any axis, both directions, and gradients through the sort."""

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

FLOATS = np.array([[3.0, 1.0, 3.0, np.nan, 2.0], [0.5, -1.0, 0.5, 0.5, 7.0]], np.float32)
INTS = np.array([[3, -2147483648, 1, 2147483647, 3]], np.int32)


def _numpy_argsort(x, axis, direction):
    if direction == "ASCENDING":
        return np.argsort(x, axis=axis, kind="stable")
    # descending, equal values in index order, NaN still last
    key = -x if x.dtype.kind == "f" else ~x
    return np.argsort(key, axis=axis, kind="stable")


@pytest.mark.parametrize("x", [FLOATS, INTS], ids=["float32", "int32"])
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_and_argsort_match_numpys_stable_order(x, axis, direction):
    order = _numpy_argsort(x, axis, direction)
    got = tf.argsort(tf.constant(x), axis=axis, direction=direction).numpy()
    np.testing.assert_array_equal(got, order)
    np.testing.assert_array_equal(tf.sort(tf.constant(x), axis=axis, direction=direction).numpy(),
                                  np.take_along_axis(x, order, axis=axis))


def test_gradient_goes_back_to_each_values_place():
    x = tf.Variable([[3.0, 1.0, 4.0, 2.0]])
    weights = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        ascending = tf.reduce_sum(tf.sort(x) * weights)
        descending = tf.reduce_sum(tf.sort(x, direction="DESCENDING") * weights)
    np.testing.assert_allclose(tape.gradient(ascending, x).numpy(), [[3.0, 1.0, 4.0, 2.0]])
    np.testing.assert_allclose(tape.gradient(descending, x).numpy(), [[2.0, 4.0, 1.0, 3.0]])


def test_compiled_sort_agrees_with_eager(monkeypatch):
    def sorts(x):
        return tf.sort(x, axis=0), tf.argsort(x, direction="DESCENDING"), tf.math.top_k(x, 2)

    assert_compiled_matches_eager(monkeypatch, sorts, tf.constant(FLOATS))
