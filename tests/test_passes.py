"""Graph passes: each preserves values (checked with the interpreter-free eager kernels)
and keeps the IR valid (the verifier runs after every pass)."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.graph import passes
from tapeflow.graph.ir import Graph, Node
from tapeflow.graph.trace import tracing
from tapeflow.ops.structural import CALL
from tapeflow.tensor import Symbolic


def trace(fn, *specs, variables=()):
    g = Graph("g")
    with tracing(g):
        xs = [g.placeholder(shape, dtype) for shape, dtype in specs]
        out = fn(*xs)
        g.outputs = list(out) if isinstance(out, (list, tuple)) else [out]
    return g


def ops(graph):
    return [n.op.name for n in graph.nodes]


def evaluate(graph, inputs):
    """Runs a graph of op-table nodes with the eager kernels (a tiny interpreter)."""
    env = {id(x): np.asarray(a) for x, a in zip(graph.inputs, inputs)}

    def value(x):
        return env[id(x)] if isinstance(x, Symbolic) else np.asarray(x._value)

    for node in graph.nodes:
        result = node.op.eager(*[value(x) for x in node.inputs], **node.attrs)
        results = [result] if node.op.n_out == 1 else list(result)
        for y, r in zip(node.outputs, results):
            env[id(y)] = np.asarray(r)
    return [value(x) for x in graph.outputs]


def check_pass(graph, p, inputs):
    passes.verify(graph)
    new = p(graph)
    passes.verify(new)
    for a, b in zip(evaluate(graph, inputs), evaluate(new, inputs)):
        np.testing.assert_array_equal(a, b)
    return new


F32 = tf.float32


def test_verify_accepts_traced_graphs_and_rejects_use_before_definition():
    g = trace(lambda x: tf.exp(x) * 2.0, ((3,), F32))
    passes.verify(g)
    bad = passes._copy(g, list(reversed(g.nodes)))
    with pytest.raises(passes.VerifyError, match="before it is defined"):
        passes.verify(bad)


def test_verify_rejects_wrong_avals():
    g = trace(lambda x: tf.exp(x), ((3,), F32))
    y = g.nodes[0].outputs[0]
    y._shape = (4,)
    with pytest.raises(passes.VerifyError, match="infer says"):
        passes.verify(g)


def test_dce_drops_dead_nodes_and_keeps_random_draws():
    def fn(x):
        tf.exp(x)  # dead
        tf.random.normal([2], seed=1)  # dead, but a draw: kept
        return tf.math.sin(x)
    g = trace(fn, ((3,), F32))
    new = passes.dce(g)
    passes.verify(new)
    assert "Exp" not in ops(new)
    assert "RandomStandardNormal" in ops(new)
    assert "Sin" in ops(new)
    assert len(g.nodes) > len(new.nodes)  # the original is untouched


def test_dce_keeps_assignments():
    v = tf.Variable([1.0, 2.0])
    g = Graph("g")
    with tracing(g):
        x = g.placeholder((2,), F32)
        v.assign(x * 2.0)
        g.outputs = [x]
    new = passes.dce(g)
    passes.verify(new)
    assert "AssignVariableOp" in ops(new) and "Mul" in ops(new)


def test_cse_merges_equal_nodes_but_not_random_ones():
    def fn(x):
        a = tf.exp(x) * 2.0
        b = tf.exp(x) * 2.0
        r1 = tf.random.uniform([3], seed=3)
        r2 = tf.random.uniform([3], seed=3)
        return a + b, r1, r2
    g = trace(fn, ((3,), F32))
    new = passes.cse(g)
    passes.verify(new)
    assert ops(new).count("Exp") == 1 and ops(new).count("Mul") == 1
    assert ops(new).count("RandomUniform") == 2
    x = np.array([0.5, 1.0, 2.0], np.float32)
    a, b = evaluate(g, [x])[0], evaluate(new, [x])[0]
    np.testing.assert_array_equal(a, b)


def test_cse_merges_variable_reads_only_between_assignments():
    v = tf.Variable([1.0, 2.0])
    g = Graph("g")
    with tracing(g):
        x = g.placeholder((2,), F32)
        a = v.read_value() + x
        b = v.read_value() + x  # same read: merged
        v.assign(x)
        c = v.read_value() + x  # after an assignment: the value assigned, x + x
        g.outputs = [a, b, c]
    new = passes.cse(g)
    passes.verify(new)
    assert ops(new) == ["ReadVariableOp", "AddV2", "AssignVariableOp", "AddV2"]
    assert new.nodes[-1].inputs == (x, x)


def test_fold_constants_runs_eager_kernels_and_static_shapes():
    def fn(x):
        s = tf.shape(x)              # static shape: a constant
        n = tf.cast(tf.size(x), F32)
        return tf.cast(s, F32) * n, x / n
    g = trace(fn, ((2, 3), F32))
    new = check_pass(g, passes.fold_constants, [np.ones((2, 3), np.float32)])
    assert "Shape" not in ops(new) and "Size" not in ops(new) and "Cast" not in ops(new)
    assert not isinstance(new.outputs[0], Symbolic)  # fully folded
    np.testing.assert_array_equal(new.outputs[0].numpy(), [12.0, 18.0])


def test_fold_constants_never_folds_random_ops():
    g = Graph("g")
    with tracing(g):
        g.outputs = [tf.random.normal([2], seed=1) * 2.0]
    new = passes.fold_constants(g)
    passes.verify(new)
    assert ops(new) == ["RandomStandardNormal", "Mul"]


def test_inline_calls_splices_the_callee():
    callee = trace(lambda x: tf.exp(x) + 1.0, ((3,), F32))
    call = CALL.specialized(args=("x0",), n_out=1)
    g = Graph("outer")
    with tracing(g):
        x = g.placeholder((3,), F32)
        y = g._symbolic((3,), F32, "call")
        g.nodes.append(Node(call, (x,), {"graph": callee}, [y], None))
        (z,) = g.add_node(_op("Sin"), [y], {}, [((3,), F32)], None)
        g.outputs = [z]
    new = passes.inline_calls(g)
    passes.verify(new)
    assert ops(new) == ["Exp", "AddV2", "Sin"]
    x = np.array([0.0, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(evaluate(new, [x])[0], np.sin(np.exp(x) + 1), rtol=1e-6)


def _op(name):
    from tapeflow.ops.registry import OPS
    return OPS[name]


def test_optimize_verifies_after_each_pass():
    def fn(x, y):
        a = tf.exp(x) * tf.cast(tf.size(y), F32)
        b = tf.exp(x) * tf.cast(tf.size(y), F32)
        tf.tanh(y)  # dead
        return a - b + y
    g = trace(fn, ((4,), F32), ((4,), F32))
    new = passes.optimize(g, check=True)
    assert ops(new) == ["Exp", "Mul", "Sub", "AddV2"]
    x = np.linspace(-1, 1, 4).astype(np.float32)
    np.testing.assert_array_equal(evaluate(new, [x, x])[0], evaluate(g, [x, x])[0])


# -- fusion plan --------------------------------------------------------------------------

def _fusible(node):
    from tapeflow.backends.numba_cpu.generator import fusible
    return fusible(node)


def plan(graph):
    return passes.fusion_plan(graph, _fusible)


def describe(items):
    return [repr(i) if isinstance(i, passes.Group) else i.op.name for i in items]


def test_chain_and_its_reduction_fuse_into_one_group():
    g = trace(lambda x: tf.reduce_sum(tf.math.sin(x) * tf.exp(-x * x) + tf.tanh(x) * x),
              ((8,), F32))
    items = plan(g)
    assert len(items) == 1
    (group,) = items
    assert [n.op.name for n in group.reductions] == ["Sum"]
    assert len(group.nodes) == 8


def test_a_node_that_needs_a_reduction_starts_a_new_group():
    def fn(x):
        m = tf.reduce_max(x, axis=1, keepdims=True)
        return tf.exp(x - m)
    items = plan(trace(fn, ((2, 3), F32)))
    assert describe(items) == ["Group([2, 3]: Max*)", "Group([2, 3]: Sub Exp)"]


def test_groups_never_move_a_node_before_its_inputs():
    def fn(x, w):
        a = tf.exp(x)            # group 1 starts here
        b = tf.matmul(a, w)      # not fusible: needs a
        return a * 2.0, tf.tanh(b) + 1.0   # tanh(b) cannot join group 1 (b comes later)
    g = trace(fn, ((2, 2), F32), ((2, 2), F32))
    items = plan(g)
    assert describe(items) == ["Group([2, 2]: Exp Mul)", "MatMul",
                               "Group([2, 2]: Tanh AddV2)"]


def test_siblings_of_one_shape_share_a_loop():
    items = plan(trace(lambda x: (tf.math.sin(x), tf.math.cos(x)), ((5,), F32)))
    assert describe(items) == ["Group([5]: Sin Cos)"]


def test_an_update_that_reads_variables_after_assignments_is_one_loop():
    # Adam's shape: each variable's update reads variables after other assignments.
    m, q, p = (tf.Variable(tf.fill([4], value)) for value in (0.0, 1.0, 2.0))
    g = Graph("update")
    with tracing(g):
        grad = g.placeholder((4,), F32)
        m.assign(m.read_value() * 0.9 + grad)
        q.assign(q.read_value() + grad * grad)
        p.assign(p.read_value() - m.read_value() / (tf.sqrt(q.read_value()) + 1e-7))
        g.outputs = []
    items = plan(passes.optimize(g, check=True))
    assert [i for i in items if isinstance(i, passes.Group)] == [items[3]]
    assert describe(items)[:3] == ["ReadVariableOp"] * 3  # the first reads come first
    assert describe(items)[4:] == ["AssignVariableOp"] * 3


def test_such_an_update_compiles_to_the_values_of_numpy(monkeypatch):
    from tapeflow.config import settings
    monkeypatch.setattr(settings, "compile_mode", "sync")
    m, q, p = (tf.Variable(tf.fill([4], value)) for value in (0.0, 1.0, 2.0))

    @tf.function
    def update(grad):
        m.assign(m.read_value() * 0.9 + grad)
        q.assign(q.read_value() + grad * grad)
        p.assign(p.read_value() - m.read_value() / (tf.sqrt(q.read_value()) + 1e-7))
        return p.read_value() * 1.0

    want_m, want_q = np.zeros(4, np.float32), np.ones(4, np.float32)
    want_p = np.full(4, 2.0, np.float32)
    for step in range(3):
        grad = np.linspace(-1, 1, 4).astype(np.float32) * (step + 1)
        got = update(tf.constant(grad))
        want_m = want_m * np.float32(0.9) + grad
        want_q = want_q + grad * grad
        want_p = want_p - want_m / (np.sqrt(want_q) + np.float32(1e-7))
        np.testing.assert_allclose(got.numpy(), want_p, rtol=1e-6)
    assert update.get_concrete_function(tf.constant(grad)).wait_compiled()
    np.testing.assert_allclose(m.numpy(), want_m, rtol=1e-6)
    np.testing.assert_allclose(q.numpy(), want_q, rtol=1e-6)


def test_groups_are_capped():
    def fn(x):
        for _ in range(passes.MAX_FUSED + 10):
            x = x * 1.5
        return x
    items = plan(trace(fn, ((3,), F32)))
    assert [len(i) for i in items] == [passes.MAX_FUSED, 10]


def test_dce_drops_unneeded_loop_variables_and_branch_outputs_with_their_captures():
    from tapeflow.graph.execute import run_graph

    def fn(x, y, n):
        # acc: nothing needs its final value, and no other variable reads it.
        i, acc, h = tf.while_loop(lambda i, acc, h: i < n,
                                  lambda i, acc, h: (i + 1, acc + tf.exp(y), tf.sin(h)),
                                  [tf.constant(0), tf.zeros([3]), x])
        a, b = tf.cond(n > 2, lambda: (h * 2.0, tf.exp(y)), lambda: (h, y))
        return a
    g = trace(fn, ((3,), F32), ((3,), F32), ((), tf.int32))
    new = passes.dce(g)
    passes.verify(new)
    (loop,) = [node for node in new.nodes if node.op.name == "While"]
    (branch,) = [node for node in new.nodes if node.op.name == "If"]
    assert loop.attrs["n_vars"] == 2 and len(loop.outputs) == 5  # i, h, their histories, count
    assert len(branch.outputs) == 1
    y = new.inputs[1]
    assert all(x is not y for node in (loop, branch) for x in node.inputs)
    assert "Exp" not in [n.op.name for node in (loop, branch) for key in ("body", "then")
                         if key in node.attrs for n in node.attrs[key].nodes]
    for n in (0, 1, 4):
        inputs = [tf.constant([0.5, -1.0, 2.0]), tf.constant([1.0, 2.0, 3.0]), tf.constant(n)]
        want, _ = run_graph(g, inputs, [])
        got, _ = run_graph(new, inputs, [])
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy())
