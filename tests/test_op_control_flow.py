"""The structural ops If and While, tested as the table's ops are, on the programs of
tests/op_samples/control.py: values against NumPy, gradients against float64 central
finite differences, compiled kernels against eager runs. Their nodes exist only in graphs,
so every sample is traced (tf.cond / tf.while_loop on a function's tensors)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.config import settings as tf_settings
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing
from tapeflow.ops.structural import STRUCTURAL_OPS
from tests.op_samples import STRUCTURAL_SAMPLES
from tests.op_samples.common import FINITE_DIFFERENCE, draw_rng, dtype_of
from tests.test_op_compiled import _compare
from tests.test_op_gradients import _assert_close

# The table's branches and loops: the structural entries that run sub-graphs of their own
# (a call's is inlined before anything runs it).
STRUCTURAL = sorted(name for name, op in STRUCTURAL_OPS.items()
                    if op.subgraphs and not op.inlined)


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    """Traced functions run on the NumPy interpreter (the compiled test compiles itself)."""
    monkeypatch.setattr(tf_settings, "compile_mode", "off")
    monkeypatch.setattr(tf_settings, "run_functions_eagerly", False)


def draw_program(data, name):
    return STRUCTURAL_SAMPLES[name](data.draw)


def apply_with_gradients(program, tensors, weights):
    """The program's outputs and the tape's gradients (eager on constants, or nodes when
    `tensors` are placeholders of a graph being traced). A None gradient counts as zeros:
    a loop's graph gradient is zeros where the eager tape, which saw no use, gives None."""
    sources = [tensors[i] for i in program.wrt]
    with tf.GradientTape() as tape:
        tape.watch(sources)
        outputs = program.build(*tensors)
    seeds = [tf.constant(w.astype(o.dtype._np)) for o, w in zip(outputs, weights)]
    grads = tape.gradient(outputs, sources, output_gradients=seeds)
    return list(outputs) + [tf.zeros_like(s) if g is None else g
                            for g, s in zip(grads, sources)]


def traced_gradient(program, weights):
    """A tf.function giving the gradients alone, with the tape inside the function (the
    node's gradient is then a graph of its own)."""
    return tf.function(
        lambda *tensors: apply_with_gradients(program, tensors, weights)[len(weights):])


def test_every_structural_op_has_a_sampler():
    assert sorted(STRUCTURAL_SAMPLES) == STRUCTURAL


@pytest.mark.parametrize("name", STRUCTURAL)
@given(data=st.data())
def test_value_matches_numpy(name, data):
    program = draw_program(data, name)
    tensors = [tf.constant(a) for a in program.inputs]
    function = tf.function(program.build)
    graph = function.get_concrete_function(*tensors).graph
    assert name in [node.op.name for node in graph.all_nodes()], program.name
    want = program.reference(*program.inputs)
    for what, got in (("traced", function(*tensors)), ("eager", program.build(*tensors))):
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            _compare(name, f"{program.name}: {what} output {k}", g.numpy(), np.asarray(w))


@pytest.mark.parametrize("name", STRUCTURAL)
@given(data=st.data())
def test_gradient_matches_finite_differences(name, data):
    program = draw_program(data, name)
    rng = draw_rng(data)
    weights = [rng.standard_normal(np.shape(o)) for o in program.reference(*program.inputs)]
    directions = [rng.standard_normal(program.inputs[i].shape) for i in program.wrt]
    grads = traced_gradient(program, weights)(*[tf.constant(a) for a in program.inputs])
    grads = [g.numpy() for g in grads]
    analytic = sum(float(np.sum(g * v)) for g, v in zip(grads, directions))
    scale = sum(float(np.sum(np.abs(g * v))) for g, v in zip(grads, directions))

    def objective(step):
        arrays = list(program.inputs)
        for i, v in zip(program.wrt, directions):
            arrays[i] = arrays[i] + step * v
        return sum(float(np.sum(w * o)) for w, o in zip(weights, program.reference(*arrays)))

    row = FINITE_DIFFERENCE["float64"]
    numeric = (objective(row["eps"]) - objective(-row["eps"])) / (2 * row["eps"])
    _assert_close(f"{name} ({program.name})", "first derivative along a random direction",
                  analytic, numeric, scale, row)


@pytest.mark.parametrize("name", STRUCTURAL)
@settings(max_examples=1)
@given(data=st.data())
def test_compiled_matches_eager(name, data):
    """Two programs, in float64 and float32, traced into one graph: one compile."""
    pytest.importorskip("numba")
    from tapeflow.backends.numba_cpu import compile_graph
    rng = draw_rng(data)
    programs = []
    for _ in range(2):
        program = draw_program(data, name)
        programs.append(program)
        narrow = [a.astype(np.float32) if a.dtype == np.float64 else a
                  for a in program.inputs]
        programs.append(type(program)(program.name + " in float32", narrow, program.build,
                                      program.reference, program.wrt))
    graph = Graph(name)
    feeds, expected, what = [], [], []
    for k, program in enumerate(programs):
        weights = [rng.standard_normal(np.shape(o)) for o in program.reference(*program.inputs)]
        with tracing(graph):
            placeholders = [graph.placeholder(a.shape, dtype_of(a)) for a in program.inputs]
            results = apply_with_gradients(program, placeholders, weights)
        graph.outputs += results
        feeds += program.inputs
        eager = apply_with_gradients(program, [tf.constant(a) for a in program.inputs], weights)
        assert len(eager) == len(results)
        expected += [t.numpy() for t in eager]
        what += [f"{program.name} (case {k}) result {j}" for j in range(len(results))]
    assert name in [node.op.name for node in graph.all_nodes()]
    got, _ = compile_graph(graph)(feeds, [])
    assert len(got) == len(expected)
    for w, g, e in zip(what, got, expected):
        _compare(name, w, g, e)
