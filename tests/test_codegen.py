"""The Numba CPU backend: generated source, fusion, the kernel cache, shape-generic reuse,
special values, variables, random ops and run-time errors.

Each test compiles one or two kernels (Numba compiles take seconds): cases are grouped
into one graph where they can be.
"""

import os
import platform
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.errors import InvalidArgumentError
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu import cache
from tapeflow.backends.numba_cpu import Unsupported, compile_graph

F32, F64 = tf.float32, tf.float64


def trace(fn, *specs, variables=None):
    g = Graph("g")
    with tracing(g):
        xs = [g.placeholder(shape, dtype) for shape, dtype in specs]
        out = fn(*xs)
        g.outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    return g


def run(compiled, *inputs, variables=()):
    outputs, _ = compiled(list(inputs), list(variables))
    return outputs


def eager(fn, *inputs):
    out = fn(*[tf.constant(a) for a in inputs])
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    return [t.numpy() for t in out]


def assert_matches(got, want, rtol=2e-5, atol=1e-5):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind == "f":
            finite = w[np.isfinite(w)]
            scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            np.testing.assert_array_equal(np.isposinf(g), np.isposinf(w))
            np.testing.assert_array_equal(np.isneginf(g), np.isneginf(w))
        else:
            np.testing.assert_array_equal(g, w)


def benchmark(x):
    return tf.reduce_sum(tf.math.sin(x) * tf.exp(-x * x) + tf.tanh(x) * x)


# -- fusion and the generated source ----------------------------------------------------------

def test_benchmark_and_its_gradient_are_one_fused_loop_each(numba_dispatchers):
    g = Graph("grad")
    with tracing(g):
        x = g.placeholder((10_000,), F32)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = benchmark(x)
        g.outputs = [y, tape.gradient(y, x)]
    compiled = compile_graph(g)
    src = compiled.source
    assert src.count("# fused") == 1, src
    assert "for " in src and "np.dot" not in src
    assert "@njit(" in src and 'error_model="numpy"' in src
    from tapeflow.backends.numba_cpu.numba_cache import SignedCache
    assert isinstance(compiled.dispatcher._cache, SignedCache)  # Numba's cache, signed
    assert "fastmath" not in src and "forceobj" not in src and "object" not in src
    xv = np.random.default_rng(0).uniform(-3, 3, 10_000).astype(np.float32)
    y, dx = run(compiled, xv)
    x64 = xv.astype(np.float64)
    want_y = np.sum(np.sin(x64) * np.exp(-x64 * x64) + np.tanh(x64) * x64)
    want_dx = (np.cos(x64) * np.exp(-x64 * x64) - 2 * x64 * np.sin(x64) * np.exp(-x64 * x64)
               + (1 - np.tanh(x64) ** 2) * x64 + np.tanh(x64))
    assert y.dtype == np.float32 and dx.dtype == np.float32
    np.testing.assert_allclose(float(y), want_y, rtol=1e-6)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=2e-6)


SNAPSHOT = ('@njit(error_model="numpy", nogil=True, no_cfunc_wrapper=True, '
            'no_cpython_wrapper=True, pipeline_class=KernelCompiler)\n' + '''\
def kernel(x, K_float32, W):
    W[0] = -1
    c0 = K_float32[0]
    c1 = K_float32[1]
    # {where}
    W[0] = 0
    # fused: Mul AddV2 -> Sum
    n2 = x.shape[0]
    sum_acc = np.float64(0.0)
    sum_chunk = empty_array(1024, np.float32)
    for b6 in range(0, n2, 1024):
        m7 = 1024 if n2 - b6 > 1024 else n2 - b6
        x_chunk = x[b6:b6 + m7]
        for j8 in range(m7):
            x_s = x_chunk[j8]
            mul_s = x_s * c0
            addv2_s = mul_s + c1
            sum_chunk[j8] = addv2_s
        for j12 in range(m7):
            sum_acc = radd_fast(sum_acc, np.float64(sum_chunk[j12]))
    sum = np.float32(sum_acc)
    sum_array = scalar_array(sum)
    return (sum_array,)
''')


def test_views_are_made_contiguous_by_tapeflows_intrinsic():
    # Numba's np.ascontiguousarray is a function it compiles again in every process, per
    # rank and layout (0.16 s each); views.contiguous is built in place.
    compiled = compile_graph(trace(lambda x: (tf.transpose(x), tf.reduce_sum(
        tf.transpose(x)[1:], axis=0)), ((3, 4), F32)))
    assert "np.ascontiguousarray" not in compiled.source
    assert "contiguous(" in compiled.source
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    transposed, summed = run(compiled, x)
    assert transposed.flags.c_contiguous
    np.testing.assert_array_equal(transposed, x.T)
    np.testing.assert_array_equal(summed, x.T[1:].sum(axis=0))


def test_generated_kernel_snapshot():
    """Catches unintended codegen changes: update SNAPSHOT when a change is meant."""
    fn = lambda x: tf.reduce_sum(x * 2.0 + 1.0)  # noqa: E731 - its line is in the kernel
    compiled = compile_graph(trace(fn, ((5,), F32)))
    where = f"{__file__}:{fn.__code__.co_firstlineno}: {LAMBDA_LINE}"
    body = compiled.source[compiled.source.index("@njit"):]
    assert body == SNAPSHOT.format(where=where)
    assert "from tapeflow.backends.numba_cpu.kernels.scalar_math import radd_fast" in \
        compiled.source
    (out,) = run(compiled, np.arange(5, dtype=np.float32))
    assert out.dtype == np.float32 and out.shape == () and float(out) == 25.0


LAMBDA_LINE = "fn = lambda x: tf.reduce_sum(x * 2.0 + 1.0)  # noqa: E731 - its line is in the kernel"


