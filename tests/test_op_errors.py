"""Bad inputs raise TensorFlow's exception class with a message naming the op, the
shapes and the dtypes; invalid values give inf/nan silently, never a NumPy warning."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, OpError
from tapeflow.ops.registry import OPS, bind
from tests.op_samples import ERRORS
from tests.op_samples.common import (
    Aval,
    Case,
    as_outputs,
    draw_case,
    dtype_of,
    sampled_ops,
    strict_warnings,
    wrt_indices,
)
from tests.test_op_infer import check_infer_matches_eager

ELEMENTWISE_N = sampled_ops(lambda op: op.elementwise and len(op.args) >= 2)
BINARY = sorted(n for n, op in OPS.items() if op.elementwise and len(op.args) == 2)
UNARY = sorted(n for n, op in OPS.items() if op.elementwise and len(op.args) == 1)

# The table's unary ops that TensorFlow registers for floating-point types only (int32 is
# "Value for attr 'T' of int32 is not in the list of allowed values", checked against
# TensorFlow 2.21's tf.raw_ops).
FLOAT_ONLY = {"Ceil", "Cos", "Elu", "Erf", "Erfc", "Exp", "Expm1", "Floor", "LeakyRelu", "Log",
              "Log1p", "Rsqrt", "Sigmoid", "Sin", "Softplus", "Sqrt", "Tan", "Tanh"}

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e30, -1e30, 1e300, np.inf, -np.inf,
                    np.nan])


@pytest.mark.parametrize(
    "module, call, error, pattern", ERRORS,
    ids=[f"{m}-{i}" for i, (m, *_rest) in enumerate(ERRORS)])
def test_error_cases(module, call, error, pattern):
    with strict_warnings(), pytest.raises(error, match=pattern):
        call()


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("order", ["int32-float32", "float32-int32"])
def test_binary_op_rejects_mixed_dtypes(name, order):
    ints, floats = tf.constant([1, 2], tf.int32), tf.constant([1.0, 2.0], tf.float32)
    args = (ints, floats) if order == "int32-float32" else (floats, ints)
    with pytest.raises(InvalidArgumentError) as info:
        bind(OPS[name], args)
    message = str(info.value)
    assert f"[Op:{name}]" in message, message
    assert "int32" in message and "float32" in message, message


def test_float_only_names_unary_ops_of_the_table():
    assert FLOAT_ONLY <= set(UNARY), sorted(FLOAT_ONLY - set(UNARY))


@pytest.mark.parametrize("name", UNARY)
def test_unary_dtype_rules(name):
    """A unary op either accepts int32 (and then keeps TensorFlow's dtype rule) or rejects
    it with InvalidArgumentError naming op and dtype; TF's float-only ops must reject."""
    op = OPS[name]
    try:
        op.infer(Aval((2,), tf.int32))
    except InvalidArgumentError as e:
        assert f"[Op:{name}]" in str(e) and "int32" in str(e), str(e)
        return
    except (TypeError, ValueError):
        if name == "Cast":  # needs its dtype attr
            return
        raise
    assert name not in FLOAT_ONLY, (
        f"{name} accepts int32, but TensorFlow only registers it for float types")


@pytest.mark.parametrize("name", ELEMENTWISE_N)
@settings(max_examples=3)
@given(data=st.data())
def test_incompatible_broadcast_is_rejected(name, data):
    """Shapes [2, 3] and [4] cannot broadcast: the error names both (and the op)."""
    op = OPS[name]
    case = draw_case(data, name)
    shapes = [(2, 3), (4,)] + [()] * (len(op.args) - 2)
    arrays = [np.resize(a, s).astype(a.dtype) for a, s in zip(case.inputs, shapes)]
    with pytest.raises(InvalidArgumentError) as info:
        bind(op, [tf.constant(a) for a in arrays], case.attrs)
    message = str(info.value)
    assert "[2, 3]" in message and "[4]" in message, message
    assert f"[Op:{name}]" in message, message


def _cast(values, dtype):
    with np.errstate(over="ignore"):  # 1e300 becomes inf in float32: intended
        return np.asarray(values).astype(dtype)


def _run_quietly(op, arrays, attrs, wrt):
    """bind, then the gradient w.r.t. `wrt`, with every warning an error. Errors that
    tapeflow raises on purpose (InvalidArgumentError for a singular matrix, ...) are fine."""
    tensors = [tf.constant(a) for a in arrays]
    sources = [tensors[i] for i in wrt] if op.differentiable else []
    with strict_warnings():
        try:
            with tf.GradientTape() as tape:
                tape.watch(sources)
                outputs = as_outputs(op, bind(op, tensors, attrs))
            targets = [o for o in outputs if o.dtype.is_floating]
            if sources and targets:
                tape.gradient(targets, sources)
        # LookupError: a gradient TensorFlow does not define (IgammaGradA's), named.
        except (OpError, ValueError, TypeError, LookupError) as e:
            assert isinstance(e, OpError) or op.name in str(e), (
                f"{op.name}: {type(e).__name__} from {arrays}: {e}")


@pytest.mark.parametrize("name", sampled_ops())
@settings(max_examples=5)
@given(data=st.data())
def test_special_values_raise_no_warnings(name, data):
    """inf, nan, 0 and huge values in every float input: TensorFlow computes inf/nan
    silently (log(-1), sqrt(-1), 1/0); tapeflow must not leak NumPy RuntimeWarnings."""
    op = OPS[name]
    case = draw_case(data, name)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arrays = [_cast(rng.choice(SPECIAL, size=a.shape), a.dtype) if a.dtype.kind == "f"
              else a for a in case.inputs]
    _run_quietly(op, arrays, case.attrs, wrt_indices(case))


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.elementwise))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_special_value_grid(name, dtype):
    """Every combination of special values through each elementwise op and its gradient."""
    op = OPS[name]
    n = len(op.args)
    grid = np.meshgrid(*[SPECIAL] * min(n, 2), indexing="ij")
    arrays = []
    for i, arg in enumerate(op.args):
        if name == "SelectV2" and i == 0:
            arrays.append(np.arange(SPECIAL.size) % 2 == 0)
        elif i < 2:
            arrays.append(_cast(grid[i], dtype))
        else:
            arrays.append(_cast(SPECIAL[i % SPECIAL.size], dtype))
    if name == "SelectV2":
        arrays = [arrays[0], _cast(SPECIAL, dtype)[:, None], _cast(SPECIAL, dtype)[None, :]]
    attrs = {"dtype": tf.float32} if name == "Cast" else {}
    float_args = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    _run_quietly(op, arrays, attrs, float_args if op.differentiable else ())


