"""Tensor, TensorShape, Variable, dtypes and conversion, checked against TensorFlow 2
(API.md, Values). Expected reprs, dtypes and exception classes are TensorFlow's."""

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.experimental.numpy as tnp

# -- repr / str ------------------------------------------------------------------------


@pytest.mark.parametrize("make, want", [
    (lambda: tf.constant(6.0), "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"),
    (lambda: tf.constant(3), "<tf.Tensor: shape=(), dtype=int32, numpy=3>"),
    (lambda: tf.constant(True), "<tf.Tensor: shape=(), dtype=bool, numpy=True>"),
    (lambda: tf.constant(2.5, dtype=tf.float64),
     "<tf.Tensor: shape=(), dtype=float64, numpy=2.5>"),
    (lambda: tf.constant([1.0, 2.0, 3.0]),
     "<tf.Tensor: shape=(3,), dtype=float32, numpy=array([1., 2., 3.], dtype=float32)>"),
    (lambda: tf.constant([1, 2, 3]),
     "<tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>"),
    (lambda: tf.constant(np.array([1, 2, 3])),
     "<tf.Tensor: shape=(3,), dtype=int64, numpy=array([1, 2, 3])>"),
    (lambda: tf.constant([True, False]),
     "<tf.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>"),
    (lambda: tf.constant([[1.0, 2.0], [3.0, 4.0]]),
     ("<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
      "array([[1., 2.],\n"
      "       [3., 4.]], dtype=float32)>")),
    (lambda: tf.constant([[1, 2], [3, 4]]),
     ("<tf.Tensor: shape=(2, 2), dtype=int32, numpy=\n"
      "array([[1, 2],\n"
      "       [3, 4]], dtype=int32)>")),
    (lambda: tf.constant([[1.0, 2.0]]),
     "<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]], dtype=float32)>"),
])
def test_tensor_repr(make, want):
    assert repr(make()) == want


@pytest.mark.parametrize("make, want", [
    (lambda: tf.constant(6.0), "tf.Tensor(6.0, shape=(), dtype=float32)"),
    (lambda: tf.constant(3), "tf.Tensor(3, shape=(), dtype=int32)"),
    (lambda: tf.constant(False), "tf.Tensor(False, shape=(), dtype=bool)"),
    (lambda: tf.constant([1.0, 2.0, 3.0]), "tf.Tensor([1. 2. 3.], shape=(3,), dtype=float32)"),
    (lambda: tf.constant([1, 2]), "tf.Tensor([1 2], shape=(2,), dtype=int32)"),
    (lambda: tf.constant([[1.0, 2.0], [3.0, 4.0]]),
     "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"),
])
def test_tensor_str(make, want):
    assert str(make()) == want


def test_print_uses_str(capsys):
    print(tf.constant([1.0, 2.0]))
    assert capsys.readouterr().out == "tf.Tensor([1. 2.], shape=(2,), dtype=float32)\n"


def test_format_of_scalar_tensor():
    assert f"{tf.constant(1.5):.2f}" == "1.50"


def test_format_of_tensors_and_variables_as_tensorflow():
    assert f"{tf.constant([[1.0, 2.0]])}" == "[[1. 2.]]"  # the NumPy value's format
    v = tf.Variable([1.0, 2.0])
    assert f"{v}" == repr(v)
    with pytest.raises(TypeError):
        f"{v:.3f}"


def test_dtype_str_and_repr():
    assert str(tf.float32) == "<dtype: 'float32'>"
    assert repr(tf.float32) == "tf.float32"
    assert f"{tf.constant(1).dtype}" == "<dtype: 'int32'>"


def test_print_of_a_traced_tensor_names_its_parameter(capsys):
    @tf.function
    def f(alpha, beta):
        print(alpha, beta)
        return alpha + beta

    f(tf.constant(1.0), tf.constant(2.0))
    assert capsys.readouterr().out == ('Tensor("alpha:0", shape=(), dtype=float32) '
                                       'Tensor("beta:0", shape=(), dtype=float32)\n')


# -- TensorShape -------------------------------------------------------------------------


def test_tensorshape_repr_str():
    t = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert repr(t.shape) == "TensorShape([2, 3])"
    assert str(t.shape) == "(2, 3)"
    assert repr(tf.constant(1.0).shape) == "TensorShape([])"
    assert str(tf.constant(1.0).shape) == "()"
    assert repr(tf.constant([1.0]).shape) == "TensorShape([1])"
    assert str(tf.constant([1.0]).shape) == "(1,)"
    assert repr(tf.TensorShape([2, 3])) == "TensorShape([2, 3])"


def test_tensorshape_equality_with_lists_and_tuples():
    s = tf.constant(np.zeros((2, 3), np.float32)).shape
    assert s == [2, 3]
    assert s == (2, 3)
    assert s == tf.TensorShape([2, 3])
    assert s != [3, 2]
    assert s != (2,)
    assert not (s == [2, 3, 1])  # noqa: SIM201 - __eq__ itself is under test
    assert tf.constant(1.0).shape == []
    assert tf.constant(1.0).shape == ()


def test_tensorshape_as_sequence():
    s = tf.constant(np.zeros((2, 3, 4))).shape
    assert len(s) == 3
    assert s[0] == 2 and s[-1] == 4
    assert isinstance(s[0], int)
    assert s.as_list() == [2, 3, 4]
    assert s.rank == 3
    assert list(s) == [2, 3, 4]
    assert tuple(s) == (2, 3, 4)
    assert s[1:] == [3, 4]
    assert s.num_elements() == 24


def test_shape_dtype_ndim():
    t = tf.constant([[1, 2, 3]])
    assert t.shape == (1, 3)
    assert t.dtype == tf.int32
    assert t.ndim == 2
    assert tf.constant(1.0).ndim == 0


# -- numpy interop -------------------------------------------------------------------------


@pytest.mark.parametrize("value, np_type", [
    (1.5, np.float32), (3, np.int32), (True, np.bool_)])
def test_numpy_of_scalar_is_numpy_scalar(value, np_type):
    out = tf.constant(value).numpy()
    assert type(out) is np_type
    assert not isinstance(out, np.ndarray)
    assert out == value


def test_numpy_of_array():
    t = tf.constant([[1.0, 2.0]])
    a = t.numpy()
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.float32 and a.shape == (1, 2)
    np.testing.assert_array_equal(a, [[1.0, 2.0]])


def test_numpy_result_does_not_alias_tensor():
    # Tensors are immutable: writing into .numpy()'s array must not change the Tensor.
    t = tf.constant([1.0, 2.0])
    a = t.numpy()
    try:
        a[0] = 100.0
    except ValueError:
        pass  # a read-only view is fine too
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_np_asarray_of_tensor_and_variable():
    t = tf.constant([1.0, 2.0])
    a = np.asarray(t)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_array_equal(a, [1.0, 2.0])
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    v = tf.Variable([[1, 2]])
    b = np.asarray(v)
    assert b.dtype == np.int32 and b.shape == (1, 2)
    assert np.array(tf.constant(3.0)).shape == ()


def test_numpy_functions_accept_tensors():
    t = tf.constant([1.0, 2.0, 3.0])
    assert float(np.sum(t)) == 6.0
    np.testing.assert_allclose(np.sqrt(np.asarray(t)), np.sqrt([1.0, 2.0, 3.0]))


