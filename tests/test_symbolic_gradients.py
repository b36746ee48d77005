"""tf.gradients and tf.hessians inside tf.function: TensorFlow 2.21's values (obtained from
it) for tensors and variables, grad_ys, unconnected sources and several sources, run
interpreted and compiled, and the RuntimeError eagerly."""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings

V = tf.Variable(3.0)


def _gradients(x):
    y = x * x + V * 2.0 + V * V
    return (tf.gradients(y, [x, V]) + tf.gradients(x, [x])
            + tf.gradients(y, [tf.constant(1.0)], unconnected_gradients="zero")
            + tf.gradients([y, x * 3.0], x, grad_ys=[2.0, None]))


def _hessians(x, w):
    return tf.hessians(tf.reduce_sum(x ** 3) + tf.reduce_sum(w * w * x[0]), [x, w])


def test_values_match_tensorflow():
    assert [float(g) for g in tf.function(_gradients)(tf.constant(2.0))] == [
        4.0, 8.0, 1.0, 0.0, 11.0]
    unconnected = tf.function(lambda x: tf.gradients(x * 2.0, [tf.constant(1.0)]))
    assert unconnected(tf.constant(1.0)) == [None]
    hx, hw = tf.function(_hessians)(tf.constant([1.0, 2.0]), tf.constant([[1.0, 2.0]]))
    np.testing.assert_array_equal(hx.numpy(), [[6.0, 0.0], [0.0, 12.0]])
    np.testing.assert_array_equal(hw.numpy(), [[[[2.0, 0.0]], [[0.0, 2.0]]]])


def test_compiled_agrees_with_the_interpreted_graph(monkeypatch):
    args = (tf.constant([1.0, 2.0]), tf.constant([[1.0, 2.0]]))
    results = {}
    for mode in ("off", "sync"):  # the NumPy interpreter, then the compiled kernel
        monkeypatch.setattr(settings, "compile_mode", mode)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*runs with NumPy kernels")
            results[mode] = [h.numpy() for h in tf.function(_hessians)(*args)]
    for interpreted, compiled in zip(results["off"], results["sync"]):
        np.testing.assert_array_equal(compiled, interpreted)


def test_eagerly_they_point_to_the_gradient_tape():
    with pytest.raises(RuntimeError, match="Use tf.GradientTape instead"):
        tf.gradients(tf.constant(1.0), tf.constant(1.0))
