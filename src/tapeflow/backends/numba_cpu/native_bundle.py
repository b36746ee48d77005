"""A compiled kernel's machine code in one signed file that loads without Numba: the
kernel's object code, that of each helper it calls by symbol (helper_symbols.py), the
names to publish them under, and the constants its code reads. A kernel has no Python
wrapper (its caller's bundle has one, kernel_caller.py): its header names its function
and the text of its results, from which the caller is found.

Numba's cache holds the same machine code, but reading it back takes Numba itself (its
import is 0.13 s, most of a warm process's first compiled call) and its pickles of
Numba's objects. The bundle is written next to Numba's files when a kernel is compiled
or loaded with Numba, and native_loader.py loads it in later processes. Written only
where everything in it can be described without pickles: object code, symbol names,
NumPy dtypes; anything else (or machine code Numba did not keep) leaves the kernel to
Numba's cache alone.

This module reads and writes the format; only `save` (given Numba's compile result)
imports anything of Numba's.
"""

import hashlib
import json
import os
import platform
import struct
import weakref

import numpy as np

from ... import cache_store
from . import cache, elf_symbols

_MAGIC = b"tapeflow native kernel 3\n"
_ENVIRONMENT = "_ZN08NumbaEnv"  # how Numba's mangled names of environments begin
_SUFFIX = ".native"
# code library -> the object code Numba's cache rebuilt it from (numba_cache.py): Numba
# hands that to LLVM and keeps no copy
_loaded_objects = weakref.WeakKeyDictionary()


def path_for(digest, signature, cache_dir=None):
    """The bundle of kernel module `digest` compiled for `signature` (a JSON list of
    [kind, dtype, ndim] per parameter, machine.signature)."""
    if cache_dir is None:
        cache_dir = cache_store.directory()
    tag = hashlib.sha256(signature.encode()).hexdigest()[:16]
    return os.path.join(cache_dir, cache_store.NUMBA_SUBDIR,
                        f"{cache.module_name(digest)}.{tag}{_SUFFIX}")


def pack(header, objects):
    """The file's body: the header (a dict, JSON) and the object files (bytes), whose
    sizes the header gets."""
    header = dict(header, sizes=[len(o) for o in objects])
    text = json.dumps(header, sort_keys=True).encode()
    return b"".join([_MAGIC, struct.pack("<I", len(text)), text, *objects])


def unpack(body):
    """(header, [object file bytes]) of a body `pack` made. Raises ValueError for any
    other content."""
    if not body.startswith(_MAGIC):
        raise ValueError("not a native kernel file")
    start = len(_MAGIC) + 4
    size, = struct.unpack_from("<I", body, len(_MAGIC))
    header = json.loads(body[start:start + size])
    objects, at = [], start + size
    for n in header["sizes"]:
        if not isinstance(n, int) or n <= 0 or at + n > len(body):
            raise ValueError("an object file runs past the end")
        objects.append(body[at:at + n])
        at += n
    if at != len(body):
        raise ValueError("bytes after the last object file")
    return header, objects


def loaded_from(library, payload):
    """Notes the object code of `library`, rebuilt by Numba's cache from `payload` (its
    CompileResult reduced: library data first)."""
    try:
        _, kind, (object_code, _) = payload[0]
    except (TypeError, ValueError, IndexError):
        return
    if kind == "object" and isinstance(object_code, bytes):
        _loaded_objects[library] = object_code


def _object_code(library):
    code = getattr(library, "_compiled_object", None)
    return code if isinstance(code, bytes) else _loaded_objects.get(library)


def _dtypes(environment):
    """The Python wrapper's constants, as dtype strings; None if one is anything else."""
    found = []
    for value in environment.consts:
        if not isinstance(value, np.dtype) or value.fields or np.dtype(value.str) != value:
            return None
        found.append(value.str)
    return found


def save(path, cres):
    """Writes the bundle of the kernel `cres` (a Numba compile result) to `path` unless
    one that verifies is there or it cannot be made; returns whether the file is there
    now."""
    if os.path.exists(path):
        # A damaged one (reported) is written again: a kernel's caller is read only after
        # its kernel's bundle loaded, so a damaged caller was otherwise found a run later.
        if cache_store.read_signed(path) is not None:
            return True
        cache_store.remove(path)
    from .helper_symbols import defining, requirements
    if cres.objectmode or cres.lifted or cres.reload_init:
        return False  # object-mode code needs Numba's objects at run time
    objects, publishes, seen = [], [], set()

    def add(library, published):  # what `library` calls first: loaded before it
        for requirement in requirements(library):
            if requirement not in seen:
                seen.add(requirement)
                symbol, helper, function = defining(requirement)
                add(helper, [[symbol, function]])
        code = _object_code(library)
        if code is None:
            raise LookupError(library.name)
        objects.append(code)
        publishes.append(published)

    try:
        add(cres.library, [])
    except (LookupError, AttributeError):
        return False
    # Every environment the machine code points to that Numba knows (the kernel's, and
    # those of the functions whose errors build their arguments from it): as a Numba load
    # sets them. Those it does not know stay null, as in a Numba load.
    from numba.core.environment import lookup_environment
    environments = {}
    for code in objects:
        defined, _ = elf_symbols.symbols(code, platform.machine())
        for name in sorted(defined):
            environment = lookup_environment(name) if name.startswith(_ENVIRONMENT) else None
            if environment is not None:
                consts = _dtypes(environment)
                if consts is None:
                    return False
                environments[name] = consts
    fndesc = cres.fndesc
    results = None
    if not cres.library.get_pointer_to_function(fndesc.llvm_cpython_wrapper_name):
        from .kernels.native_call import results_text
        try:
            results = results_text(cres.signature.return_type)
        except ValueError:
            return False
    elif fndesc.env_name not in environments:
        return False
    header = {"machine": platform.machine(), "function": fndesc.mangled_name,
              "wrapper": None if results is not None else fndesc.llvm_cpython_wrapper_name,
              "environment": None if results is not None else fndesc.env_name,
              "results": results, "environments": sorted(environments.items()),
              "publishes": publishes}
    cache_store.make_private_dir(os.path.dirname(path))
    cache_store.write_signed(path, pack(header, objects))
    return True