def test_tensor_float_int_bool():
    assert float(tf.constant(2.5)) == 2.5
    assert isinstance(float(tf.constant(2.5)), float)
    assert int(tf.constant(3)) == 3
    assert isinstance(int(tf.constant(3)), int)
    assert int(tf.constant(3.7)) == 3
    assert float(tf.constant(4)) == 4.0
    assert bool(tf.constant(True)) is True
    assert bool(tf.constant(False)) is False
    assert bool(tf.constant(0.0)) is False
    assert bool(tf.constant(2)) is True


def test_tensor_bool_in_if():
    x = tf.constant(2.0)
    taken = "yes" if x > 1.0 else "no"
    assert taken == "yes"


def test_len():
    assert len(tf.constant([1.0, 2.0, 3.0])) == 3
    assert len(tf.constant(np.zeros((4, 2)))) == 4


def test_len_of_scalar_raises_type_error():
    with pytest.raises(TypeError):
        len(tf.constant(1.0))


def test_iteration_over_axis_0():
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    rows = list(t)
    assert len(rows) == 3
    assert all(isinstance(r, tf.Tensor) for r in rows)
    assert all(r.shape == (2,) and r.dtype == tf.int32 for r in rows)
    np.testing.assert_array_equal(rows[2].numpy(), [5, 6])
    elems = [float(e) for e in tf.constant([1.0, 2.0])]
    assert elems == [1.0, 2.0]


def test_iteration_over_scalar_raises_type_error():
    with pytest.raises(TypeError):
        iter(tf.constant(1.0))


def test_tensor_unhashable_but_ref_hashable():
    t = tf.constant(1.0)
    with pytest.raises(TypeError):
        hash(t)
    d = {t.ref(): "a"}
    assert d[t.ref()] == "a"
    assert t.ref().deref() is t


# -- operators ------------------------------------------------------------------------------


def test_arithmetic_operators_with_python_scalars_on_either_side():
    x = tf.constant([1.0, 2.0, 4.0])
    cases = {
        "x + 1": (x + 1, [2.0, 3.0, 5.0]),
        "1 + x": (1 + x, [2.0, 3.0, 5.0]),
        "x - 1.5": (x - 1.5, [-0.5, 0.5, 2.5]),
        "1.5 - x": (1.5 - x, [0.5, -0.5, -2.5]),
        "x * 2": (x * 2, [2.0, 4.0, 8.0]),
        "2 * x": (2 * x, [2.0, 4.0, 8.0]),
        "x / 2": (x / 2, [0.5, 1.0, 2.0]),
        "2 / x": (2 / x, [2.0, 1.0, 0.5]),
        "x ** 2": (x ** 2, [1.0, 4.0, 16.0]),
        "2 ** x": (2 ** x, [2.0, 4.0, 16.0]),
        "x // 3": (x // 3, [0.0, 0.0, 1.0]),
        "7 // x": (7 // x, [7.0, 3.0, 1.0]),
        "x % 3": (x % 3, [1.0, 2.0, 1.0]),
        "-x": (-x, [-1.0, -2.0, -4.0]),
        "abs(-x)": (abs(-x), [1.0, 2.0, 4.0]),
    }
    for expr, (got, want) in cases.items():
        assert isinstance(got, tf.Tensor), expr
        assert got.dtype == tf.float32, expr
        np.testing.assert_allclose(got.numpy(), want, err_msg=expr)


def test_integer_operators_keep_int32():
    x = tf.constant([7, -7])
    assert (x + 1).dtype == tf.int32
    assert (x * 2).dtype == tf.int32
    np.testing.assert_array_equal((x // 2).numpy(), [3, -4])   # floor division
    np.testing.assert_array_equal((x % 3).numpy(), [1, 2])     # floor mod
    assert (x // 2).dtype == tf.int32
    np.testing.assert_array_equal((x ** 2).numpy(), [49, 49])


def test_truediv_of_int32_gives_float64():
    out = tf.constant([1, 2]) / tf.constant([2, 4])
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(out.numpy(), [0.5, 0.5])
    out = tf.constant(3) / 2
    assert out.dtype == tf.float64 and out.numpy() == 1.5


def test_matmul_operator():
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    b = tf.constant([[1.0], [1.0]])
    out = a @ b
    assert isinstance(out, tf.Tensor) and out.shape == (2, 1)
    np.testing.assert_array_equal(out.numpy(), [[3.0], [7.0]])
    out = np.array([[1.0, 0.0]], np.float32) @ a
    assert isinstance(out, tf.Tensor)
    np.testing.assert_array_equal(out.numpy(), [[1.0, 2.0]])


def test_comparisons_are_elementwise():
    x = tf.constant([1.0, 2.0, 3.0])
    for got, want in [(x < 2.0, [True, False, False]), (x <= 2.0, [True, True, False]),
                      (x > 2.0, [False, False, True]), (x >= 2.0, [False, True, True]),
                      (2.0 < x, [False, False, True])]:
        assert isinstance(got, tf.Tensor) and got.dtype == tf.bool
        np.testing.assert_array_equal(got.numpy(), want)


def test_equality_operators_elementwise():
    x = tf.constant([1, 2, 3])
    eq = x == tf.constant([1, 0, 3])
    assert isinstance(eq, tf.Tensor) and eq.dtype == tf.bool
    np.testing.assert_array_equal(eq.numpy(), [True, False, True])
    np.testing.assert_array_equal((x != 2).numpy(), [True, False, True])


def test_numpy_array_on_either_side_gives_tensor():
    x = tf.constant([1.0, 2.0])
    a = np.array([10.0, 20.0], dtype=np.float32)
    for got in (a + x, x + a, a * x, x * a, a - x, a / x):
        assert isinstance(got, tf.Tensor)
        assert got.dtype == tf.float32
        assert got.shape == (2,)
    np.testing.assert_array_equal((a + x).numpy(), [11.0, 22.0])
    np.testing.assert_array_equal((a - x).numpy(), [9.0, 18.0])
    np.testing.assert_array_equal((x - a).numpy(), [-9.0, -18.0])


def test_numpy_float64_array_is_converted_to_the_tensor_dtype():
    # TensorFlow converts the non-Tensor operand to the Tensor's dtype.
    x = tf.constant([1.0, 2.0])
    a = np.array([0.5, 0.25])
    for got in (x + a, a + x):
        assert isinstance(got, tf.Tensor) and got.dtype == tf.float32
        np.testing.assert_allclose(got.numpy(), [1.5, 2.25])


def test_numpy_scalar_operand():
    x = tf.constant([1.0, 2.0])
    got = x * np.float32(3.0)
    assert isinstance(got, tf.Tensor) and got.dtype == tf.float32
    np.testing.assert_array_equal(got.numpy(), [3.0, 6.0])


def test_broadcasting():
    a = tf.constant([[1.0], [2.0]])
    b = tf.constant([10.0, 20.0, 30.0])
    out = a + b
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), [[11, 21, 31], [12, 22, 32]])


def test_incompatible_shapes_raise_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])


def test_no_implicit_promotion_int32_float32():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1, 2]) + tf.constant([1.5])


