"""numba-cuda, loaded at first use (so that `import tapeflow` stays cheap), and what the
kernels need around it: transfers, device arrays from a pool, one stream, launch shapes.

Device values are flat, contiguous arrays; a tensor's shape travels beside its array
(device_tensor.py), so reshapes never copy and kernels index elements by one offset.

Every kernel, upload and cuBLAS call of a GPU goes on one stream of it (`stream()`), so
they run in the order they were issued without waiting for each other on the host. That
order is also what makes the pool safe: a buffer freed while kernels that use it are
still queued is handed out again only to work queued after them. Copies to the host go
on the legacy default stream, which waits for that stream (numba creates it blocking).
"""

import contextlib
import weakref

import numpy as np

from ... import placement
from ...device_tensor import DeviceTensor, on_device, transfers

_cuda = None


def cuda():
    """numba.cuda (the simulator when NUMBA_ENABLE_CUDASIM=1 was set before import)."""
    global _cuda
    if _cuda is None:
        from numba import cuda as module
        _cuda = module
    return _cuda


_cuda_random = None


def cuda_random():
    """numba.cuda.random (its xoroshiro128+ generators). Under the simulator it asks Numba
    for object mode, which Numba warns about once per function: not the user's concern."""
    global _cuda_random
    if _cuda_random is None:
        import warnings
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The keyword argument 'nopython=False'")
            from numba.cuda import random as module
        _cuda_random = module
    return _cuda_random


def simulated():
    from numba import config
    return bool(config.ENABLE_CUDASIM)


def device_count():
    """How many GPUs numba-cuda can use; 0 without numba-cuda or a driver, and 0 (with a
    warning) where numba-cuda sees a GPU but cannot compile for it."""
    try:
        module = cuda()
        count = len(module.gpus) if module.is_available() else 0
    except Exception:  # noqa: BLE001 - no numba-cuda, no driver, a driver it cannot load
        return 0
    if count and not simulated() and not _compiler_loads():
        return 0
    return count


def _compiler_loads():
    """Whether numba-cuda's lowerings import. They fail in some installations (numba-cuda
    0.30 registers np.row_stack, which NumPy 2.5 removed), and then every kernel would
    fail: the GPU is left unused, with one warning that says why."""
    try:
        from numba.cuda import cudaimpl  # noqa: F401 - imported for its registrations
    except Exception as e:  # noqa: BLE001 - any failure means no kernel compiles
        import numba_cuda

        from ...source import warn
        warn(f"tapeflow does not use the GPU: numba-cuda {numba_cuda.__version__} cannot "
             f"compile kernels with NumPy {np.__version__} ({type(e).__name__}: {e}); ops "
             f"run on the CPU. Installing tapeflow's 'cuda' extra picks versions that work.")
        return False
    return True


def selected(index):
    """A context in which allocations, copies and launches go to logical GPU `index`
    (tf.config.set_visible_devices may hide some); physical GPU 0, the current one,
    needs no switch."""
    physical = placement.physical_gpu(index)
    return cuda().gpus[physical] if physical else contextlib.nullcontext()


_streams = {}


def _current_gpu():
    """The physical index of the current GPU (the simulator's one device has none)."""
    return getattr(cuda().get_current_device(), "id", 0)


def stream():
    """The stream of the current GPU, on which everything is issued."""
    key = _current_gpu()
    found = _streams.get(key)
    if found is None:
        found = _streams[key] = cuda().stream()
    return found


class Pool:
    """Device buffers reused by size: an array handed out is a view of a pooled buffer,
    and the buffer goes back to its free list when the view is garbage (the tensors
    holding it are gone). Sizes round up to _GRANULE bytes, so arrays of nearby sizes share
    buffers. Allocating through numba-cuda each time would synchronize the device and
    cost tens of microseconds per op; a free list costs a dictionary lookup.

    Views are never sliced further (reshapes share the view itself), so no array outlives
    the view whose buffer it uses."""

    _GRANULE = 512

    def __init__(self):
        self._free = {}  # (GPU id, bytes) -> [buffers]
        self.allocated = 0  # bytes allocated from the driver
        self.reused = 0  # arrays served from a free list

    def take(self, n, np_dtype):
        itemsize = np.dtype(np_dtype).itemsize
        size = max(1, -(-n * itemsize // self._GRANULE)) * self._GRANULE
        key = (_current_gpu(), size)
        free = self._free.get(key)
        if free:
            buffer = free.pop()
            self.reused += 1
        else:
            buffer = self._allocate(size)
        array = buffer.view(np_dtype)[:n]
        weakref.finalize(array, self._free.setdefault(key, []).append, buffer)
        return array

    def _allocate(self, size):
        try:
            buffer = cuda().device_array(size, dtype=np.uint8)
        except Exception as e:  # noqa: BLE001 - out of memory: give the cached buffers back
            if "OUT_OF_MEMORY" not in str(e) or not any(self._free.values()):
                raise
            self.release()
            buffer = cuda().device_array(size, dtype=np.uint8)
        self.allocated += size
        return buffer

    def release(self):
        """Frees the buffers no tensor uses (the driver gets them back)."""
        self._free.clear()


pool = Pool()


def empty(n, dtype):
    """A flat device array of `n` elements of tapeflow dtype `dtype`, from the pool."""
    return pool.take(n, dtype._np)


def to_device(array):
    """A flat device copy of host `array` (counted in device_tensor.transfers)."""
    host = np.ascontiguousarray(array).reshape(-1)
    out = pool.take(host.size, host.dtype)
    transfers["to_device"] += 1
    if host.size:
        out.copy_to_device(host, stream=stream())
    return out


def launch(kernel, n, *args):
    """Runs `kernel` on the stream over `n` items (a grid-stride loop), counted in
    `launches`."""
    launch_as(kernel, launch_shape(n), *args)


def launch_as(kernel, shape, *args):
    """Runs `kernel` on the stream with `shape` (blocks, threads per block)."""
    blocks, threads = shape
    launches[0] += 1
    kernel[blocks, threads, stream()](*args)


launches = [0]  # kernels launched so far (tests count those of one call)


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
