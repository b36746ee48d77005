"""Every differentiable op's gradient rule against float64 central finite differences,
projected on random directions (autograd's check_vjp, JAX's check_grads): first order
always, second order (a gradient recorded by an outer tape) where the op is smooth.

Complex inputs and outputs count as pairs of real numbers: directions perturb both
parts, the objective weighs both parts of each output (Re(conj(w) * y)), and a
gradient g is projected as Re(conj(g) * v), which is TensorFlow's convention."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.ops.registry import OPS, bind
from tests.op_samples.common import (
    FINITE_DIFFERENCE,
    TOLERANCE,
    Case,
    arg_name,
    as_outputs,
    complex_sampled_ops,
    differentiable,
    differentiable_ops,
    directions as perturbations,
    draw_case,
    draw_rng,
    inner as real_inner,
    nonempty_wrt,
    random_like,
    smooth_ops,
    with_float_dtype,
)

DIFFERENTIABLE = differentiable_ops()
SMOOTH = smooth_ops()
COMPLEX_DIFFERENTIABLE = complex_sampled_ops(lambda op: op.differentiable)
COMPLEX_SMOOTH = complex_sampled_ops(lambda op: op.differentiable and op.smooth)

_WIDTH = {"float16": 0, "float32": 1, "float64": 2}


def _part_name(dtype):
    """The name of a float dtype, or of a complex dtype's parts (float32 for complex64)."""
    return np.finfo(dtype).dtype.name


def _fd_row(op, case, wrt):
    """The finite-difference row of the narrowest float dtype the op reads or writes."""
    names = [_part_name(case.inputs[i].dtype) for i in wrt]
    names += [_part_name(np.asarray(o).dtype)
              for o in as_outputs(op, op.eager(*case.inputs, **case.attrs))
              if differentiable(o)]
    return FINITE_DIFFERENCE[min(names, key=_WIDTH.get)] if names else \
        FINITE_DIFFERENCE["float64"]


def _weights(op, case, rng):
    """One random weight array per float (float64) or complex (complex128) output, None
    for the others."""
    outputs = as_outputs(op, op.eager(*case.inputs, **case.attrs))
    return [random_like(rng, o)
            if differentiable(o) and (case.outputs is None or k in case.outputs)
            else None for k, o in enumerate(outputs)]


def _objective(op, case, arrays, weights):
    """sum_k <w_k, output_k>, in float64, from the eager kernel."""
    with np.errstate(all="ignore"):
        outputs = as_outputs(op, op.eager(*arrays, **case.attrs))
    return sum(real_inner(w, o) for w, o in zip(weights, outputs) if w is not None)


def _tape_gradient(op, case, arrays, wrt, weights):
    """The tape's gradient of sum_k <w_k, output_k> w.r.t. inputs `wrt` (None as zeros)."""
    tensors = [tf.constant(a) for a in arrays]
    sources = [tensors[i] for i in wrt]
    with tf.GradientTape() as tape:
        tape.watch(sources)
        outputs = as_outputs(op, bind(op, tensors, case.attrs))
    grads = tape.gradient(outputs, sources, output_gradients=_seeds(outputs, weights))
    result = []
    for i, g in zip(wrt, grads):
        x = arrays[i]
        if g is None:
            result.append(np.zeros_like(x))
            continue
        assert tuple(g.shape) == x.shape and g.dtype._np == x.dtype, (
            f"{op.name}: gradient for input {i} ({arg_name(op, i)}) is {g.dtype.name}"
            f"{list(g.shape)}, the input is {x.dtype}{list(x.shape)}")
        result.append(np.asarray(g._value))
    return result


def _seeds(outputs, weights):
    return [None if w is None else tf.constant(w.astype(o.dtype._np))
            for o, w in zip(outputs, weights)]


def _perturbed(arrays, wrt, directions, step):
    out = list(arrays)
    for i, v in zip(wrt, directions):
        wide = np.result_type(arrays[i].dtype, np.float64)
        out[i] = (arrays[i].astype(wide) + step * v).astype(arrays[i].dtype)
    return out


def _assert_close(name, what, analytic, numeric, scale, row):
    tol = row["rtol"] * (scale + abs(numeric)) + row["atol"]
    assert abs(analytic - numeric) <= tol, (
        f"{name}: {what}: tape gives {analytic!r}, finite differences give {numeric!r} "
        f"(tolerance {tol:.3g})")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@given(data=st.data())
def test_gradient_matches_finite_differences(name, data):
    _check_first_order(name, draw_case(data, name), data)


@pytest.mark.parametrize("name", COMPLEX_DIFFERENTIABLE)
@given(data=st.data())
def test_complex_gradient_matches_finite_differences(name, data):
    """The ops that take complex numbers too, on complex inputs only."""
    _check_first_order(name, draw_case(data, name, complex_only=True), data)