def test_no_implicit_promotion_float32_float64():
    a = tf.constant([1.0])
    b = tf.constant([1.0], dtype=tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError):
        a * b
    with pytest.raises(tf.errors.InvalidArgumentError):
        b * a


def test_no_implicit_promotion_int32_int64():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1]) + tf.constant(np.array([1]))


def test_int_tensor_with_python_float_raises_tensorflows_errors():
    x = tf.constant([1, 2])
    # TensorFlow 2.21's add converts 0.5 with int32 only as a hint: AddV2 then rejects
    # the float32 operand; the reflected and other operators convert it to int32.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"as input #1\(zero-based\) was expected to be a int32 tensor"):
        x + 0.5
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        0.5 + x
    with pytest.raises(TypeError):
        x * 1.5


def test_invalid_argument_error_is_exported():
    assert tf.errors.InvalidArgumentError is tf.errors.InvalidArgumentError
    assert issubclass(tf.errors.InvalidArgumentError, Exception)
    try:
        tf.constant([1, 2]) + tf.constant([1.5])
    except tf.errors.InvalidArgumentError as e:
        assert "AddV2" in str(e)


# -- indexing and slicing -------------------------------------------------------------------


@pytest.fixture
def a23():
    return tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


@pytest.mark.parametrize("key", [
    0, -1, 1,
    slice(None, 2), slice(1, None), slice(None, None, -1), slice(None, None, 2),
    (slice(None), None), (None, slice(None)), (Ellipsis, 1), (Ellipsis, -1),
    (0, 1), (-1, -1), (slice(None), 1), (1, slice(0, 2)), (slice(None), slice(1, None)),
    (Ellipsis, None), (0, Ellipsis),
])
def test_indexing_matches_numpy(a23, key):
    want = a23.numpy()[key]
    got = a23[key]
    assert isinstance(got, tf.Tensor)
    assert got.dtype == tf.float32
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_indexing_scalar_result(a23):
    x = a23[1, 2]
    assert x.shape == ()
    assert float(x) == 6.0
    v = tf.constant([1, 2, 3])
    assert v[0].shape == () and int(v[-1]) == 3 and v[0].dtype == tf.int32


def test_indexing_a_variable():
    v = tf.Variable([1.0, 2.0, 3.0])
    got = v[1:]
    assert isinstance(got, tf.Tensor)
    np.testing.assert_array_equal(got.numpy(), [2.0, 3.0])


def test_index_out_of_range_raises_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1.0, 2.0])[5]


def test_slicing_is_differentiable(a23):
    with tf.GradientTape() as t:
        t.watch(a23)
        y = a23[:, 1] * 2.0 + a23[0, 0]
    g = t.gradient(y, a23)
    np.testing.assert_array_equal(g.numpy(), [[2.0, 2.0, 0.0], [0.0, 2.0, 0.0]])


# -- Variable -----------------------------------------------------------------------------


def test_variable_basics():
    v = tf.Variable(3.0)
    assert v.dtype == tf.float32
    assert v.shape == ()
    assert v.trainable is True
    assert v.name == "Variable:0"
    assert v.numpy() == 3.0
    assert repr(v) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>"


def test_variable_str_is_repr():
    v = tf.Variable([1.0, 2.0], name="w")
    assert str(v) == repr(v)


def test_variable_names():
    assert tf.Variable(1.0, name="w").name == "w:0"
    # eager TensorFlow does not uniquify names
    assert tf.Variable(1.0).name == "Variable:0"
    assert tf.Variable(2.0).name == "Variable:0"


def test_variable_repr_vector_and_matrix():
    v = tf.Variable([1.0, 2.0])
    assert repr(v) == ("<tf.Variable 'Variable:0' shape=(2,) dtype=float32, "
                       "numpy=array([1., 2.], dtype=float32)>")
    m = tf.Variable([[1, 2], [3, 4]], name="m")
    assert repr(m) == ("<tf.Variable 'm:0' shape=(2, 2) dtype=int32, numpy=\n"
                       "array([[1, 2],\n"
                       "       [3, 4]], dtype=int32)>")


def test_variable_dtype_inference():
    assert tf.Variable(1).dtype == tf.int32
    assert tf.Variable([1.0, 2.0]).dtype == tf.float32
    assert tf.Variable(np.array([1.0])).dtype == tf.float64
    assert tf.Variable(3.0, dtype=tf.float64).dtype == tf.float64
    assert tf.Variable(tf.constant([1, 2])).dtype == tf.int32
    assert tf.Variable(True).dtype == tf.bool


def test_variable_trainable_flag():
    assert tf.Variable(1.0, trainable=False).trainable is False
    assert tf.Variable(1.0, trainable=True).trainable is True


def test_variable_assign_in_place():
    v = tf.Variable([1.0, 2.0])
    ident = id(v)
    v.assign([5.0, 6.0])
    assert id(v) == ident
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])
    v.assign_add([1.0, 1.0])
    assert id(v) == ident
    np.testing.assert_array_equal(v.numpy(), [6.0, 7.0])
    v.assign_sub(tf.constant([2.0, 3.0]))
    assert id(v) == ident
    np.testing.assert_array_equal(v.numpy(), [4.0, 4.0])
    assert v.dtype == tf.float32


def test_variable_assign_returns_updated_value():
    v = tf.Variable(1.0)
    out = v.assign_add(2.0)
    assert float(out) == 3.0
    assert out.numpy() == 3.0
    assert v.assign(7.0).numpy() == 7.0
    assert v.assign_sub(1.0).numpy() == 6.0


def test_variable_assign_keeps_dtype():
    v = tf.Variable(1.0)
    v.assign(2)  # a Python int converts to the variable's float32
    assert v.dtype == tf.float32 and v.numpy() == 2.0
    assert type(v.numpy()) is np.float32


def test_variable_assign_wrong_shape_raises_value_error():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])


def test_snapshot_of_variable_unaffected_by_assign():
    v = tf.Variable([1.0, 2.0])
    t = v.read_value()
    y = v * 1.0
    a = v.numpy()
    v.assign([9.0, 9.0])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(a, [1.0, 2.0])


def test_variable_assign_add_does_not_mutate_previous_reads():
    v = tf.Variable([1.0, 2.0])
    t = tf.identity(v)
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])


def test_variable_operators_give_tensors():
    v = tf.Variable([1.0, 2.0])
    for got in (v + 1.0, 1.0 + v, v * v, v - v, v / 2.0, -v, v ** 2, abs(v),
                v + np.float32(1.0), np.array([1.0, 1.0], np.float32) + v):
        assert isinstance(got, tf.Tensor)
        assert not isinstance(got, tf.Variable)
        assert got.dtype == tf.float32
    np.testing.assert_array_equal((v * v).numpy(), [1.0, 4.0])
    m = tf.Variable([[1.0, 2.0]])
    assert isinstance(m @ tf.constant([[1.0], [1.0]]), tf.Tensor)


def test_variable_read_value_and_identity():
    v = tf.Variable([1.0, 2.0])
    r = v.read_value()
    assert isinstance(r, tf.Tensor) and not isinstance(r, tf.Variable)
    i = tf.identity(v)
    assert isinstance(i, tf.Tensor)
    np.testing.assert_array_equal(i.numpy(), [1.0, 2.0])


