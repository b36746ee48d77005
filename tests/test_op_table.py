"""The op table itself: every op has a sampler, every OpDef is complete, and every op a
gradient rule runs is registered and differentiable (so gradients of gradients work)."""

import contextlib
import string
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.ops import registry
from tapeflow.ops.registry import OPS, bind
from tests.op_samples import SAMPLES
from tests.op_samples.common import as_outputs, differentiable_ops, draw_case, wrt_indices

ALL_OPS = sorted(OPS)
DIFFERENTIABLE = differentiable_ops()

# Non-differentiable ops a gradient rule may run on float values: their derivative is
# zero wherever it exists (rounding) or they do not depend on input values at all
# (OneHot's floats depend on integer indices only).
ZERO_DERIVATIVE = {"ZerosLike", "OnesLike", "ConstFill", "Eye", "Range", "LinSpace",
                   "Floor", "Ceil", "Round", "FloorDiv", "Shape", "Size", "Rank", "OneHot"}


def test_every_op_has_a_sampler():
    missing = sorted(set(OPS) - set(SAMPLES))
    assert not missing, (
        f"ops without a sampler (add one to tests/op_samples/<module>.py SAMPLES, so the "
        f"generated tests cover them): {missing}")


def test_every_sampler_names_a_registered_op():
    unknown = sorted(set(SAMPLES) - set(OPS))
    assert not unknown, f"samplers for ops that are not in the op table: {unknown}"


def _emit_fields(template):
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def _names_output(save, n_out):
    if save == "out":
        return True
    index = save[3:]
    return save.startswith("out") and index.isdigit() and (n_out is None or int(index) < n_out)


@pytest.mark.parametrize("name", ALL_OPS)
def test_opdef_is_complete(name):
    op = OPS[name]
    assert op.name == name, f"registered as {name!r} but named {op.name!r}"
    assert isinstance(op.args, tuple) and all(isinstance(a, str) for a in op.args), op.args
    assert len(set(op.args)) == len(op.args), f"{name}: repeated arg names {op.args}"
    assert callable(op.infer), f"{name}: infer is not callable"
    assert callable(op.eager), f"{name}: eager is not callable"
    # A random op draws inside compiled loops by its emit template (the lowering the
    # plain draws share), unless the CPU backend has a lowering of its own for it (draws
    # that read tensors: gamma, poisson, the candidate samplers).
    template_draw = OPS["RandomStandardNormal"].lowerings.get("numba_cpu")
    if op.elementwise or (op.draw is not None
                          and op.lowerings.get("numba_cpu") in (None, template_draw)):
        assert isinstance(op.emit, str) and op.emit.strip(), f"{name}: emit must be a string"
    elif op.draw is None:  # the backends lower such an op by the op itself: a template
        assert op.emit is None, f"{name}: emit {op.emit!r} on an op neither elementwise " \
            f"nor random"
    else:  # a draw with a CPU lowering of its own; any template is for other backends
        assert op.emit is None or (isinstance(op.emit, str) and op.emit.strip()), \
            f"{name}: emit {op.emit!r} is neither a template nor None"
    if op.elementwise:
        fields = _emit_fields(op.emit)
        allowed = {str(i) for i in range(len(op.args))}
        assert fields <= allowed, (
            f"{name}: elementwise emit template {op.emit!r} uses {sorted(fields - allowed)}, "
            f"but the op has {len(op.args)} args")
    assert op.n_out is None or (isinstance(op.n_out, int) and op.n_out >= 1), \
        f"{name}: n_out={op.n_out!r} (an int >= 1, or None for 'as many as infer says')"
    if op.differentiable:
        assert callable(op.grad), f"{name}: differentiable but grad is not callable"
    else:
        assert op.grad is None, f"{name}: differentiable=False but has a gradient rule"
        assert op.saves == (), f"{name}: saves {op.saves} but has no gradient rule"
    bad = [s for s in op.saves if s not in op.args and not _names_output(s, op.n_out)]
    assert not bad, f"{name}: saves {bad} name neither an arg {op.args} nor an output"
    assert len(set(op.saves)) == len(op.saves), f"{name}: saves repeats a name {op.saves}"
    lo, hi = op.domain
    assert float(lo) < float(hi), f"{name}: empty domain {op.domain}"
    assert isinstance(op.smooth, bool) and isinstance(op.elementwise, bool)


@contextlib.contextmanager
def _ops_run():
    """Collects (op, outputs) of every bind() call in tapeflow while active."""
    real = registry.bind
    seen = []

    def spy(op, *args, **kwargs):
        out = real(op, *args, **kwargs)
        seen.append((op, as_outputs(op, out)))
        return out

    patched = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("tapeflow"):
            continue
        for attr, value in list(vars(module).items()):
            if value is real:
                patched.append((module, attr))
                setattr(module, attr, spy)
    try:
        yield seen
    finally:
        for module, attr in patched:
            setattr(module, attr, real)


def _weights(outputs, rng):
    return [tf.constant(rng.standard_normal(o.shape).astype(o.dtype._np))
            if o.dtype.is_floating else None for o in outputs]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@settings(max_examples=3)
@given(data=st.data())
def test_gradient_rule_runs_only_differentiable_ops(name, data):
    op = OPS[name]
    case = draw_case(data, name)
    tensors = [tf.constant(a) for a in case.inputs]
    sources = [tensors[i] for i in wrt_indices(case)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(sources)
        with tf.GradientTape() as inner:
            inner.watch(sources)
            outputs = as_outputs(op, bind(op, tensors, case.attrs))
        entries = getattr(outer, "_entries", None)  # the tape's record, if it keeps one
        entries = [] if entries is None else entries
        before = len(entries)
        with _ops_run() as seen:
            inner.gradient(outputs, sources, output_gradients=_weights(outputs, rng))
        recorded = entries[before:]
    for entry in recorded:
        assert OPS.get(entry.op.name) is entry.op, (
            f"the gradient of {name} records {entry.op.name}, which is not in the op table")
        assert entry.op.differentiable, (
            f"the gradient of {name} records {entry.op.name}, which is not differentiable")
    for used, outs in seen:
        assert OPS.get(used.name) is used, (
            f"the gradient of {name} runs {used.name}, which is not in the op table")
        if used.differentiable or used.name in ZERO_DERIVATIVE:
            continue
        floats = [o.dtype.name for o in outs if o.dtype.is_floating]
        assert not floats, (
            f"the gradient of {name} computes a {floats[0]} value with {used.name}, which "
            f"is not differentiable: gradients of this gradient would silently miss it")
