"""Numba's on-disk cache for tapeflow's kernels, made safe to read: signed files in the
private cache directory.

Numba's own cache (`cache=True`) unpickles its index file before any check and trusts
whatever data file the index names, so a planted or damaged file runs code or raises
`UnpicklingError` in every later process. A kernel's dispatcher gets `SignedCache`
instead (`attach`, `cfunc`): the same index and data files, next to the kernel's module
in `__pycache__`, each written 0600 with an HMAC of its bytes (cache_store.sign) and read
only when that verifies. Anything else (a bad signature, a truncated file, a failure to
rebuild what it holds) is a cache miss, reported once: Numba compiles again and the
files are written anew.

The helpers of kernels/ that kernels call get the same cache (`cache_helpers`), in one
folder of the cache directory: without it every process compiled each helper a kernel
calls, for every new signature, which was most of a first compile (a kernel links in the
helper's cached LLVM IR, so LLVM still inlines and vectorizes it).
"""

import importlib
import inspect
import io
import os
import pickle
import sys

from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    InTreeCacheLocator,
    _CacheLocator,
)
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.runtime import rtsys

from ... import cache_store
from . import cache, helper_symbols, native_bundle


class _KernelLocator(InTreeCacheLocator):
    """`__pycache__` beside the kernel's module, created private; whatever
    NUMBA_CACHE_DIR says, as only the cache directory is checked."""

    def ensure_cache_path(self):
        cache_store.make_private_dir(self.get_cache_path())


class FolderLocator(_CacheLocator):
    """A folder of the cache directory, created private, for functions whose entries are
    stamped by a key of tapeflow's rather than by their source file: the helpers' machine
    code (the stamp covers every helper's source and the library versions, cache.salt,
    so an edit or an upgrade is a miss, as for kernels) and the GPU kernels
    (numba_cuda/disk_cache.py). numba-cuda's caches ask the same of a locator."""

    def __init__(self, folder, stamp, py_func):
        self._folder = folder
        self._stamp = stamp
        self._py_file = inspect.getfile(py_func)  # named in Numba's warnings
        self._lineno = py_func.__code__.co_firstlineno

    def ensure_cache_path(self):
        cache_store.make_private_dir(self._folder)

    def get_cache_path(self):
        return self._folder

    def get_source_stamp(self):
        return self._stamp

    def get_disambiguator(self):
        return str(self._lineno)


class _Impl(CompileResultCacheImpl):
    def __init__(self, py_func, locator=None):  # numba's picks one from NUMBA_* settings
        self._lineno = py_func.__code__.co_firstlineno
        self._module_name = py_func.__module__
        source_path = inspect.getfile(py_func)
        self._locator = locator or _KernelLocator.from_function(py_func, source_path)
        if self._locator is None:
            raise OSError(f"cannot cache {py_func.__qualname__}: {source_path} is missing "
                          f"or its __pycache__ cannot be written")
        module = os.path.splitext(os.path.basename(source_path))[0]
        self._filename_base = self.get_filename_base(f"{module}.{py_func.__qualname__}",
                                                     getattr(sys, "abiflags", ""))

    def reduce(self, cres):
        """Numba's payload, and the helpers its machine code calls by symbol."""
        return super().reduce(cres), helper_symbols.requirements(cres.library)

    def rebuild(self, target_context, payload):
        payload, required = payload
        from . import kernels
        # before LLVM resolves the kernel's calls to them: the helpers', and those of the
        # functions of the kernel's own module that it calls by symbol (machine.py)
        helper_symbols.provide(required, {f"{kernels.__name__}.{name}"
                                          for name in kernels.SOURCE_MODULES}
                               | {self._module_name})
        cres = super().rebuild(target_context, payload)
        helper_symbols.loaded(cres.library, required)  # for its bundle (native_bundle.py)
        native_bundle.loaded_from(cres.library, payload)
        return cres


