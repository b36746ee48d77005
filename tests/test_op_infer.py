"""infer() agrees with the eager kernel (shape and dtype) on every op's samples, and
float32 inputs stay float32."""


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.dtypes import DType
from tapeflow.ops.registry import OPS, bind
from tests.op_samples.common import (
    Aval,
    as_outputs,
    attrs_name_a_dtype,
    draw_case,
    dtype_of,
    forget_state,
    sampled_ops,
    strict_warnings,
    with_float_dtype,
)

ALL_OPS = sampled_ops()


def _inferred(op, case):
    avals = [Aval(a.shape, dtype_of(a)) for a in case.inputs]
    result = op.infer(*avals, **case.attrs)
    result = [result] if op.n_out == 1 else list(result)
    assert op.n_out is None or len(result) == op.n_out, \
        f"{op.name}: infer gave {len(result)} outputs, the table says {op.n_out}"
    for shape, dtype in result:
        assert isinstance(dtype, DType), f"{op.name}: infer's dtype {dtype!r} is not a DType"
        assert all(d is None or (isinstance(d, (int, np.integer)) and d >= 0)
                   for d in shape), f"{op.name}: infer's shape {shape!r}"
    return result


def check_infer_matches_eager(op, case):
    """Returns the eager outputs after checking them against infer (and bind)."""
    inferred = _inferred(op, case)
    arrays = [a.copy() for a in case.inputs]
    forget_state(op)
    with strict_warnings():
        result = op.eager(*arrays, **case.attrs)
    for before, after in zip(case.inputs, arrays):
        assert np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"), (
            f"{op.name}: the eager kernel modified its input in place")
    outputs = as_outputs(op, result)
    assert len(outputs) == len(inferred), \
        f"{op.name}: eager gave {len(outputs)} outputs, infer {len(inferred)}"
    for k, ((shape, dtype), out) in enumerate(zip(inferred, outputs)):
        what = f"{op.name} output {k} on {[Aval(a.shape, dtype_of(a)) for a in case.inputs]}" \
               f" {case.attrs}"
        assert isinstance(out, (np.ndarray, np.generic)), \
            f"{what}: eager returned {type(out).__name__}, not a NumPy array"
        assert out.dtype == dtype._np, f"{what}: infer says {dtype.name}, eager gives {out.dtype}"
        assert len(shape) == out.ndim and all(
            d is None or d == e for d, e in zip(shape, out.shape)), \
            f"{what}: infer says {tuple(shape)}, eager gives {out.shape}"
    forget_state(op)
    with strict_warnings():
        bound = as_outputs(op, bind(op, [tf.constant(a) for a in case.inputs], case.attrs))
    for out, t in zip(outputs, bound):
        assert t._shape == out.shape and t.dtype._np == out.dtype, f"{op.name}: bind differs"
        if out.dtype.kind == "c":
            # NumPy multiplies complex scalars (what a 0-d tensor may hold) and 0-d arrays
            # with different roundings: equal to the last bits.
            np.testing.assert_allclose(np.asarray(t._value), out, atol=0, equal_nan=True,
                                       rtol=4 * np.finfo(out.dtype).eps,
                                       err_msg=f"{op.name}: bind's value differs")
            continue
        assert np.array_equal(np.asarray(t._value), out, equal_nan=out.dtype.kind == "f"), \
            f"{op.name}: bind's value differs from the eager kernel's"
    return outputs


@pytest.mark.parametrize("name", ALL_OPS)
@given(data=st.data())
def test_infer_matches_eager(name, data):
    check_infer_matches_eager(OPS[name], draw_case(data, name))


@pytest.mark.parametrize("name", ALL_OPS)
@given(data=st.data())
def test_float32_stays_float32(name, data):
    op = OPS[name]
    case = draw_case(data, name)
    if not any(a.dtype == np.float64 for a in case.inputs):
        return  # nothing to narrow (ints, bools, or no inputs)
    wide = _inferred(op, case)
    narrow_case = with_float_dtype(case, np.float32)
    outputs = check_infer_matches_eager(op, narrow_case)
    if attrs_name_a_dtype(case.attrs):
        return  # the output dtype is the attr's, whatever the inputs
    for k, ((_, wide_dtype), out) in enumerate(zip(wide, outputs)):
        if wide_dtype is tf.float64:
            assert out.dtype == np.float32, (
                f"{name} output {k}: float32 inputs give {out.dtype} (float64 inputs give "
                f"float64); TensorFlow keeps float32")
