"""Vectorized jacobians, generated from the op table: for every differentiable op, the
one-pass jacobian (a Batched stack of cotangents through the gradient rules) equals the
per-row loop and finite differences; for every smooth op, so does the jacobian of its
gradient (nested tapes), which runs the batching rules of the gradient rules' own ops."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.autodiff.jacobian import _vectorized_jacobian
from tapeflow.ops import batch_rules  # noqa: F401  (attaches the rules to the table)
from tapeflow.ops.batching import Batched, NotBatchable, NoVectorizedForm, vectorized
from tapeflow.ops.registry import OPS, bind
from tests.op_samples.common import (
    FINITE_DIFFERENCE,
    TOLERANCE,
    as_outputs,
    differentiable_ops,
    directions as perturbations,
    draw_case,
    draw_rng,
    nonempty_wrt,
    random_like,
    sampled_ops,
    smooth_ops,
)

DIFFERENTIABLE = differentiable_ops()
SMOOTH = smooth_ops()


def test_every_op_has_a_batching_rule_or_a_reason():
    missing = [name for name, op in OPS.items()
               if op.batch is None and not op.elementwise and op.reduction is None]
    assert not missing, (f"ops without a batching rule (add one, or a NoVectorizedForm "
                         f"saying why): {missing}")


def _has_no_vectorized_form(op):
    return isinstance(op.batch, NoVectorizedForm)


def _sources(case):
    wrt = nonempty_wrt(case)
    tensors = [tf.constant(a) for a in case.inputs]
    return wrt, tensors, [tensors[i] for i in wrt]


def _float_outputs(outputs, case):
    """The float or complex, nonempty outputs the case checks (Case.outputs)."""
    return [o for k, o in enumerate(outputs) if o.dtype.is_differentiable
            and int(np.prod(o.shape))
            and (case.outputs is None or k in case.outputs)]


def _compare(name, what, vectorized, looped, dtype):
    tol = TOLERANCE["float64" if dtype in (np.float64, np.complex128) else "float32"]
    for v, s in zip(vectorized, looped):
        if s is None:
            assert v is None, f"{name}: {what}: vectorized is not None where the loop is"
            continue
        assert v is not None, f"{name}: {what}: vectorized is None where the loop is not"
        assert tuple(v.shape) == tuple(s.shape), f"{name}: {what}: shape {v.shape} vs {s.shape}"
        scale = max(1.0, float(np.max(np.abs(s.numpy()), initial=0.0)))
        np.testing.assert_allclose(v.numpy(), s.numpy(), rtol=tol["rtol"],
                                   atol=tol["atol"] * scale, err_msg=f"{name}: {what}")


def _vectorized(tape, target, sources, name):
    """The one-pass jacobian, called directly: NotBatchable fails the test instead of
    quietly falling back to the loop (except for ops without a vectorized form, whose
    jacobian is the loop's, through the public API)."""
    from tapeflow.ops.shape import reshape
    if _has_no_vectorized_form(OPS[name]):
        return tape.jacobian(target, sources)
    stacks = _vectorized_jacobian(tape, target, [s._id for s in sources], None)
    return [None if st_ is None else reshape(st_, tuple(target.shape) + tuple(s.shape))
            for st_, s in zip(stacks, sources)]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@given(data=st.data())
def test_jacobian_matches_loop_and_finite_differences(name, data):
    op = OPS[name]
    case = draw_case(data, name)
    wrt, tensors, sources = _sources(case)
    if not wrt:
        return
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(sources)
        outputs = as_outputs(op, bind(op, tensors, case.attrs))
    rng = draw_rng(data)
    directions = perturbations(case, wrt, rng)
    for k, target in enumerate(_float_outputs(outputs, case)):
        vectorized = _vectorized(tape, target, sources, name)
        looped = tape.jacobian(target, sources, experimental_use_pfor=False)
        _compare(name, f"jacobian of output {k}", vectorized, looped, target.dtype._np)
        if target.dtype._np != np.float64 or any(case.inputs[i].dtype != np.float64
                                                 for i in wrt):
            continue
        # J @ v against the central difference of the output along v.
        rank = len(target.shape)
        jvp = sum(np.tensordot(np.zeros(target.shape) if j is None else j.numpy(), v,
                               axes=v.ndim) if v.ndim else (0 if j is None else j.numpy() * v)
                  for j, v in zip(vectorized, directions))
        row = FINITE_DIFFERENCE["float64"]
        eps = row["eps"]

        def output_at(step, k=k):
            arrays = list(case.inputs)
            for i, v in zip(wrt, directions):
                arrays[i] = arrays[i] + step * v
            with np.errstate(all="ignore"):
                outs = as_outputs(op, op.eager(*arrays, **case.attrs))
            return np.asarray([o for o in outs if np.asarray(o).dtype.kind == "f"
                               and np.asarray(o).size][k], np.float64)

        numeric = (output_at(eps) - output_at(-eps)) / (2 * eps)
        assert np.shape(jvp) == numeric.shape or rank == 0
        np.testing.assert_allclose(jvp, numeric, rtol=row["rtol"] * 10,
                                   atol=row["atol"] * 10 * max(1.0, np.abs(numeric).max()),
                                   err_msg=f"{name}: jacobian @ v vs finite differences")


@pytest.mark.parametrize("name", SMOOTH)
@given(data=st.data())
def test_jacobian_of_gradient_matches_loop(name, data):
    op = OPS[name]
    case = draw_case(data, name)
    wrt, tensors, sources = _sources(case)
    if not wrt:
        return
    rng = draw_rng(data)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(sources)
        with tf.GradientTape() as inner:
            inner.watch(sources)
            outputs = as_outputs(op, bind(op, tensors, case.attrs))
        weights = [tf.constant(random_like(rng, o.numpy()).astype(o.dtype._np))
                   if o.dtype.is_differentiable else None for o in outputs]
        grads = inner.gradient(outputs, sources, output_gradients=weights)
    for k, g in enumerate(grads):
        if g is None or not int(np.prod(g.shape)):
            continue
        vectorized = _vectorized(outer, g, sources, name)
        looped = outer.jacobian(g, sources, experimental_use_pfor=False)
        _compare(name, f"jacobian of the gradient for input {wrt[k]}", vectorized, looped,
                 g.dtype._np)


# -- beyond single ops: control flow, functions, fallbacks ---------------------------------

@pytest.fixture
def no_loop(monkeypatch):
    """Fails the test if a jacobian falls back to the per-row loop."""
    from tapeflow.autodiff import jacobian

    def refuse(*args, **kwargs):
        raise AssertionError("the jacobian fell back to the per-row loop")
    monkeypatch.setattr(jacobian, "_sequential_jacobian", refuse)
    monkeypatch.setattr(jacobian, "_sequential_batch_jacobian", refuse)


def _rnn_jacobian(x, w, n, pfor=True):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        h = x
        for _ in tf.range(n):
            h = tf.tanh(tf.linalg.matvec(w, h) + x)
        z = tf.cond(tf.reduce_sum(x) > 0, lambda: h * 2.0, lambda: h * 3.0)
    return tape.jacobian(z, [x, w], experimental_use_pfor=pfor)


def _rnn_hessian(x, w, n, pfor=True):
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            h = x
            for _ in tf.range(n):
                h = tf.tanh(tf.linalg.matvec(w, h) + x)
            s = tf.reduce_sum(h * h)
        g = inner.gradient(s, x)
    return outer.jacobian(g, x, experimental_use_pfor=pfor)


def _rnn_inputs():
    rng = np.random.default_rng(0)
    return (tf.constant(rng.standard_normal(3).astype(np.float32)),
            tf.constant(0.5 * rng.standard_normal((3, 3)).astype(np.float32)),
            tf.constant(4))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("fn", [_rnn_jacobian, _rnn_hessian], ids=["jacobian", "hessian"])
def test_jacobian_through_while_loop_and_cond_is_vectorized(fn, compiled, monkeypatch):
    x, w, n = _rnn_inputs()
    looped = tf.nest.flatten(fn(x, w, n, pfor=False))
    run = tf.function(fn) if compiled else fn
    from tapeflow.autodiff import jacobian
    monkeypatch.setattr(jacobian, "_sequential_jacobian", None)  # a fallback would fail
    vectorized = tf.nest.flatten(run(x, w, n))
    for v, s in zip(vectorized, looped):
        np.testing.assert_allclose(v.numpy(), s.numpy(), rtol=1e-5, atol=1e-6)
    if compiled:
        graph = run.get_concrete_function(x, w, n).graph
        assert "While" in [node.op.name for node in graph.nodes]  # not unrolled


def test_parallel_iterations_bounds_rows_per_pass(no_loop):
    x = tf.constant(np.linspace(-1, 1, 7), dtype=tf.float64)
    w = tf.constant(np.arange(21.0).reshape(7, 3) / 10)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(tf.linalg.matvec(w, x[:3])) * tf.reduce_sum(x)
    whole = tape.jacobian(y, x)
    for rows in (1, 2, 3, 7, 100):
        np.testing.assert_allclose(tape.jacobian(y, x, parallel_iterations=rows).numpy(),
                                   whole.numpy(), rtol=1e-12)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_batch_jacobian_is_vectorized_and_chunks(no_loop, transpose_b):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((5, 4)))
    w = tf.constant(rng.standard_normal((4, 3)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if transpose_b:
            y = tf.tanh(tf.matmul(x, tf.transpose(w), transpose_b=True))
        else:
            y = tf.tanh(x @ w)
    expected = (1 - y.numpy() ** 2)[:, :, None] * w.numpy().T[None]
    np.testing.assert_allclose(tape.batch_jacobian(y, x).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tape.batch_jacobian(y, x, parallel_iterations=2).numpy(),
                               expected, rtol=1e-12)


def test_jacobian_of_a_function_call_runs_its_vectorized_trace(no_loop):
    @tf.function
    def f(x):
        return tf.exp(x) * tf.reduce_sum(x)

    x = tf.constant([0.1, 0.2, 0.3], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    e, s = np.exp(x.numpy()), x.numpy().sum()
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(),
                               np.diag(e * s) + e[:, None], rtol=1e-12)


def test_gradient_that_reads_numpy_falls_back_to_the_loop():
    @tf.custom_gradient
    def square(x):
        def grad(dy):
            return tf.constant(2.0 * x.numpy() * dy.numpy())  # NumPy: no batched form
        return x * x, grad

    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = square(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0, 6.0]))