def test_only_code_that_can_fail_unnamed_is_preceded_by_a_site_store():
    from tapeflow.backends.numba_cpu.site_marks import may_fail, quiet_names
    names = quiet_names()
    quiet = ["e3 = np.float32(x[i]) * tanh_f32(c0)", "s4 = np.int32(checked_position("
             "np.int64(0), t1, x.shape[0]))", "t5 = reshaped(flat_view(t2), (I[0],))",
             "    # fused: Mul", "for i6 in range(n2):", "e7 = math.sqrt(e3) + radd_fast(a, b)"]
    failing = ["t8 = empty_array((n2,), np.float32)", "copy_into(t5[i], t6)",
               "t9 = blas_gemm(a, b, np.bool_(False), np.bool_(False))",
               "t10 = np.linalg.inv(a)", "t11 = cast_array(t3, np.float64)"]
    assert not any(may_fail(line, names) for line in quiet)
    assert all(may_fail(line, names) for line in failing)


def test_kernel_shows_value_names_and_the_user_lines_but_compiles_them_by_position():
    """The kernel as shown names values after the graph's (the Python parameters, the
    Variable, the ops) with the user's line above their code; the module compiled names
    them by position, so functions of one structure share it whatever their names."""
    weights = tf.Variable(np.ones((3, 2), np.float32), name="dense/kernel")

    def layer(images):
        return tf.nn.relu(tf.matmul(images, weights))

    def other(pixels):
        return tf.nn.relu(tf.matmul(pixels, weights))

    saved, settings.compile_mode = settings.compile_mode, "sync"
    try:
        first, second = [tf.function(fn).get_concrete_function(tf.TensorSpec((4, 3), F32))
                         for fn in (layer, other)]
        first.kernel_source, second.kernel_source  # compiles them
        first, second = first._compilation.kernel, second._compilation.kernel
    finally:
        settings.compile_mode = saved
    shown = first.source
    assert "def kernel(images, dense_kernel, " in shown
    assert "matmul = " in shown and "relu_s = " in shown
    assert f"# {__file__}:" in shown
    assert "return tf.nn.relu(tf.matmul(images, weights))" in shown
    assert "def kernel(pixels, dense_kernel, " in second.source
    assert first.module_source == second.module_source
    assert first.cache_key == second.cache_key
    assert __file__ not in first.module_source and "images" not in first.module_source
    xv = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    (out,) = run(first, xv, variables=[weights.numpy()])
    np.testing.assert_array_equal(out, np.maximum(xv @ weights.numpy(), 0))


def test_retrace_for_a_new_shape_reuses_the_kernel():
    def fn(x, b):
        return tf.nn.relu(x + b) * 2.0, tf.reduce_mean(x, axis=0)
    keys = set()
    for n in (3, 7, 64):
        compiled = compile_graph(trace(fn, ((n, 5), F32), ((5,), F32)))
        keys.add(compiled.cache_key)
        xv = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
        bv = np.linspace(-1, 1, 5).astype(np.float32)
        assert_matches(run(compiled, xv, bv), eager(fn, xv, bv))
    assert len(keys) == 1
    path = cache.path_for(keys.pop())
    assert os.path.exists(path) and os.path.dirname(path) == os.environ["TAPEFLOW_CACHE_DIR"]
    # A new rank is a new kernel.
    other = compile_graph(trace(fn, ((2, 3, 5), F32), ((5,), F32)))
    assert other.cache_key != compiled.cache_key


def test_a_damaged_cache_file_is_rewritten_and_an_unwritable_cache_falls_back(
        tmp_path, monkeypatch):
    from tapeflow import cache_store
    source = "VALUE = 42\n"
    digest = cache.key(source)
    path = cache.write(source, digest, str(tmp_path))
    with open(path, "w") as f:
        f.write("VALUE = ")                   # truncated by a crash or a full disk
    monkeypatch.setattr(cache_store, "_damage_reported", False)
    with pytest.warns(RuntimeWarning, match="damaged or unverifiable file"):
        assert cache.write(source, digest, str(tmp_path)) == path
    with open(path) as f:
        assert f.read() == source
    monkeypatch.setattr(cache_store, "_fallback", None)
    blocked = tmp_path / "a_file"
    blocked.write_text("")                    # a directory cannot be made inside a file
    with pytest.warns(RuntimeWarning, match="cannot be written"):
        elsewhere = cache.write(source, digest, str(blocked / "cache"))
    with open(elsewhere) as f:
        assert f.read() == source


def test_a_graph_the_backend_cannot_compile_warns_from_the_callers_line(monkeypatch):
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    @tf.function
    def noisy(x):
        return x + tf.random.normal([2], dtype=tf.float16)

    with pytest.warns(RuntimeWarning, match="runs with NumPy kernels") as record:
        noisy(tf.zeros([2], tf.float16))
    assert record[0].filename == __file__


def test_a_second_process_loads_the_machine_code_from_the_cache():
    code = textwrap.dedent("""
        import json, sys
        import tapeflow as tf
        from tapeflow.graph.ir import Graph
        from tapeflow.graph.trace import tracing
        from tapeflow.backends.numba_cpu import compile_graph
        g = Graph("g")
        with tracing(g):
            x = g.placeholder((4,), tf.float32)
            g.outputs = [tf.reduce_sum(tf.exp(x) * 3.0)]
        c = compile_graph(g)
        stats = getattr(c.dispatcher, "stats", None)  # None: loaded without Numba
        print(json.dumps([c.cache_key, "numba" in sys.modules,
                          stats and sum(stats.cache_hits.values()),
                          stats and sum(stats.cache_misses.values())]))
    """)
    env = dict(os.environ)
    results = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120, check=False)
        assert out.returncode == 0, out.stderr
        results.append(out.stdout.strip().splitlines()[-1])
    import json
    (key1, _, _, _), (key2, numba2, hits2, misses2) = map(json.loads, results)
    assert key1 == key2
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64"):
        assert not numba2 and hits2 is None  # its bundle, without Numba (native_loader.py)
    else:
        assert hits2 >= 1 and misses2 == 0, (hits2, misses2)


