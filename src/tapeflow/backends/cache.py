"""Content hashes of generated kernels, and their source files in the cache directory.

`@njit(cache=True)` cannot cache functions made with `exec`, so each generated module is
written to `<settings.cache_dir>/<prefix>_<sha256>.py` (atomically, only if missing),
registered in `sys.modules` and imported. Numba then keeps the machine code next to it
(`__pycache__`) and a second process loads it in milliseconds. Numba invalidates its
cache only when that file changes, so the hash covers everything the compiled code
depends on besides the file: tapeflow's version, the helper kernels' source, and the
numba and llvmlite versions.
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

PREFIX = "tapeflow_kernel"

_lock = threading.Lock()
_salt = None


def _helper_sources():
    from . import kernels, numpy_blas
    parts = []
    for module in (kernels, numpy_blas):
        with open(module.__file__, "rb") as f:
            parts.append(f.read())
    # Kernels link to NumPy's bundled BLAS by symbol name: a NumPy upgrade recompiles.
    parts.append(f"numpy {numpy_blas.np.__version__} {numpy_blas.LIBRARY}".encode())
    return b"\0".join(parts)


def salt():
    """The part of every key that does not depend on the graph."""
    global _salt
    if _salt is None:
        import llvmlite
        import numba

        from .. import __version__
        h = hashlib.sha256()
        for part in (f"tapeflow {__version__}", f"numba {numba.__version__}",
                     f"llvmlite {llvmlite.__version__}"):
            h.update(part.encode() + b"\0")
        h.update(_helper_sources())
        _salt = h.digest()
    return _salt


def key(source):
    """The sha256 (hex) that names a generated module."""
    h = hashlib.sha256(salt())
    h.update(source.encode())
    return h.hexdigest()


def module_name(digest):
    return f"{PREFIX}_{digest}"


def path_for(digest, cache_dir=None):
    if cache_dir is None:
        from ..config import settings
        cache_dir = settings.cache_dir
    return os.path.join(cache_dir, module_name(digest) + ".py")


def write(source, digest, cache_dir=None):
    """Writes the module file if it is missing; returns its path. Another process may
    write the same file at the same time: the first complete file wins, and since the
    content is the same (same hash), either is right."""
    path = path_for(digest, cache_dir)
    if os.path.exists(path):
        return path
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".py", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        try:
            os.link(tmp, path)  # fails if the file appeared meanwhile: keep that one
        except FileExistsError:
            pass
        except OSError:  # no hard links on this file system
            if not os.path.exists(path):
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def load(source, digest, cache_dir=None):
    """The imported module for `source` (written to the cache directory first)."""
    name = module_name(digest)
    with _lock:
        module = sys.modules.get(name)
        if module is not None:
            return module
        path = write(source, digest, cache_dir)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module