def test_variable_scalar_conversions():
    v = tf.Variable(2.5)
    assert float(v) == 2.5
    assert int(tf.Variable(3)) == 3
    assert bool(tf.Variable(True)) is True
    assert len(tf.Variable([1, 2, 3])) == 3


def test_variable_numpy_returns_copy():
    v = tf.Variable([1.0, 2.0])
    a = v.numpy()
    a[0] = 100.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_convert_variable_to_tensor():
    v = tf.Variable([1.0, 2.0])
    t = tf.convert_to_tensor(v)
    assert isinstance(t, tf.Tensor) and not isinstance(t, tf.Variable)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_variable_initial_value_callable():
    v = tf.Variable(lambda: tf.constant([1.0, 2.0]))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


# -- dtypes -------------------------------------------------------------------------------


def test_dtype_objects():
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        d = getattr(tf, name)
        assert isinstance(d, tf.DType)
        assert d.name == name
        assert repr(d) == f"tf.{name}"
    assert tf.float32.is_floating and not tf.int32.is_floating
    assert tf.int32.is_integer and not tf.float32.is_integer
    assert tf.bool.is_bool
    assert tf.float32.as_numpy_dtype is np.float32
    assert tf.int64.as_numpy_dtype is np.int64
    assert tf.double is tf.float64
    assert tf.half is tf.float16
    assert tf.dtypes.float32 is tf.float32


def test_as_dtype():
    assert tf.as_dtype("float32") is tf.float32
    assert tf.as_dtype(np.float64) is tf.float64
    assert tf.as_dtype(np.dtype("int32")) is tf.int32
    assert tf.as_dtype(tf.int64) is tf.int64
    assert tf.as_dtype(bool) is tf.bool
    assert tf.dtypes.as_dtype("float16") is tf.float16
    with pytest.raises(TypeError):
        tf.as_dtype("not_a_dtype")


def test_dtype_equality():
    assert tf.float32 == tf.float32
    assert tf.float32 != tf.float64
    assert tf.float32 == np.float32
    assert tf.constant(1.0).dtype == tf.float32
    assert {tf.float32: 1}[tf.float32] == 1


@pytest.mark.parametrize("value, dtype, want, want_dtype", [
    ([1.7, -1.7, 2.5], tf.int32, [1, -1, 2], np.int32),      # truncation toward zero
    ([1, 2], tf.float32, [1.0, 2.0], np.float32),
    ([True, False], tf.float32, [1.0, 0.0], np.float32),
    ([0.0, 2.0], tf.bool, [False, True], np.bool_),
    ([1.5], tf.float64, [1.5], np.float64),
    ([1.5], tf.float16, [1.5], np.float16),
    ([3], tf.int64, [3], np.int64),
])
def test_cast(value, dtype, want, want_dtype):
    out = tf.cast(tf.constant(value), dtype)
    assert out.dtype == dtype
    assert out.numpy().dtype == want_dtype
    np.testing.assert_array_equal(out.numpy(), want)


def test_cast_python_and_numpy_input():
    out = tf.cast([1, 2], tf.float32)
    assert out.dtype == tf.float32
    out = tf.cast(np.array([1.5, 2.5]), tf.float32)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [1.5, 2.5])
    assert tf.cast(tf.constant(1.0), "float64").dtype == tf.float64


def test_cast_is_differentiable_for_floats():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.cast(x, tf.float64) * 3.0
    g = t.gradient(y, x)
    assert g.dtype == tf.float32
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])


# -- constant / convert_to_tensor -----------------------------------------------------------


def test_constant_default_dtypes():
    assert tf.constant(1.0).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant([1.0, 2]).dtype == tf.float32
    assert tf.constant([[1, 2], [3, 4]]).dtype == tf.int32
    assert tf.constant(np.array([1.0])).dtype == tf.float64
    assert tf.constant(np.array([1, 2, 3])).dtype == tf.int64
    assert tf.constant(np.float32(1.0)).dtype == tf.float32
    assert tf.constant(np.array([1, 2], np.int32)).dtype == tf.int32


def test_constant_with_dtype():
    t = tf.constant([1, 2], dtype=tf.float32)
    assert t.dtype == tf.float32
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert tf.constant(1.5, dtype=tf.float64).dtype == tf.float64
    assert tf.constant(1.5, dtype="float16").dtype == tf.float16
    assert tf.constant(np.array([1.0, 2.0]), dtype=tf.float32).dtype == tf.float32
    assert tf.constant(3, dtype=tf.int64).dtype == tf.int64


def test_constant_python_float_into_int_raises_type_error():
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant([1.0, 2.5], dtype=tf.int64)


def test_constant_with_shape():
    t = tf.constant(0, shape=(2, 3))
    assert t.shape == (2, 3) and t.dtype == tf.int32
    np.testing.assert_array_equal(t.numpy(), np.zeros((2, 3)))
    t = tf.constant(1.5, shape=[2])
    np.testing.assert_array_equal(t.numpy(), [1.5, 1.5])
    t = tf.constant([1, 2, 3, 4], shape=(2, 2))
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    t = tf.constant([7.0], shape=[2, 2])
    np.testing.assert_array_equal(t.numpy(), [[7.0, 7.0], [7.0, 7.0]])


def test_constant_wrong_shape_raises_type_error():
    with pytest.raises(TypeError):
        tf.constant([1, 2, 3], shape=(2, 2))


def test_constant_of_tensor():
    t = tf.constant([1.0, 2.0])
    u = tf.constant(t)
    np.testing.assert_array_equal(u.numpy(), [1.0, 2.0])
    assert u.dtype == tf.float32


