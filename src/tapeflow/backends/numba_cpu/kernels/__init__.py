"""The Numba helpers generated kernels call, by kind: scalar_math (the elementwise
templates' polynomial helpers, inlined and vectorized by LLVM), special_math (the
special functions' series and continued fractions), arrays (kernels of the ops
that are not loops over elements), allocation (new arrays, built in place), draws (the
gamma, Poisson and sampler draws), gemm (matrix products through NumPy's OpenBLAS,
numpy_blas, or tapeflow's own float32 product, microgemm).

Every module here is part of every generated kernel's cache key (numba_cpu/cache.py):
editing one invalidates the compiled kernels.
"""

# The modules whose public functions generated kernels import by name.
HELPER_MODULES = ("scalar_math", "special_math", "arrays", "gemm", "matrices", "windows",
                  "segments", "philox", "fourier", "draws", "allocation", "views", "failures")
# Every module whose source the compiled kernels depend on.
SOURCE_MODULES = HELPER_MODULES + ("microgemm", "gemm_shape", "numpy_blas")


def helper_names(short_names=HELPER_MODULES):
    """{name: module name} of the public functions that the modules of kernels/ named by
    `short_names` define (what generated kernels import by name)."""
    import importlib
    found = {}
    for short in short_names:
        module = importlib.import_module(f"{__name__}.{short}")
        for name, value in vars(module).items():
            if not name.startswith("_") and callable(value) and getattr(
                    value, "__module__", None) == module.__name__:
                found[name] = module.__name__
    return found


def helper(fn):
    """Every helper: nopython, the NumPy error model (x / 0 is inf, not an exception),
    and no C-callable wrapper (kernels call helpers natively; compiling it was waste).
    Numba is imported here, not with the package: numpy_blas is needed without it
    (native_loader.py)."""
    from numba import njit
    return njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True,
                fastmath={"contract"})(fn)


def inlined_helper(fn):
    """A helper whose code is put into each caller before typing: no compile of its own."""
    from numba import njit
    return njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True,
                fastmath={"contract"}, inline="always")(fn)


def array_helper(fn):
    """A helper that works on whole arrays: compiled once, and called by symbol rather
    than linked into each kernel (helper_symbols.py), as there is nothing to inline."""
    from ..helper_symbols import by_symbol
    return by_symbol(helper(fn))