def test_kernels_copy_arrays_without_numbas_array_assignment(tmp_path):
    """Numba's `a[region] = array` compiles the formatting of its shape-mismatch message
    (seconds in each new process), so generated kernels and helpers copy with loops: a
    loop's history, concat, stack, tile, pad and a strided slice's gradient."""
    code = textwrap.dedent("""
        import numba
        import numba.np.arrayobj as arrayobj
        calls = []
        original = arrayobj.fancy_setslice
        def spy(context, builder, sig, args, index_types, indices):
            if isinstance(sig.args[2], numba.types.Array):
                calls.append(str(sig))
            return original(context, builder, sig, args, index_types, indices)
        arrayobj.fancy_setslice = spy
        import numpy as np
        import tapeflow as tf
        tf.config.settings.compile_mode = "sync"

        @tf.function
        def f(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                h = x
                for t in tf.range(3):
                    h = tf.tanh(h * 2.0)
                y = (tf.concat([h, x], 0)[1:7] + tf.pad(x, [[1, 1]])
                     + tf.reshape(tf.tile(tf.stack([x[:3], h[1:]]), [1, 1]), [6]))
                loss = tf.reduce_sum(y * y)
            return loss, tape.gradient(loss, x)

        loss, grad = f(tf.constant([0.1, 0.2, 0.3, 0.4]))
        assert np.isfinite(grad.numpy()).all()
        print(len(calls), calls)
    """)
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0 []"


# -- values ---------------------------------------------------------------------------------

UNARY = ["exp", "math.log", "math.sin", "math.cos", "math.tan", "tanh", "sigmoid",
         "math.expm1", "math.log1p", "math.softplus", "sqrt", "math.rsqrt", "math.reciprocal",
         "square", "abs", "sign", "round", "floor", "math.ceil", "nn.relu", "nn.elu",
         "negative"]


def _fn(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, np.inf, -np.inf, np.nan,
                    1e-40, -1e-40, 1e-8, -1e-8, 20.0, -20.0, 88.0, 89.0, -88.0, -104.0,
                    1e4, -1e4, 3e38, -3e38])


def test_transcendentals_match_numpy_on_special_values():
    """NaN, Inf, signed zeros, denormals and overflow thresholds, float32 and float64."""
    fns = [_fn(p) for p in UNARY]

    def all_unary(a, b):
        return [f(a) for f in fns] + [f(b) for f in fns]

    rng = np.random.default_rng(0)
    a = np.concatenate([SPECIAL, rng.uniform(-10, 10, 1000)]).astype(np.float32)
    b = a.astype(np.float64)
    compiled = compile_graph(trace(all_unary, (a.shape, F32), (b.shape, F64)))
    got = run(compiled, a, b)
    want = eager(all_unary, a, b)
    for name, g, w in zip(UNARY + UNARY, got, want):
        if name in ("math.sin", "math.cos", "math.tan") and w.dtype == np.float32:
            # Documented: float32 trig reduces arguments in float64; NaN past 2**50.
            huge = np.abs(a) > 2.0 ** 50
            assert np.isnan(g[huge]).all()
            g, w = g[~huge], w[~huge]
        try:
            assert_matches([g], [w], rtol=2e-6 if w.dtype == np.float32 else 1e-12,
                           atol=1e-7 if w.dtype == np.float32 else 1e-14)
        except AssertionError as e:
            raise AssertionError(f"{name} ({w.dtype}): {e}") from None


def test_reductions_over_every_axis_pattern():
    def fn(x, i, b):
        outs = []
        for axis in (None, 0, 1, 2, (0, 2), (1, 2), (0, 1)):
            outs += [tf.reduce_sum(x, axis), tf.reduce_sum(x, axis, keepdims=True),
                     tf.reduce_mean(x, axis), tf.reduce_max(x, axis)]
        outs += [tf.reduce_min(x, 1), tf.reduce_prod(x, (0, 2)), tf.reduce_mean(i, 0),
                 tf.reduce_sum(i), tf.reduce_max(i, 2), tf.reduce_all(b, 1),
                 tf.reduce_any(b, (0, 2)), tf.reduce_logsumexp(x, 1)]
        return outs
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x[1, 2, 3] = np.nan  # propagates through sum, mean, max, min and prod
    i = rng.integers(-7, 7, (3, 4, 5)).astype(np.int32)
    b = rng.random((3, 4, 5)) < 0.7
    compiled = compile_graph(trace(fn, ((3, 4, 5), F32), ((3, 4, 5), tf.int32),
                                   ((3, 4, 5), tf.bool)))
    assert_matches(run(compiled, x, i, b), eager(fn, x, i, b))


def test_broadcasting_bias_add_and_broadcast_to():
    def fn(a, b, c, bias):
        return [a + b, c * tf.reshape(a, (3, 1)), tf.nn.bias_add(c, bias),
                tf.nn.bias_add(tf.reshape(c, (1, 3, 2, 2)), bias[:3], data_format="NCHW"),
                tf.broadcast_to(b, (2, 3, 4)) - 1.0, tf.where(a > 0.0, a, b * 0.0)]
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((3, 1), (1, 4), (3, 4), (4,))]
    compiled = compile_graph(trace(fn, *[(a.shape, F32) for a in args]))
    assert_matches(run(compiled, *args), eager(fn, *args))


def test_shape_ops_and_outputs_are_c_contiguous():
    def fn(x):
        return [tf.transpose(x, (2, 0, 1)), x[:, ::-1, 1], tf.reverse(x, [0]),
                tf.concat([x, x * 2.0], axis=1), tf.stack([x, x], axis=3),
                tf.tile(x, (1, 2, 1)), tf.pad(x, [[1, 0], [0, 2], [0, 0]]),
                tf.squeeze(tf.expand_dims(x, 1), 1), tf.gather(x, [2, 0], axis=2),
                tf.split(x, 2, axis=2)[1]]
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    compiled = compile_graph(trace(fn, ((2, 3, 4), F32)))
    got = run(compiled, x)
    assert all(g.flags.c_contiguous for g in got)
    assert_matches(got, eager(fn, x))



