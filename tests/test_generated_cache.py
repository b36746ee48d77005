"""A large graph's generated kernel kept by the graph itself
(backends/numba_cpu/generated_cache.py): a graph traced again is not generated again, and
runs and fails as the generated one did; a graph that differs in anything, its constants
included, is not taken for it; a damaged or foreign file is generated again."""

import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cache_store
from tapeflow.backends import compiler
from tapeflow.errors import InvalidArgumentError
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu import compile_graph, generated_cache, generator  # noqa: E402

STEPS = 4


def unrolled(xs, w, scale):
    h = tf.zeros((2, 3))
    for t in range(STEPS):
        h = tf.tanh(h @ w + xs[t][:, :3]) * scale
    return [tf.reduce_sum(h * h), h]


def trace(scale, fn=unrolled):
    g = Graph("g")
    with tracing(g):
        xs = g.placeholder((None, 2, 4), tf.float32)
        w = g.placeholder((3, 3), tf.float32)
        g.outputs = list(fn(xs, w, scale))
    return g


def inputs(rows=STEPS):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((rows, 2, 4)).astype(np.float32),
            rng.normal(0, 0.5, (3, 3)).astype(np.float32)]


def eager(scale, rows=STEPS):
    return [v.numpy() for v in unrolled(*[tf.constant(a) for a in inputs(rows)], scale)]


def kept_path(graph):
    found = generated_cache.key(compiler.optimize(graph))
    assert found is not None
    return generated_cache._path(found)


@pytest.fixture
def small_graphs_kept(monkeypatch):
    monkeypatch.setattr(generated_cache, "MIN_NODES", 1)


def not_generated(monkeypatch):
    def refuse(*args):
        raise AssertionError("generated again")
    monkeypatch.setattr(generator, "generate", refuse)