def test_constant_does_not_alias_numpy_input():
    a = np.array([1.0, 2.0], np.float32)
    t = tf.constant(a)
    a[0] = 100.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_convert_to_tensor_dtypes():
    assert tf.convert_to_tensor(np.array([1, 2, 3])).dtype == tf.int64
    assert tf.convert_to_tensor(np.array([1.0])).dtype == tf.float64
    assert tf.convert_to_tensor(np.array([1.0], np.float32)).dtype == tf.float32
    assert tf.convert_to_tensor(2.5).dtype == tf.float32
    assert tf.convert_to_tensor([2.5, 1.0]).dtype == tf.float32
    assert tf.convert_to_tensor(3).dtype == tf.int32
    assert tf.convert_to_tensor([[1, 2]]).dtype == tf.int32
    assert tf.convert_to_tensor(True).dtype == tf.bool
    assert tf.convert_to_tensor(2, dtype=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor(2, dtype_hint=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor(2.5, dtype_hint=tf.int32).dtype == tf.float32


def test_convert_to_tensor_passes_tensor_through():
    t = tf.constant([1.0])
    assert tf.convert_to_tensor(t) is t
    assert tf.convert_to_tensor(t, dtype=tf.float32) is t


def test_convert_to_tensor_dtype_mismatch_raises_value_error():
    with pytest.raises(ValueError):
        tf.convert_to_tensor(tf.constant([1.0]), dtype=tf.float64)


def test_convert_to_tensor_python_float_to_int_raises_type_error():
    with pytest.raises(TypeError):
        tf.convert_to_tensor(2.5, dtype=tf.int32)


def test_convert_to_tensor_list_of_tensors_packs():
    t = tf.convert_to_tensor([tf.constant(1.0), tf.constant(2.0)])
    assert t.shape == (2,) and t.dtype == tf.float32
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


def test_is_tensor():
    assert tf.is_tensor(tf.constant(1.0))
    assert tf.is_tensor(tf.Variable(1.0))
    assert not tf.is_tensor(1.0)
    assert not tf.is_tensor(np.array([1.0]))


# -- nest ---------------------------------------------------------------------------------


def test_nest_flatten():
    assert tf.nest.flatten(1) == [1]
    assert tf.nest.flatten([1, (2, 3), [4]]) == [1, 2, 3, 4]
    assert tf.nest.flatten({"b": 2, "a": [1, 0]}) == [1, 0, 2]  # sorted keys
    assert tf.nest.flatten(None) == [None]
    assert tf.nest.flatten([]) == []


def test_nest_flatten_keeps_tensors():
    a, b = tf.constant(1.0), tf.constant([2.0, 3.0])
    flat = tf.nest.flatten({"x": a, "y": [b]})
    assert flat[0] is a and flat[1] is b


def test_nest_map_structure():
    out = tf.nest.map_structure(lambda x: x * 2, {"a": 1, "b": (2, [3])})
    assert out == {"a": 2, "b": (4, [6])}
    assert isinstance(out["b"], tuple) and isinstance(out["b"][1], list)
    out = tf.nest.map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    assert out == [11, (22, 33)]


def test_nest_map_structure_with_tensors():
    out = tf.nest.map_structure(tf.square, [tf.constant(2.0), (tf.constant(3.0),)])
    assert float(out[0]) == 4.0 and float(out[1][0]) == 9.0


def test_nest_map_structure_mismatch_raises():
    with pytest.raises((ValueError, TypeError)):
        tf.nest.map_structure(lambda x, y: x + y, [1, 2], [1, 2, 3])


def test_nest_pack_sequence_as():
    assert tf.nest.pack_sequence_as({"b": [0, 0], "a": 0}, [1, 2, 3]) == {"a": 1, "b": [2, 3]}


def test_negative_zero_constant_keeps_its_sign():
    assert str(tf.constant(0.0).numpy()) == "0.0"
    neg = tf.constant(-0.0)
    assert np.signbit(neg.numpy())
    assert float(1.0 / neg) == float("-inf")
    assert not np.signbit(tf.constant(0.0).numpy())


def test_dtype_hint_does_not_leak_into_dtype():
    # A hint that cannot be honoured is ignored; a dtype that cannot be is an error.
    assert tf.convert_to_tensor(1.5, dtype_hint=tf.int32).dtype == tf.float32
    with pytest.raises(TypeError):
        tf.convert_to_tensor(1.5, dtype=tf.int32)
    assert tf.convert_to_tensor(7, dtype_hint=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor(7).dtype == tf.int32


# -- NumPy behaviour: tf.experimental.numpy (tnp) ----------------------------------------
# Every expected dtype and value below is what TensorFlow 2.21 printed for the same call.


@pytest.fixture
def numpy_behavior():
    """TensorFlow's NumPy behaviour for one test. TensorFlow has no way back; tapeflow's
    private one restores the default for the rest of the suite."""
    tnp.experimental_enable_numpy_behavior()
    yield tnp
    tnp._disable_numpy_behavior()


@pytest.fixture
def numpy_behavior_f32():
    tnp.experimental_enable_numpy_behavior(prefer_float32=True)
    yield tnp
    tnp._disable_numpy_behavior()


def test_tnp_is_tf_experimental_numpy():
    assert tf.experimental.numpy is tnp
    assert tnp.float32 is np.float32 and tnp.ndarray is tf.Tensor and tnp.newaxis is None


DTYPES = ["int32", "int64", "float32", "float64", "bool", "float16"]


def _operand(name):
    if name == "bool":
        return tf.constant([True, False])
    return tf.constant([3, 2], getattr(tf, name))


# `a + b` for a, b in DTYPES (rows a, columns b); IAE: InvalidArgumentError (AddV2 has
# no bool kernel). `*`, `//` and `-` follow the same table (bool * bool is bool: the
# operator multiplies as int32); `/` gives float64 for integers, as without the mode.
PROMOTED = {
    "int32": "int32 int64 float64 float64 int32 float64",
    "int64": "int64 int64 float64 float64 int64 float64",
    "float32": "float64 float64 float32 float64 float32 float32",
    "float64": "float64 float64 float64 float64 float64 float64",
    "bool": "int32 int64 float32 float64 IAE float16",
    "float16": "float64 float64 float32 float64 float16 float16",
}


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_operators_promote_as_numpy(a, b, numpy_behavior):
    want = PROMOTED[a].split()[DTYPES.index(b)]
    x, y = _operand(a), _operand(b)
    if want == "IAE":
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[Op:AddV2\]"):
            x + y
        return
    total = x + y
    assert total.dtype.name == want
    np.testing.assert_array_equal(total.numpy(), np.asarray(x) + np.asarray(y))
    assert (x * y).dtype.name == want
    np.testing.assert_array_equal((x < y).numpy(), np.asarray(x) < np.asarray(y))
    divisor = tf.constant([True, True]) if b == "bool" else y  # no division by False
    assert (x / divisor).dtype.name == ("float64" if want in ("int32", "int64") else want)


# `t + s` for a Python int, float, bool and NumPy float64, float32, int64 scalar s (the
# same with s on the left). Python scalars are "weak" (NumPy 2's rule); with
# prefer_float32 a Python float (and a NumPy float64 scalar, as in TensorFlow) is float32.
SCALARS = [2, 2.5, True, np.float64(2.5), np.float32(2.5), np.int64(2)]
WITH_SCALARS = {
    False: {
        "int32": "int32 float64 int32 float64 float64 int64",
        "int64": "int64 float64 int64 float64 float64 int64",
        "float32": "float32 float32 float32 float64 float32 float64",
        "float64": "float64 float64 float64 float64 float64 float64",
        "bool": "int64 float64 IAE float64 float32 int64",
        "float16": "float16 float16 float16 float64 float32 float64",
    },
    True: {
        "int32": "int32 float64 int32 float64 float64 int64",
        "int64": "int64 float64 int64 float64 float64 int64",
        "float32": "float32 float32 float32 float32 float32 float64",
        "float64": "float64 float64 float64 float64 float64 float64",
        "bool": "int64 float32 IAE float32 float32 int64",
        "float16": "float16 float32 float16 float32 float32 float64",
    },
}


@pytest.mark.parametrize("prefer_float32", [False, True])
@pytest.mark.parametrize("a", DTYPES)
def test_operators_promote_python_and_numpy_scalars(a, prefer_float32):
    tnp.experimental_enable_numpy_behavior(prefer_float32=prefer_float32)
    try:
        x = _operand(a)
        for s, want in zip(SCALARS, WITH_SCALARS[prefer_float32][a].split()):
            if want == "IAE":
                with pytest.raises(tf.errors.InvalidArgumentError):
                    x + s
                continue
            for total in (x + s, s + x):
                assert total.dtype.name == want, (a, s)
                np.testing.assert_allclose(total.numpy(), np.asarray(x) + s)
    finally:
        tnp._disable_numpy_behavior()


def test_variables_promote_as_the_tutorial_shows(numpy_behavior):
    # seed 004: array([4.1400001, 5.1400001]) as float64 (3.14 is read as float32 first)
    total = tf.Variable([1, 2]) + tf.Variable([3.14, 3.14])
    assert total.dtype == tf.float64
    np.testing.assert_array_equal(total.numpy(), [4.140000104904175, 5.140000104904175])
    assert (tf.Variable([1.0, 2.0]) + tf.Variable([3.14, 3.14])).dtype == tf.float32
    assert (tf.Variable([1, 2]) * 2.5).dtype == tf.float64


def test_promotion_covers_operators_only(numpy_behavior):
    # tf.add and friends still never promote (TensorFlow 2.21: InvalidArgumentError).
    ints, floats = tf.constant([1, 2]), tf.constant([1.5, 2.5])
    for fn in (tf.add, tf.multiply, tf.maximum, tf.less):
        with pytest.raises(tf.errors.InvalidArgumentError):
            fn(ints, floats)
    np.testing.assert_array_equal((ints == tf.constant([1.0, 2.5])).numpy(), [True, False])
    np.testing.assert_array_equal((ints != tf.constant([1.0, 2.5])).numpy(), [False, True])
    sums = ints + [1.5, 2.5]  # a list is read as NumPy would (TF: float64 [2.5, 4.5])
    assert sums.dtype == tf.float64
    np.testing.assert_array_equal(sums.numpy(), [2.5, 4.5])
    assert (ints + (1, 2)).dtype == tf.int32
    assert (tf.constant([1, 2], tf.uint8) + tf.constant([1, 2], tf.int8)).dtype == tf.int16
    assert (ints == None) is False and (ints != None) is True


def test_matmul_operator_is_numpys_matmul(numpy_behavior):
    v = tf.constant([1.0, 2.0])
    assert float(v @ v) == 5.0  # TF 2.21: float32 5.0
    out = tf.constant([[1, 2]]) @ tf.constant([[1.5], [2.5]])
    assert out.dtype == tf.float64 and out.numpy().tolist() == [[6.5]]
    assert (tf.ones([3, 2, 3]) @ tf.ones([3])).shape == (3, 2)
    assert (tf.ones([3]) @ tf.ones([4, 3, 2])).shape == (4, 2)
    with pytest.raises(ValueError, match="Matrix size-incompatible"):
        tf.ones([2, 3]) @ tf.ones([2, 3])


def test_promoted_operators_are_differentiable_and_traceable(numpy_behavior):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * tf.constant([1, 2]) + 2.5)
    assert y.dtype == tf.float64 and float(y) == 10.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 2.0])
    f = tf.function(lambda a, b: (a * b + 1, a @ b))
    prod, dot = f(tf.constant([1, 2]), tf.constant([1.5, 2.5]))
    assert prod.dtype == tf.float64 and prod.numpy().tolist() == [2.5, 6.0]
    assert dot.dtype == tf.float64 and float(dot) == 6.5


