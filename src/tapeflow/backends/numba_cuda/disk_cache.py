"""The GPU kernels' disk cache: numba-cuda's own cache format, in the CPU kernels' private
cache directory, its files signed and verified as theirs are (numba_cpu/numba_cache.py).

A kernel's entry is what numba-cuda's CUDACache writes: an index file and a data file
holding the kernel's code library, with its PTX and the cubin for the device it was
compiled on, so that a hit skips Numba's typing and lowering, NVVM and ptxas alike and
only hands the cubin to the driver. The files sit beside the CPU kernels' in
`__pycache__`, named `tapeflow_kernel_<sha256>.cuda-...`, so eviction and
`tf.config.clear_cache` treat them as theirs; each starts with the HMAC that
cache_store.sign writes and is unpickled only when it verifies.

numba-cuda would look for the kernel's source file to locate and stamp the entry; the
generated kernels have none, so the entry's place and stamp come from `digest`, which
covers everything the machine code depends on: the kernel's text and signature, the
device's compute capability, the versions of tapeflow, numba, numba-cuda, NVVM and the
CUDA runtime, and the source of the device helpers the kernel calls.

Only for a real GPU: the simulator's kernels are Python and have nothing to cache.
"""

import hashlib
import os
import sys

from numba.cuda.core.caching import IndexDataCacheFile
from numba.cuda.dispatcher import CUDACache, CUDACacheImpl

from ... import cache_store
from ..numba_cpu.numba_cache import FailuresAreMisses, FolderLocator, SignedIndexData

_salt = None


def _helper_sources():
    """The files the kernels' device functions come from (and kernels.py, which sets
    their jit options), by path: kernels.py imports this module."""
    here = os.path.dirname(os.path.abspath(__file__))
    cpu_kernels = os.path.join(os.path.dirname(here), "numba_cpu", "kernels")
    return [os.path.join(here, name) for name in ("kernels.py", "device_math.py",
                                                 "special_math.py")] + [
        os.path.join(cpu_kernels, "special_math.py")]


def versions():
    """The versions a kernel's machine code depends on, besides its source."""
    import numba
    import numba_cuda
    from numba.cuda.cudadrv import nvvm, runtime

    from ...version import __version__
    return [f"tapeflow {__version__}", f"numba {numba.__version__}",
            f"numba-cuda {numba_cuda.__version__}", f"NVVM {nvvm.NVVM().get_version()}",
            f"CUDA runtime {runtime.runtime.get_version()}",
            f"python {sys.version_info[:2]}"]


def salt():
    """The part of every digest that does not depend on the kernel."""
    global _salt
    if _salt is None:
        h = hashlib.sha256()
        for part in versions():
            h.update(part.encode() + b"\0")
        for path in _helper_sources():
            with open(path, "rb") as f:
                h.update(f.read() + b"\0")
        _salt = h.digest()
    return _salt


def digest(source, signature, cc):
    """The sha256 (hex) naming the entry of a kernel: its text, its numba signature and
    the compute capability it is compiled for."""
    h = hashlib.sha256(salt())
    h.update(f"sm_{cc[0]}{cc[1]}\0{signature}\0".encode())
    h.update(source.encode())
    return h.hexdigest()


class _Impl(CUDACacheImpl):
    def __init__(self, py_func, locator):  # numba-cuda's looks for the source file
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = locator
        self._filename_base = self.get_filename_base(
            f"{cache_store.PREFIX}_{locator.get_source_stamp()}.cuda",
            getattr(sys, "abiflags", ""))


class _SignedFiles(SignedIndexData, IndexDataCacheFile):
    pass


class SignedKernelCache(FailuresAreMisses, CUDACache):
    """numba-cuda's CUDACache for a generated kernel: signed files in the private cache
    directory, named after `digest`; a hit marks them used, a new entry may evict the
    least recently used kernels."""

    def __init__(self, py_func, folder, digest):
        # In `__pycache__`, stamped by the digest: an entry written for other source is
        # another file, never a stale hit.
        self._locator = FolderLocator(os.path.join(folder, cache_store.NUMBA_SUBDIR), digest,
                                      py_func)
        super().__init__(py_func)
        self._cache_file = _SignedFiles(cache_path=self._cache_path,
                                        filename_base=self._impl.filename_base,
                                        source_stamp=digest)

    def _impl_class(self, py_func):  # numba's Cache.__init__ makes its impl by this call
        return _Impl(py_func, self._locator)

    @property
    def index_path(self):
        return self._cache_file._index_path

    def load_overload(self, sig, target_context):
        # Loading refreshes the target first, importing numba-cuda's lowerings: a failure
        # there is the installation's, not the file's, and is not reported as damage.
        target_context.refresh()
        kernel = super().load_overload(sig, target_context)
        if kernel is not None:
            cache_store.touch(self.index_path)
        return kernel

    def save_overload(self, sig, data):
        super().save_overload(sig, data)
        from ...config import settings
        if settings.cache_max_bytes is not None:
            cache_store.evict(os.path.dirname(self._cache_path), settings.cache_max_bytes)


def compile_kernel(cuda, function, signature, source):
    """`cuda.jit(signature)(function)` for the current GPU, its machine code read from the
    disk cache when an entry for `source` is there and verifies, and written there when
    not. Without a usable cache directory the kernel is compiled as without a cache."""
    dispatcher = cuda.jit(function)  # lazy: nothing compiled before the cache is attached
    cc = cuda.get_current_device().compute_capability
    try:
        dispatcher._cache = SignedKernelCache(function, cache_store.directory(),
                                              digest(source, signature, cc))
    except OSError:
        pass
    dispatcher.compile(signature)
    # As cuda.jit(signature) leaves it: one signature, launched without type dispatch.
    dispatcher._specialized = True
    dispatcher.disable_compile()
    return dispatcher
