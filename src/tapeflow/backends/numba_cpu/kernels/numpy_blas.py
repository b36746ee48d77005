"""The OpenBLAS inside NumPy's wheels, for the generated kernels' matrix products.

Numba's np.dot calls SciPy's BLAS; NumPy's wheels bundle their own OpenBLAS build, which
is measurably faster for single-precision GEMM on the machines we measured (about 8% on
a (128, 784) @ (784, 256) product). Its cblas functions carry a `scipy_` prefix and a
`64_` suffix (64-bit integers). The two gemm symbols, and the one that tells how many
threads the library will use, are given to LLVM by name (the
library itself stays private: its other symbols would shadow SciPy's BLAS), so kernels
link to them like any C function, and cached kernels load in a new process too. Where
the library is absent (another NumPy build), `LIBRARY` is None and kernels use np.dot.
"""

import ctypes
import glob
import os

import numpy as np

SYMBOLS = {np.dtype(np.float32): "scipy_cblas_sgemm64_",
           np.dtype(np.float64): "scipy_cblas_dgemm64_"}
THREADS_SYMBOL = "scipy_openblas_get_num_threads64_"


def _load():
    pattern = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                           "libscipy_openblas64_*.so")
    for path in sorted(glob.glob(pattern)):
        try:
            library = ctypes.CDLL(path)  # RTLD_LOCAL: nothing else sees its symbols
            addresses = {symbol: ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
                         for symbol in (*SYMBOLS.values(), THREADS_SYMBOL)}
        except (OSError, AttributeError):
            continue
        import llvmlite.binding
        for symbol, address in addresses.items():  # these names only, for LLVM
            llvmlite.binding.add_symbol(symbol, address)
        return os.path.basename(path)
    return None


LIBRARY = _load()  # the file name (part of the kernel cache key), or None
