"""Compiled kernels loaded from the cache directory without importing Numba.

A warm process's first compiled call used to import Numba (0.13 s of its 0.24 s) only to
read back machine code that was already on disk. A kernel's bundle (native_bundle.py)
holds that machine code, and this module loads it with llvmlite, which Numba would load
anyway, and the C runtime that Numba's compiled code calls: its allocator (NRT) and
helpers, from Numba's extension modules, which are loaded from their files without
importing the `numba` package around them. The kernel is then called through the
Python wrapper Numba compiled with its caller (kernel_caller.py, loaded from its own
bundle first), so its arguments, results and errors are exactly those of Numba's
dispatcher.

Nothing is loaded that could stop the process: every symbol each object file needs
must be known first (LLVM's loader aborts on one it cannot resolve), and anything
unexpected (no bundle, a bad signature, another machine, a missing symbol, NUMBA_*
settings that change what the runtime must be) leaves the kernel to Numba. The one
piece of Numba's runtime written in Python that a call needs, the unpickling of the
constants the wrapper uses (the ndarray class it boxes results with, the exceptions it
raises), is done here by an unpickler that accepts only those; anything else is handed
to Numba's own, imported then. So is an error raised with values the kernel computed (a
failed check's index or shape): Numba rebuilds it from a pickle of its own types, and
the first such error in a process imports Numba.
"""

import builtins
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import pickle
import platform
import sys
import threading
import types

import numpy as np

from ... import cache_store
from . import cache, elf_symbols, kernel_caller, native_bundle

_lock = threading.RLock()  # a kernel's caller is loaded while its kernel is
_runtime = None  # a _Runtime once made; False where this process cannot have one
_kernels = {}  # bundle path -> the loaded kernel


def kernel(digest, signature):
    """The kernel of module `digest` compiled for `signature` (machine.signature), from
    its bundle in the cache directory: a callable taking the kernel's arguments. None
    where there is no bundle or it cannot be loaded here: Numba loads or compiles it."""
    path = native_bundle.path_for(digest, signature)
    with _lock:
        if path in _kernels:
            return _kernels[path]
        if not os.path.exists(path):
            return None
        runtime = _get_runtime()
        if runtime is None:
            return None
        body = cache_store.read_signed(path)  # a bad signature is reported
        try:
            if body is None:
                raise ValueError("not tapeflow's")
            header, objects = native_bundle.unpack(body)
            caller = None
            if header["wrapper"] is None:  # a kernel: its caller's bundle first
                caller = _caller(signature, header["results"])
                if caller is None:
                    return None
            loaded = runtime.load(header, objects)
            if caller is not None and loaded is not None:
                loaded = kernel_caller.bound(caller, loaded, None)
        except (ValueError, KeyError, TypeError) as e:
            if body is not None:
                cache_store.report_damage(path, f"{type(e).__name__}: {e}")
            cache_store.remove(path)  # Numba loads the kernel, and writes the file again
            return None
        if loaded is not None:
            cache_store.touch(path)
            _kernels[path] = loaded
        return loaded


def _caller(kernel_signature, results):
    """The caller of kernels of this signature and results, from its bundle; None where
    there is none (Numba compiles or loads it, with the kernel)."""
    if not isinstance(results, str):
        raise TypeError("a kernel's results are not named")
    source = kernel_caller.source(kernel_signature, results)
    return kernel(cache.key(source), kernel_caller.signature(kernel_signature))


def _numba_settings_allow():
    """Whether NUMBA_* settings leave Numba's compiled code as the bundle expects:
    not run as Python (DISABLE_JIT), no allocation statistics (NRT_STATS: the
    allocator's counters would disagree with Numba's own start-up)."""
    config = sys.modules.get("numba.core.config")
    if config is not None:
        return not config.DISABLE_JIT and not config.NRT_STATS
    return all(os.environ.get(name, "0") in ("", "0")
               for name in ("NUMBA_DISABLE_JIT", "NUMBA_NRT_STATS"))


