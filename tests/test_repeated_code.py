"""Repeated code in a kernel (backends/numba_cpu/outline.py, rolling.py): the steps of a
Python loop unrolled at trace time are one function, compiled once, called from one loop
in the kernel; values and run-time errors are those of the unrolled code."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu import (compile_graph, generator, helper_symbols, loops,
                                         outline)
from tapeflow.backends import compiler

STEPS = 6


def rnn_gradient(xs, w, u):
    """A tanh RNN over xs[0..STEPS-1] and its gradient, the loop unrolled by Python."""
    with tf.GradientTape() as tape:
        tape.watch([w, u])
        h = tf.zeros((2, 3))
        for t in range(STEPS):
            h = tf.tanh(h @ w + xs[t] @ u)
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, [w, u])


def trace(fn, *specs):
    g = Graph("g")
    with tracing(g):
        xs = [g.placeholder(shape, dtype) for shape, dtype in specs]
        g.outputs = list(fn(*xs))
    return g


def data(rows):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((rows, 2, 4)).astype(np.float32),
            rng.normal(0, 0.5, (3, 3)).astype(np.float32),
            rng.normal(0, 0.5, (4, 3)).astype(np.float32))


SPECS = (((None, 2, 4), tf.float32), ((3, 3), tf.float32), ((4, 3), tf.float32))


def test_the_steps_of_an_unrolled_loop_compile_once_and_run_in_a_loop(numba_dispatchers):
    compiled = compile_graph(trace(rnn_gradient, *SPECS))
    module = compiled.dispatcher.py_func.__globals__
    steps = sorted(name for name in module if name.startswith("repeated_"))
    assert steps, compiled.source
    # Each function Numba compiled once, whatever the number of steps that call it, and
    # the kernel calls it by symbol: its code is not linked in and compiled again.
    assert all(len(module[name].signatures) == 1 for name in steps)
    cres, = compiled.dispatcher.overloads.values()
    called = {qualname for _, qualname, _ in helper_symbols.requirements(cres.library)}
    assert set(steps) <= called
    # The forward and the backward steps are each one loop of the kernel.
    kernel = compiled.source[compiled.source.index("def kernel("):]
    assert kernel.count(f"for step in range({STEPS - 1}):") >= 1
    assert kernel.count("for step in range(") >= 2
    inputs = data(STEPS)
    got, _ = compiled(list(inputs), [])
    want = rnn_gradient(*[tf.constant(a) for a in inputs])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    # A step's index check reports the step's own index, from inside the function.
    with pytest.raises(InvalidArgumentError, match="slice index 4 of dimension 0 out of bounds"):
        compiled(list(data(4)), [])


_IN_A_PROCESS = r'''
import json, sys
import numpy as np
import tapeflow as tf
tf.config.settings.compile_mode = "sync"
compiles = []
if sys.argv[1] == "count":
    from numba.core import event
    class Compiles(event.Listener):
        def on_start(self, ev):
            compiles.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", Compiles())
w = tf.constant(np.linspace(-0.5, 0.5, 9, dtype=np.float32).reshape(3, 3))
xs = tf.constant(np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 2, 4))

@tf.function
def f(xs, w):
    with tf.GradientTape() as tape:
        tape.watch(w)
        h = tf.zeros((2, 3))
        for t in range(6):
            h = tf.tanh(h @ w + xs[t][:, :3])
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, w)

print(json.dumps({"grad": f(xs, w).numpy().tolist(), "numba": "numba" in sys.modules,
                  "compiles": compiles}))
'''


def test_a_new_process_loads_the_kernel_and_its_repeated_code_without_compiling(tmp_path):
    import glob
    import json
    import os
    import subprocess
    import sys

    def run(mode):
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path))
        result = subprocess.run([sys.executable, "-c", _IN_A_PROCESS, mode], env=env,
                                capture_output=True, text=True, timeout=600, check=False)
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    first = run("count")
    assert any(name.startswith("repeated_") for name in first["compiles"])
    # From Numba's cache (its bundle removed): the kernel and its functions are loaded.
    for path in glob.glob(str(tmp_path / "__pycache__" / "*.native")):
        os.remove(path)
    again = run("count")
    assert again["compiles"] == [] and again["grad"] == first["grad"]
    # From the bundle Numba's load wrote again, without Numba.
    warm = run("plain")
    assert not warm["numba"] and warm["grad"] == first["grad"]


def test_a_cached_requirement_never_imports_a_kernel_module_from_sys_path(tmp_path, monkeypatch):
    # A cached kernel may require functions of its own module, which the process loaded
    # from the source it generated; a module of that name found on sys.path is not run.
    ran = tmp_path / "ran"
    (tmp_path / "tapeflow_kernel_planted.py").write_text(
        f"open({str(ran)!r}, 'w').close()\nrepeated_0 = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LookupError, match="not loaded"):
        helper_symbols.provide([("tapeflow_kernel_planted", "repeated_0", ())],
                               {"tapeflow_kernel_planted"})
    assert not ran.exists()


def _kernel_text(fn, *specs):
    cg, _, _ = generator.generate(compiler.optimize(trace(fn, *specs)), loops.emit_group)
    from tapeflow.backends.numba_cpu import assemble
    return assemble(cg)[0]


def test_a_step_repeated_twice_is_called_twice_and_code_without_repeats_is_unchanged():
    def alternating(x, w):
        for t in range(4):
            x = tf.tanh(x @ w) if t % 2 else tf.exp(-(x @ w))
        return [x]

    text = _kernel_text(alternating, ((5, 5), tf.float32), ((5, 5), tf.float32))
    # The two kinds of step alternate: their pair is one function, called twice; a loop
    # starts at three calls.
    assert text.count("def repeated_") == 1 and "for step in range(" not in text
    assert text.count("repeated_0(") == 3

    def once(x):
        return [tf.tanh(x) * 2.0]

    assert "repeated_" not in _kernel_text(once, ((5,), tf.float32))
    body = ["    W[0] = -1", "    W[0] = 0", "    t1 = x0 + 1", "    return (t1,)"]
    assert outline.outline(body, ["x0", "W"], {}) == (body, [])


def test_a_runs_shape_joined_from_its_blocks_is_the_shape_of_its_lines(monkeypatch):
    bodies = []
    real = outline.outline

    def capture(body, parameters, readable, **options):
        bodies.append((list(body), list(parameters)))
        return real(body, parameters, readable, **options)

    monkeypatch.setattr(outline, "outline", capture)
    _kernel_text(rnn_gradient, *SPECS)
    body, parameters = bodies[0]
    start, blocks, _ = outline._blocks(body)
    kernel_names = set(parameters) | outline._Block(start).stored
    for block in blocks:
        kernel_names |= block.stored
    shapes = [outline._Shape(block.lines, kernel_names) for block in blocks]
    wholes_by_joined = {}
    for length in (1, 2, 3, 4):
        for i in range(len(blocks) - length + 1):
            joined = outline._Joined(shapes[i:i + length])
            whole = outline._Shape([line for b in blocks[i:i + length] for line in b.lines],
                                   kernel_names)
            assert (joined.order, joined.ints, joined.bases, joined.stored) == (
                whole.order, whole.ints, whole.bases, whole.stored)
            wholes_by_joined.setdefault(joined.key, set()).add(whole.key)
    # Runs with one joined key have one text, and the unrolled steps do share keys.
    assert all(len(wholes) == 1 for wholes in wholes_by_joined.values())
    assert len(wholes_by_joined) < sum(len(blocks) - n + 1 for n in (1, 2, 3, 4))


def test_a_shapes_variables_are_named_v0_to_vn_whatever_was_asked_before():
    assert outline._renamed(3) == ("v0", "v1", "v2")
    assert outline._renamed(40) == tuple(f"v{k}" for k in range(40))
    assert outline._renamed(2) == ("v0", "v1")
    assert outline._renamed(0) == ()
