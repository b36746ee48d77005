"""Content hashes of generated kernels, and their source files in the cache directory.

`@njit(cache=True)` cannot cache functions made with `exec`, so each generated module is
written to `<settings.cache_dir>/<prefix>_<sha256>.py` (atomically, unless it already holds
that source),
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
    from . import kernels, microgemm, numpy_blas
    parts = []
    for module in (kernels, microgemm, numpy_blas):
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
    """Writes the module file unless it already holds `source`; returns its path.

    A file with other content (truncated, edited) is replaced. Another process may write
    the same file at the same time: the content is the same (same hash), so either
    replacement is right. When the cache directory cannot be written, a temporary
    directory serves this process (with a warning): the cache is only a cache."""
    path = path_for(digest, cache_dir)
    if _holds(path, source):
        return path
    try:
        _write_atomically(path, source)
    except OSError as e:
        path = os.path.join(_fallback_dir(os.path.dirname(path), e), os.path.basename(path))
        if not _holds(path, source):
            _write_atomically(path, source)
    return path


def _holds(path, source):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == source
    except (OSError, UnicodeDecodeError):
        return False


def _write_atomically(path, source):
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".py", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_fallback = None


def _fallback_dir(wanted, error):
    global _fallback
    if _fallback is None:
        from ..graph.trace import warn
        _fallback = tempfile.mkdtemp(prefix="tapeflow_cache_")
        warn(f"tapeflow cannot write its compile cache in {wanted} ({error}); compiled "
             f"kernels are cached in {_fallback} for this process only. Set "
             f"TAPEFLOW_CACHE_DIR to a writable directory.")
    return _fallback


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