def _check_first_order(name, case, data):
    op = OPS[name]
    wrt = nonempty_wrt(case)
    if not wrt:
        return
    rng = draw_rng(data)
    row = _fd_row(op, case, wrt)
    weights = _weights(op, case, rng)
    directions = perturbations(case, wrt, rng)
    grads = _tape_gradient(op, case, case.inputs, wrt, weights)
    analytic = sum(real_inner(g, v) for g, v in zip(grads, directions))
    scale = sum(real_inner(np.abs(g), np.abs(v)) for g, v in zip(grads, directions))
    eps = row["eps"]
    numeric = (_objective(op, case, _perturbed(case.inputs, wrt, directions, eps), weights)
               - _objective(op, case, _perturbed(case.inputs, wrt, directions, -eps),
                            weights)) / (2 * eps)
    _assert_close(name, "first derivative along a random direction", analytic, numeric,
                  scale, row)


@pytest.mark.parametrize("name", SMOOTH)
@given(data=st.data())
def test_second_derivative_matches_finite_differences(name, data):
    _check_second_order(name, draw_case(data, name), data)


@pytest.mark.parametrize("name", COMPLEX_SMOOTH)
@given(data=st.data())
def test_complex_second_derivative_matches_finite_differences(name, data):
    _check_second_order(name, draw_case(data, name, complex_only=True), data)


def _check_second_order(name, case, data):
    op = OPS[name]
    wrt = nonempty_wrt(case)
    if not wrt:
        return
    rng = draw_rng(data)
    row = _fd_row(op, case, wrt)
    weights = _weights(op, case, rng)
    cotangents = [random_like(rng, case.inputs[i]).astype(case.inputs[i].dtype)
                  for i in wrt]
    directions = perturbations(case, wrt, rng)

    # h(x) = <grad(x), u>; its gradient through nested tapes is the Hessian-vector product.
    tensors = [tf.constant(a) for a in case.inputs]
    sources = [tensors[i] for i in wrt]
    with tf.GradientTape() as outer:
        outer.watch(sources)
        with tf.GradientTape() as inner:
            inner.watch(sources)
            outputs = as_outputs(op, bind(op, tensors, case.attrs))
        grads = inner.gradient(outputs, sources, output_gradients=_seeds(outputs, weights))
    connected = [k for k, g in enumerate(grads) if g is not None]
    hvp = [None] * len(wrt)
    if connected:
        result = outer.gradient([grads[k] for k in connected], sources,
                                output_gradients=[tf.constant(cotangents[k])
                                                  for k in connected])
        hvp = list(result)
    analytic = scale = 0.0
    for i, h, v in zip(wrt, hvp, directions):
        if h is None:
            continue
        assert tuple(h.shape) == case.inputs[i].shape, f"{name}: second derivative shape"
        analytic += real_inner(h._value, v)
        scale += real_inner(np.abs(h._value), np.abs(v))

    def h_of(arrays):
        g = _tape_gradient(op, case, arrays, wrt, weights)
        return sum(real_inner(gi, u) for gi, u in zip(g, cotangents))

    eps = row["eps"]
    numeric = (h_of(_perturbed(case.inputs, wrt, directions, eps))
               - h_of(_perturbed(case.inputs, wrt, directions, -eps))) / (2 * eps)
    _assert_close(name, "second derivative (nested tapes) along random directions",
                  analytic, numeric, scale, row)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@given(data=st.data())
def test_float32_gradient_matches_float64(name, data):
    """The rule keeps float32 as float32 and loses nothing beyond float32 rounding."""
    op = OPS[name]
    case = with_float_dtype(draw_case(data, name), np.float32)
    wrt = nonempty_wrt(case)
    if not wrt or any(case.inputs[i].dtype not in (np.float32, np.complex64) for i in wrt):
        return
    rng = draw_rng(data)
    weights = _weights(op, case, rng)
    narrow = _tape_gradient(op, case, case.inputs, wrt, weights)  # checks dtype float32
    wide_case = Case([a.astype(np.result_type(a.dtype, np.float64))
                      if a.dtype in (np.float32, np.complex64) else a
                      for a in case.inputs], case.attrs, case.wrt, case.outputs, case.symmetric)
    wide = _tape_gradient(op, wide_case, wide_case.inputs, wrt, weights)
    tol = TOLERANCE["float32"]
    for i, g32, g64 in zip(wrt, narrow, wide):
        size = max(1.0, float(np.max(np.abs(g64), initial=0.0)))
        np.testing.assert_allclose(
            g32.astype(g64.dtype), g64, rtol=tol["rtol"], atol=tol["atol"] * size,
            err_msg=f"{name}: float32 gradient for input {i} ({arg_name(op, i)})")
