"""Tutorial conformance: seed 004, a data-science lecture notebook (Korean).

Each test runs one eager cell of ../shared/seeds/004_*.txt as written, with
`import tapeflow as tf` and numpy as np, and checks the output the page shows:
reprs, shapes, dtypes and exception classes. Cells that are pure Python/NumPy and
IPython help (`?`) are not here. The `tnp.experimental_enable_numpy_behavior()` cells run
with NumPy behaviour switched off again afterwards (the page keeps it on; TensorFlow has
no way back, tapeflow's tests need one).
"""
# ruff: noqa: B018, RUF059  (tutorial code is kept as the page writes it)

import inspect
import os

import numpy as np
import pytest

import tapeflow as tf

# -- imports ----------------------------------------------------------------------------

def test_list_physical_devices_gpu():
    # The page's machine had one GPU: [PhysicalDevice(name='/physical_device:GPU:0',
    # device_type='GPU')]. tapeflow must answer truthfully for this machine.
    gpus = tf.config.experimental.list_physical_devices('GPU')
    assert isinstance(gpus, list)
    has_gpu = os.path.exists("/dev/nvidia0")
    assert bool(gpus) == has_gpu
    for i, d in enumerate(gpus):
        assert d.device_type == 'GPU'
        assert d.name == f'/physical_device:GPU:{i}'
        assert repr(d) == (
            f"PhysicalDevice(name='/physical_device:GPU:{i}', device_type='GPU')")


# -- max, min, sum, mean ----------------------------------------------------------------

def test_constant_repr():
    a = tf.constant([1.0,2.0,3.0,4.0])
    assert repr(a) == (
        "<tf.Tensor: shape=(4,), dtype=float32, numpy=array([1., 2., 3., 4.], "
        "dtype=float32)>")


def test_builtin_max_min():
    a = tf.constant([1.0,2.0,3.0,4.0])
    assert repr(max(a)) == "<tf.Tensor: shape=(), dtype=float32, numpy=4.0>"
    assert repr(min(a)) == "<tf.Tensor: shape=(), dtype=float32, numpy=1.0>"


def test_reduce_mean():
    a = tf.constant([1.0,2.0,3.0,4.0])
    assert repr(tf.reduce_mean(a)) == "<tf.Tensor: shape=(), dtype=float32, numpy=2.5>"


def test_reduce_mean_int32_truncates():
    # int 자체에서 계산하면 평균이 2로 나옴
    assert repr(tf.reduce_mean(tf.constant([1,2,3,4]))) == (
        "<tf.Tensor: shape=(), dtype=int32, numpy=2>")


# -- concat, stack ----------------------------------------------------------------------

def _abcd_4d():
    a = tf.reshape(tf.constant(range(2*3*4*5)),(2,3,4,5))
    b = -a
    return a, b


@pytest.mark.parametrize("axis, expected", [
    (0, "TensorShape([2, 2, 3, 4, 5])"),
    (1, "TensorShape([2, 2, 3, 4, 5])"),
    (2, "TensorShape([2, 3, 2, 4, 5])"),
    (3, "TensorShape([2, 3, 4, 2, 5])"),
    (-1, "TensorShape([2, 3, 4, 5, 2])"),
])
def test_stack_4d(axis, expected):
    a, b = _abcd_4d()
    assert a.dtype == tf.int32 and a.shape == (2, 3, 4, 5)
    assert repr(tf.stack([a,b],axis=axis).shape) == expected


def _abc_3d():
    a = tf.reshape(tf.constant(range(2*3*4)),(2,3,4))
    b = -a
    c = 2*a
    return a, b, c


@pytest.mark.parametrize("axis, expected", [
    (0, "TensorShape([6, 3, 4])"),
    (1, "TensorShape([2, 9, 4])"),
    (-1, "TensorShape([2, 3, 12])"),
])
def test_concat_3d(axis, expected):
    a, b, c = _abc_3d()
    assert repr(tf.concat([a,b,c],axis=axis).shape) == expected


