"""Sliced assignment of a Variable (`v[0].assign(5.0)`), checked against TensorFlow 2.21.

TensorFlow gives `variable[key]` an `assign(val, name=None)` that writes the slice
(ResourceStridedSliceAssign) and returns the UnreadVariable; the slice is otherwise an
ordinary read, differentiable as before. Inside tf.function the assignment runs at every
call, through the NumPy interpreter ("off") and the compiled backend ("sync").
"""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings


@pytest.fixture(params=["off", "sync"])
def function_mode(request, monkeypatch):
    """Functions run as graphs, interpreted or compiled; a compiled one must not fall
    back to NumPy kernels."""
    monkeypatch.setattr(settings, "compile_mode", request.param)
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        yield request.param


def values(v):
    return v.numpy().tolist()


# -- eager ----------------------------------------------------------------------------------


def test_assign_to_an_element_and_a_range_returns_the_unread_variable():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    r = v[0].assign(5.0)
    assert repr(r) == ("<tf.Variable 'UnreadVariable' shape=(4,) dtype=float32, "
                       "numpy=array([5., 2., 3., 4.], dtype=float32)>")
    r = v[1:3].assign([7.0, 8.0])
    assert values(r) == [5.0, 7.0, 8.0, 4.0]
    assert repr(v) == ("<tf.Variable 'Variable:0' shape=(4,) dtype=float32, "
                       "numpy=array([5., 7., 8., 4.], dtype=float32)>")
    assert r.assign_add([1.0, 1.0, 1.0, 1.0]) is not None  # the same variable
    assert values(v) == [6.0, 8.0, 9.0, 5.0]


def test_two_dimensional_keys_with_ellipsis_and_newaxis():
    m = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    want = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    m[:, 1].assign([10.0, 11.0, 12.0])
    want[:, 1] = [10.0, 11.0, 12.0]
    m[0, ::2].assign([-1.0, -2.0])
    want[0, ::2] = [-1.0, -2.0]
    m[..., 0].assign([5.0, 6.0, 7.0])
    want[..., 0] = [5.0, 6.0, 7.0]
    m[tf.newaxis, 1, ::-1].assign([[1.0, 2.0, 3.0, 4.0]])
    want[1, ::-1] = [1.0, 2.0, 3.0, 4.0]
    m[tf.constant(0):tf.constant(2), tf.constant(-1)].assign([8.0, 9.0])  # eager tensors
    want[0:2, -1] = [8.0, 9.0]
    np.testing.assert_array_equal(m.numpy(), want)


def test_a_scalar_variable_takes_ellipsis_empty_and_newaxis_keys():
    s = tf.Variable(1.0)
    assert s[...].assign(4.0).numpy() == 4.0
    assert s[()].assign(5.0).numpy() == 5.0
    assert s[None].assign([6.0]).numpy() == 6.0


