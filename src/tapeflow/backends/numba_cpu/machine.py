"""A generated kernel module's machine code: compiled by Numba, or loaded from the cache
directory, with the one-time kernels and helpers it calls provided first. Shared by
compile_graph and the background compile's process (compile_process.py)."""

import json
import re

import numpy as np

from . import cache, compile_costs


def argument_type(kind, dtype, ndim):
    """The Numba type of a kernel parameter."""
    import numba

    from .kernel_caller import ADDRESS, OWN_TYPES
    if kind == ADDRESS:
        return numba.types.int64
    if kind in OWN_TYPES:  # random generators
        return numba.typeof(np.random.default_rng(0))
    return numba.types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")


def signature(params):
    """A kernel's parameter types as text (JSON): [kind, dtype, ndim] for each."""
    return json.dumps([[p.kind, np.dtype(p.dtype).str, int(p.ndim)] for p in params])


def machine_code(source, digest, signature):
    """The loaded module of `source` (held: `cache.release` it), its kernel compiled for
    `signature` (the text `signature` makes) or loaded from the cache directory; the
    kernel's bundle (native_bundle.py) is written to the cache directory too."""
    from . import numba_cache
    from .kernels import microgemm
    argument_types = tuple(argument_type(kind, dtype, ndim)
                           for kind, dtype, ndim in json.loads(signature))
    module = cache.load(source, digest)
    try:
        kernel = module.kernel
        if hasattr(kernel, "compile"):  # not under NUMBA_DISABLE_JIT=1 (kernels run as Python)
            compile_costs.without_blas_check()
            with compile_costs.collector_paused():
                # A kernel calling a product (a float32 convolution's too) links to
                # microgemm's symbol as it loads from the cache.
                if re.search(r"\b(gemm|conv2d_\w+)\(", source):
                    microgemm.register()
                numba_cache.cache_helpers()
                with cache.importable(module):  # for Numba, and the bundle's helpers
                    _outlined_by_symbol(module)
                    numba_cache.attach(kernel, kernel.py_func)
                    kernel.compile(argument_types)
                    _save_bundle(kernel.overloads.get(argument_types), digest, signature)
    except BaseException:
        cache.release(module)
        raise
    return module


def entry_point(kernel, signature):
    """What calls the compiled `kernel` (a generated module's) for `signature` from
    Python: its caller (kernel_caller.py), as a kernel loaded from its bundle is called.
    The kernel itself where it is not compiled (NUMBA_DISABLE_JIT)."""
    overloads = getattr(kernel, "overloads", None)
    if overloads is None:
        return kernel
    return _called(_overload(kernel, signature), signature)


def _called(overload, signature):
    """What calls `overload` (a kernel Numba compiled or loaded here) from Python: its
    caller, compiled or loaded first where this process has none yet."""
    from . import kernel_caller
    from .kernels.native_call import results_text
    results = results_text(overload.signature.return_type)
    caller_signature = kernel_caller.signature(signature)
    key = (caller_signature, results)
    caller = kernel_caller.callers.get(key)
    if caller is None:
        text = kernel_caller.source(signature, results)
        # Held for the process, as the helpers are: one per signature and results.
        module = machine_code(text, cache.key(text), caller_signature)
        caller = kernel_caller.callers.setdefault(key, python_entry(module.kernel,
                                                                     caller_signature))
    address = overload.library.get_pointer_to_function(overload.fndesc.mangled_name)
    return kernel_caller.bound(caller, address, overload)


def python_entry(function, signature):
    """What calls `function`, compiled with Numba's Python wrapper for `signature`: the
    built-in function Numba made for that wrapper. Numba's dispatcher would find the
    overload by typing the arguments first (their dtypes, ranks and layouts, which
    runtime.py has made the signature's already), and its first call types them in
    Python: about 15 ms of a new graph's first call, which imported numpy.ma for a check
    of masked arrays."""
    return _overload(function, signature).entry_point


def _overload(function, signature):
    argument_types = tuple(argument_type(kind, dtype, ndim)
                           for kind, dtype, ndim in json.loads(signature))
    return function.overloads[argument_types]  # machine_code compiled it for these


def _outlined_by_symbol(module):
    """Makes the kernel call the functions outline.py made of its repeated code by
    symbol, as it calls the helpers (helper_symbols.py): linked in, each one's code was
    optimized and compiled again in the kernel's (the unrolled RNN's kernel at T=100:
    1.85 s to compile before, 1.64 s after, alternated five times). So each is cached on
    its own beside the kernel, and loading the kernel provides it first."""
    from . import helper_symbols, numba_cache, outline
    for name, value in vars(module).items():
        if name.startswith(f"{outline.PREFIX}_") and hasattr(value, "compile"):
            numba_cache.attach(value, value.py_func)
            helper_symbols.by_symbol(value)
            helper_symbols.enable(value)


def _save_bundle(compiled, digest, signature):
    from . import native_bundle
    if compiled is None:
        return
    try:
        native_bundle.save(native_bundle.path_for(digest, signature), compiled)
    except Exception:  # noqa: BLE001, S110 - only a later process's quicker load is lost
        pass
