"""DeviceTensor: a Tensor whose elements live in GPU memory.

It holds a flat, contiguous device array (numba-cuda's, or any object with
`copy_to_host()`) and the tensor's shape. Its value reaches the host only when asked:
`.numpy()`, printing, `np.asarray`, or an op that runs on the CPU (which reads `_value`);
the host copy is made once, since tensors never change.

`transfers` counts the copies between host and device memory (tests check that a training
loop makes none after its first step).
"""

import numpy as np

from . import placement
from .tensor import Tensor, _next_id, wrap

# Copies made so far: "to_device" (backends/numba_cuda/device.py counts its uploads) and
# "to_host".
transfers = {"to_device": 0, "to_host": 0}


def copy_to_host(device_array, shape):
    """The host value of a flat device array, as a tensor of `shape` holds it (0-d: a
    NumPy scalar, as wrap() keeps 0-d values). On the legacy default stream, which waits
    for the backend's launch stream: the kernels that write the array are done."""
    transfers["to_host"] += 1
    host = device_array.copy_to_host().reshape(shape)
    return host[()] if not shape else host


class DeviceTensor(Tensor):
    __slots__ = ("_device_array", "_host", "_device_index")

    @property
    def _value(self):
        host = self._host
        if host is None:
            host = self._host = copy_to_host(self._device_array, self._shape)
        return host

    @property
    def device(self):
        return placement.gpu_name(self._device_index)


def on_device(device_array, shape, dtype, index):
    """A new DeviceTensor over `device_array` (flat, of `dtype`'s NumPy type)."""
    t = DeviceTensor.__new__(DeviceTensor)
    t._device_array = device_array
    t._host = None
    t._device_index = index
    t._shape = tuple(shape)
    t.dtype = dtype
    t._id = _next_id()
    t._var = None
    return t


def alias(x):
    """A new tensor with its own id and `x`'s value, in the same memory (no copy)."""
    if type(x) is DeviceTensor:
        t = on_device(x._device_array, x._shape, x.dtype, x._device_index)
        t._host = x._host
        return t
    return wrap(x._value)


def host_array(x):
    """The host value of any tensor as an ndarray (0-d values included)."""
    return np.asarray(x._value)