def test_slices_numba_keeps_contiguous_are_read_flat_and_full_slices_are_their_input():
    def fn(x):
        return x[1:3] * 2.0, x[:] + 1.0, x[:, 1:3] - 1.0, x[1, 2] * 3.0
    compiled = compile_graph(trace(fn, ((4, 3), F32)))
    src = compiled.source
    # x[1:3] is C-contiguous: its loop reads a flat view; x[:, 1:3] is not; x[:] is x.
    assert src.count("flat_view(") == 1 + 3  # x[1:3]'s read and x[:]'s, and two outputs
    assert "x0[:]" not in src and "x0[::" not in src
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert_matches(run(compiled, x), eager(fn, x))


def test_flat_view_is_a_view_of_contiguous_arrays_only():
    from numba import njit

    from tapeflow.backends.numba_cpu.kernels.arrays import flat_view

    @njit
    def flats(a):
        v = flat_view(a)
        w = flat_view(a[::1])  # typed 'A': contiguity checked at run time
        v[0] = -1.0
        return v.copy(), w.copy()

    @njit
    def strided(a):
        return flat_view(a[:, ::2]).copy()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v, w = flats(a)
    assert a[0, 0] == -1.0  # a view, not a copy
    np.testing.assert_array_equal(v, a.reshape(-1))
    np.testing.assert_array_equal(w, a.reshape(-1))
    with pytest.raises(ValueError, match="not C-contiguous"):
        strided(a)

def test_unknown_dimensions_are_read_and_checked_at_run_time():
    compiled = compile_graph(trace(lambda a, b: tf.reduce_sum(a * b, axis=0),
                                   ((None, 3), F32), ((None, 3), F32)))
    for n in (1, 4):
        a = np.ones((n, 3), np.float32)
        (out,) = run(compiled, a, a * 2)
        np.testing.assert_array_equal(out, np.full(3, 2.0 * n, np.float32))
    with pytest.raises(InvalidArgumentError, match="Incompatible shapes"):
        run(compiled, np.ones((2, 3), np.float32), np.ones((3, 3), np.float32))
    with pytest.raises(InvalidArgumentError, match="expects"):
        run(compiled, np.ones((2, 4), np.float32), np.ones((2, 4), np.float32))


# -- state ------------------------------------------------------------------------------------

def test_variables_are_read_assigned_and_read_again():
    v = tf.Variable(np.array([1.0, 2.0], np.float32))
    w = tf.Variable(np.array([5, 6], np.int32))
    g = Graph("g")
    with tracing(g):
        x = g.placeholder((2,), F32)
        before = v.read_value() * 1.0
        v.assign_add(x)
        after = v.read_value() * 1.0
        g.outputs = [before, after, w.read_value()]
    compiled = compile_graph(g)
    old_v, old_w = v.numpy(), w.numpy()
    outputs, new_values = compiled([np.array([10.0, 20.0], np.float32)], [old_v, old_w])
    np.testing.assert_array_equal(outputs[0], [1.0, 2.0])
    np.testing.assert_array_equal(outputs[1], [11.0, 22.0])
    np.testing.assert_array_equal(new_values[g.variables.index(v)], [11.0, 22.0])
    assert new_values[g.variables.index(w)] is old_w  # unchanged: the same array
    np.testing.assert_array_equal(old_v, [1.0, 2.0])  # inputs are never written


def test_random_ops_draw_fresh_numbers_each_run_and_follow_set_seed():
    tf.random.set_seed(7)
    g = Graph("g")
    with tracing(g):
        x = g.placeholder((3,), F32)
        g.outputs = [tf.random.normal([3]) + x, tf.random.uniform([2], maxval=5,
                                                                    dtype=tf.int32)]
    compiled = compile_graph(g)
    zero = np.zeros(3, np.float32)
    tf.random.set_seed(7)
    first = run(compiled, zero)
    second = run(compiled, zero)
    assert not np.array_equal(first[0], second[0])
    tf.random.set_seed(7)
    again = run(compiled, zero)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    tf.random.set_seed(7)
    eager_first = [tf.random.normal([3]).numpy(), tf.random.uniform([2], maxval=5,
                                                                    dtype=tf.int32).numpy()]
    np.testing.assert_array_equal(first[0], eager_first[0])
    np.testing.assert_array_equal(first[1], eager_first[1])


# -- what is not supported, and errors ----------------------------------------------------------

def test_unsupported_names_the_op_and_the_line():
    def fn(a):  # a permutation drawn by the caller needs its length while tracing
        return tf.random.shuffle(a)
    g = trace(fn, ((None,), F32))
    with pytest.raises(Unsupported, match=r"RandomShuffle .*test_codegen\.py:\d+"):
        compile_graph(g)
    g = trace(lambda a: a * 2.0, ((2,), tf.float16))
    with pytest.raises(Unsupported, match="float16"):
        compile_graph(g)


