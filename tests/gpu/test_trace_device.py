"""A tf.function's traces are keyed by the device its call is placed on, as TensorFlow's
function cache keys on the device scope: a call under another placement traces and
compiles for that device, a call under the same one reuses its trace, and the default
placement is the GPU's."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda import device
from tapeflow.device_tensor import DeviceTensor

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
X = np.array([[-1.0, 0.5], [2.0, 0.25]], np.float32)

pytestmark = pytest.mark.usefixtures("sync_compiles")


def _placed_call(f, x, scope):
    """(result, kernels launched) of `f(x)` under `tf.device(scope)` (None: no scope)."""
    before = device.launches[0]
    if scope is None:
        y = f(x)
    else:
        with tf.device(scope):
            y = f(x)
    return y, device.launches[0] - before


def test_a_call_under_another_device_traces_for_it_and_the_same_device_reuses_it():
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.tanh(x) * 2.0, axis=1)

    with tf.device("/CPU:0"):
        x = tf.constant(X)
    expected = (np.tanh(X) * 2.0).sum(axis=1)
    calls = [("/CPU:0", 1, CPU0), ("/GPU:0", 2, GPU0), (None, 2, GPU0),
             ("/device:GPU:0", 2, GPU0), ("/CPU:0", 2, CPU0), ("cpu:0", 2, CPU0)]
    for scope, traces, placed in calls:
        y, launched = _placed_call(f, x, scope)
        assert f.experimental_get_tracing_count() == traces, scope
        assert y.device == placed, scope
        assert (type(y) is DeviceTensor) == (placed == GPU0)
        assert (launched > 0) == (placed == GPU0), scope  # the GPU trace runs kernels
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


def test_a_function_traced_on_the_gpu_first_traces_again_for_the_cpu():
    @tf.function
    def g(x):
        return x * x + 1.0

    x = tf.constant(X)  # on the GPU: the default placement
    z, _ = _placed_call(g, x, "/GPU:0")
    with tf.device("/CPU:0"):
        w, launched = _placed_call(g, x, None)
        g.get_concrete_function(x)  # the CPU's trace, not a third
    assert g.experimental_get_tracing_count() == 2
    assert z.device == GPU0 and w.device == CPU0 and launched == 0
    np.testing.assert_allclose(w.numpy(), z.numpy())