def test_numpy_methods_exist_only_with_numpy_behavior():
    t = tf.constant([[1, 2], [3, 4]])
    for name in ("T", "reshape", "astype", "ravel", "clip", "size", "tolist", "data"):
        with pytest.raises(AttributeError, match="experimental_enable_numpy_behavior"):
            getattr(t, name)
    with pytest.raises(TypeError, match="__round__"):
        round(tf.constant(2.5))
    with pytest.raises(tf.errors.InvalidArgumentError):
        t + tf.constant([[1.5]])


def test_numpy_methods(numpy_behavior):
    t = tf.constant([[1, 2], [3, 4]])
    assert t.T.numpy().tolist() == [[1, 3], [2, 4]]
    assert tf.ones([2, 3, 4]).T.shape == (4, 3, 2)
    for shaped in (t.reshape(4), t.reshape((4,)), t.reshape([2, -1]).reshape(-1),
                   t.ravel(), t.flatten()):
        assert shaped.numpy().tolist() == [1, 2, 3, 4]
    assert t.reshape(1, 4).shape == (1, 4)
    assert t.reshape(4, order="F").numpy().tolist() == [1, 3, 2, 4]
    assert t.flatten("F").numpy().tolist() == [1, 3, 2, 4]
    with pytest.raises(ValueError, match="Unsupported arguments"):
        t.reshape(newshape=(4,))
    assert t.transpose().numpy().tolist() == [[1, 3], [2, 4]]
    assert t.transpose((1, 0)).numpy().tolist() == [[1, 3], [2, 4]]
    assert t.astype(tf.float32).dtype == tf.float32
    assert t.astype(np.float64).dtype == tf.float64 and t.astype("int64").dtype == tf.int64
    assert t.astype(bool).dtype == tf.bool
    assert t.tolist() == [[1, 2], [3, 4]] and tf.constant(3.5).tolist() == 3.5
    assert t.data is t
    assert t.size == 4 and isinstance(t.size, np.int64)
    assert tf.ones([0, 3]).size == 0
    assert t.ndim == 2


@pytest.mark.parametrize("expr, dtype, want", [
    (lambda: tf.constant([1, 5]).clip(2, 3), "int32", [2, 3]),
    (lambda: tf.constant([1.0, 5.0]).clip(2, 3), "float32", [2.0, 3.0]),
    (lambda: tf.constant([1, 5]).clip(2.5, 3), "float64", [2.5, 3.0]),
    (lambda: tf.constant([1, 5]).clip(None, 3), "int32", [1, 3]),
    (lambda: tf.constant([1.0, 5.0]).clip(2, None), "float32", [2.0, 5.0]),
    (lambda: tf.constant([[1, 2], [3, 4]]).clip([1, 2], 3), "int32", [[1, 2], [3, 3]]),
    (lambda: tf.constant([1.0, 2.0]).clip(tf.constant([[0.0], [1.5]]), 3.0), "float32",
     [[1.0, 2.0], [1.5, 2.0]]),
    (lambda: tf.constant([1, 2]).clip(np.float32(1.5), 3), "float64", [1.5, 2.0]),
    (lambda: tf.constant([[1, 2], [3, 4]]).max(), "int32", 4),
    (lambda: tf.constant([[1, 2], [3, 4]]).max(axis=0), "int32", [3, 4]),
    (lambda: tf.constant([[1, 2], [3, 4]]).max(keepdims=True), "int32", [[4]]),
    (lambda: tf.constant([[1, 2], [3, 4]]).min(0), "int32", [1, 2]),
    (lambda: tf.constant([True, False]).max(), "bool", True),
    (lambda: tf.constant([True, False]).min(), "bool", False),
    (lambda: tf.constant([[1, 2], [3, 4]]).mean(), "float64", 2.5),
    (lambda: tf.constant([[1.0, 2.0], [3.0, 4.0]]).mean(axis=1), "float32", [1.5, 3.5]),
    (lambda: tf.constant([[1, 2], [3, 4]]).mean(axis=0, keepdims=True), "float64",
     [[2.0, 3.0]]),
    (lambda: tf.constant([[1, 2], [3, 4]]).mean(dtype=tnp.int32), "int32", 2),
    (lambda: tf.constant([True, False]).mean(), "float64", 0.5),
    (lambda: round(tf.constant([1.5, 2.5])), "float32", [2.0, 2.0]),
    (lambda: round(tf.constant(2.5)), "float32", 2.0),
    (lambda: round(tf.constant([1.25, 2.5]), 1), "float32", [1.2000000476837158, 2.5]),
    (lambda: round(tf.constant([1.25, 2.5], tf.float64), 1), "float64", [1.2, 2.5]),
    # TensorFlow's factor 10**-1 is a float32 0.1: 25 * 0.1 rounds to 3, and 3 / 0.1
    # truncates to 29.
    (lambda: round(tf.constant([1, 25, 14, 35]), -1), "int32", [0, 29, 9, 39]),
])
def test_numpy_method_values(expr, dtype, want, numpy_behavior):
    out = expr()
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), want)