def test_values_broadcast_by_tensorflows_rule_not_numpys():
    m = tf.Variable(np.zeros((3, 4), np.float32))
    m[:, 1].assign(3.0)                                   # a scalar fills the slice
    m[0].assign([[1.0, 2.0, 3.0, 4.0]])                   # leading 1s are dropped
    m[1:, :].assign([[5.0], [6.0]])                       # a 1 broadcasts
    m[2, 0].assign([[[9.0]]])
    assert values(m) == [[1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0], [9.0, 6.0, 6.0, 6.0]]
    m[0:0].assign([1.0, 2.0, 3.0])                        # an empty slice takes anything
    assert values(m)[0] == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("key, value, message", [
    ((slice(1, 3), 1), [1.0, 2.0, 3.0], "Cannot broadcast input shape [3] into final shape [2]"),
    (0, [1.0, 2.0], "Cannot broadcast input shape [2] into final shape [4]"),
    (0, [[1.0], [2.0]], "Cannot broadcast input shape [2,1] into final shape [4]"),
    (slice(0, 2), [1.0, 2.0], "Cannot broadcast input shape [2] into final shape [2,4]"),
    ((0, 0), [1.0, 2.0], "Cannot broadcast input shape [2] into final shape []"),
])
def test_a_value_that_does_not_broadcast_is_invalid_argument(key, value, message):
    m = tf.Variable(np.zeros((3, 4), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        m[key].assign(value)
    assert message in str(info.value)
    assert "[Op:ResourceStridedSliceAssign]" in str(info.value)
    assert not m.numpy().any()


def test_an_out_of_range_index_fails_in_the_read():
    m = tf.Variable(np.zeros((3, 4), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index 5 of dimension 0"):
        m[5].assign([1.0, 2.0, 3.0, 4.0])


def test_the_value_is_converted_to_the_variables_dtype():
    v = tf.Variable([1.0, 2.0])
    v[0].assign(3)                                        # a Python int: converted
    v[1].assign(np.float64(2.5))                          # a NumPy scalar: converted
    assert values(v) == [3.0, 2.5]
    with pytest.raises(ValueError, match="requested dtype float32 for Tensor with dtype "
                                         "float64"):
        v[0].assign(tf.constant(2.5, tf.float64))         # a Tensor keeps its dtype
    i = tf.Variable([1, 2, 3])
    with pytest.raises(TypeError, match="Cannot convert 2.5 to EagerTensor of dtype int32"):
        i[0].assign(2.5)
    assert values(i[::2].assign([9, 8])) == [9, 2, 8]


def test_only_a_slice_of_a_variable_has_assign_and_only_assign():
    v = tf.Variable([1.0, 2.0, 3.0])
    s = v[0]
    assert hasattr(s, "assign")
    assert not hasattr(s, "assign_add") and not hasattr(s, "assign_sub")
    assert not hasattr(v[0:2][0], "assign")               # a slice of the slice is a Tensor
    assert not hasattr(tf.constant([1.0])[0], "assign")
    assert not hasattr(v.read_value(), "assign")
    with pytest.raises(AttributeError):
        tf.constant(1.0).assign(2.0)
    with pytest.raises(TypeError, match="read_value"):
        s.assign(1.0, read_value=False)
    assert values(v[0].assign(2.0, name="x")) == [2.0, 2.0, 3.0]


def test_a_slice_of_what_assign_returns_assigns_the_variable():
    v = tf.Variable([1.0, 2.0, 3.0])
    v.assign([0.0, 0.0, 0.0])[1].assign(3.0)
    assert values(v) == [0.0, 3.0, 0.0]


def test_the_slice_taken_before_assign_keeps_its_value():
    v = tf.Variable([1.0, 2.0])
    s = v[0]
    s.assign(7.0)
    assert s.numpy() == 1.0 and values(v) == [7.0, 2.0]


def test_nan_and_inf_outside_the_slice_survive():
    v = tf.Variable([np.nan, np.inf, -np.inf, 1.0])
    v[3].assign(5.0)
    np.testing.assert_array_equal(v.numpy(), [np.nan, np.inf, -np.inf, 5.0])


# -- reads stay differentiable ------------------------------------------------------------------


def test_gradients_through_slice_reads_are_unchanged():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    with tf.GradientTape() as tape:
        y = v[0] * 2
    assert values(tape.gradient(y, v)) == [2.0, 0.0, 0.0, 0.0]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(v[1:3] ** 2)
    assert values(tape.gradient(y, v)) == [0.0, 4.0, 6.0, 0.0]
    m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(m[:, 1] * [1.0, 10.0])
    assert values(tape.gradient(y, m)) == [[0.0, 1.0], [0.0, 10.0]]


def test_assigning_a_slice_under_a_tape_is_not_differentiated():
    v = tf.Variable([1.0, 2.0, 3.0])
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        v[0].assign(x * 2.0)
        y = v[0] * x
    dx, dv = tape.gradient(y, [x, v])
    assert dx.numpy() == 6.0 and values(dv) == [3.0, 0.0, 0.0]


# -- inside tf.function ---------------------------------------------------------------------


def test_assign_in_a_function_happens_at_every_call(function_mode):
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    traces = []

    @tf.function
    def step(x):
        traces.append(1)
        v[0].assign(x)
        v[1:3].assign(v[1:3] + 1.0)
        return v.read_value()

    assert values(step(tf.constant(10.0))) == [10.0, 3.0, 4.0, 4.0]
    assert values(step(tf.constant(20.0))) == [20.0, 4.0, 5.0, 4.0]
    assert values(v) == [20.0, 4.0, 5.0, 4.0]
    v.assign([0.0, 0.0, 0.0, 0.0])                        # seen by the next call
    assert values(step(tf.constant(1.0))) == [1.0, 1.0, 1.0, 0.0]
    assert len(traces) == 1


def test_two_dimensional_slices_in_a_function(function_mode):
    m = tf.Variable(np.zeros((3, 4), np.float32))

    @tf.function
    def put(row, col):
        m[:, 1].assign(col)
        m[0, ::2].assign(row)
        m[1:, -1].assign(m[1:, -1] + 1.0)
        m[tf.newaxis, ..., 2, 0].assign([m[2, 0] - 1.0])
        return m.read_value()

    want = np.zeros((3, 4), np.float32)
    for k in range(3):
        row, col = np.full(2, k, np.float32), np.full(3, 10.0 * k, np.float32)
        want[:, 1] = col
        want[0, ::2] = row
        want[1:, -1] += 1.0
        want[2, 0] -= 1.0
        np.testing.assert_array_equal(put(tf.constant(row), tf.constant(col)).numpy(), want)
    np.testing.assert_array_equal(m.numpy(), want)


def test_tensor_indices_and_bounds_in_a_function(function_mode):
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])

    @tf.function
    def put(i, x):
        v[i].assign(x)
        return v[i]

    @tf.function
    def clear(a, b):
        v[a:b].assign(tf.zeros([b - a]))

    assert put(tf.constant(2), tf.constant(5.0)).numpy() == 5.0
    assert put(tf.constant(-1), tf.constant(6.0)).numpy() == 6.0
    assert values(v) == [1.0, 2.0, 5.0, 6.0]
    clear(tf.constant(0), tf.constant(2))
    assert values(v) == [0.0, 0.0, 5.0, 6.0]
    clear(tf.constant(1), tf.constant(1))                 # an empty slice
    assert values(v) == [0.0, 0.0, 5.0, 6.0]


def test_nan_and_inf_survive_and_other_dtypes_assign_in_a_function(function_mode):
    f = tf.Variable([np.nan, np.inf, -np.inf, 1.0])
    b = tf.Variable([True, False, True])
    i = tf.Variable([[1, 2], [3, 4]])
    s = tf.Variable(1.0)

    @tf.function
    def put(x):
        f[3].assign(x)
        b[1:].assign(tf.constant([True, False]))
        i[:, 0].assign(i[:, 1] * 10)
        s[...].assign(x * 2.0)

    put(tf.constant(5.0))
    np.testing.assert_array_equal(f.numpy(), [np.nan, np.inf, -np.inf, 5.0])
    assert values(b) == [True, True, False]
    assert values(i) == [[20, 2], [40, 4]]
    assert s.numpy() == 10.0


def test_what_assign_returns_in_a_function_reads_the_new_value(function_mode):
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def put(x):
        return v[1].assign(x).read_value() * 2.0

    assert values(put(tf.constant(3.0))) == [2.0, 6.0]
    assert values(put(tf.constant(4.0))) == [2.0, 8.0]


def test_a_value_that_does_not_broadcast_fails_in_a_function(function_mode):
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])

    @tf.function
    def bad():
        v[1:3].assign([1.0, 2.0, 3.0])

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot broadcast input shape \[3\] into final shape \[2\]"):
        bad()
    assert values(v) == [1.0, 2.0, 3.0, 4.0]


