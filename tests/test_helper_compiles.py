"""What the helpers of kernels/ leave Numba to compile of its own. Numba's np.empty,
np.zeros, reshape, astype, copy and ascontiguousarray are functions it compiles again in
every process (per rank and dtype), and an array assigned to a slice compiles the
formatting of its shape-mismatch message (string joins and reprs: seconds); helpers build
and copy arrays with kernels/allocation.py and kernels/views.py instead, and inline their
private pieces."""

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

from numba.core.registry import CPUDispatcher

from tapeflow.backends.numba_cpu import kernels

_NUMBA_BUILDERS = {"empty", "zeros", "full", "ones", "empty_like", "zeros_like", "full_like",
                   "ones_like", "ascontiguousarray"}
_NUMBA_METHODS = {"reshape", "astype", "copy", "transpose"}


def _jitted_functions():
    for short in kernels.SOURCE_MODULES:
        module = importlib.import_module(f"{kernels.__name__}.{short}")
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                yield f"{short}.{name}", value.py_func


def _numba_compiled_builds(tree):
    """The lines of `tree` that call Numba's array builders, or assign a non-constant to
    a slice."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (isinstance(owner, ast.Name) and owner.id == "np"
                    and node.func.attr in _NUMBA_BUILDERS) or node.func.attr in _NUMBA_METHODS:
                found.append(ast.unparse(node))
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            sliced = any(isinstance(t, ast.Subscript) and any(
                isinstance(part, (ast.Slice, ast.Constant)) and (
                    isinstance(part, ast.Slice) or part.value is Ellipsis)
                for part in ast.walk(t.slice)) for t in targets)
            constant = isinstance(node.value, ast.Constant) or (
                isinstance(node.value, ast.UnaryOp) and isinstance(node.value.operand,
                                                                   ast.Constant))
            if sliced and not constant:
                found.append(ast.unparse(node))
    return found


def test_no_jitted_helper_builds_arrays_with_numbas_own_functions():
    offenders = {}
    for name, fn in _jitted_functions():
        found = _numba_compiled_builds(ast.parse(textwrap.dedent(inspect.getsource(fn))))
        if found:
            offenders[name] = found
    assert not offenders, offenders


def test_the_check_finds_what_it_looks_for():
    source = textwrap.dedent("""
        def f(x, part):
            a = np.empty((2, 3), x.dtype)
            b = x.reshape(6)
            part[:2] = x[1:3]
            part[...] += x
            part[:2] = 0
            return np.linalg.inv(np.ascontiguousarray(x))
    """)
    assert len(_numba_compiled_builds(ast.parse(source))) == 5


_COMPILES = """
import json, numpy as np
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        fn = ev.data["dispatcher"].py_func
        compiled.append(f"{fn.__module__}:{fn.__qualname__}")
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
from tapeflow.backends.numba_cpu import numba_cache
from tapeflow.backends.numba_cpu.kernels import arrays, matrices, windows
numba_cache.cache_helpers()
f = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6, 1)
arrays.xent3(f, f)
arrays.grow_rows(np.ones((2, 3), np.float32))
arrays.copy_into(np.ones((4, 4))[1:3, :2], np.ones((2, 2)))
windows.max_pool_nhwc(np.ones((1, 4, 4, 2), np.float32), (2, 2, 2, 2, 0, 0, 2, 2))
square = np.eye(3, dtype=np.float32)[None] * 2
matrices.solve3(square, np.ones((1, 3, 2), np.float32), True)
arrays.bmm3(square, square, False, True)
helpers = list(compiled)
arrays.searchsorted_rows(np.ones((2, 3)), np.ones((2, 4)), True)  # Numba's np.searchsorted
print(json.dumps({"helpers": helpers, "searchsorted": compiled[len(helpers):]}))
"""


def test_helpers_compile_none_of_numbas_array_functions(tmp_path):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _COMPILES], env=env, capture_output=True,
                         text=True, check=True)
    compiled = json.loads(out.stdout.strip().splitlines()[-1])
    assert any("xent3" in name for name in compiled["helpers"])  # an empty cache
    assert any("solve3" in name for name in compiled["helpers"])
    numbas = [name for name in compiled["helpers"] if not name.startswith("tapeflow.") and any(
        word in name for word in ("np_empty", "np_zeros", "np_full", "ascontiguous",
                                  "reshape", "astype", "array_copy", "shape_context",
                                  "array_allocate", "linalg", "unicode"))]
    assert not numbas, numbas
    # np.searchsorted allocates with Numba's np.empty; its result is copied into the
    # row without the shape check's message formatting (1.7 s of string code)
    assert any("searchsorted" in name for name in compiled["searchsorted"])
    formatting = [name for name in compiled["searchsorted"]
                  if "shape_context" in name or "unicode" in name]
    assert not formatting, formatting


def test_generated_kernels_build_arrays_with_tapeflows_intrinsics():
    # The lowerings' casts, reshapes, transposes, broadcasts, copies, ranges and
    # identities: each of Numba's own is a function it compiles again in every process
    # (a transpose 3 s, a broadcast 0.3 s).
    import tapeflow as tf
    from tapeflow.ops.creation import LINSPACE
    from tapeflow.ops.registry import bind

    @tf.function
    def many(x, i):
        tf.debugging.Assert(tf.reduce_all(x < 100.0), ["x is small"])
        top = tf.math.top_k(x, 2)
        return (tf.argmax(x, axis=1), tf.transpose(x), top.indices, tf.argsort(x),
                tf.unique(i).idx, tf.random.stateless_uniform((3,), (1, 2), dtype=tf.float16),
                tf.range(i[1], i[0] * 2, 2), tf.range(x[0, 1], x[0, 3], 0.5),
                tf.eye(3, 4), tf.debugging.check_numerics(x[0, 0], "scalar"),
                tf.matmul(tf.reshape(x, (3, 2, 2)), tf.ones((1, 2, 2))),
                tf.linalg.triangular_solve(tf.reshape(x, (3, 2, 2)), tf.ones((1, 2, 1))),
                bind(LINSPACE, (x[0, 0], x[1, 1], i[0])))

    x = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    source = many.get_concrete_function(x, tf.constant([3, 1, 3])).kernel_source
    kernel = ast.parse(source[source.index("@njit"):])
    assert not _numba_compiled_builds(kernel)
    for numbas in ("np.arange", "np.eye", "np.broadcast_to", "np.array(", "np.linspace",
                   ".all()"):
        assert numbas not in source
    assert "all_true(" in source  # the Assert is there
    assert not [call for call in ast.walk(kernel) if isinstance(call, ast.Call) and isinstance(
        call.func, ast.Attribute) and call.func.attr == "transpose"]


def test_helpers_compile_no_python_wrapper_yet_run_when_called_from_python():
    from tapeflow.backends.numba_cpu.kernels import arrays, scalar_math
    rows = np.arange(6, dtype=np.float32).reshape(2, 3)
    grown = arrays.grow_rows(rows)  # from Python: through a jitted caller
    assert grown.shape == (4, 3) and grown.dtype == np.float32
    np.testing.assert_array_equal(grown[:2], rows)
    assert scalar_math.tanh_f32(np.float32(0.5)) == pytest.approx(np.tanh(0.5), rel=1e-6)
    with pytest.raises(TypeError, match="positional arguments only"):
        arrays.grow_rows(rows=rows)
    # Numba's own call from Python would jump to the missing wrapper's address: zero.
    for dispatcher in (arrays.grow_rows, scalar_math.tanh_f32):
        for compiled in dispatcher.overloads.values():
            assert compiled.library.get_pointer_to_function(
                compiled.fndesc.llvm_cpython_wrapper_name) == 0