def test_numpy_method_errors(numpy_behavior):
    t = tf.constant([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="Not more than one of `a_min` and `a_max`"):
        t.clip(None, None)
    with pytest.raises(ValueError, match="Setting out is not supported"):
        t.mean(out=1)
    with pytest.raises(ValueError, match="Unsupported order argument X"):
        t.reshape([4], order="X")
    with pytest.raises(TypeError):
        t.transpose(1, 0)


def test_variables_get_no_numpy_methods(numpy_behavior):
    # seed 004: AttributeError: 'ResourceVariable' object has no attribute 'reshape'
    v = tf.Variable([1, 2, 3, 4])
    for name in ("reshape", "T", "astype", "tolist", "size"):
        with pytest.raises(AttributeError):
            getattr(v, name)


def test_dtype_conversion_modes():
    with pytest.raises(ValueError, match="promotion mode bogus does not exist"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="bogus")
    with pytest.raises(NotImplementedError, match="safe"):
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="safe")
    tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="off")
    try:  # methods, but no promotion
        assert tf.constant([1, 2]).reshape(2, 1).shape == (2, 1)
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.constant([1, 2]) + tf.constant([1.5, 2.5])
    finally:
        tnp._disable_numpy_behavior()


@pytest.mark.parametrize("expr, dtype, want", [
    (lambda: tnp.array([1, 2]), "int64", [1, 2]),
    (lambda: tnp.array([1, 2.5]), "float64", [1.0, 2.5]),
    (lambda: tnp.array(2.5), "float64", 2.5),
    (lambda: tnp.array([True, False]), "bool", [True, False]),
    (lambda: tnp.array([True, 1]), "int64", [1, 1]),
    (lambda: tnp.array([1, 2], dtype=tnp.float32), "float32", [1.0, 2.0]),
    (lambda: tnp.array([1, 2], dtype="float32"), "float32", [1.0, 2.0]),
    (lambda: tnp.array([1, 2], dtype=tf.float32), "float32", [1.0, 2.0]),
    (lambda: tnp.array([1, 2], dtype=float), "float64", [1.0, 2.0]),
    (lambda: tnp.array([1.7, -1.7], dtype=tnp.int32), "int32", [1, -1]),
    (lambda: tnp.array(tf.constant([1, 2])), "int32", [1, 2]),
    (lambda: tnp.array(tf.Variable([1, 2])), "int32", [1, 2]),
    (lambda: tnp.array(np.array([1.0, 2.0], np.float32)), "float32", [1.0, 2.0]),
    (lambda: tnp.array([1, np.float32(2.5)]), "float32", [1.0, 2.5]),
    (lambda: tnp.array([tf.constant(1.5), 2]), "float32", [1.5, 2.0]),
    (lambda: tnp.array([]), "float64", []),
    (lambda: tnp.asarray([1, 2.5]), "float64", [1.0, 2.5]),
    (lambda: tnp.asarray([[1.5], [2]]), "float64", [[1.5], [2.0]]),
    (lambda: tnp.asarray(tf.constant([1, 2]), dtype=tnp.float64), "float64", [1.0, 2.0]),
    (lambda: tnp.zeros([2]), "float64", [0.0, 0.0]),
    (lambda: tnp.zeros((2, 3), dtype=tnp.int32), "int32", [[0] * 3] * 2),
    (lambda: tnp.zeros(2), "float64", [0.0, 0.0]),
    (lambda: tnp.ones([2]), "float64", [1.0, 1.0]),
    (lambda: tnp.ones([2], dtype=bool), "bool", [True, True]),
    (lambda: tnp.zeros_like([1, 2]), "int64", [0, 0]),
    (lambda: tnp.zeros_like(tf.constant([1.0, 2.0]), dtype=tnp.int32), "int32", [0, 0]),
    (lambda: tnp.ones_like([True]), "bool", [True]),
    (lambda: tnp.arange(3), "int64", [0, 1, 2]),
    (lambda: tnp.arange(0, 1, 0.25), "float64", [0.0, 0.25, 0.5, 0.75]),
    (lambda: tnp.arange(5, 1, -1), "int64", [5, 4, 3, 2]),
    (lambda: tnp.arange(5, 1), "int64", []),
    (lambda: tnp.arange(tf.constant(3)), "int32", [0, 1, 2]),
    (lambda: tnp.sum(tf.constant([1, 2])), "int64", 3),
    (lambda: tnp.sum(tf.constant([1.0, 2.0])), "float32", 3.0),
    (lambda: tnp.sum(tf.constant([True, False])), "int64", 1),
    (lambda: tnp.sum(tf.constant([True, False]), dtype=bool), "bool", True),
    (lambda: tnp.sum([1, 2]), "int64", 3),
    (lambda: tnp.sum(tf.constant([[1, 2], [3, 4]]), axis=1), "int64", [3, 7]),
    (lambda: tnp.sum(tf.constant([[1.0, 2.0], [3.0, 4.0]]), axis=0, keepdims=True),
     "float32", [[4.0, 6.0]]),
    (lambda: tnp.sum(tf.constant([1, 2]), dtype=tnp.float32), "float32", 3.0),
    # TensorFlow sums unsigned ints as uint64 (NumPy's), a dtype tapeflow lacks: int64.
    (lambda: tnp.sum(tf.constant([1, 2], tf.uint8)), "int64", 3),
    (lambda: tnp.sum(tf.constant([[200, 100], [1, 2]], tf.uint8), axis=0), "int64",
     [201, 102]),
    (lambda: tnp.mean(tf.constant([1, 2], tf.uint8)), "float64", 1.5),
    (lambda: tnp.mean(tf.constant([1, 2])), "float64", 1.5),
    (lambda: tnp.mean(tf.constant([1.0, 2.0], tf.float16)), "float16", 1.5),
    (lambda: tnp.mean([1.5, 2]), "float64", 1.75),
    (lambda: tnp.mean(tf.constant([[1, 2], [3, 5]]), axis=0), "float64", [2.0, 3.5]),
    (lambda: tnp.max([1, 3]), "int64", 3),
    (lambda: tnp.amax(tf.constant([[1, 2], [3, 4]]), axis=0), "int32", [3, 4]),
    (lambda: tnp.min(tf.constant([True, False])), "bool", False),
    (lambda: tnp.amin([1.5, 0.5]), "float64", 0.5),
    (lambda: tnp.exp(tf.constant([1, 2])), "float64", [2.718281828459045, 7.38905609893065]),
    (lambda: tnp.exp(tf.constant([True])), "float64", [2.718281828459045]),
    (lambda: tnp.exp(1), "float64", 2.718281828459045),
    (lambda: tnp.exp(tf.constant([1.0], tf.float16)), "float16", [2.71875]),
    (lambda: tnp.sqrt(tf.constant([1, 4])), "float64", [1.0, 2.0]),
    (lambda: tnp.log([1.0, 2.0]), "float64", [0.0, 0.6931471805599453]),
    (lambda: tnp.sin(2), "float64", 0.9092974268256817),
    (lambda: tnp.cos([0, 1]), "float64", [1.0, 0.5403023058681398]),
    (lambda: tnp.tanh(tf.constant([0.5], tf.float64)), "float64", [0.46211715726000974]),
    (lambda: tnp.abs(tf.constant([-1, 2])), "int32", [1, 2]),
    (lambda: tnp.abs([-1.5]), "float64", [1.5]),
    (lambda: tnp.maximum(tf.constant([1, 5]), tf.constant([3.0, 2.0])), "float64",
     [3.0, 5.0]),
    (lambda: tnp.minimum(tf.constant([True, False]), True), "bool", [True, False]),
    (lambda: tnp.clip(tf.constant([1, 5]), 2, 3), "int32", [2, 3]),
    (lambda: tnp.matmul([[1, 2]], [[3], [4]]), "int64", [[11]]),
    (lambda: tnp.matmul(tf.ones([2, 3]), [1, 2, 3]), "float32", [6.0, 6.0]),
    (lambda: tnp.reshape([1, 2, 3, 4], (2, 2)), "int64", [[1, 2], [3, 4]]),
    (lambda: tnp.reshape([1, 2, 3, 4], (2, 2), order="F"), "int64", [[1, 3], [2, 4]]),
    (lambda: tnp.reshape(tf.constant([1, 2, 3, 4]), -1), "int32", [1, 2, 3, 4]),
    (lambda: tnp.ravel([[1, 2], [3, 4]]), "int64", [1, 2, 3, 4]),
    (lambda: tnp.transpose([[1.0, 2.0]]), "float64", [[1.0], [2.0]]),
    (lambda: tnp.transpose(tf.constant([[1, 2]]), axes=[1, 0]), "int32", [[1], [2]]),
])
def test_tnp_functions(expr, dtype, want):
    out = expr()
    assert out.dtype.name == dtype
    np.testing.assert_allclose(np.asarray(out, dtype=np.float64), want, rtol=1e-7)


