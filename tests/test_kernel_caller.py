"""Kernels compiled without Numba's Python wrapper, called through one caller per
signature and results (backends/numba_cpu/kernel_caller.py, kernels/native_call.py)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing

pytest.importorskip("numba")

from numba import types  # noqa: E402

from tapeflow.backends.numba_cpu import compile_graph, kernel_caller  # noqa: E402
from tapeflow.backends.numba_cpu.kernels.native_call import (  # noqa: E402
    results_text,
    results_type,
)


def _compiled(fn, *specs):
    g = Graph("g")
    with tracing(g):
        xs = [g.placeholder(shape, dtype) for shape, dtype in specs]
        out = fn(*xs)
        g.outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    return compile_graph(g)


def test_results_are_written_as_text_and_read_back():
    f32 = types.Array(types.float32, 2, "C")
    for restype in [types.Tuple(()), types.UniTuple(f32, 2),
                    types.Tuple((f32, types.Array(types.int64, 1, "A", readonly=True),
                                 types.Array(types.complex64, 0, "C")))]:
        assert results_type(results_text(restype)) == restype
    unaligned = types.Array(types.float32, 1, "C", aligned=False)  # not in the text
    for restype in [f32, types.Tuple((f32, types.float32)), types.Tuple((unaligned,))]:
        with pytest.raises(ValueError):
            results_text(restype)


def test_kernels_of_one_signature_and_results_share_their_caller(numba_dispatchers):
    spec = ((4, 3), tf.float32)
    first = _compiled(lambda x: (tf.tanh(x) * 2.0, tf.reduce_sum(x, axis=0)), spec)
    second = _compiled(lambda x: (tf.exp(x) * 2.0, tf.reduce_max(x, axis=0)), spec)
    other = _compiled(lambda x: tf.reduce_sum(x), spec)  # other results
    assert first._kernel.func is second._kernel.func
    assert first._kernel.args != second._kernel.args  # the kernels' addresses
    assert other._kernel.func is not first._kernel.func
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    outputs, _ = second([x], [])
    np.testing.assert_allclose(outputs[0], np.exp(x) * 2, rtol=1e-6)
    np.testing.assert_array_equal(outputs[1], x.max(axis=0))


def test_a_kernels_error_reaches_python_through_its_caller(numba_dispatchers):
    compiled = _compiled(lambda x, i: tf.gather(x, i) * 2.0, ((5,), tf.float32),
                         ((2,), tf.int32))
    x = np.arange(5, dtype=np.float32)
    outputs, _ = compiled([x, np.array([4, 1], np.int32)], [])
    np.testing.assert_array_equal(outputs[0], [8, 2])
    with pytest.raises(InvalidArgumentError, match="GatherV2"):
        compiled([x, np.array([9, 1], np.int32)], [])


_NEW_GRAPH = r'''
import json, sys
import numpy as np
import tapeflow as tf
from numba.core import event
tf.config.settings.compile_mode = "sync"
compiled = []
class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__globals__.get("KERNEL_CALLER", False))
    def on_end(self, ev):
        pass
event.register("numba:compile", Compiles())
x = tf.constant(np.linspace(-1, 1, 6, dtype=np.float32))
y = tf.function(lambda x: tf.reduce_sum(tf.tanh(x) * (FACTOR)))(x)
print(json.dumps({"value": float(y), "callers": sum(compiled), "kernels": len(compiled)
                  - sum(compiled)}))
'''


def _new_graph(cache_dir, factor):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache_dir))
    result = subprocess.run([sys.executable, "-c", _NEW_GRAPH.replace("FACTOR", factor)],
                            env=env, capture_output=True, text=True, timeout=600,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_new_graph_of_a_cached_signature_compiles_its_kernel_alone(tmp_path):
    first = _new_graph(tmp_path, "2.0")
    assert first["callers"] == 1 and first["kernels"] >= 1
    second = _new_graph(tmp_path, "3.0")  # another constant: the same kernel, reused
    assert second["callers"] == 0 and second["kernels"] == 0
    np.testing.assert_allclose(second["value"], first["value"] * 1.5, rtol=1e-6)
    third = _new_graph(tmp_path, "x * 3.0")  # another kernel, of the same signature
    assert third["callers"] == 0 and third["kernels"] >= 1
    assert kernel_caller.MARK in _NEW_GRAPH


def test_parameters_of_one_numba_type_share_a_caller_whatever_they_are(numba_dispatchers):
    # (an input, an input) and (an input, the pack of float32 constants)
    spec = ((5,), tf.float32)
    inputs = _compiled(lambda x, y: x * y, spec, spec)
    constants = _compiled(lambda x: x * 2.0, spec)
    assert "def kernel(x0, x1, W):" in inputs.module_source
    assert "def kernel(x0, K_float32, W):" in constants.module_source
    assert inputs._kernel.func is constants._kernel.func
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(constants([x], [])[0][0], x * 2)