def test_run_time_errors_are_tensorflow_errors():
    compiled = compile_graph(trace(lambda p, i: tf.gather(p, i), ((3,), F32),
                                   ((2,), tf.int32)))
    p = np.arange(3, dtype=np.float32)
    assert_matches(run(compiled, p, np.array([2, 0], np.int32)), [np.array([2.0, 0.0],
                                                                            np.float32)])
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\).*"
                                                   r"\[Op:GatherV2\]"):
        run(compiled, p, np.array([0, 3], np.int32))
    compiled = compile_graph(trace(lambda a, b: (a // b, a % b), ((2,), tf.int32),
                                   ((2,), tf.int32)))
    a = np.array([7, -7], np.int32)
    b = np.array([2, 3], np.int32)
    assert_matches(run(compiled, a, b), [a // b, a % b])
    with pytest.raises(InvalidArgumentError, match=r"Integer division by zero.*FloorDiv"):
        run(compiled, a, np.array([2, 0], np.int32))



def test_gathers_of_a_range_are_strided_views_with_checked_ends():
    """x[a:b] with tensor bounds gathers tf.range(a, b): the kernel takes a view, checks
    the first and last index, and never writes the indices out."""
    def fn(x, a, b, step):
        return (tf.gather(x, tf.range(a, b)) * 2.0, tf.gather(x, tf.range(a, b, step)),
                tf.gather(x, tf.range(b - 1, a - 1, -step), axis=1), x[a:b])
    compiled = compile_graph(trace(fn, ((6, 6), F32), ((), tf.int32), ((), tf.int32),
                                   ((), tf.int32)))
    assert "gather4" not in compiled.source and "np.arange" not in compiled.source
    x = np.arange(36, dtype=np.float32).reshape(6, 6)
    for a, b, step in ((1, 5, 1), (0, 6, 2), (2, 2, 3), (5, 6, 4), (0, 1, 1)):
        args = (x, np.int32(a), np.int32(b), np.int32(step))
        assert_matches(run(compiled, *args), eager(fn, *args))
    for a, b in ((-1, 3), (2, 7)):
        with pytest.raises(InvalidArgumentError, match=r"is not in \[0, 6\).*GatherV2"):
            run(compiled, x, np.int32(a), np.int32(b), np.int32(1))

# -- control flow ---------------------------------------------------------------------------------

def test_cond_and_while_loop_become_native_if_and_while():
    def fn(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0.0, lambda: tf.exp(x) * 2.0, lambda: -x)
        i, acc = tf.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * 1.5 + x),
                               [tf.constant(0), tf.zeros_like(x)])
        return y, i, acc
    compiled = compile_graph(trace(fn, ((3,), F32), ((), tf.int32)))
    src = compiled.source
    assert "if " in src and "while True:" in src
    for xv, n in ((np.array([1.0, -0.5, 2.0], np.float32), 4),
                  (np.array([-1.0, -0.5, 2.0], np.float32), 0)):
        assert_matches(run(compiled, xv, np.int32(n)), eager(fn, xv, np.int32(n)))


def test_scalar_loop_variables_and_branch_results_stay_numba_scalars():
    """Counters, flags and running sums of every dtype are scalars in the native loop (no
    0-d array per step), and the reverse loop indexes its history instead of gathering."""
    def fn(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)

            def body(i, k, flag, total, y):
                step = tf.cond(flag, lambda: tf.cast(tf.reduce_sum(y), tf.float64),
                               lambda: total * 0.5)
                return (i + 1, k + tf.constant(2, tf.int64),
                        tf.logical_or(flag, tf.reduce_max(y) > 1.0), total + step,
                        tf.sin(y) * x)
            _, k, flag, total, y = tf.while_loop(
                lambda i, *_: i < n, body,
                [tf.constant(0), tf.constant(0, tf.int64), tf.constant(False),
                 tf.constant(1.0, tf.float64), x])
            loss = tf.reduce_sum(y) * tf.cast(total, tf.float32)
        return k, flag, total, loss, tape.gradient(loss, x)
    compiled = compile_graph(trace(fn, ((3,), F32), ((), tf.int32)))
    loop = compiled.module_source[compiled.module_source.index("while True:"):]
    assert "np.empty(()" not in loop
    for dtype in ("int32", "int64", "bool_", "float64"):  # the loop variables, as scalars
        assert re.search(rf"^ +w\d+ = np\.{dtype}\(", compiled.module_source, re.M), dtype
    assert "gather4" not in compiled.source
    for xv, n in ((np.array([0.3, -1.0, 0.7], np.float32), 4),
                  (np.array([2.0, 1.5, 0.7], np.float32), 3),
                  (np.array([0.1, 0.2, 0.3], np.float32), 0)):
        assert_matches(run(compiled, xv, np.int32(n)), eager(fn, xv, np.int32(n)))


def test_gradient_through_a_while_loop_uses_its_history(numba_dispatchers):
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.math.sin(y) * x),
                                 [tf.constant(0), x])
            loss = tf.reduce_sum(y)
        return loss, tape.gradient(loss, x)
    compiled = compile_graph(trace(fn, ((4,), F32)))
    assert "grow_rows" in compiled.source
    xv = np.array([0.3, -1.0, 0.7, 2.0], np.float32)
    assert_matches(run(compiled, xv), eager(fn, xv))
    # The history's helpers are called by symbol, not linked into (and compiled again in)
    # the kernel; and no variable is cast to the dtype it already has (the loop counter).
    from tapeflow.backends.numba_cpu import helper_symbols
    (overload,) = compiled.dispatcher.overloads.values()
    called = {name for _, name, _ in helper_symbols.requirements(overload.library)}
    assert {"copy_into", "grow_rows"} <= called
    assert not _casts_of_cast_variables(compiled.module_source), compiled.module_source


def _casts_of_cast_variables(source):
    """Lines that cast a variable to the type it was defined with (`s = np.int32(e)` after
    `e = np.int32(...)`)."""
    defined = dict(re.findall(r"^ +(\w+) = (np\.\w+)\(", source, re.M))
    return [line for line in source.splitlines()
            if (m := re.fullmatch(r" +\w+ = (np\.\w+)\((\w+)\)", line))
            and defined.get(m.group(2)) == m.group(1)]


