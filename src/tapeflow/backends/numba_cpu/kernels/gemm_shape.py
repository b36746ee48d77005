"""microgemm's tile shape, whether it is used on this CPU, and which products it takes,
decided without Numba: the kernels' source depends on them (linalg.py, convolution.py),
and a warm process finds its cached kernels by that source before it imports Numba, or
without (native_loader.py)."""

import os
import sys


def _numba_setting(name, environment, default):
    """Numba's setting `name` (numba.core.config), or its environment variable's text
    where Numba is not imported yet."""
    config = sys.modules.get("numba.core.config")
    if config is not None:
        return getattr(config, name)
    return os.environ.get(environment) or default


def _target_features():
    """The CPU features Numba compiles for: the host's, unless NUMBA_CPU_FEATURES names
    others."""
    features = _numba_setting("CPU_FEATURES", "NUMBA_CPU_FEATURES", None)
    if features is None:
        from llvmlite import binding
        return {name for name, on in binding.get_host_cpu_features().items() if on}
    return {flag[1:] for flag in features.split(",") if flag.startswith("+")}


def _vector_bytes():
    """The width of the vector registers the micro-kernel is built for, and whether it is
    used at all: with AVX-512 it beats OpenBLAS; with AVX2 OpenBLAS's kernel was 5%
    faster (501 against 480 us on the MLP's x @ W, measured by hand on an AVX-512 machine
    with OPENBLAS_CORETYPE=Haswell and NUMBA_CPU_FEATURES without AVX-512), so BLAS keeps
    the product there, and the kernel is built (and tested) with 32-byte vectors all the
    same."""
    if "avx512f" in _target_features():
        return 64, True
    return 32, False


VECTOR_BYTES, ENABLED = _vector_bytes()
# its tiles are intrinsics: compiled code only
ENABLED = ENABLED and not int(_numba_setting("DISABLE_JIT", "NUMBA_DISABLE_JIT", 0))
LANES = VECTOR_BYTES // 4  # float32 lanes in one vector
# ROWS x VECTORS accumulators, plus the panel's VECTORS vectors and one broadcast, must
# fit the register file: 32 registers with AVX-512, 16 with AVX2.
ROWS = 8 if VECTOR_BYTES == 64 else 6
VECTORS = 2
DEPTH = 256  # a float32 panel (256 x 32) is 32 KiB: it stays in L1 beside a's rows
WIDTH = VECTORS * LANES  # the columns of one tile and one panel


def pays(m, n, k):
    """Whether microgemm beats OpenBLAS (on one thread) on a float32 product of this size:
    its tiles must be mostly full (measured: it loses below about 64 x 64 x 64, and on
    products fewer than two tiles wide)."""
    return ENABLED and m >= 4 * ROWS and n >= 2 * WIDTH and m * n * k >= 1 << 20
