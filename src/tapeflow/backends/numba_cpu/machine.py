"""A generated kernel module's machine code: compiled by Numba, or loaded from the cache
directory, with the one-time kernels and helpers it calls provided first. Shared by
compile_graph and the background compile's process (compile_process.py)."""

import re

import numpy as np

from . import cache, compile_costs


def argument_type(kind, dtype, ndim):
    """The Numba type of a kernel parameter."""
    import numba
    if kind in ("stream", "seeded"):
        return numba.typeof(np.random.default_rng(0))
    return numba.types.Array(numba.from_dtype(np.dtype(dtype)), ndim, "C")


def machine_code(source, digest, argument_types):
    """The loaded module of `source` (held: `cache.release` it), its kernel compiled for
    `argument_types` or loaded from the cache directory."""
    from . import numba_cache
    from .kernels import microgemm
    module = cache.load(source, digest)
    try:
        kernel = module.kernel
        if hasattr(kernel, "compile"):  # not under NUMBA_DISABLE_JIT=1 (kernels run as Python)
            compile_costs.without_blas_check()
            with compile_costs.collector_paused():
                if re.search(r"\bgemm\(", source):  # a cached kernel links to it as it loads
                    microgemm.register()
                numba_cache.cache_helpers()
                with cache.importable(module):
                    numba_cache.attach(kernel, kernel.py_func)
                    kernel.compile(tuple(argument_types))
    except BaseException:
        cache.release(module)
        raise
    return module
