"""AutoGraph's conversions, kept in the compile cache directory between processes.

Converting a small function (parse, rewrite, compile) costs about a millisecond, as much
as several eager steps: for a short training loop, more than the whole graph's first
run. So the converted code object is stored (marshal) under a key of everything the
conversion reads: the function's lines as they are in the file now, where they start,
its name, class, closure names and `__future__` flags, the versions of Python and
tapeflow, and the converter's file (its size and modification time). The file is signed
like the kernel cache's files (cache_store.py): one that is not
tapeflow's own, or is damaged, is a miss, converted again and replaced; nothing unsigned
is ever loaded. Entries are `tapeflow_kernel_<key>.autograph`, so the cache's eviction
and clearing cover them.
"""

import hashlib
import marshal
import os
import sys
import types

from .. import cache_store

_SUFFIX = ".autograph"
_salt = None


def _converter_salt():
    global _salt
    if _salt is None:
        from ..version import __version__
        from . import autograph
        # The converter's file by its size and time, not its content: reading and
        # hashing it cost more than the rest of a cached conversion's load.
        info = os.stat(autograph.__file__)
        _salt = hashlib.sha256(f"tapeflow {__version__}\0{sys.version}\0{autograph.__file__}"
                               f"\0{info.st_size}\0{info.st_mtime_ns}".encode()).digest()
    return _salt


def key(lines, first, filename, code, owner):
    """The key of one conversion: `lines` are the function's, starting at line `first`
    (0-based) of `filename`; `code` its original code object; `owner` its class's name."""
    h = hashlib.sha256(_converter_salt())
    for part in (filename, str(first), code.co_name, owner or "",
                 " ".join(code.co_freevars), str(code.co_flags)):
        h.update(part.encode() + b"\0")
    h.update("".join(lines).encode())
    return h.hexdigest()


def _path(digest):
    return os.path.join(cache_store.directory(),
                        f"{cache_store.PREFIX}_{digest}{_SUFFIX}")


def load(digest):
    """The module code object stored for `digest`, or None (a miss)."""
    try:
        body = cache_store.read_signed(_path(digest))
    except OSError:
        return None
    try:
        code = None if body is None else marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def save(digest, module_code):
    """Stores a conversion; a cache that cannot be written only means no reuse."""
    try:
        cache_store.write_signed(_path(digest), marshal.dumps(module_code))
    except OSError:
        pass
