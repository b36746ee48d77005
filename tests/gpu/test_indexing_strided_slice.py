"""StridedSlice and its gradient run on the device (slicing.py) for every form of basic
indexing, and give the CPU's values."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda.slicing import view_of
from tapeflow.device_tensor import DeviceTensor

X = np.arange(2 * 7 * 5, dtype=np.float32).reshape(2, 7, 5)
KEYS = [np.s_[1], np.s_[:, 0], np.s_[::-1], np.s_[:, 1:6:2, ..., None], np.s_[..., -1],
        np.s_[1, 2], np.s_[1, 2, 3], np.s_[:, ::-2, 1:], np.s_[:, 5:1:-1], np.s_[:, 3:1],
        np.s_[None, 0, ..., ::3], np.s_[-1, -7:, -2]]


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_strided_slice_on_the_device_is_numpys(key):
    with tf.device("/GPU:0"):
        got = tf.constant(X)[key]
    assert type(got) is DeviceTensor
    np.testing.assert_array_equal(np.asarray(got), X[key])


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_strided_slice_gradient_on_the_device_is_the_cpus(key):
    weights = np.asarray(X[key]) + 1.0

    def gradient():
        x = tf.constant(X)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(x[key] * weights)
        return tape.gradient(loss, x)
    with tf.device("/GPU:0"):
        gpu = gradient()
    with tf.device("/CPU:0"):
        cpu = gradient()
    assert type(gpu) is DeviceTensor
    np.testing.assert_array_equal(np.asarray(gpu), np.asarray(cpu))


def _op_key(key):
    """A NumPy key as StridedSlice's attr holds it: slices as (start, stop, step)."""
    key = key if isinstance(key, tuple) else (key,)
    return tuple((k.start, k.stop, k.step) if isinstance(k, slice) else k for k in key)


@pytest.mark.parametrize("key", KEYS, ids=str)
def test_the_view_of_a_key_is_numpys(key):
    offset, shape, strides = view_of(X.shape, _op_key(key))
    flat = X.reshape(-1)
    positions = offset + sum(np.indices(shape)[d] * strides[d] for d in range(len(shape)))
    np.testing.assert_array_equal(flat[positions].reshape(X[key].shape), X[key])