def test_a_graph_traced_again_is_not_generated_again(small_graphs_kept, monkeypatch):
    first = compile_graph(trace(2.0))
    assert os.path.exists(kept_path(trace(2.0)))
    with monkeypatch.context() as patched:
        not_generated(patched)
        again = compile_graph(trace(2.0))
    assert again.cache_key == first.cache_key
    assert again.source == first.source and again.module_source == first.module_source
    for got, want in zip(again(inputs(), [])[0], eager(2.0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Its errors name the node and line the generated kernel's named.
    messages = []
    for compiled in (first, again):
        with pytest.raises(InvalidArgumentError) as error:
            compiled(inputs(rows=2), [])
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "out of bounds" in messages[0]


def moved(xs, w, scale):
    # unrolled's code on other lines (as in a script run from elsewhere, or a notebook
    # cell run again): the kernel and what is kept are the same; the lines shown differ.
    h = tf.zeros((2, 3))
    for t in range(STEPS):
        h = tf.tanh(h @ w + xs[t][:, :3]) * scale
    return [tf.reduce_sum(h * h), h]


def test_the_same_graph_from_other_lines_finds_it_and_shows_its_own_lines(
        small_graphs_kept, monkeypatch):
    first = compile_graph(trace(4.0))
    assert kept_path(trace(4.0, moved)) == kept_path(trace(4.0))
    with monkeypatch.context() as patched:
        not_generated(patched)
        again = compile_graph(trace(4.0, moved))
    assert again.cache_key == first.cache_key
    line = moved.__code__.co_firstlineno + 5  # its tanh
    assert f":{line}: h = tf.tanh(" in again.source and f":{line}: " not in first.source
    with pytest.raises(InvalidArgumentError, match=f"test_generated_cache.py:{line}"):
        again(inputs(rows=2), [])


def test_other_constants_are_never_taken_from_another_graph(small_graphs_kept):
    doubled = compile_graph(trace(2.0))
    tripled = compile_graph(trace(3.0))
    # One kernel (constants are its arguments), two kept generations.
    assert tripled.cache_key == doubled.cache_key
    assert kept_path(trace(2.0)) != kept_path(trace(3.0))
    for scale, compiled in ((2.0, doubled), (3.0, tripled)):
        for got, want in zip(compiled(inputs(), [])[0], eager(scale), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_damaged_or_foreign_file_is_generated_again(small_graphs_kept, monkeypatch):
    compiled = compile_graph(trace(5.0))
    path = kept_path(trace(5.0))
    with open(path, "r+b") as file:  # damaged: its signature no longer matches
        file.seek(40)
        file.write(b"\x00\x01")
    monkeypatch.setattr(cache_store, "_damage_reported", False)  # warned once a process
    with pytest.warns(RuntimeWarning, match="damaged or unverifiable file"):
        again = compile_graph(trace(5.0))
    assert again.cache_key == compiled.cache_key
    # Signed, but its source is not the one its digest names: refused too.
    body = cache_store.read_signed(path)
    assert body is not None  # written again
    cache_store.write_signed(path, body.replace(b"W[0] = ", b"W[0]  = ", 1))
    generated = []
    generate = generator.generate
    monkeypatch.setattr(generator, "generate", lambda *a: generated.append(1) or generate(*a))
    for got, want in zip(compile_graph(trace(5.0))(inputs(), [])[0], eager(5.0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert generated


def test_a_kept_parameter_that_refers_to_nothing_is_generated_again(small_graphs_kept):
    import json
    compile_graph(trace(6.0))
    path = kept_path(trace(6.0))
    kept = json.loads(cache_store.read_signed(path))
    inputs_ = [p for p in kept["params"] if p[1] == "input"]
    inputs_[0][2] = 7  # signed, but the graph has two inputs
    cache_store.write_signed(path, json.dumps(kept).encode())
    generated = []
    generate = generator.generate

    def counting(*args):
        generated.append(1)
        return generate(*args)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(generator, "generate", counting)
        compiled = compile_graph(trace(6.0))
    assert generated
    for got, want in zip(compiled(inputs(), [])[0], eager(6.0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_graphs_with_random_draws_are_generated_each_time(small_graphs_kept):
    def noisy(xs, w, scale):
        h = tf.zeros((2, 3))
        for t in range(STEPS):
            h = tf.tanh(h @ w + xs[t][:, :3] + tf.random.uniform((2, 3)) * scale)
        return [tf.reduce_sum(h)]
    compile_graph(trace(1.0, noisy))
    found = generated_cache.key(compiler.optimize(trace(1.0, noisy)))
    assert found is None or not os.path.exists(generated_cache._path(found))


def test_small_graphs_are_not_kept():
    assert generated_cache.key(compiler.optimize(trace(2.0))) is None


def test_a_function_with_variables_runs_from_what_was_kept(small_graphs_kept, monkeypatch):
    from tapeflow.config import settings
    monkeypatch.setattr(settings, "compile_mode", "sync")
    w = tf.Variable(np.full((3, 3), 0.1, np.float32))
    total = tf.Variable(np.zeros((), np.float32))

    def step(x):
        h = tf.zeros((2, 3))
        for t in range(STEPS):
            h = tf.tanh(h @ w + x[t][:, :3])
            total.assign_add(tf.reduce_sum(h))
        w.assign(w * 0.5)
        return h

    x = tf.constant(inputs()[0])
    first = tf.function(step)(x).numpy()
    after_first = w.numpy(), total.numpy()
    compiled = tf.function(step)
    with monkeypatch.context() as patched:
        not_generated(patched)
        again = compiled(x).numpy()
    assert compiled.get_concrete_function(x)._compilation.kernel is not None
    assigned = w.numpy(), total.numpy()
    # Eagerly from the same variables: the same result and the same assignments.
    w.assign(after_first[0])
    total.assign(after_first[1])
    want = step(x).numpy()
    np.testing.assert_allclose(again, want, rtol=1e-6)
    np.testing.assert_allclose(assigned[0], w.numpy(), rtol=1e-6)
    np.testing.assert_allclose(assigned[1], total.numpy(), rtol=1e-6)
    assert not np.allclose(first, again)