@pytest.mark.parametrize("axis, expected", [
    (0, "TensorShape([3, 2, 3, 4])"),
    (1, "TensorShape([2, 3, 3, 4])"),
    (2, "TensorShape([2, 3, 3, 4])"),
    (-1, "TensorShape([2, 3, 4, 3])"),
])
def test_stack_3d(axis, expected):
    a, b, c = _abc_3d()
    assert repr(tf.stack([a,b,c],axis=axis).shape) == expected


def test_stack_and_concat_values():
    a, b, c = _abc_3d()
    s = tf.stack([a,b,c],axis=-1)
    np.testing.assert_array_equal(
        s.numpy(), np.stack([a.numpy(), -a.numpy(), 2 * a.numpy()], axis=-1))
    k = tf.concat([a,b,c],axis=1)
    np.testing.assert_array_equal(
        k.numpy(), np.concatenate([a.numpy(), -a.numpy(), 2 * a.numpy()], axis=1))
    assert s.dtype == tf.int32 and k.dtype == tf.int32


def _ab_mismatched():
    a = tf.reshape(tf.constant(range(2*3*4)),(2,3,4))
    b = tf.reshape(-tf.constant(range(4*3*4)),(4,3,4))
    return a, b


def test_concat_mismatched_shapes():
    a, b = _ab_mismatched()
    assert repr(a.shape) == "TensorShape([2, 3, 4])"
    assert repr(b.shape) == "TensorShape([4, 3, 4])"
    assert repr(tf.concat([a,b],axis=0).shape) == "TensorShape([6, 3, 4])"


@pytest.mark.parametrize("axis", [1, 2])
def test_concat_mismatched_shapes_raises(axis):
    # InvalidArgumentError: ConcatOp : Dimensions of inputs should match:
    # shape[0] = [2,3,4] vs. shape[1] = [4,3,4] [Op:ConcatV2] name: concat
    a, b = _ab_mismatched()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"ConcatV2"):
        tf.concat([a,b],axis=axis).shape


# -- (2,2) @ (2,) -----------------------------------------------------------------------

def _I_x():
    I = tf.constant([[1.0,0.0],[0.0,1.0]])
    x = tf.constant([77.0,-88.0])
    return I, x


def test_matmul_vector_matrix_raises():
    # InvalidArgumentError: In[0] and In[1] has different ndims: [2] vs. [2,2] [Op:MatMul]
    I, x = _I_x()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"MatMul"):
        x @ I


def test_matmul_matrix_vector_raises():
    # InvalidArgumentError: In[0] and In[1] has different ndims: [2,2] vs. [2] [Op:MatMul]
    I, x = _I_x()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"MatMul"):
        I @ x


def test_matmul_operand_reprs():
    I, x = _I_x()
    assert repr(x) == (
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 77., -88.], dtype=float32)>")
    assert repr(I) == (
        "<tf.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
        "array([[1., 0.],\n"
        "       [0., 1.]], dtype=float32)>")


def test_reshape_signature():
    # <function tensorflow.python.ops.array_ops.reshape(tensor, shape, name=None)>
    params = inspect.signature(tf.reshape).parameters
    assert list(params) == ["tensor", "shape", "name"]
    assert params["name"].default is None


def test_reshape_minus_one():
    I, x = _I_x()
    assert repr(tf.reshape(x,-1)) == (
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 77., -88.], dtype=float32)>")


def test_matmul_with_column_and_row():
    I, x = _I_x()
    assert repr(I @ tf.reshape(x,(2,1))) == (
        "<tf.Tensor: shape=(2, 1), dtype=float32, numpy=\n"
        "array([[ 77.],\n"
        "       [-88.]], dtype=float32)>")
    assert repr(tf.reshape(x,(1,2)) @ I) == (
        "<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[ 77., -88.]], "
        "dtype=float32)>")


def test_matmul_size_incompatible_raises():
    # InvalidArgumentError: Matrix size-incompatible: In[0]: [2,1], In[1]: [2,2] [Op:MatMul]
    I, x = _I_x()
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"MatMul"):
        tf.reshape(x,(2,1)) @ I


# -- tf.Variable ------------------------------------------------------------------------

def test_variable_reprs():
    assert repr(tf.Variable([1,2,3,4])) == (
        "<tf.Variable 'Variable:0' shape=(4,) dtype=int32, numpy=array([1, 2, 3, 4], "
        "dtype=int32)>")
    assert repr(tf.Variable([1.0,2.0,3.0,4.0])) == (
        "<tf.Variable 'Variable:0' shape=(4,) dtype=float32, numpy=array([1., 2., 3., 4.], "
        "dtype=float32)>")