@pytest.mark.parametrize("expr, dtype", [
    (lambda: tnp.array([1, 2.5]), "float32"),
    (lambda: tnp.asarray(2.5), "float32"),
    (lambda: tnp.array(np.float64(2.5)), "float32"),  # a float64 scalar too, as TF
    (lambda: tnp.array([1, 2]), "int64"),
    (lambda: tnp.zeros([2]), "float64"),  # dtype=float is NumPy's float64 still
    (lambda: tnp.zeros([2], dtype=None), "float32"),
    (lambda: tnp.zeros_like([1.0, 2.0]), "float32"),
    (lambda: tnp.arange(0, 1, 0.25), "float32"),
    (lambda: tnp.mean(tf.constant([1, 2])), "float64"),  # integers average in float64
    (lambda: tnp.exp(tf.constant([1, 2])), "float64"),
    (lambda: tnp.exp(2.5), "float32"),
    (lambda: tnp.sum([1.5, 2]), "float32"),
])
def test_tnp_functions_prefer_float32(expr, dtype, numpy_behavior_f32):
    assert expr().dtype.name == dtype


def test_tnp_arange_of_floats_is_computed_in_float32_as_tensorflow():
    # TensorFlow's tnp.arange casts tf.range of the Python floats (float32) to the dtype,
    # so unlike NumPy's np.arange(0, 1, 0.1), [3] is 0.30000001192092896 in float64.
    out = tnp.arange(0, 1, 0.1)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(
        out.numpy(), np.arange(0, 1, 0.1, dtype=np.float32).astype(np.float64))
    assert out.numpy()[3] == 0.30000001192092896 != np.arange(0, 1, 0.1)[3]
    np.testing.assert_array_equal(
        tnp.arange(0.5, 2, 0.3).numpy(),
        [0.5, 0.800000011920929, 1.100000023841858, 1.4000000953674316, 1.7000000476837158])
    ints = tnp.arange(0, 3, 0.5, dtype=tnp.int32)  # NumPy: six zeros
    assert ints.dtype == tf.int32 and ints.numpy().tolist() == [0, 0, 1, 1, 2, 2]


def test_operators_leave_operands_of_the_result_dtype_alone(numpy_behavior):
    # A same-dtype Variable, and Python scalars NumPy's promotion does not change the
    # dtype of, go to the op as they are: values, dtypes and gradients as TensorFlow's.
    x, v = tf.constant([1.0, 2.0]), tf.Variable([3.0, 4.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * v + v * 2 + 2.5 * v)
    assert y.dtype == tf.float32 and float(y) == 42.5
    np.testing.assert_array_equal(tape.gradient(y, v).numpy(), [5.5, 6.5])
    h = tf.constant([1.5], tf.float16)
    for out, want in ((h * 3, 4.5), (3 - h, 1.5), (h * 2.0, 3.0), (h + 2**20, np.inf)):
        assert out.dtype == tf.float16 and out.numpy().tolist() == [want]
    total = tf.constant([200], tf.uint8) + 50
    assert total.dtype == tf.uint8 and total.numpy().tolist() == [250]
    assert not np.any(tf.constant([1, 2]) == 2**40)  # TF 2.21: [False, False]


def test_tnp_result_type():
    assert tnp.result_type(np.int32, 2.5) == tf.float64
    assert tnp.result_type(tf.constant([1]), 2.5) == tf.float64
    assert tnp.result_type(tf.int32, tf.float32) == tf.float64
    assert tnp.result_type(1, True) == tf.int64
    assert tnp.result_type([1, 2.5]) == tf.float64


def test_numpy_array_of_a_variable_is_a_copy():
    v = tf.Variable([1.0, 2.0])
    read = v.read_value()
    array = np.asarray(v)
    array += 10.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(read.numpy(), [1.0, 2.0])


def test_bitwise_operators_on_integer_tensors():
    # TensorFlow's BitwiseAnd/Or/Xor and Invert (NumPy's numbers), compiled too.
    a, b = np.array([6, -3, 12], np.int32), np.array([3, 5, -8], np.int32)
    x, y = tf.constant(a), tf.constant(b)
    for got, want in ((x & y, a & b), (x | y, a | b), (x ^ y, a ^ b), (~x, ~a), (3 | x, 3 | a)):
        assert got.dtype == tf.int32
        np.testing.assert_array_equal(got.numpy(), want)
    both = tf.function(lambda x, y: (x & y) ^ ~(x | y))
    np.testing.assert_array_equal(both(x, y).numpy(), (a & b) ^ ~(a | b))
