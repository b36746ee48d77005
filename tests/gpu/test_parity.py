"""GPU == CPU for every op the GPU backend lowers, generated from the op table: each
elementwise entry and reduction on its samplers' inputs (tests/op_samples/), in float32
too, and on NaN, Inf, signed zeros, empty and broadcast shapes. The GPU result must come
from the device (no soft placement), and match the NumPy kernel's to the dtype's
tolerance (integers and bools exactly)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow import backend_registry
from tapeflow.device_tensor import DeviceTensor
from tapeflow.ops.registry import OPS, bind

from ..op_samples import SAMPLES
from ..op_samples.common import TOLERANCE

GPU = backend_registry.compiling_for("GPU")
ELEMENTWISE = sorted(name for name, op in OPS.items() if op.elementwise)
REDUCTIONS = sorted(name for name, op in OPS.items() if op.reduction)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0, 0.5, -1.0])


def _run(device, op, arrays, attrs):
    with tf.device(device):
        try:
            return bind(op, [tf.constant(a) for a in arrays], attrs)
        except Exception as e:  # noqa: BLE001 - the two devices must raise alike
            return e


def _assert_same(op, arrays, attrs):
    cpu = _run("/CPU:0", op, arrays, attrs)
    gpu = _run("/GPU:0", op, arrays, attrs)
    if isinstance(cpu, Exception):
        assert type(gpu) is type(cpu) and str(gpu) == str(cpu), (op.name, gpu, cpu)
        return
    assert not isinstance(gpu, Exception), (op.name, gpu)
    dtypes = [np.asarray(a).dtype for a in arrays] + [cpu.dtype._np]
    if any(d.kind == "c" or d == np.float16 for d in dtypes):
        # The GPU backend has no complex or float16 kernels: such ops run on the CPU
        # (soft placement, docs/gpu.md).
        assert type(gpu) is not DeviceTensor, f"{op.name} ran {dtypes} on the device"
    else:
        assert type(gpu) is DeviceTensor, f"{op.name} did not run on the device"
    assert gpu.dtype == cpu.dtype and gpu.shape == cpu.shape
    got, want = np.asarray(gpu), np.asarray(cpu)
    if want.dtype.kind in "fc":
        tol = TOLERANCE[np.finfo(want.dtype).dtype.name]
        scale = np.nanmax(np.abs(want[np.isfinite(want)]), initial=1.0)
        np.testing.assert_allclose(got, want, rtol=tol["rtol"], atol=tol["atol"] * scale,
                                   equal_nan=True, err_msg=op.name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=op.name)


def _as_float32(arrays):
    return [a.astype(np.float32) if a.dtype == np.float64 else a for a in arrays]


def test_every_elementwise_entry_and_reduction_has_a_gpu_lowering():
    missing = [name for name in ELEMENTWISE + REDUCTIONS if GPU.lowering(OPS[name]) is None]
    assert missing == []


@pytest.mark.parametrize("name", ELEMENTWISE + REDUCTIONS)
@settings(max_examples=3, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_gpu_matches_cpu_on_the_samplers_inputs(name, data):
    op = OPS[name]
    case = SAMPLES[name](data.draw)
    _assert_same(op, case.inputs, case.attrs)
    if any(a.dtype == np.float64 for a in case.inputs):
        _assert_same(op, _as_float32(case.inputs), case.attrs)


def _special(like, dtype, n, shift):
    """`n` values in `dtype` (NaN, infinities, signed zeros and ordinary floats) where
    the sampler gave numbers; bools where it gave bools (a SelectV2 condition)."""
    if like.dtype.kind == "b":
        return np.arange(n) % 3 == shift % 3
    return np.roll(SPECIAL.astype(dtype), shift)[:n]


@pytest.mark.parametrize("name", ELEMENTWISE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=1, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_nan_inf_signed_zeros_empty_and_broadcast(name, dtype, data):
    op = OPS[name]
    case = SAMPLES[name](data.draw)  # for its number of inputs, their kinds, its attrs
    like = case.inputs

    def inputs(shapes):
        return [_special(a, dtype, int(np.prod(s)), 3 * i).reshape(s)
                for i, (a, s) in enumerate(zip(like, shapes))]
    n = len(like)
    _assert_same(op, inputs([(10,)] * n), case.attrs)
    _assert_same(op, inputs([(0,)] * n), case.attrs)
    _assert_same(op, inputs([(2, 0)] + [(1, 0)] * (n - 1)), case.attrs)
    if n > 1 and op.broadcasts:
        _assert_same(op, inputs([(4, 1)] + [(1, 3)] * (n - 1)), case.attrs)


REDUCE_CASES = [((2, 3, 4), (0,)), ((2, 3, 4), (1,)), ((2, 3, 4), (2,)), ((2, 3, 4), (0, 2)),
                ((2, 3, 4), (0, 1, 2)), ((2, 3, 4), ()), ((5,), (0,)), ((), ()),
                ((0, 3), (0,)), ((0, 3), (1,)), ((3, 70), (1,)), ((2, 1, 3), (0, 2)),
                # few outputs, long blocks: split over threads, then combined
                ((2, 300), (1,)), ((300, 2), (0,)), ((5000,), (0,))]


@pytest.mark.parametrize("name", ["Sum", "Mean", "Max", "Min", "Prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_over_any_axes(name, dtype, keepdims):
    rng = np.random.default_rng(7)
    for shape, axis in REDUCE_CASES:
        x = (rng.integers(-3, 4, size=shape) if dtype == np.int32
             else rng.uniform(0.5, 1.5, size=shape)).astype(dtype)
        _assert_same(OPS[name], [x], {"axis": axis, "keepdims": keepdims})
    if dtype != np.int32:
        x = np.array([[1.0, np.nan, 2.0], [np.inf, -np.inf, 0.0]], dtype)
        for axis in ((0,), (1,), (0, 1)):
            _assert_same(OPS[name], [x], {"axis": axis, "keepdims": keepdims})


@pytest.mark.parametrize("name", ["All", "Any"])
def test_logical_reductions(name):
    x = np.array([[True, False, True], [True, True, True]])
    for axis in ((0,), (1,), (0, 1), ()):
        _assert_same(OPS[name], [x], {"axis": axis, "keepdims": False})
    _assert_same(OPS[name], [np.zeros((0, 2), bool)], {"axis": (0,), "keepdims": False})


def test_integer_errors_are_tensorflows():
    a, b = np.array([7, 8], np.int32), np.array([2, 0], np.int32)
    for name in ("FloorDiv", "FloorMod"):
        _assert_same(OPS[name], [a, b], {})
    _assert_same(OPS["Pow"], [a, np.array([2, -1], np.int32)], {})
    _assert_same(OPS["Pow"], [a, np.array([2, 3], np.int32)], {})
