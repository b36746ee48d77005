"""FloorDiv and FloorMod of floats on the device are NumPy's floor_divide and remainder,
bit for bit (signed zeros too). Python's `//` and `%` in a kernel compile to LLVM's frem,
which the device expands as |x| - |y| * floor(|x| / |y|): NaN where the divisor is
infinite (1.5 % -inf is -inf in NumPy and TensorFlow) and inexact for large quotients.
The simulator runs `%` on NumPy scalars and cannot see that, so the device's element is
checked to be the fmod-based helper, and the helper is checked against NumPy."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import backend_registry
from tapeflow.device_tensor import DeviceTensor
from tapeflow.ops.elementwise import FLOOR_DIV, FLOOR_MOD
from tapeflow.ops.registry import bind

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.5, 3.0, 0.5, -1.0, 7.0, -1e30, 3e-39]


def _pairs(dtype):
    """Every pair of special values, and quotients too large for x - y * floor(x / y)."""
    x, y = np.meshgrid(np.array(SPECIAL, dtype), np.array(SPECIAL, dtype))
    rng = np.random.default_rng(11)
    big_x = rng.uniform(-1e7, 1e7, 64).astype(dtype)
    big_y = rng.uniform(-3.0, 3.0, 64).astype(dtype)
    return np.concatenate([x.ravel(), big_x]), np.concatenate([y.ravel(), big_y])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op, numpy_op", [(FLOOR_DIV, np.floor_divide),
                                          (FLOOR_MOD, np.remainder)])
def test_float_floor_division_on_the_device_is_numpys(op, numpy_op, dtype):
    x, y = _pairs(dtype)
    with tf.device("/GPU:0"):
        got = bind(op, [tf.constant(x), tf.constant(y)], {})
    assert type(got) is DeviceTensor
    with np.errstate(all="ignore"):
        want = numpy_op(x, y)
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("op, helper", [(FLOOR_DIV, "floordiv"), (FLOOR_MOD, "floormod")])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_float_floor_division_calls_the_fmod_helper_not_python_operators(op, helper, dtype):
    lowering = backend_registry.compiling_for("GPU").lowering(op)
    expression, check = lowering.expression(op, (dtype, dtype), dtype, ["a", "b"], ())
    suffix = "f32" if dtype == tf.float32 else "f64"
    assert (expression, check) == (f"{helper}_{suffix}(a, b)", None)


def test_integer_floor_division_keeps_its_zero_divisor_check():
    lowering = backend_registry.compiling_for("GPU").lowering(FLOOR_DIV)
    expression, check = lowering.expression(FLOOR_DIV, (tf.int32, tf.int32), tf.int32,
                                            ["a", "b"], ())
    assert (expression, check) == ("a // b", "b == 0")
