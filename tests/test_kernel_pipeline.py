"""The Numba pipeline of generated kernels (backends/numba_cpu/kernel_pipeline.py): fewer
passes than Numba's default, the same results, arrays freed, loops still vectorized, and
Numba's default pipeline wherever the lean one fails."""

import platform
import re

import numba
import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from tapeflow.backends.numba_cpu import kernel_pipeline
from tapeflow.backends.numba_cpu.kernel_pipeline import KernelCompiler

lean_jit = njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True,
                pipeline_class=KernelCompiler)


@pytest.fixture
def fallbacks(monkeypatch):
    """The functions compiled again on Numba's default pipeline."""
    names = []
    fresh_start = kernel_pipeline._FreshStart.run_pass

    def recorded(self, state):
        names.append(state.func_id.func_name)
        return fresh_start(self, state)
    monkeypatch.setattr(kernel_pipeline._FreshStart, "run_pass", recorded)
    return names


def test_a_kernel_compiles_on_the_lean_pipeline(fallbacks):
    @lean_jit
    def kernel(x, w):
        out = np.empty_like(x)
        total = np.float64(0.0)
        for i in range(x.shape[0]):
            out[i] = np.tanh(x[i]) * w[i]
            total += out[i]
        return out, total

    x = np.linspace(-2, 2, 9).astype(np.float32)
    w = np.arange(9, dtype=np.float32)
    out, total = kernel(x, w)
    np.testing.assert_allclose(out, np.tanh(x) * w, rtol=1e-6)
    assert total == pytest.approx(float(np.sum(out, dtype=np.float64)))
    assert fallbacks == []


def test_what_the_lean_pipeline_cannot_type_compiles_on_numbas(fallbacks):
    # Typing `x + offset` needs the branch that it is in pruned for an omitted offset:
    # a pass the lean pipeline leaves out (kernels have no optional arguments).
    @lean_jit
    def shifted(x, offset=None):
        if offset is None:
            return x * 2.0
        return x + offset

    np.testing.assert_array_equal(shifted(np.array([1.5, 2.0])), [3.0, 4.0])
    assert fallbacks == ["shifted"]


def test_a_failure_on_both_pipelines_is_numbas_error():
    @lean_jit
    def wrong(x):
        return x + "text"

    with pytest.raises(numba.core.errors.TypingError):
        wrong(np.ones(2))


def test_closures_stay_on_the_lean_pipeline_and_object_mode_blocks_compile(fallbacks):
    @lean_jit
    def with_closure(x):
        scale = 3.0

        def times(v):
            return v * scale
        return times(x[0]) + sum([x[i] for i in range(x.shape[0])])

    def drawn(n):
        return np.arange(n, dtype=np.float64)

    @njit(pipeline_class=KernelCompiler)
    def with_object_mode(n):
        with numba.objmode(values="float64[:]"):
            values = drawn(n)
        return values.sum()

    assert with_closure(np.array([2.0, 5.0])) == 13.0
    assert with_object_mode(4) == 6.0
    assert fallbacks == []


def test_temporary_arrays_are_freed():
    # The lean pipeline keeps the pass that emits variable deletions (the decrefs).
    @lean_jit
    def temporaries(x, steps):
        acc = np.zeros_like(x)
        for _ in range(steps):
            t = np.empty_like(x)
            for i in range(x.shape[0]):
                t[i] = x[i] * 2.0
            acc = acc + t
        return acc

    x = np.ones(16)
    temporaries(x, 1)
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        np.testing.assert_array_equal(temporaries(x, 50), np.full(16, 100.0))
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    # Only the returned array is still alive.
    assert after.alloc - before.alloc >= 100  # the temporaries, then the result
    assert after.free - before.free == after.alloc - before.alloc


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="checks x86 vector instructions")
def test_loops_are_still_vectorized():
    # LLVM's passes are Numba's, as before.
    @lean_jit
    def scaled(x, y, out):
        for i in range(x.shape[0]):
            out[i] = x[i] * y[i] + np.float32(1.0)

    x = np.ones(64, np.float32)
    scaled(x, x, np.empty_like(x))
    (assembly,) = scaled.inspect_asm().values()
    # Packed single precision ("ps"), not one float at a time ("ss").
    assert re.search(r"\b(v?mulps|vfmadd\d*ps)\b", assembly)