def test_gradients_of_a_function_that_assigns_a_slice_match_eager(function_mode):
    v = tf.Variable([1.0, 2.0, 3.0])

    def fn(x):
        v[0].assign(x * 2.0)
        return v[0] * x + v[1]

    def grads(fn):
        v.assign([1.0, 2.0, 3.0])
        x = tf.constant(3.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        dx, dv = tape.gradient(y, [x, v])
        return y.numpy(), dx.numpy(), values(dv), values(v)

    assert grads(fn) == (20.0, 6.0, [3.0, 1.0, 0.0], [6.0, 2.0, 3.0])  # TensorFlow's
    assert grads(tf.function(fn)) == grads(fn)


def test_gradients_through_slice_reads_in_a_function(function_mode):
    v = tf.Variable([1.0, 2.0, 3.0, 4.0])

    @tf.function
    def grad():
        with tf.GradientTape() as tape:
            y = v[0] * 2 + tf.reduce_sum(v[1:3] ** 2)
        return tape.gradient(y, v)

    assert values(grad()) == [2.0, 4.0, 6.0, 0.0]


def test_assign_in_a_tensor_loop_and_branch(function_mode):
    v = tf.Variable(tf.zeros([5]))

    @tf.function
    def fill(n):
        for i in tf.range(n):
            v[i].assign(tf.cast(i, tf.float32) * 2.0)
        if n > 3:
            v[0].assign(-1.0)
        return v.read_value()

    assert values(fill(tf.constant(4))) == [-1.0, 2.0, 4.0, 6.0, 0.0]   # TensorFlow's
    assert values(fill(tf.constant(2))) == [0.0, 2.0, 4.0, 6.0, 0.0]