@pytest.mark.parametrize("name", sampled_ops())
@settings(max_examples=5)
@given(data=st.data())
def test_integer_inputs_are_accepted_or_rejected_by_infer(name, data):
    """With every float input made int32, an op either computes what infer promises or
    infer rejects it, naming the op: never a NumPy error or a silent dtype change."""
    op = OPS[name]
    case = draw_case(data, name)
    if not any(a.dtype.kind == "f" for a in case.inputs):
        return
    case = Case([np.round(a).astype(np.int32) if a.dtype.kind == "f" else a
                 for a in case.inputs], case.attrs, ())
    try:
        op.infer(*[Aval(a.shape, dtype_of(a)) for a in case.inputs], **case.attrs)
    except (OpError, TypeError, ValueError) as e:
        assert op.name in str(e), f"{name} rejects int32 without naming the op: {e!r}"
        return
    try:
        check_infer_matches_eager(op, case)
    except OpError as e:  # a value the kernel refuses (integer division by zero, ...)
        assert f"[Op:{name}]" in str(e), str(e)


@pytest.mark.parametrize("x, y", [
    (lambda: tf.constant(1.0), lambda: tf.constant(1.0, tf.float64)),
    (lambda: tf.constant(1), lambda: tf.constant(1.0)),
    (lambda: tf.constant(True), lambda: tf.constant(False)),
])
@pytest.mark.parametrize("divide", [tf.divide, tf.math.truediv, lambda a, b: a / b])
def test_true_division_of_mixed_or_bool_dtypes_is_a_type_error(x, y, divide):
    # TensorFlow's truediv checks dtypes in Python: TypeError, not InvalidArgumentError.
    with pytest.raises(TypeError, match="dtype"):
        divide(x(), y())


def test_svd_of_infinities_raises_instead_of_hanging():
    # This matrix made LAPACK's gesdd (through np.linalg.svd) loop for ever.
    a = np.array([[np.inf, -0.0, 1.0, 1.0], [1.0, np.inf, -np.inf, 1e30],
                  [0.0, -0.0, -1.0, -2.0], [-1e30, -2.0, -1.0, -0.0]])
    for compute_uv in (True, False):
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"inf or NaN.*\[Op:Svd\]"):
            tf.linalg.svd(tf.constant(a), compute_uv=compute_uv)