def test_gradients_through_a_list_appended_in_a_tensor_loop_compile(monkeypatch):
    """The loop stores the list's length per step, not its values, and the reverse loop
    pops the list's gradient: both compile, with shapes known only at run time."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def loss(x, n):
        h, outs = x, []
        for _ in tf.range(n):
            h = tf.tanh(h * 1.5 + x)
            outs.append(h)
        y = tf.stack(outs)
        return tf.reduce_mean(y ** 2) + tf.reduce_sum(y[-1])

    def value_and_grad(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = loss(x, n)
        return y, tape.gradient(y, x)

    x = tf.constant([0.3, -1.0, 0.7])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        for n in (1, 5):
            want = [t.numpy() for t in value_and_grad(x, tf.constant(n))]
            got = tf.function(value_and_grad)(x, tf.constant(n))
            assert_matches([t.numpy() for t in got], want)
            with tf.GradientTape() as tape:  # the function's own backward kernel
                tape.watch(x)
                y = tf.function(loss)(x, tf.constant(n))
            assert_matches([tape.gradient(y, x).numpy()], want[1:])


def test_a_list_grows_in_place_in_a_compiled_loop_unless_two_pushes_share_it():
    from tapeflow.ops.lists import list_push_back

    def grow(x, n):
        _, rows = tf.while_loop(lambda i, rows: i < n,
                                lambda i, rows: (i + 1, list_push_back(
                                    list_push_back(rows, x * tf.cast(i, F32)), -x)),
                                [tf.constant(0), tf.zeros((0, 2))])
        return rows

    def fork(x, n):
        def body(i, rows, other):
            kept = list_push_back(rows, x * tf.cast(i, F32))
            return i + 1, kept, list_push_back(rows, -x)  # two pushes onto one value
        _, rows, other = tf.while_loop(lambda i, rows, other: i < n, body,
                                       [tf.constant(0), tf.zeros((0, 2)), tf.zeros((0, 2))])
        return rows, other

    xv, n = np.array([1.0, 2.0], np.float32), np.int32(20)  # past the first 16 rows
    compiled = compile_graph(trace(grow, ((2,), F32), ((), tf.int32)))
    assert "rows" in compiled.module_source  # written into one buffer, not copied per push
    assert_matches(run(compiled, xv, n), eager(grow, xv, n))
    compiled = compile_graph(trace(fork, ((2,), F32), ((), tf.int32)))
    assert "rows" not in compiled.module_source
    assert_matches(run(compiled, xv, n), eager(fork, xv, n))


def test_appends_inside_a_cond_or_an_inner_loop_grow_the_outer_loops_buffer():
    def fn(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)

            def inner(j, rows, h):
                return j + 1, list_push_back(rows, h * tf.cast(j, F32)), h

            def body(i, rows, h):
                h = tf.tanh(h * 0.9 + x)
                rows = tf.cond(i % 3 == 0, lambda: list_push_back(rows, h), lambda: rows)
                _, rows, _ = tf.while_loop(lambda j, rows, h: j < i % 2, inner,
                                           [tf.constant(0), rows, h])
                return i + 1, rows, h
            _, rows, _ = tf.while_loop(lambda i, rows, h: i < n, body,
                                       [tf.constant(0), tf.zeros((0, 2)), x])
            loss = tf.reduce_sum(rows ** 2)
        return rows, tape.gradient(loss, x)
    from tapeflow.ops.lists import list_push_back
    compiled = compile_graph(trace(fn, ((2,), F32), ((), tf.int32)))
    # One buffer, started once; the reverse loop rebuilds no list (only lengths matter).
    assert len(re.findall(r"copy_flat\(rows\d+, 0, ", compiled.module_source)) == 1
    assert not re.search(r"copy_flat\(t\d+, 0, ", compiled.module_source)
    xv = np.array([0.5, -1.0], np.float32)
    for n in (1, 7, 40):  # 40: past the first 16 rows
        assert_matches(run(compiled, xv, np.int32(n)), eager(fn, xv, np.int32(n)))


def test_lists_of_items_with_an_unknown_dimension_and_loops_over_them_compile(monkeypatch):
    """A list of lists: the outer list's rows have a size known only at run time (it
    started with rows of size 0, and wrote past them); a loop variable of such a shape
    keeps its history compiled."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def fn(x, n):
        outer = []
        for i in tf.range(3):
            inner = []
            for j in tf.range(n):
                inner.append(x * tf.cast(i + j, F32))
            outer.append(tf.stack(inner))
        z = tf.stack(outer)  # [3, None, 2]
        for _ in tf.range(2):
            z = tf.tanh(z)
        return tf.reduce_sum(z)

    def value_and_grad(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x, n)
        return y, tape.gradient(y, x)

    x = tf.constant([0.3, -0.2])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        for n in (1, 40):
            got = tf.function(value_and_grad)(x, tf.constant(n))
            want = value_and_grad(x, tf.constant(n))
            assert_matches([t.numpy() for t in got], [t.numpy() for t in want])


def test_a_dimension_unknown_while_tracing_broadcasts_when_it_is_one(monkeypatch):
    """[None] + [5]: TensorFlow broadcasts when the unknown size is 1 at run time, and
    raises for another size; the compiled loop and the gradient do the same."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def fn(x, n):
        outs = []
        for i in tf.range(n):
            outs.append(tf.reduce_sum(x) * tf.cast(i + 1, F32))
        return tf.stack(outs) + tf.range(5.0)

    def value_and_grad(x, n):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(fn(x, n) ** 2)
        return y, tape.gradient(y, x)

    x = tf.constant([1.0, 2.0])
    compiled = tf.function(value_and_grad)
    for n in (1, 5):
        assert_matches([t.numpy() for t in compiled(x, tf.constant(n))],
                       [t.numpy() for t in value_and_grad(x, tf.constant(n))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        compiled(x, tf.constant(2))



def test_two_dimensions_unknown_while_tracing_broadcast_a_one(monkeypatch):
    """x[a:b] * x[c:d]: both lengths are unknown while tracing; one of them may be 1
    when the function runs, which broadcasts (value and gradient), as in TensorFlow."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def value_and_grad(x, a, b, c, d):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum((x[a:b] * x[c:d]) ** 2)
        return y, tape.gradient(y, x)

    x = tf.range(1.0, 9.0)
    compiled = tf.function(value_and_grad)
    for bounds in ((0, 1, 4, 7), (2, 5, 7, 8), (1, 4, 4, 7)):
        args = [tf.constant(b) for b in bounds]
        assert_matches([t.numpy() for t in compiled(x, *args)],
                       [t.numpy() for t in value_and_grad(x, *args)])
    assert compiled.experimental_get_tracing_count() == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        compiled(x, *[tf.constant(b) for b in (0, 2, 4, 7)])