def _get_runtime():
    global _runtime
    if _runtime is None:
        _runtime = False
        if _numba_settings_allow() and platform.machine() in ("x86_64", "aarch64") \
                and sys.platform.startswith("linux"):
            try:
                _runtime = _Runtime()
            except (ImportError, OSError, AttributeError, KeyError):
                pass
    return _runtime or None


def _extension(name):
    """Numba's extension module `name`: the one imported, else loaded from its file
    (found beside the package, which is not imported) under its own name, where Numba
    finds it if it is imported later."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec("numba")  # finds the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("numba is not installed")
    *folders, short = name.split(".")[1:]
    folder = os.path.join(next(iter(spec.submodule_search_locations)), *folders)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, short + suffix)
        if os.path.exists(path):
            break
    else:
        raise ImportError(f"no file for {name}")
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(module)
    sys.modules[name] = module
    return module


# Where the exceptions that compiled code raises come from (NumPy's LinAlgError is
# pickled under the name of the module that defines it, which moved in NumPy 2)
_EXCEPTION_MODULES = ("builtins", "numpy", "numpy.exceptions", "numpy.linalg",
                      "numpy.linalg.linalg", "numpy.linalg._linalg")


class _Constants(pickle.Unpickler):
    """Unpickles what Numba's compiled code asks for on its usual paths: NumPy's ndarray
    class (to box results) and the built-in and NumPy exceptions with their arguments."""

    def find_class(self, module, name):
        if (module, name) == ("numpy", "ndarray"):
            return np.ndarray
        found = sys.modules.get(module) if module in _EXCEPTION_MODULES else None
        value = getattr(found, name, None)
        if isinstance(value, type) and issubclass(value, BaseException):
            return value
        raise pickle.UnpicklingError(f"{module}.{name}")


_unpickled = {}


def _unpickle(address, data, hashed):
    """numba.core.serialize._numba_unpickle, for what _Constants accepts; the rest is
    Numba's (imported then)."""
    key = (address, hashed)
    value = _unpickled.get(key)
    if value is None:
        try:
            value = _Constants(io.BytesIO(data)).load()
        except Exception:  # noqa: BLE001 - anything else is Numba's to rebuild
            value = importlib.import_module("numba.core.serialize")._numba_unpickle(
                address, data, hashed)
        _unpickled[key] = value
    return value


_SERIALIZE = "numba.core.serialize"
_UNPICKLE = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p)


def _unpickle_without_numba(helperlib):
    """Makes the C runtime's `numba_unpickle` call `_unpickle`. On its first call it
    imports numba.core.serialize (and, as an import of a dotted name does, `numba`) and
    keeps that module's `_numba_unpickle` for good. Stand-ins for both modules are in
    sys.modules for that one call only: a later import of Numba finds its own modules
    (and its compiled code then unpickles through `_unpickle` too, which hands it what
    only Numba rebuilds)."""
    stand_ins = {"numba": types.ModuleType("numba"), _SERIALIZE: types.ModuleType(_SERIALIZE)}
    stand_ins[_SERIALIZE]._numba_unpickle = _unpickle
    data = pickle.dumps(np.ndarray, protocol=4)
    sys.modules.update(stand_ins)
    try:
        first = _UNPICKLE(helperlib.c_helpers["unpickle"])(
            data, len(data), hashlib.sha1(data).digest())  # sha1: what Numba passes
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    if first is not np.ndarray:
        raise ImportError("Numba's runtime unpickles elsewhere")


