"""Compiled backends plug in by registering (tapeflow.backend_registry): tf.function
compiles with the one registered for the CPU, tf.config.clear_cache empties every
registered backend's cache, and importing tapeflow registers the CPU backend without
loading Numba."""

import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import backend_registry
from tapeflow.backends import compiler
from tapeflow.backends.numba_cpu import NumbaCPU
from tapeflow.config import settings


class _Recording(compiler.Backend):
    """A backend that lowers nothing: it records what it was asked."""

    def __init__(self, name, device_type):
        self.name, self.device_type = name, device_type
        self.compiled, self.cleared = [], 0

    def compile(self, graph):
        self.compiled.append(graph)
        raise backend_registry.Unsupported(f"{self.name} lowers nothing")

    def clear_cache(self):
        self.cleared += 1


@pytest.fixture
def registered(monkeypatch):
    """The registry, emptied for the test and restored after it."""
    monkeypatch.setattr(backend_registry, "_registered", [])
    monkeypatch.setattr(settings, "compile_mode", "sync")
    return backend_registry


def test_importing_tapeflow_registers_the_cpu_backend():
    (cpu,) = [b for b in backend_registry.registered() if b.device_type == "CPU"]
    assert isinstance(cpu, NumbaCPU) and backend_registry.compiling_for("CPU") is cpu


def test_a_trace_compiles_with_the_first_backend_registered_for_the_cpu(registered):
    gpu = registered.register(_Recording("gpu", "GPU"))
    first = registered.register(_Recording("first", "CPU"))
    second = registered.register(_Recording("second", "CPU"))
    f = tf.function(lambda x: x * 2.0)
    with pytest.warns(RuntimeWarning, match="runs with NumPy kernels, not compiled: first "):
        np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    compilation = f.get_concrete_function(tf.constant([1.0, 2.0]))._compilation
    assert len(first.compiled) == 1 and not second.compiled and not gpu.compiled
    assert compilation.kernel is None and "first lowers nothing" in str(compilation.error)


def test_without_a_backend_for_the_cpu_traces_run_on_numpy(registered):
    registered.register(_Recording("gpu", "GPU"))
    f = tf.function(lambda x: x + 1.0)
    np.testing.assert_array_equal(f(tf.constant(1.0)).numpy(), 2.0)
    compilation = f.get_concrete_function(tf.constant(1.0))._compilation
    assert compilation.kernel is None
    assert isinstance(compilation.error, backend_registry.Unsupported)


def test_clear_cache_asks_every_registered_backend(registered):
    backends = [registered.register(_Recording(name, device))
                for name, device in (("cpu", "CPU"), ("gpu", "GPU"))]
    tf.config.clear_cache()
    assert [b.cleared for b in backends] == [1, 1]


def test_a_name_registers_once(registered):
    registered.register(_Recording("cpu", "CPU"))
    with pytest.raises(ValueError, match="'cpu' is already registered"):
        registered.register(_Recording("cpu", "GPU"))


def test_importing_tapeflow_leaves_numba_for_the_first_compile():
    code = ("import sys, tapeflow\n"
            "print(tapeflow.backend_registry.compiling_for('CPU').name, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout == "numba_cpu False\n"