def test_reverse_loop_reads_stored_outputs_instead_of_recomputing_them():
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(y * x)),
                                 [tf.constant(0), x])
            loss = tf.reduce_sum(y * y)
        return loss, tape.gradient(loss, x)
    from tapeflow.graph import passes
    graph = trace(fn, ((4,), F32))
    forward, reverse = [n for n in graph.nodes if n.op.name == "While"]
    body_ops = [n.op.name for n in passes.optimize(reverse.attrs["body"]).nodes]
    # TanhGrad reads the stored tanh output: the body's Tanh (and its Mul) are dead.
    assert "TanhGrad" in body_ops and "Tanh" not in body_ops
    compiled = compile_graph(graph)
    xv = np.array([0.3, -1.0, 0.7, 2.0], np.float32)
    assert_matches(run(compiled, xv), eager(fn, xv))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_helper_matches_numpy(dtype):
    from tapeflow.backends.numba_cpu.kernels.gemm import gemm
    rng = np.random.default_rng(0)
    for (m, k, n) in [(3, 4, 5), (1, 7, 1), (0, 3, 2), (3, 0, 2), (2, 3, 0)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        for ta in (False, True):
            for tb in (False, True):
                left = np.ascontiguousarray(a.T) if ta else a
                right = np.ascontiguousarray(b.T) if tb else b
                got = gemm(left, right, ta, tb)
                assert got.dtype == dtype and got.shape == (m, n)
                np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
    strided = rng.standard_normal((6, 8)).astype(dtype)[::2, ::2]  # not contiguous
    np.testing.assert_allclose(gemm(strided, strided.T, False, False), strided @ strided.T,
                               rtol=1e-5, atol=1e-5)


def test_softmax_family_on_both_layouts_with_special_values():
    """Class axis last (a row per example: register accumulators) and in the middle
    (vectorized over the trailing axis): each agrees with the eager kernels, NaN, Inf and
    rows of equal values included."""
    def fn(x, labels, sparse):
        outs = []
        for axis in (-1, 1):
            outs += [tf.nn.softmax(x, axis), tf.nn.log_softmax(x, axis),
                     tf.nn.softmax_cross_entropy_with_logits(labels, x, axis=axis)]
        logits = tf.reshape(x, (12, 5))
        return outs + [tf.nn.sparse_softmax_cross_entropy_with_logits(sparse, logits)]
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, (3, 4, 5)).astype(np.float32)
    x[0, 1] = [np.nan, 0.0, 1.0, 2.0, 3.0]
    x[1, 2] = [np.inf, 0.0, 1.0, 2.0, 3.0]
    x[2, 3] = [-np.inf, 0.0, 1.0, 2.0, 3.0]
    x[2, 0] = 7.0  # every class equal
    x[1, :, 4] = [-1e4, 1e4, 0.0, 88.0]
    labels = rng.uniform(0, 1, (3, 4, 5)).astype(np.float32)
    sparse = rng.integers(0, 5, 12).astype(np.int32)
    compiled = compile_graph(trace(fn, ((3, 4, 5), F32), ((3, 4, 5), F32), ((12,), tf.int32)))
    assert_matches(run(compiled, x, labels, sparse), eager(fn, x, labels, sparse))


