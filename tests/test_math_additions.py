"""tf.math.nextafter (its values, checks and gradient; the generated tests check the
rest) and tf.math.approx_max_k / approx_min_k / tf.approx_top_k against TensorFlow 2.21."""

import numpy as np
import pytest

import tapeflow as tf

X = [[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]]


def test_nextafter_values_dtypes_and_errors():
    got = tf.math.nextafter(tf.constant([1.0, 2.0]), tf.constant([2.0, 0.0]))
    assert got.dtype == tf.float32
    assert got.numpy().tolist() == np.nextafter(np.float32([1, 2]), np.float32([2, 0])).tolist()
    assert tf.math.nextafter(tf.constant([1.0], tf.float64), [0.0]).numpy()[0] == \
        np.nextafter(1.0, 0.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'T' of int32"):
        tf.math.nextafter(tf.constant([1]), tf.constant([2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        tf.math.nextafter(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]))


def test_nextafter_gradient_is_tensorflows():
    x, y = tf.constant([1.0, 2.0]), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = tf.math.nextafter(x, y) * tf.constant([2.0, 5.0])
    assert tape.gradient(z, x).numpy().tolist() == [2.0, 5.0]
    assert tape.gradient(z, y).numpy() == 0.0


def test_approx_max_and_min_k_are_exact():
    values, indices = tf.math.approx_max_k(tf.constant(X), 2)
    assert values.numpy().tolist() == [[5.0, 4.0], [9.0, 6.0]]
    assert indices.dtype == tf.int32 and indices.numpy().tolist() == [[4, 2], [0, 2]]
    values, indices = tf.math.approx_min_k(tf.constant(X), 3)
    assert values.numpy().tolist() == [[1.0, 1.0, 3.0], [2.0, 3.0, 5.0]]
    assert indices.numpy().tolist() == [[1, 3, 0], [1, 4, 3]]
    values, indices = tf.approx_top_k(tf.constant(X), 1, reduction_dimension=0)
    assert values.numpy().tolist() == [[9.0, 2.0, 6.0, 5.0, 5.0]]
    assert indices.numpy().tolist() == [[1, 1, 1, 1, 0]]
    assert tf.nn.approx_max_k is tf.math.approx_max_k


def test_approx_top_k_errors_and_gradient():
    with pytest.raises(tf.errors.InvalidArgumentError, match="'T' of double"):
        tf.math.approx_max_k(tf.constant([1.0, 2.0], tf.float64), 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Had 5, needed 7"):
        tf.math.approx_max_k(tf.constant(X), 7)
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        values, _ = tf.math.approx_min_k(x, 2, reduction_dimension=0)
        y = tf.reduce_sum(values * tf.reshape(tf.range(1.0, 11.0), [2, 5]))
    assert tape.gradient(y, x).numpy().tolist() == [[1.0, 2.0, 3.0, 4.0, 10.0],
                                                    [6.0, 7.0, 8.0, 9.0, 5.0]]


def test_graph_hints_and_aliases():
    x = tf.constant([1.0, 2.0])
    assert tf.guarantee_const(x).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        tf.parallel_stack([x, x])
    stacked = tf.function(lambda: tf.parallel_stack([x, 2 * x]))()
    assert stacked.numpy().tolist() == [[1.0, 2.0], [2.0, 4.0]]
    assert tf.get_logger().name == "tensorflow"
    assert tf.matrix_square_root is tf.linalg.sqrtm