def test_variable_from_constant():
    _a = tf.Variable([1,2,3,4])
    assert isinstance(_a, tf.Variable)
    assert repr(tf.Variable(tf.constant([1,2,3,4]))) == (
        "<tf.Variable 'Variable:0' shape=(4,) dtype=int32, numpy=array([1, 2, 3, 4], "
        "dtype=int32)>")


def test_variable_from_numpy_keeps_int64():
    assert repr(tf.Variable(np.array([1,2,3,4]))) == (
        "<tf.Variable 'Variable:0' shape=(4,) dtype=int64, numpy=array([1, 2, 3, 4])>")


def test_types():
    # EagerTensor / numpy.ndarray / ResourceVariable on the page.
    assert isinstance(tf.constant([1,2,3,4]), tf.Tensor)
    assert type(np.array([1,2,3,4])) is np.ndarray
    v = tf.Variable(np.array([1,2,3,4]))
    assert isinstance(v, tf.Variable) and not isinstance(v, tf.Tensor)


def test_variable_indexing():
    a = tf.Variable([1,2,3,4])
    assert repr(a) == (
        "<tf.Variable 'Variable:0' shape=(4,) dtype=int32, numpy=array([1, 2, 3, 4], "
        "dtype=int32)>")
    assert repr(a[0]) == "<tf.Tensor: shape=(), dtype=int32, numpy=1>"
    assert repr(a[:2]) == (
        "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>")
    # type(a[:2]) # tf.constant랑 같은 타입
    assert type(a[:2]) is type(tf.constant([1, 2]))


def test_variable_arithmetic_gives_tensor_1():
    a = tf.Variable([1,2,3,4])
    b = -a
    assert isinstance(a, tf.Variable)
    assert type(b) is type(tf.constant(1))
    assert repr(a+b) == (
        "<tf.Tensor: shape=(4,), dtype=int32, numpy=array([0, 0, 0, 0], dtype=int32)>")
    assert type(a+b) is type(tf.constant(1))


def test_variable_arithmetic_gives_tensor_2():
    a = tf.Variable([1,2,3,4])
    b = tf.Variable([-1,-2,-3,-4])
    assert isinstance(a, tf.Variable) and isinstance(b, tf.Variable)
    assert repr(a+b) == (
        "<tf.Tensor: shape=(4,), dtype=int32, numpy=array([0, 0, 0, 0], dtype=int32)>")
    assert type(a+b) is type(tf.constant(1))


def test_variable_add_int_float_raises():
    # InvalidArgumentError: cannot compute AddV2 as input #1(zero-based) was expected to
    # be a int32 tensor but is a float tensor [Op:AddV2]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"AddV2"):
        tf.Variable([1,2]) + tf.Variable([3.14,3.14])