class SignedIndexData:
    """Numba's index and data files, signed; what does not verify is not there. Mixed into
    an IndexDataCacheFile: numba's (CPU kernels) or numba-cuda's copy of it (GPU kernels,
    numba_cuda/disk_cache.py), which keep the same attributes and read and write
    through these methods."""

    def _read(self, path):
        """The verified body of `path`, or None (missing or not ours)."""
        return cache_store.read_signed(path)

    def _write(self, path, body):
        cache_store.write_signed(path, body)

    def _load_index(self):
        body = self._read(self._index_path)
        if body is None:
            return {}
        stream = io.BytesIO(body)
        if pickle.load(stream) != self._version:  # written by another numba
            return {}
        stamp, overloads = pickle.loads(stream.read())
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        version = pickle.dumps(self._version, protocol=-1)
        self._write(self._index_path, version + self._dump((self._source_stamp, overloads)))

    def _load_data(self, name):
        body = self._read(self._data_path(name))
        if body is None:
            raise FileNotFoundError(name)  # IndexDataCacheFile.load: a miss
        return pickle.loads(body)

    def _save_data(self, name, data):
        self._write(self._data_path(name), self._dump(data))


class _SignedFiles(SignedIndexData, IndexDataCacheFile):
    pass


class FailuresAreMisses:
    """Mixed into a numba Cache: a load that fails (a verified file that still fails to
    rebuild) is a miss, reported once, and a save that fails is ignored, so the cache can
    make a compile slower, never fail it."""

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as e:  # noqa: BLE001 - a verified file that still fails to load
            cache_store.report_damage(self._cache_path, f"{type(e).__name__}: {e}")
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except Exception:  # noqa: BLE001, S110 - the compiled code is in memory, so only a
            pass  # later process misses it (an unwritable folder, a value that won't pickle)


class _LoadsWithoutLowerings:
    """Mixed in before numba's Cache: a load initializes only Numba's runtime (NRT),
    which machine code from the cache calls. Numba's own load first refreshes the
    target context, importing and registering every lowering it has (about 0.1 s, most
    of a warm process's first call) that loaded machine code never uses; a compile
    still refreshes it (numba.core.compiler)."""

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


class SignedCache(FailuresAreMisses, _LoadsWithoutLowerings, FunctionCache):
    """A FunctionCache whose files are signed (`_SignedFiles`) and whose failures are
    misses."""

    _impl_class = _Impl

    def __init__(self, py_func, locator=None):  # FunctionCache's, with signed files
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = _Impl(py_func, locator)
        self._cache_path = self._impl.locator.get_cache_path()
        self._cache_file = _SignedFiles(cache_path=self._cache_path,
                                        filename_base=self._impl.filename_base,
                                        source_stamp=self._impl.locator.get_source_stamp())
        self.enable()


def attach(compiled, py_func):
    """Gives a dispatcher (`njit` or `CFunc`, made without `cache=True`) the signed disk
    cache for `py_func`; none where its file is missing or its directory unwritable."""
    try:
        compiled._cache = SignedCache(py_func)
    except OSError:
        pass


_helpers_folder = None  # where the helpers' caches point now


def cache_helpers():
    """Gives every helper dispatcher of kernels/ the signed cache, in the folder
    `tapeflow_helpers_<key>` of the current cache directory (eviction and
    `tf.config.clear_cache` leave it: it is shared by all kernels). Cheap once done."""
    global _helpers_folder
    from . import kernels
    folder = cache.helpers_folder()
    if folder == _helpers_folder:
        return
    stamp = cache.salt().hex()
    with global_compiler_lock:  # no helper compiles while its cache changes
        for short in kernels.SOURCE_MODULES:
            module = importlib.import_module(f"{kernels.__name__}.{short}")
            for value in vars(module).values():
                if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__:
                    value._cache = SignedCache(value.py_func, FolderLocator(
                        folder, stamp, value.py_func))
                    helper_symbols.enable(value)
        _helpers_folder = folder


def cfunc(py_func, signature, **options):
    """`numba.cfunc(signature, cache=True, **options)(py_func)`, with the signed cache."""
    from numba.core import sigutils
    from numba.core.ccallback import CFunc
    compiled = CFunc(py_func, sigutils.normalize_signature(signature), locals={},
                     options=options)
    attach(compiled, py_func)
    compiled.compile()
    return compiled