def test_compiled_calls_assign_variables_and_still_reach_tapes(monkeypatch):
    """A call with no tape, trace or vectorized walk to tell takes a shorter path: its
    variable assignments must still land, and a call under a tape must still be seen."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")
    v = tf.Variable(1.0)

    @tf.function
    def accumulate(x):
        v.assign_add(x)
        return v * x

    assert accumulate(tf.constant(2.0)).numpy() == 6.0
    assert accumulate(tf.constant(2.0)).numpy() == 10.0
    assert v.numpy() == 5.0
    assert accumulate.get_concrete_function(tf.constant(2.0)).wait_compiled()
    w = tf.Variable(3.0)

    @tf.function
    def f(x):
        return w * x * x

    x = tf.constant(2.0)
    assert f(x).numpy() == 12.0
    with tf.GradientTape() as tape:
        y = f(x)
    assert tape.gradient(y, w).numpy() == 4.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x).numpy() == 12.0


def test_fused_loops_write_over_dead_buffers_only():
    """A fused loop writes its output into an input buffer the kernel allocated when
    nothing reads that input afterwards: never over a value used later, returned, read
    again by the next loop iteration, or passed in by the caller."""
    def fn(x, w, w2, w3):
        dies = tf.tanh(x @ w)                       # written over x @ w
        m = x @ w2
        kept = tf.sigmoid(m) + m @ tf.transpose(w2) @ w2   # m is read after the loop
        returned = x @ w3
        _, h = tf.while_loop(lambda i, h: i < 3,
                             lambda i, h: (i + 1, tf.tanh(h @ w + 0.5)), (0, x))
        return [dies, kept, returned, tf.exp(returned), h, tf.nn.relu(x) * 2.0, x]
    rng = np.random.default_rng(4)
    args = [rng.standard_normal((5, 5)).astype(np.float32) * 0.5 for _ in range(4)]
    compiled = compile_graph(trace(fn, *[((5, 5), F32)] * 4))
    x_before = args[0].copy()
    assert_matches(run(compiled, *args), eager(fn, *args))
    np.testing.assert_array_equal(args[0], x_before)

    simple = compile_graph(trace(lambda x, w: tf.tanh(x @ w + 1.0), ((5, 5), F32),
                                 ((5, 5), F32)))
    assert "np.empty" not in simple.source  # the loop reused the product's buffer
    assert_matches(run(simple, *args[:2]), [np.tanh(args[0] @ args[1] + 1.0)])

    only_input = compile_graph(trace(lambda x: tf.tanh(x) * 2.0, ((5, 5), F32)))
    assert_matches(run(only_input, args[0]), [np.tanh(x_before) * 2.0])
    np.testing.assert_array_equal(args[0], x_before)  # the caller's array is not a buffer


def test_random_draws_inside_branches_and_loops_compile_and_match_the_numpy_tier():
    # The kernel draws them from one Generator per op and call (Numba's Generator draws
    # NumPy's numbers): the same numbers as the NumPy tier, step by step.
    def make():
        @tf.function
        def f(x, n):
            h, rows = x, []
            for _ in tf.range(n):
                h = tf.sin(h) * tf.random.uniform([3]) + 0.1 * tf.random.normal([3])
                picks = tf.random.uniform([2], maxval=5, dtype=tf.int32)
                order = tf.random.shuffle(tf.range(4))
                rows.append(tf.cast(tf.concat([picks, order], 0), tf.float32)
                            + 0.01 * tf.random.truncated_normal([6]))
            if tf.reduce_sum(h) > 0:
                h = h + tf.random.normal([3])
            return h, tf.stack(rows)
        return f

    results = {}
    old = settings.compile_mode
    try:
        for mode in ("off", "sync"):
            settings.compile_mode = mode
            f = make()
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)  # no NumPy-kernel fallback
                tf.random.set_seed(3)
                f(tf.constant([1.0, 2.0, 3.0]), tf.constant(4))  # traces (and draws)
                tf.random.set_seed(3)
                results[mode] = [f(tf.constant([1.0, 2.0, 3.0]), tf.constant(n))
                                 for n in (4, 0, 2)]
    finally:
        settings.compile_mode = old
        tf.random.set_seed(None)
    for interpreted, compiled in zip(results["off"], results["sync"]):
        for a, b in zip(interpreted, compiled):  # the same draws; sin may differ by an ulp
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert results["sync"][0][1].shape == (4, 6)


def test_checks_fail_through_helper_calls_not_raises_in_the_kernel():
    from tapeflow.backends.numba_cpu.raises import as_calls
    lines = ["    if (k < 0 or k >= x.shape[0]): raise IndexError(3, k, x.shape[0], 0)",
             "        if a != b: raise ValueError(code_base + 2)",
             "    if n: raise ValueError(7, (p * q), size(r, s))",
             "    y = x + 1"]
    assert as_calls(lines) == [
        "    if (k < 0 or k >= x.shape[0]): fail_index(np.int64(3), (np.int64(k), "
        "np.int64(x.shape[0]), np.int64(0), ))",
        "        if a != b: fail_value(np.int64(code_base + 2), ())",
        "    if n: fail_value(np.int64(7), (np.int64((p * q)), np.int64(size(r, s)), ))",
        "    y = x + 1"]


def test_a_kernel_numba_compiled_here_runs_through_its_entry_point(numba_dispatchers):
    # Not through the dispatcher, which types the arguments on each call (machine.py).
    def fn(x, i):
        return tf.reduce_sum(tf.tanh(x) * 2.0), tf.gather(x, i)
    compiled = compile_graph(trace(fn, ((5,), F32), ((2,), tf.int32)))
    (overload,) = compiled.dispatcher.overloads.values()
    # The kernel has no Python wrapper: the built-in function of its caller's calls it at
    # its address (kernel_caller.py).
    assert type(compiled._kernel.func).__name__ == "builtin_function_or_method"
    assert compiled._kernel.args == (
        overload.library.get_pointer_to_function(overload.fndesc.mangled_name),)
    xv = np.linspace(-2, 2, 5, dtype=np.float32)
    assert_matches(run(compiled, xv, np.array([4, 0], np.int32)),
                   eager(fn, xv, np.array([4, 0], np.int32)))
    # Its errors are translated as before; nothing was compiled again for them.
    with pytest.raises(InvalidArgumentError, match="GatherV2"):
        run(compiled, xv, np.array([7, 0], np.int32))
    assert len(compiled.dispatcher.overloads) == 1


def test_a_view_that_nothing_reads_is_dropped():
    # The loss per example that the cross-entropy's helper returns beside its gradient:
    # only the gradient is read, so its view is not made.
    @tf.function
    def grads(logits, labels):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, logits))
        return tape.gradient(loss, logits)

    logits = tf.constant(np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0]], np.float32))
    labels = tf.constant(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], np.float32))
    source = grads.get_concrete_function(logits, labels).kernel_source
    views = re.findall(r"^\s*(\w+) = (?:reshaped|flat_view|contiguous)\(", source, re.M)
    assert views and all(re.search(rf"\b{name}\b(?! =)", source.split(f"{name} =", 1)[1])
                         for name in views)
    p = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(grads(logits, labels).numpy(), (p - labels.numpy()) / 2,
                               rtol=1e-5)


def test_views_nothing_reads_go_and_so_do_the_views_only_they_read():
    from tapeflow.backends.numba_cpu.generator import without_dead_views
    lines = ["    t1 = blas_gemm(a, b)", "    t2 = reshaped(t1, (n,))", "    t3 = flat_view(t2)",
             "    t4 = contiguous(t1)", "    t5 = reshaped(t4, (m,))", "    t6 = flat_view(x)",
             "    t6 = flat_view(y)", "    t7 = empty_array((n,), np.float32)",
             "    return (t5,)"]
    # t3 is unread, and then t2; t6 is bound twice; t7 is not a view
    assert without_dead_views(lines) == [lines[k] for k in (0, 3, 4, 5, 6, 7, 8)]


def _leaky_relu_node(alpha, dtype):
    from types import SimpleNamespace

    from tapeflow.ops.nn import LEAKY_RELU
    x = SimpleNamespace(dtype=dtype)
    return SimpleNamespace(op=LEAKY_RELU, inputs=[x], outputs=[x], attrs={"alpha": alpha})


def test_an_elementwise_template_is_typed_apart_for_each_attr_value_and_dtype():
    """expand() types a template once per op, dtype and attrs: values that are equal as
    keys (0.0 and -0.0) but not as literals must not share one."""
    from tapeflow.backends.numba_cpu.templates import expand
    for alpha, dtype, literal in [(0.0, tf.float32, "np.float32(0.0)"),
                                  (-0.0, tf.float32, "np.float32(-0.0)"),
                                  (0.0, tf.float64, "np.float64(0.0)"),
                                  (0.25, tf.float32, "np.float32(0.25)"),
                                  (-0.0, tf.float32, "np.float32(-0.0)")]:
        zero = f"np.{dtype.name}(0.0)"
        assert expand(_leaky_relu_node(alpha, dtype), ["r1"], [None]) == \
            f"(r1 if r1 > {zero} else r1 * {literal})"


def test_graph_names_become_identifiers():
    from tapeflow.backends.numba_cpu.names import identifier
    assert [identifier(n) for n in ["dense/kernel:0", "_x_", "1abc", ":0", "a\u00b7b",
                                    "h\u00e9llo:12", "Add_3_s", "a b/c"]] == \
        ["dense_kernel", "x", "_1abc", "value", "a_b", "h\u00e9llo", "Add_3_s", "a_b_c"]
