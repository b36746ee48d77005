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


@pytest.mark.parametrize("fn", [tf.nn.softmax, tf.nn.log_softmax])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axis", CASES)
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
