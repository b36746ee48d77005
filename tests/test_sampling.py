"""tf.random.categorical: frequencies follow softmax(logits), -inf classes are never drawn,
shapes, dtypes and errors as TensorFlow's, fresh draws at every call of a tf.function."""

import numpy as np
import pytest

import tapeflow as tf


def test_frequencies_follow_the_softmax_of_the_logits():
    tf.random.set_seed(1)
    draws = tf.random.categorical(tf.math.log([[0.2, 0.3, 0.5], [0.9, 0.1, 0.0]]), 20000)
    assert draws.dtype == tf.int64 and draws.shape == (2, 20000)
    np.testing.assert_allclose(np.bincount(draws.numpy()[0], minlength=3) / 20000,
                               [0.2, 0.3, 0.5], atol=0.015)
    assert set(draws.numpy()[1].tolist()) <= {0, 1}  # log(0) = -inf: never drawn


def test_dtype_errors_and_draws_inside_a_function():
    assert tf.random.categorical([[0.0, 0.0]], 3, dtype=tf.int32).dtype == tf.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits should be a matrix"):
        tf.random.categorical([0.0, 0.0], 3)
    draw = tf.function(lambda logits: tf.random.categorical(logits, 64))
    logits = tf.constant([[0.0, 0.0]])
    assert not np.array_equal(draw(logits).numpy(), draw(logits).numpy())
