"""Every op with a compiled lowering: eager vs compiled, forward, gradient and vectorized
jacobian, on the op's samples (a float64 case also runs in float32, where the polynomial
helpers matter, and a complex128 one in complex64).

Numba compiles are slow, so each op compiles once: its cases (several shapes and dtypes)
and their gradients are traced into one graph. Every op of the table has a lowering.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing
from tapeflow.ops import random as tf_random
from tapeflow.ops.registry import OPS, bind
from tests.op_samples import SAMPLES
from tests.op_samples.common import (
    TOLERANCE,
    as_outputs,
    draw_case,
    dtype_of,
    forget_state,
    random_like,
    sampled_ops,
    with_float_dtype,
    wrt_indices,
)

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu import compile_graph

# Every op of the table has a lowering (tests/test_lowerings.py checks it).
COMPILED = sampled_ops()
CASES_PER_OP = 3


def _weights(outputs, rng):
    return [random_like(rng, np.empty(o._shape, o.dtype._np)).astype(o.dtype._np)
            if o.dtype.is_differentiable else None for o in outputs]


def _apply(op, case, tensors, weights_rng, jacobian):
    """(outputs, gradients) of `op` on `tensors`, with a tape for the float inputs; with
    `jacobian`, the gradients end with the first float output's jacobians."""
    wrt = [i for i in wrt_indices(case) if case.inputs[i].dtype.kind in "fc"] \
        if op.differentiable else []
    sources = [tensors[i] for i in wrt]
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        outputs = as_outputs(op, bind(op, tensors, case.attrs))
    grads = []
    if sources:
        weights = _weights(outputs, weights_rng)
        seeds = [None if w is None else tf.constant(w) for w in weights]
        if any(s is not None for s in seeds):
            grads = [g for g in tape.gradient(
                [o for o, s in zip(outputs, seeds) if s is not None], sources,
                output_gradients=[s for s in seeds if s is not None]) if g is not None]
            # The vectorized jacobian of the first float output: the batched forms of
            # the gradient rule's ops, compiled.
            target = next(o for o, s in zip(outputs, seeds) if s is not None)
            if jacobian and int(np.prod(target._shape)):
                grads += [j for j in tape.jacobian(target, sources) if j is not None]
    return list(outputs), grads


def _cases(data, name):
    cases = []
    # An op that takes complex numbers too compiles one complex case at least.
    complex_too = hasattr(SAMPLES[name], "complex_cases")
    twinned = set()
    for k in range(CASES_PER_OP):
        case = draw_case(data, name, complex_only=complex_too and k == 0)
        cases.append(case)
        # One single-precision twin per op (one real, one complex) reaches its float32
        # helpers; more would grow the kernel, whose compile is most of this file's time,
        # without reaching other code.
        doubles = {a.dtype.kind for a in case.inputs if a.dtype in (np.float64, np.complex128)}
        if doubles and not doubles <= twinned:
            cases.append(with_float_dtype(case, np.float32))
            twinned |= doubles
    return cases


def _jacobian_cases(cases):
    """Whether each case compiles its jacobian too: the first case of each set of float
    dtypes does (float64 and float32, complex128 and complex64). The jacobian's batched
    ops are ops of the table, each compiled in its own test, and their batching is
    checked on many more cases eagerly (test_op_jacobians.py); every case's jacobian
    would double the kernel."""
    flags, seen = [], set()
    for case in cases:
        dtypes = frozenset(a.dtype for a in case.inputs if a.dtype.kind in "fc")
        flags.append(dtypes not in seen)
        seen.add(dtypes)
    return flags


def _reset_random(cases):
    """Random ops draw with a fresh counter per run (per seed pair): restart each pair's
    counter at its first case's, so that eager and compiled runs draw the same numbers."""
    for case in reversed(cases):
        a = case.attrs
        if "seed" in a and "counter" in a:
            tf_random._STATE.counters[(a["seed"], a["seed2"])] = a["counter"]


def _with_next_counter(case):
    a = case.attrs
    if "seed" not in a or "counter" not in a:
        return case
    attrs = dict(a, counter=tf_random.next_counter(a["seed"], a["seed2"]))
    return type(case)(case.inputs, attrs, case.wrt)


def _compare(name, what, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{name} {what}: compiled {got.dtype}, eager {want.dtype}"
    assert got.shape == want.shape, f"{name} {what}: compiled {got.shape}, eager {want.shape}"
    if want.dtype.kind in "fc":
        tol = TOLERANCE[np.finfo(want.dtype).dtype.name]
        finite = want[np.isfinite(want)]
        scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
        np.testing.assert_allclose(got, want, rtol=tol["rtol"], atol=tol["atol"] * scale,
                                   equal_nan=True, err_msg=f"{name} {what}")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {what}")


@pytest.mark.parametrize("name", COMPILED)
@settings(max_examples=1)
@given(data=st.data())
def test_compiled_matches_eager(name, data):
    op = OPS[name]
    cases = _cases(data, name)
    seed = data.draw(st.integers(0, 2**32 - 1), label="weights seed")
    graph = Graph(name)
    jacobians = _jacobian_cases(cases)
    feeds, expected, what = [], [], []
    with tracing(graph):
        rng = np.random.default_rng(seed)
        for k, (case, jacobian) in enumerate(zip(cases, jacobians)):
            placeholders = [graph.placeholder(a.shape, dtype_of(a)) for a in case.inputs]
            feeds += case.inputs
            outputs, grads = _apply(op, case, placeholders, rng, jacobian)
            graph.outputs += outputs + grads
            what += [f"case {k} output {j}" for j in range(len(outputs))]
            what += [f"case {k} gradient {j}" for j in range(len(grads))]
    rng = np.random.default_rng(seed)
    _reset_random(cases)
    forget_state(op)
    for case, jacobian in zip(cases, jacobians):
        case = _with_next_counter(case) if op.stateful else case
        outputs, grads = _apply(op, case, [tf.constant(a) for a in case.inputs], rng,
                                jacobian)
        expected += [t.numpy() for t in outputs + grads]
    compiled = compile_graph(graph)
    _reset_random(cases)
    forget_state(op)
    got, _ = compiled(feeds, [])
    assert len(got) == len(expected)
    for w, g, e in zip(what, got, expected):
        _compare(name, w, g, e)
