"""The Numba helpers generated kernels call, by kind: scalar_math (the elementwise
templates' polynomial helpers, inlined and vectorized by LLVM), special_math (the
special functions' series and continued fractions), arrays (kernels of the ops
that are not loops over elements), allocation (new arrays, built in place), draws (the
gamma, Poisson and sampler draws), gemm (matrix products through NumPy's OpenBLAS,
numpy_blas, or tapeflow's own float32 product, microgemm).

Every module here is part of every generated kernel's cache key (numba_cpu/cache.py):
editing one invalidates the compiled kernels.
"""

import functools

# The modules whose public functions generated kernels import by name.
HELPER_MODULES = ("scalar_math", "special_math", "arrays", "gemm", "matrices", "windows",
                  "segments", "philox", "fourier", "draws", "allocation", "views", "failures",
                  "ctc")
# Every module whose source the compiled kernels depend on.
SOURCE_MODULES = HELPER_MODULES + ("microgemm", "gemm_shape", "numpy_blas", "native_call")


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


def _njit():
    """numba.njit, with tapeflow's rewrite of typed constants registered (typed_constants.py)
    before anything of tapeflow's is compiled: the helpers are made here, and every
    generated kernel imports some."""
    from numba import njit

    from .. import typed_constants  # noqa: F401 - registers the rewrite
    return njit


def helper(fn, fastmath=("contract",)):
    """Every helper: nopython, the NumPy error model (x / 0 is inf, not an exception),
    and neither a C-callable nor a Python wrapper: kernels call helpers natively, and
    compiling the wrappers was a fifth of the helpers' compile (the RNN gradient's,
    1.01 s to 0.78 s). A call from Python goes through a jitted function that calls the
    helper (`_HelperDispatcher`). Numba is imported here, not with the package:
    numpy_blas is needed without it (native_loader.py)."""
    njit = _njit()
    dispatcher = njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True,
                      no_cpython_wrapper=True, fastmath=set(fastmath))(fn)
    dispatcher.__class__ = _helper_dispatcher_class()
    return dispatcher


@functools.cache
def _helper_dispatcher_class():
    from numba.core.registry import CPUDispatcher

    class _HelperDispatcher(CPUDispatcher):
        """A helper's dispatcher. Its compiled code has no Python wrapper, which Numba's
        own call from Python would jump to (a null pointer): this one calls it from a
        jitted function of as many arguments, compiled at the first such call (tests
        and the interpreter use helpers so; kernels never do)."""

        def __call__(self, *args, **kwargs):
            if kwargs:
                raise TypeError(f"{self.py_func.__qualname__}() takes positional "
                                "arguments only")
            callers = self.__dict__.setdefault("_tapeflow_python_callers", {})
            if len(args) not in callers:
                callers[len(args)] = _python_caller(self, len(args))
            return callers[len(args)](*args)

    return _HelperDispatcher


def _python_caller(dispatcher, arity):
    from numba import njit
    names = ", ".join(f"a{i}" for i in range(arity))
    namespace = {"helper": dispatcher}
    exec(f"def call({names}):\n    return helper({names})\n", namespace)  # noqa: S102
    return njit(nogil=True)(namespace["call"])


def inlined_helper(fn):
    """A helper whose code is put into each caller before typing: no compile of its own."""
    njit = _njit()
    return njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True,
                fastmath={"contract"}, inline="always")(fn)


def array_helper(fn):
    """A helper that works on whole arrays: compiled once, and called by symbol rather
    than linked into each kernel (helper_symbols.py), as there is nothing to inline."""
    from ..helper_symbols import by_symbol
    return by_symbol(helper(fn))
