"""Content hashes of generated kernels, their source files in the cache directory, and
the modules made from them.

`@njit(cache=True)` cannot cache functions made with `exec` on a string, so each
generated module is written to `<cache directory>/<prefix>_<sha256>.py` (atomically, 0600,
unless it already holds that source) and its code is compiled from the source text that
tapeflow generated, never read back from that file or from a `.pyc`: the file is only
there for Numba, which keeps the machine code next to it (`__pycache__`, signed; see
numba_cache.py), so that a second process loads it in milliseconds. Numba invalidates its
cache only when that file changes, so the hash covers everything the compiled code
depends on besides the file: tapeflow's version, the helper kernels' source, and the
numba and llvmlite versions. The directory itself is cache_store.py's job.
"""

import contextlib
import hashlib
import json
import os
import sys
import threading
import types
import weakref

from ... import cache_store

PREFIX = cache_store.PREFIX

_lock = threading.Lock()
_salt = None
_modules = {}  # module name -> [module, how many loads hold it]
_importers = {}  # module name -> how many compiles need it importable now


def _helper_sources():
    """The text of every module of kernels/ (the helpers' jit options included), read
    from their files without importing them: a kernel loaded from the cache without
    Numba (native_loader.py) needs its key, and importing them imports Numba."""
    from ...ops import candidate_sampling, shaped_draws
    from . import kernels
    from .kernels import numpy_blas
    here, helpers = os.path.dirname(__file__), os.path.dirname(kernels.__file__)
    # The op modules whose values kernels/draws.py compiles in: the samplers' order
    # (kernels name a sampler by its position) and the Poisson limit.
    paths = [kernels.__file__, os.path.join(here, "helper_symbols.py"),
             candidate_sampling.__file__, shaped_draws.__file__] + [
        os.path.join(helpers, f"{name}.py") for name in kernels.SOURCE_MODULES]
    parts = []
    for path in paths:
        with open(path, "rb") as f:
            parts.append(f.read())
    # Kernels link to NumPy's bundled BLAS by symbol name: a NumPy upgrade recompiles.
    parts.append(f"numpy {numpy_blas.np.__version__} {numpy_blas.LIBRARY}".encode())
    return b"\0".join(parts)


def installed_version(package):
    """The version of an installed distribution, from its `.dist-info` folder's name
    beside the package (a millisecond, where importlib.metadata takes tens, and
    importing Numba for its __version__ a tenth of a second); the package's own
    __version__ where that folder is not found or not alone."""
    import glob
    import importlib
    import importlib.util
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        found = glob.glob(os.path.join(glob.escape(site), f"{package}-*.dist-info"))
        if len(found) == 1:
            return os.path.basename(found[0])[len(package) + 1:-len(".dist-info")]
    return importlib.import_module(package).__version__


def salt():
    """The part of every key that does not depend on the graph."""
    global _salt
    if _salt is None:
        from ...version import __version__
        h = hashlib.sha256()
        for part in (f"tapeflow {__version__}", f"numba {installed_version('numba')}",
                     f"llvmlite {installed_version('llvmlite')}"):
            h.update(part.encode() + b"\0")
        h.update(_helper_sources())
        _salt = h.digest()
    return _salt


def helpers_folder():
    """The folder of the cache directory that holds what all kernels share (the helpers'
    machine code, their names), for this salt."""
    return os.path.join(cache_store.directory(), f"tapeflow_helpers_{salt().hex()[:16]}")


_helper_names = {}  # helpers folder -> helper_names()
_HELPER_NAMES = "helper_names.json"


def helper_names():
    """{name: module} of the functions generated kernels import from kernels/
    (kernels.helper_names), kept in the helpers' folder of the cache directory: finding
    them imports every helper module, and with them Numba, which a warm process that
    loads its kernels without Numba (native_loader.py) does not otherwise need."""
    names = kept_helper_names()
    if names is not None:
        return names
    from . import kernels
    folder = helpers_folder()
    names = kernels.helper_names()
    try:
        cache_store.make_private_dir(folder)
        cache_store.write_signed(os.path.join(folder, _HELPER_NAMES),
                                 json.dumps(names, sort_keys=True).encode())
    except OSError:
        pass  # found again by the next process
    _helper_names[folder] = names
    return names


