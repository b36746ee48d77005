"""tf.autodiff.ForwardAccumulator: Jacobian-vector products equal the Jacobian times the
tangent, forward-over-backward gives Hessian-vector products, and unconnected targets,
structures and accumulators never entered behave as TensorFlow's."""

import numpy as np
import pytest

import tapeflow as tf

X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, 0.5, -2.0])


@pytest.mark.parametrize("fn", [
    lambda x: tf.sin(x) * x,
    lambda x: tf.reduce_sum(x * x) * x,
    lambda x: tf.nn.softmax(x),
    lambda x: tf.matmul(tf.reshape(x, [1, 3]), tf.reshape(x, [3, 1]) * x),
    lambda x: tf.cumsum(tf.exp(x)),
], ids=["sin", "norm", "softmax", "matmul", "cumsum"])
def test_jvp_is_the_jacobian_times_the_tangent(fn):
    x = tf.constant(X)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(V)) as acc:
        y = fn(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y_again = fn(x)
    jacobian = tape.jacobian(y_again, x).numpy().reshape(-1, 3)
    np.testing.assert_allclose(acc.jvp(y).numpy().reshape(-1), jacobian @ V, rtol=1e-10)


def test_forward_over_backward_is_a_hessian_vector_product():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.0])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])


def test_several_primals_structures_and_unconnected_targets():
    a, b = tf.constant(2.0), tf.constant(3.0)
    with tf.autodiff.ForwardAccumulator([a, b], [1.0, 0.0]) as acc:
        product = a * b
        unrelated = tf.constant(3.0)
    assert float(acc.jvp(product)) == 3.0
    assert acc.jvp(unrelated) is None
    assert float(acc.jvp(unrelated, unconnected_gradients=tf.UnconnectedGradients.ZERO)) == 0
    pair = acc.jvp({"p": product, "a": a})
    assert float(pair["p"]) == 3.0 and float(pair["a"]) == 1.0


def test_nothing_is_recorded_outside_the_context():
    a = tf.constant(2.0)
    acc = tf.autodiff.ForwardAccumulator(a, 1.0)
    assert acc.jvp(a * a) is None
    with acc:
        inside = a * a
    assert float(acc.jvp(inside)) == 4.0


def test_tangents_must_match_their_primals():
    with pytest.raises(ValueError, match="same structure"):
        tf.autodiff.ForwardAccumulator([tf.constant(1.0)], [1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0, 2.0]), tf.constant([1.0]))
