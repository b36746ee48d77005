"""Two costs of a Numba compile that tapeflow's kernels need not pay, measured on an RNN
gradient's first compile (1.25 s in all; perf/compile_stages.py):

- Python's cyclic garbage collector: a compile makes and drops hundreds of thousands of
  objects (IR nodes, types, LLVM values), and the collections that triggers walk every
  object in the process: 0.1 s. `collector_paused` holds it off while a compile the
  caller waits for runs; the garbage is collected once after. A compile in a background
  thread leaves it on, as the user's code runs beside it.
- SciPy's linear algebra: Numba's first compile in a process imports it (85 ms), to
  check whether np.dot has a BLAS. Kernels multiply matrices through NumPy's OpenBLAS
  (kernels/numpy_blas.py), and SciPy is a dependency, so the check would pass; with
  `without_blas_check` installed, Numba imports SciPy only where a kernel calls np.dot or
  np.linalg, as Numba's typing of those asks for it again.
"""

import contextlib
import gc
import sys
import threading

_installed = False


@contextlib.contextmanager
def collector_paused():
    """Pauses the cyclic garbage collector while the main thread compiles (the user is
    waiting); elsewhere, or where it is off already, leaves it as it is."""
    if threading.current_thread() is not threading.main_thread() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def without_blas_check():
    """Makes Numba's first real compile in this process (not a load from the cache, which
    does not need it) skip its SciPy import; once per process."""
    global _installed
    if _installed:
        return
    from numba.core import event

    class _FirstCompile(event.Listener):
        def on_start(self, ev):
            _import_arraymath_unchecked()

        def on_end(self, ev):
            pass

    event.register("numba:compile", _FirstCompile())
    _installed = True


def _import_arraymath_unchecked():
    # numba.np.arraymath runs the check as it is imported, from Numba's first typing.
    if "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg
    checked = linalg.ensure_blas
    linalg.ensure_blas = _scipy_is_a_dependency
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = checked
    arraymath.ensure_blas = checked


def _scipy_is_a_dependency():
    """ensure_blas, where SciPy is known to be installed."""