def kept_helper_names():
    """helper_names() as kept in the cache directory, or None where it is not (nothing
    imported: finding the names is left to the caller)."""
    folder = helpers_folder()
    names = _helper_names.get(folder)
    if names is not None:
        return names
    from . import kernels
    modules = {f"{kernels.__name__}.{short}" for short in kernels.HELPER_MODULES}
    body = cache_store.read_signed(os.path.join(folder, _HELPER_NAMES))
    try:
        names = json.loads(body) if body is not None else None
    except ValueError:
        names = None
    if not (isinstance(names, dict) and all(
            isinstance(k, str) and k.isidentifier() and v in modules for k, v in names.items())):
        return None
    _helper_names[folder] = names
    return names


def key(source):
    """The sha256 (hex) that names a generated module."""
    h = hashlib.sha256(salt())
    h.update(source.encode())
    return h.hexdigest()


def module_name(digest):
    return f"{PREFIX}_{digest}"


def path_for(digest, cache_dir=None):
    if cache_dir is None:
        cache_dir = cache_store.directory()
    return os.path.join(cache_dir, module_name(digest) + ".py")


def write(source, digest, cache_dir=None):
    """Writes the module file unless it already holds `source`; returns its path.

    A file with other content (truncated, edited) is replaced, with a warning. Another
    process may write the same file at the same time: the content is the same (same
    hash), so either replacement is right. When the cache directory cannot be written, a
    temporary directory serves this process (with a warning): the cache is only a cache.
    A new file may push the cache over its size cap: the least recently used kernels go."""
    path = path_for(digest, cache_dir)
    held = _held(path, source)
    if held:
        cache_store.touch(path)
        return path
    if held is not None:
        cache_store.report_damage(path, "not the source it is named after")
    try:
        _write_source(path, source)
    except OSError as e:
        folder = cache_store.fallback(os.path.dirname(path), f"it cannot be written: {e}")
        path = os.path.join(folder, os.path.basename(path))
        if not _held(path, source):
            _write_source(path, source)
    _evict(os.path.dirname(path))
    return path


def _held(path, source):
    """True if `path` holds `source`, None if there is no such file, False otherwise."""
    try:
        with open(path, "rb") as f:
            return f.read() == source.encode()
    except FileNotFoundError:
        return None
    except OSError:
        return False


def _write_source(path, source):
    cache_store.make_private_dir(os.path.dirname(path))
    cache_store.write_private(path, source.encode())


def _evict(folder):
    from ...config import settings
    if settings.cache_max_bytes is not None:
        cache_store.evict(folder, settings.cache_max_bytes)


def load(source, digest, cache_dir=None):
    """The module for `source`: its file written to the cache directory, its code
    compiled from `source` itself. Each load holds the module until `release`; it is
    never registered in sys.modules but by `importable`."""
    name = module_name(digest)
    with _lock:
        entry = _modules.get(name)
        if entry is not None:
            entry[1] += 1
            return entry[0]
    # Not under _lock: the first @njit in a process takes Numba's compiler lock, which a
    # thread in microgemm.register holds while it waits for _lock.
    path = write(source, digest, cache_dir)
    module = types.ModuleType(name)
    module.__file__ = path  # Numba finds its cache next to it
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - our own source
    with _lock:  # two threads may have made it: all use the first
        entry = _modules.setdefault(name, [module, 0])
        entry[1] += 1
        return entry[0]


def release(module):
    """Ends one `load`'s hold on `module`. After the last, its namespace is emptied: its
    Numba dispatcher and the module refer to each other through objects that the garbage
    collector cannot see into, so only breaking that cycle lets both be freed."""
    with _lock:
        entry = _modules.get(module.__name__)
        if entry is None or entry[0] is not module:
            return
        entry[1] -= 1
        if entry[1]:
            return
        del _modules[module.__name__]
    module.__dict__.clear()


def hold_while(owner, module):
    """Releases `module` (held by a `load`) when `owner` is freed."""
    weakref.finalize(owner, release, module).atexit = False


@contextlib.contextmanager
def importable(module):
    """Registers `module` in sys.modules while Numba compiles or loads its functions:
    loading cached machine code imports the module by name, and an import that missed
    sys.modules would look for the file on sys.path. Removed again afterwards, so that a
    deleted function's module can be freed."""
    name = module.__name__
    with _lock:
        _importers[name] = _importers.get(name, 0) + 1
        sys.modules[name] = module
    try:
        yield module
    finally:
        with _lock:
            _importers[name] -= 1
            if not _importers[name]:
                del _importers[name]
                if sys.modules.get(name) is module:
                    del sys.modules[name]


def _after_fork_in_child():  # the thread that held the lock is not in the child
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