def test_variable_add_float():
    assert repr(tf.Variable([1.0,2.0]) + tf.Variable([3.14,3.14])) == (
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([4.1400003, 5.1400003], "
        "dtype=float32)>")


def test_variable_has_no_reshape_method():
    # AttributeError: 'ResourceVariable' object has no attribute 'reshape'
    with pytest.raises(AttributeError):
        tf.Variable([1,2,3,4]).reshape(2,2)


@pytest.fixture
def tnp_cell():
    """The page's cell `import tensorflow.experimental.numpy as tnp;
    tnp.experimental_enable_numpy_behavior()`, undone after the test."""
    import tapeflow.experimental.numpy as tnp
    tnp.experimental_enable_numpy_behavior()
    yield tnp
    tnp._disable_numpy_behavior()


def test_tnp_promotes_int_and_float_variables(tnp_cell):
    # - 알아서 형 변환 (the error above is gone)
    assert repr(tf.Variable([1,2]) + tf.Variable([3.14,3.14])) == (
        "<tf.Tensor: shape=(2,), dtype=float64, numpy=array([4.1400001, 5.1400001])>")


def test_tnp_gives_variables_no_reshape_method(tnp_cell):
    # - .reshape 메소드: AttributeError: 'ResourceVariable' object has no attribute
    # 'reshape' (이건 tnp에서 되지 않음); a Tensor has it now
    with pytest.raises(AttributeError, match="reshape"):
        tf.Variable([1,2,3,4]).reshape(2,2)
    assert tf.constant([1,2,3,4]).reshape(2,2).shape == (2, 2)


def test_concat_variables():
    a = tf.Variable([[1,2],[3,4]])
    b = tf.Variable([[-1,-2],[-3,-4]])
    r = tf.concat([a,b],axis=0)
    assert repr(r) == (
        "<tf.Tensor: shape=(4, 2), dtype=int32, numpy=\n"
        "array([[ 1,  2],\n"
        "       [ 3,  4],\n"
        "       [-1, -2],\n"
        "       [-3, -4]], dtype=int32)>")
    assert type(r) is type(tf.constant(1))  # 어 tensor네


def test_stack_variables():
    a = tf.Variable([[1,2],[3,4]])
    b = tf.Variable([[-1,-2],[-3,-4]])
    r = tf.stack([a,b],axis=0)
    assert repr(r) == (
        "<tf.Tensor: shape=(2, 2, 2), dtype=int32, numpy=\n"
        "array([[[ 1,  2],\n"
        "        [ 3,  4]],\n"
        "\n"
        "       [[-1, -2],\n"
        "        [-3, -4]]], dtype=int32)>")
    assert type(r) is type(tf.constant(1))


def test_assign_add_keeps_identity():
    a = tf.Variable([1,2,3,4])
    before = id(a)
    a.assign_add([-1,-2,-3,-4])
    assert id(a) == before
    np.testing.assert_array_equal(a.numpy(), [0, 0, 0, 0])
    assert a.dtype == tf.int32


# -- tf.GradientTape() 사용방법 -----------------------------------------------------------

def test_tape_methods():
    x = tf.Variable(2.0)  # 미분하고 싶은 값을 tf.Variable로 잡아라
    a = tf.constant(3.0)
    mytape = tf.GradientTape()
    public = {n for n in dir(mytape) if not n.startswith("_")}
    # dir(mytape) on the page lists these public methods (plus private attributes).
    assert {'batch_jacobian', 'gradient', 'jacobian', 'reset', 'stop_recording',
            'watch', 'watched_variables'} <= public
    assert '__enter__' in dir(mytape) and '__exit__' in dir(mytape)
    del x, a


def test_example1_enter_exit():
    x = tf.Variable(2.0)
    a = tf.constant(3.0)
    mytape = tf.GradientTape()
    mytape.__enter__()  # 기록 시작
    y = a*x**2  # y=ax^2 = 3x^2
    mytape.__exit__(None,None,None)  # 기록 끝
    assert repr(mytape.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=12.0>")


def test_example2_a_depends_on_x():
    x = tf.Variable(2.0)
    # a = tf.constant(3.0)

    mytape = tf.GradientTape()
    mytape.__enter__()  # 기록 시작
    a = x/2*3  # a = (3/2)x
    y = a*x**2  # y=ax^2 = (3/2)x^3
    mytape.__exit__(None,None,None)  # 기록 끝

    assert repr(mytape.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>")


def test_example3_a_computed_before_tape_opens():
    x = tf.Variable(2.0)
    a = (x/2)*3

    mytape = tf.GradientTape()
    mytape.__enter__()  # 기록 시작
    y = a*x**2
    mytape.__exit__(None,None,None)  # 기록 끝

    # 연습장 밖에서 정의한 a, 컴퓨터는 이 식을 모른다.
    assert repr(mytape.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=12.0>")


def test_example4_with_statement():
    x = tf.Variable(2.0)
    a = (x/2)*3
    with tf.GradientTape() as mytape:
        ## with 문 시작
        y = a*x**2
        ## with문 끝
    assert repr(mytape.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=12.0>")


def test_example5_with_statement():
    x = tf.Variable(2.0)

    with tf.GradientTape() as myname:
        a = x/2*3
        y = a*x**2

    assert repr(myname.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>")


def test_example6_non_persistent_second_call_raises():
    x = tf.Variable(2.0)

    with tf.GradientTape() as myname:
        a = x/2*3
        y = a*x**2
    assert repr(myname.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>")
    # RuntimeError: A non-persistent GradientTape can only be used to compute one set
    # of gradients (or jacobians)
    with pytest.raises(RuntimeError, match=r"A non-persistent GradientTape can only be "
                                           r"used to compute one set of gradients"):
        myname.gradient(y,x)


def test_example6_persistent_second_call():
    x = tf.Variable(2.0)

    with tf.GradientTape(persistent=True) as myname:
        a = x/2*3
        y = a*x**2
    first = myname.gradient(y,x)
    second = myname.gradient(y,x)
    assert repr(first) == "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>"
    assert repr(second) == "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>"


def test_example7_watch(capsys):
    # (관찰1) Variable: watched automatically.
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as myname:
        a = x/2*3
        y = a*x**2
    assert repr(myname.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>")

    # (관찰2) constant: not watched.
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as myname:
        a = x/2*3
        y = a*x**2
    myname.gradient(y,x)
    print(myname.gradient(y,x))

    # constant + watch
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as myname:
        myname.watch(x)
        a = x/2*3
        y = a*x**2
    print(myname.gradient(y,x))

    # watch_accessed_variables=False: a Variable is not watched.
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True,watch_accessed_variables=False) as myname:
        a = x/2*3
        y = a*x**2
    myname.gradient(y,x)
    print(myname.gradient(y,x))

    assert capsys.readouterr().out == (
        "None\n"
        "tf.Tensor(18.0, shape=(), dtype=float32)\n"
        "None\n")

    # (관찰5) Variable + explicit watch (생략해도 되는 코드)
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as myname:
        myname.watch(x)
        a = x/2*3
        y = a*x**2
    assert repr(myname.gradient(y,x)) == (
        "<tf.Tensor: shape=(), dtype=float32, numpy=18.0>")


# -- the tf.GradientTape docstring, as shown by `tf.GradientTape?` --------------------------

def test_docstring_first_example(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)
    print(dy_dx)
    assert capsys.readouterr().out == "tf.Tensor(6.0, shape=(), dtype=float32)\n"


def test_docstring_nested(capsys):
    x = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        with tf.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
    d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
    print(dy_dx)
    print(d2y_dx2)
    assert capsys.readouterr().out == (
        "tf.Tensor(10.0, shape=(), dtype=float32)\n"
        "tf.Tensor(2.0, shape=(), dtype=float32)\n")


def test_docstring_persistent(capsys):
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx = g.gradient(z, x)  # (4*x^3 at x = 3)
    print(dz_dx)
    dy_dx = g.gradient(y, x)
    print(dy_dx)
    assert capsys.readouterr().out == (
        "tf.Tensor(108.0, shape=(), dtype=float32)\n"
        "tf.Tensor(6.0, shape=(), dtype=float32)\n")


def test_docstring_watch_accessed_variables_false(capsys):
    x = tf.Variable(2.0)
    w = tf.Variable(5.0)
    with tf.GradientTape(
            watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x ** 2  # Gradients will be available for `x`.
        z = w ** 3  # No gradients will be available as `w` isn't being watched.
    dy_dx = tape.gradient(y, x)
    print(dy_dx)
    # No gradients will be available as `w` isn't being watched.
    dz_dy = tape.gradient(z, w)
    print(dz_dy)
    assert capsys.readouterr().out == (
        "tf.Tensor(4.0, shape=(), dtype=float32)\n"
        "None\n")


def test_docstring_keras_layers_watch_accessed_variables_false():
    # The docstring's Keras snippet (`inputs` is left undefined there): before `a` is
    # built, `a.variables` is empty, so nothing is watched and every gradient is None.
    inputs = tf.ones((2, 5))
    a = tf.keras.layers.Dense(32)
    b = tf.keras.layers.Dense(32)

    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a.variables)  # Since `a.build` has not been called at this point
        # `a.variables` will return an empty list and the
        # tape will not be watching anything.
        result = b(a(inputs))
        grads = tape.gradient(result, a.variables)  # The result of this computation
        # will be a list of `None`s since a's variables are not being watched.
    assert [tuple(v.shape) for v in a.variables] == [(5, 32), (32,)]
    assert grads == [None, None]
