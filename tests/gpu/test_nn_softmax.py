"""Softmax and LogSoftmax run on the device (rows.py), along any axis, and give the NumPy
kernel's numbers (NaN and infinities included), with their gradients."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.device_tensor import DeviceTensor

from ..op_samples.common import TOLERANCE

CASES = [((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), 0), ((1, 70), -1), ((70,), 0),
         ((0, 3), -1), ((3, 0), -1)]


def _both(fn, x):
    with tf.device("/CPU:0"):
        cpu = fn(tf.constant(x))
    with tf.device("/GPU:0"):
        gpu = fn(tf.constant(x))
    return gpu, cpu


def _assert_close(gpu, cpu):
    tol = TOLERANCE[np.asarray(cpu).dtype.name]
    np.testing.assert_allclose(np.asarray(gpu), np.asarray(cpu), rtol=tol["rtol"],
                               atol=tol["atol"], equal_nan=True)


# Each simulated GPU thread is a Python thread: float64 on two of the shapes only.
@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
@pytest.mark.parametrize("shape, axis, dtype",
                         [(*case, np.float32) for case in CASES]
                         + [(*case, np.float64) for case in CASES[:4:3]])
def test_softmax_on_the_device_is_the_cpus(fn, dtype, shape, axis):
    x = np.random.default_rng(3).normal(0.0, 4.0, shape).astype(dtype)
    gpu, cpu = _both(lambda t: fn(t, axis=axis), x)
    assert type(gpu) is DeviceTensor and gpu.shape == cpu.shape and gpu.dtype == cpu.dtype
    _assert_close(gpu, cpu)


@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
def test_softmax_rows_with_nan_and_infinities(fn):
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0],
                  [-np.inf, -np.inf, -np.inf], [1e30, -1e30, 0.0]], np.float32)
    gpu, cpu = _both(fn, x)
    _assert_close(gpu, cpu)


@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_gradients_on_the_device_are_the_cpus(fn, axis):
    x = np.random.default_rng(4).normal(size=(4, 6)).astype(np.float32)
    weights = np.arange(24, dtype=np.float32).reshape(4, 6) / 10.0

    def gradient(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            loss = tf.reduce_sum(fn(t, axis=axis) * weights)
        return tape.gradient(loss, t)
    gpu, cpu = _both(gradient, x)
    assert type(gpu) is DeviceTensor
    _assert_close(gpu, cpu)


@pytest.mark.parametrize("dtype, label_dtype", [(np.float32, np.int32), (np.float64, np.int64)])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 70), (0, 4)])
def test_sparse_cross_entropy_and_its_gradient_on_the_device(dtype, label_dtype, shape):
    rng = np.random.default_rng(5)
    logits = rng.normal(0.0, 3.0, shape).astype(dtype)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(label_dtype)

    def loss_and_gradient(t):
        with tf.GradientTape() as tape:
            tape.watch(t)
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant(labels), t)
            total = tf.reduce_sum(loss * 1.5)
        return loss, tape.gradient(total, t)
    (gpu_loss, gpu_grad), (cpu_loss, cpu_grad) = _both(loss_and_gradient, logits)
    assert type(gpu_loss) is DeviceTensor and type(gpu_grad) is DeviceTensor
    assert gpu_loss.shape == cpu_loss.shape and gpu_loss.dtype == cpu_loss.dtype
    _assert_close(gpu_loss, cpu_loss)
    _assert_close(gpu_grad, cpu_grad)


def test_sparse_cross_entropy_of_a_bad_label_is_nan_on_the_device_as_in_tensorflow():
    logits = np.array([[1.0, 2.0, 3.0], [1.0, np.nan, 0.0], [0.5, 0.5, 0.5]], np.float32)
    labels = np.array([2, 0, 3])  # the last is out of range: TensorFlow's GPU gives NaN
    with tf.device("/GPU:0"):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, tf.constant(logits))
    with tf.device("/CPU:0"):
        good = tf.nn.sparse_softmax_cross_entropy_with_logits(labels[:2], logits[:2])
        with pytest.raises(tf.errors.InvalidArgumentError, match="label value of 3"):
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    got = np.asarray(loss)
    np.testing.assert_allclose(got[:2], np.asarray(good), rtol=1e-6, equal_nan=True)
    assert np.isnan(got[1]) and np.isnan(got[2])


def test_keras_sparse_categorical_cross_entropy_step_stays_on_the_device(notes):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    layer = tf.keras.layers.Dense(3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with tf.device("/GPU:0"):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, layer(tf.constant(x)))
        grads = tape.gradient(loss, layer.trainable_variables)
    assert type(loss) is DeviceTensor and all(type(g) is DeviceTensor for g in grads)
    assert not [n for n in notes() if "SoftmaxCrossEntropy" in n]
