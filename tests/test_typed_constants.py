"""The rewrite of NumPy scalar constructors on literals (backends/numba_cpu/typed_constants.py):
the constants it makes are NumPy's, bit for bit; what it cannot make as NumPy does, it
leaves to Numba; and only tapeflow's own functions are rewritten."""

import numpy as np
import pytest
from numba import njit

from tapeflow.backends.numba_cpu import typed_constants

F32 = np.float32


@pytest.fixture
def rewritten(monkeypatch):
    """[how many constants each rewrite made] while the test runs."""
    counts = []
    apply = typed_constants.TypedConstants.apply

    def counting(self):
        counts.append(len(self._found))
        return apply(self)

    monkeypatch.setattr(typed_constants.TypedConstants, "apply", counting)
    return counts


def test_constants_are_numpys_bit_for_bit(rewritten):
    def ours():
        return (F32(0.1), np.float32(-5.70498872745e-3), np.float64(1e-300), np.int64(7),
                np.int32(-3), np.uint8(255), np.bool_(False), np.bool_(1),
                np.float32(16777217), np.float32(1e40), np.int8(300), np.complex64(0.5))
    ours.__module__ = "tapeflow.backends.numba_cpu.kernels.example"
    compiled = njit(ours)
    got = compiled()
    assert sum(rewritten) >= 10
    with np.errstate(all="ignore"):
        expected = (F32(0.1), F32(-5.70498872745e-3), np.float64(1e-300), np.int64(7),
                    np.int32(-3), np.uint8(255), np.bool_(False), np.bool_(True),
                    F32(16777216), F32(np.inf), np.int8(44), np.complex64(0.5))
    # Typed as NumPy's scalars, with NumPy's values (Numba returns them as Python's).
    types = compiled.nopython_signatures[0].return_type.types
    assert [str(t) for t in types] == [
        "float32", "float32", "float64", "int64", "int32", "uint8", "bool", "bool",
        "float32", "float32", "int8", "complex64"]
    for g, e in zip(got, expected, strict=True):
        assert np.asarray(g).astype(e.dtype).tobytes() == np.asarray(e).tobytes(), (g, e)


def test_what_numpy_refuses_is_left_to_numba():
    # An int out of the type's range: NumPy refuses, Numba's conversion wraps.
    assert typed_constants._converted(np.int8, 300) is None
    assert typed_constants._converted(np.uint8, -1) is None
    # A float too large for float32: NumPy warns; Numba's conversion gives inf.
    assert typed_constants._converted(np.float32, 1e40) is None
    assert typed_constants._converted(np.float32, 0.1) == F32(0.1)
    assert typed_constants._converted(np.bool_, 0) is np.bool_(False)


def test_other_functions_are_left_alone(rewritten):
    def theirs(x):
        return x * np.float32(0.5) + np.float32(1.0)
    theirs.__module__ = "someone_else"
    assert njit(theirs)(F32(2.0)) == F32(2.0)
    assert not rewritten


def test_the_rewrite_is_there_before_tapeflow_compiles_anything():
    # Registered by the helpers' decorator, which every kernel's helpers go through.
    import subprocess
    import sys
    code = ("from tapeflow.backends.numba_cpu.kernels import scalar_math\n"
            "from numba.core.rewrites import rewrite_registry\n"
            "print([c.__module__ for c in rewrite_registry.rewrites['before-inference']])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert typed_constants.__name__ in out.stdout
