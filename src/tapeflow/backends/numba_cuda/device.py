"""numba-cuda, loaded at first use (so that `import tapeflow` stays cheap), and what the
kernels need around it: transfers, device arrays and launch shapes.

Device values are flat, contiguous arrays; a tensor's shape travels beside its array
(device_tensor.py), so reshapes never copy and kernels index elements by one offset.
"""

import contextlib

import numpy as np

from ... import placement
from ...device_tensor import DeviceTensor, on_device

_cuda = None


def cuda():
    """numba.cuda (the simulator when NUMBA_ENABLE_CUDASIM=1 was set before import)."""
    global _cuda
    if _cuda is None:
        from numba import cuda as module
        _cuda = module
    return _cuda


def simulated():
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def device_count():
    """How many GPUs numba-cuda can use; 0 without numba-cuda or a driver."""
    try:
        module = cuda()
        return len(module.gpus) if module.is_available() else 0
    except Exception:  # no numba-cuda, no driver, a driver numba-cuda cannot load
        return 0


def selected(index):
    """A context in which allocations, copies and launches go to logical GPU `index`
    (tf.config.set_visible_devices may hide some); physical GPU 0, the current one,
    needs no switch."""
    physical = placement.physical_gpu(index)
    return cuda().gpus[physical] if physical else contextlib.nullcontext()


def empty(n, dtype):
    return cuda().device_array(n, dtype=dtype._np)


def to_device(array):
    """A flat device copy of host `array`."""
    return cuda().to_device(np.ascontiguousarray(array).reshape(-1))


def device_array_of(x, index):
    """The flat device array holding tensor `x` on GPU `index`: its own when it lives
    there, else an upload of its host value (TensorFlow copies an op's inputs to the
    op's device)."""
    if type(x) is DeviceTensor and x._device_index == index:
        return x._device_array
    return to_device(np.asarray(x._value, dtype=x.dtype._np))


def upload(tensor, index):
    """`tensor` moved to GPU `index` (itself when it is there already)."""
    if type(tensor) is DeviceTensor and tensor._device_index == index:
        return tensor
    return on_device(device_array_of(tensor, index), tensor._shape, tensor.dtype, index)


_launch_width = None


def launch_shape(n):
    """(blocks, threads per block) for a grid-stride loop over `n` items: enough blocks to
    fill the GPU, never more than the items need. Under the simulator, which runs each
    thread as a Python thread, one or two warps."""
    global _launch_width
    if _launch_width is None:
        if simulated():
            _launch_width = (2, 32)
        else:
            sms = cuda().get_current_device().MULTIPROCESSOR_COUNT
            _launch_width = (sms * 16, 256)
    most_blocks, threads = _launch_width
    return max(1, min(most_blocks, -(-n // threads))), threads
