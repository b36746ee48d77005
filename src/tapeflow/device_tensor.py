"""DeviceTensor: a Tensor whose elements live in GPU memory.

It holds a flat, contiguous device array (numba-cuda's, or any object with
`copy_to_host()`) and the tensor's shape. Its value reaches the host only when asked:
`.numpy()`, printing, `np.asarray`, or an op that runs on the CPU (which reads `_value`);
the host copy is made once, since tensors never change.
"""

import numpy as np

from . import placement
from .tensor import Tensor, _next_id


class DeviceTensor(Tensor):
    __slots__ = ("_device_array", "_host", "_device_index")

    @property
    def _value(self):
        host = self._host
        if host is None:
            host = self._device_array.copy_to_host().reshape(self._shape)
            if not self._shape:
                host = host[()]  # a NumPy scalar, as wrap() keeps 0-d values
            self._host = host
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


def host_array(x):
    """The host value of any tensor as an ndarray (0-d values included)."""
    return np.asarray(x._value)
