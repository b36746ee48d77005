"""tf.searchsorted, tf.unique and tf.unique_with_counts: TensorFlow 2.21's values (every
NaN distinct, first-appearance order) and errors; the generated op tests check compiled
parity."""

import numpy as np
import pytest

import tapeflow as tf


def test_searchsorted_both_sides_row_by_row():
    rows = tf.constant([[0.0, 3.0, 9.0, 9.0, 10.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    values = tf.constant([[2.0, 9.0, 11.0], [0.0, 5.0, 3.0]])
    assert tf.searchsorted(rows, values).numpy().tolist() == [[1, 2, 5], [0, 4, 2]]
    right = tf.searchsorted(rows, values, side="right", out_type=tf.int64)
    assert right.dtype == tf.int64 and right.numpy().tolist() == [[1, 4, 5], [0, 5, 3]]


def test_unique_keeps_first_appearance_order_and_every_nan():
    y, idx, count = tf.unique_with_counts(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    assert y.numpy().tolist() == [1, 2, 4, 7, 8]
    assert idx.numpy().tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 4]
    assert count.numpy().tolist() == [2, 1, 3, 1, 2]
    y, idx = tf.unique(tf.constant([3.0, 1.0, 3.0, np.nan, np.nan]), out_idx=tf.int64)
    np.testing.assert_array_equal(y.numpy(), [3.0, 1.0, np.nan, np.nan])
    assert idx.dtype == tf.int64 and idx.numpy().tolist() == [0, 1, 0, 2, 3]


def test_unique_inside_a_function_has_a_run_time_length():
    @tf.function
    def distinct_count(x):
        y, _ = tf.unique(x)
        return tf.size(y)

    assert int(distinct_count(tf.constant([5, 5, 6]))) == 2
    assert int(distinct_count(tf.constant([1, 2, 3]))) == 3


@pytest.mark.parametrize("call, message", [
    (lambda: tf.searchsorted(tf.constant([1.0]), tf.constant([1])), "int32 tensor"),
    (lambda: tf.unique(tf.constant([[1, 2]])), "unique expects a 1D vector"),
])
def test_errors(call, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        call()