def _example(array, k, rng):
    """Example k of a stack: the sample itself, then its elements shuffled."""
    if k == 0 or array.size < 2:
        return array
    return rng.permutation(array.ravel()).reshape(array.shape)


@pytest.mark.parametrize("name", sampled_ops(lambda op: not _has_no_vectorized_form(op)))
@given(data=st.data())
def test_batching_rule_runs_each_example(name, data):
    """The op on a stack of 2 examples (some float inputs Batched, the others shared) by
    its batching rule equals the op run on each example: every rule runs here, also
    those no gradient rule reaches (L2Loss on a stack, a reduction's default rule)."""
    op = OPS[name]
    case = draw_case(data, name)
    floats = [i for i, a in enumerate(case.inputs) if a.dtype.kind in "fc"]
    if not floats:  # a vectorized walk stacks cotangents only
        return
    rng = draw_rng(data)
    stacked = [i in floats and data.draw(st.booleans(), label=f"input {i} batched")
               for i in range(len(case.inputs))]
    stacked[floats[0]] = stacked[floats[0]] or not any(stacked)
    examples = [[_example(a, k, rng) if s else a for a, s in zip(case.inputs, stacked)]
                for k in range(2)]
    inputs = [Batched(tf.constant(np.stack([e[i] for e in examples]))) if s
              else tf.constant(a) for i, (a, s) in enumerate(zip(case.inputs, stacked))]
    try:
        with vectorized():
            outputs = as_outputs(op, bind(op, inputs, case.attrs))
    except NotBatchable:
        # A rule may refuse to stack some inputs (PadV2's constant_values): the jacobian
        # then runs its per-row loop. Every rule stacks the first float input alone.
        assert stacked != [i == floats[0] for i in range(len(stacked))], (
            f"{name}: the batching rule refused to stack input {floats[0]} alone")
        return
    tol = TOLERANCE["float64"]
    for k, example in enumerate(examples):
        with np.errstate(all="ignore"):
            expected = as_outputs(op, op.eager(*example, **case.attrs))
        for out, want in zip(outputs, expected):
            got = out.inner.numpy()[k] if type(out) is Batched else out.numpy()
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol["rtol"],
                                       atol=tol["atol"], err_msg=f"{name}: example {k}")