class _Runtime:
    """Numba's C runtime and an LLVM that loads object files, set up once."""

    def __init__(self):
        from llvmlite import binding

        from .kernels import numpy_blas  # noqa: F401 - gives LLVM the BLAS symbols
        helperlib = _extension("numba._helperlib")
        dynfunc = _extension("numba._dynfunc")
        nrt = _extension("numba.core.runtime._nrt_python")
        binding.initialize_native_target()
        binding.initialize_native_asmprinter()
        if "numba.core.runtime.nrt" not in sys.modules:  # as Numba does on its import
            nrt.memsys_use_cpython_allocator()
        if "numba" not in sys.modules:
            _unpickle_without_numba(helperlib)
        # The symbols Numba gives LLVM as it starts (numba.core.base, core.runtime.nrt)
        symbols = {"_Py_NoneStruct": id(None)}
        for helpers in (helperlib.c_helpers, dynfunc.c_helpers):
            symbols.update((f"numba_{name}", address) for name, address in helpers.items())
        for name, address in nrt.c_helpers.items():
            symbols[name if name.startswith("_") else f"NRT_{name}"] = address
        symbols.update((f"PyExc_{value.__name__}", id(value)) for value in vars(builtins).values()
                       if isinstance(value, type) and issubclass(value, BaseException))
        for name, address in symbols.items():
            binding.add_symbol(name, address)
        self._binding = binding
        target = binding.Target.from_default_triple()
        self._target_machine = target.create_target_machine(
            cpu=binding.get_host_cpu_name(), features=binding.get_host_cpu_features().flatten(),
            jit=True, codemodel="jitdefault")
        self._environment = dynfunc.Environment
        self._make_function = dynfunc.make_function
        self._loaded = []  # (engine, environments) of each bundle loaded

    def load(self, header, objects):
        """The kernel of an unpacked bundle, or None if a symbol it needs is unknown.
        Raises ValueError (or KeyError, TypeError) for a header that does not fit."""
        binding = self._binding
        if header["machine"] != platform.machine() or len(header["publishes"]) != len(objects):
            raise ValueError("written for another machine, or damaged")
        tables = [elf_symbols.symbols(code, platform.machine()) for code in objects]
        # created first: it makes the process's symbols known
        engine = binding.create_mcjit_compiler(binding.parse_assembly(""), self._target_machine)
        environments = {}
        # Never freed: other kernels may call the helpers published from this engine, and
        # their errors read these environments.
        self._loaded.append((engine, environments))
        wanted, defined = [], set()
        for code, (defines, needs), publishes in zip(objects, tables, header["publishes"]):
            if publishes and all(binding.address_of_symbol(symbol) for symbol, _ in publishes):
                continue  # a helper loaded already (here or by Numba)
            defined |= defines  # what an object needs is loaded before it, or in it
            if any(not binding.address_of_symbol(name) for name in needs - defined):
                return None
            wanted.append((code, publishes))
            defined |= {symbol for symbol, _ in publishes}
        for code, publishes in wanted:
            engine.add_object_file(binding.ObjectFileRef.from_data(code))
            engine.finalize_object()
            for symbol, function in publishes:
                address = engine.get_function_address(function)
                if not address:
                    raise ValueError(f"{function} is not in its object file")
                binding.add_symbol(symbol, address)
        for name, consts in header["environments"]:
            environment = environments[name] = self._environment({})
            environment.consts[:] = [np.dtype(c) for c in consts]
            address = engine.get_global_value_address(name)
            if address:  # else in a helper loaded before, which has it
                ctypes.c_void_p.from_address(address).value = id(environment)
        if header["wrapper"] is None:  # a kernel: the address its caller calls
            address = engine.get_function_address(header["function"])
            if not address:
                raise ValueError("no kernel function")
            return address
        wrapper = engine.get_function_address(header["wrapper"])
        if not wrapper:
            raise ValueError("no Python wrapper")
        # A built-in function calling the wrapper, as Numba makes for its dispatcher.
        return self._make_function(sys.modules[__name__], "kernel",
                                   "a kernel loaded from its bundle",
                                   wrapper, environments[header["environment"]], ())


def loaded(kernel):
    """Whether `kernel` (a CompiledGraph's) was loaded here, without Numba."""
    with _lock:
        return any(kernel is k for k in _kernels.values())


def _after_fork_in_child():  # the thread that held the lock is not in the child
    global _lock
    _lock = threading.RLock()


os.register_at_fork(after_in_child=_after_fork_in_child)
