"""Tutorial conformance: seed 002, small GradientTape notebook (Korean).

Each test runs one eager cell of ../shared/seeds/002_*.txt as written,
with `import tapeflow as tf`, and checks the output the page shows. Random weights:
shapes and relationships are checked instead of the page's random numbers.
"""
# ruff: noqa: RUF059, SIM117  (tutorial code is kept as the page writes it)


import numpy as np

import tapeflow as tf


def test_variable_square():
    x = tf.Variable(3.0)

    with tf.GradientTape() as tape:
        y = x**2

    dy_dx = tape.gradient(y, x)
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"


def _matmul_cell():
    w = tf.Variable(tf.random.normal((3,2)), name="w")
    b = tf.Variable(tf.zeros(2,dtype=tf.float32), name='b')
    x= [[1. ,2. ,3.]]

    with tf.GradientTape(persistent=True) as tape:
        y = tf.matmul(x,w) + b
        loss = tf.reduce_mean(y**2)
    grad = tape.gradient(loss, [w,b] )
    return w, b, x, y, tape, loss, grad


def test_gradient_list_of_variables():
    w, b, x, y, tape, loss, grad = _matmul_cell()
    assert w.name == "w:0" and b.name == "b:0"
    assert isinstance(grad, list) and len(grad) == 2
    gw, gb = grad
    assert gw.shape == (3, 2) and gw.dtype == tf.float32
    assert gb.shape == (2,) and gb.dtype == tf.float32
    # loss = mean(y**2) over 2 elements: dloss/dy = y, so grad b = y[0] and
    # grad w = x^T @ dloss/dy (the page's rows are 1x, 2x, 3x its grad b).
    np.testing.assert_allclose(gb.numpy(), y.numpy()[0], rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), np.outer([1., 2., 3.], gb.numpy()), rtol=1e-5)
    np.testing.assert_allclose(
        y.numpy(), np.array(x, np.float32) @ w.numpy() + b.numpy(), rtol=1e-5)


def test_gradient_dict_of_variables():
    w, b, x, y, tape, loss, grad = _matmul_cell()
    grad_options = {
        "w": w,
        "b": b
    }
    grad_dictionary = tape.gradient(loss, grad_options)
    assert set(grad_dictionary) == {"w", "b"}
    np.testing.assert_array_equal(grad_dictionary['w'].numpy(), grad[0].numpy())
    np.testing.assert_array_equal(grad_dictionary['b'].numpy(), grad[1].numpy())


def test_repr_of_gradient_list_as_printed():
    # The page's output cell, rebuilt from its (random) numbers: checks the repr of a
    # list of tensors, multi-line 2-D arrays included.
    grad = [
        tf.constant([[0.03123844, 2.434194], [0.06247687, 4.868388],
                     [0.09371531, 7.3025823]]),
        tf.constant([0.03123844, 2.434194]),
    ]
    assert repr(grad) == (
        "[<tf.Tensor: shape=(3, 2), dtype=float32, numpy=\n"
        "array([[0.03123844, 2.434194  ],\n"
        "       [0.06247687, 4.868388  ],\n"
        "       [0.09371531, 7.3025823 ]], dtype=float32)>, "
        "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.03123844, 2.434194  ], "
        "dtype=float32)>]")


def test_keras_layer_trainable_variables(capsys):
    # In [15] / In [17]. The page prints dense_2: two Dense layers were made before in its
    # session; the suffix is whatever this process's count of Dense layers gives.
    # model에서 사용할 gradient
    layer = tf.keras.layers.Dense(2, activation='relu')
    x = tf.constant([[1., 2. , 3.]])

    with tf.GradientTape() as tape:

        y = layer(x)
        loss = tf.reduce_mean(y**2) #cost function which is sum of error
    grad = tape.gradient(loss, layer.trainable_variables) # train할 수 있는 layer의 변수들을 넣어주는 것이다.

    for var, g in zip(layer.trainable_variables, grad):
        print(f'{var.name}, shape: {g.shape}') # Kernel은 layer에서 정해진 weight matrix
                                               # kernel is a weights matrix created by the layer,

    out = capsys.readouterr().out
    # The page shows Keras 2's names (dense_2/kernel:0); TensorFlow 2.21 ships Keras 3,
    # whose variables are named without their layer (the layer is in var.path).
    assert out == "kernel, shape: (3, 2)\nbias, shape: (2,)\n", out
    # relu: dloss/dy = y (mean over 2), zero where y <= 0; grad kernel = x^T dloss/dy.
    gk, gb = grad
    dy = np.where(y.numpy() > 0, y.numpy(), 0.0)[0]
    np.testing.assert_allclose(gb.numpy(), dy, rtol=1e-5)
    np.testing.assert_allclose(gk.numpy(), np.outer([1., 2., 3.], dy), rtol=1e-5)


def test_unconnected_gradients_zero(capsys):
    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)

    with tf.GradientTape() as tape:
        z = y**2
    print(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
    assert capsys.readouterr().out == "tf.Tensor([0. 0.], shape=(2,), dtype=float32)\n"


def test_non_trainable_variable_gets_no_gradient():
    x = tf.Variable([4., 2.], trainable=False)  # gradient 진행을 안 합니다.
    assert x.trainable is False
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    assert tape.watched_variables() == () or len(tape.watched_variables()) == 0


def test_nested_tapes():
    x = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        with tf.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
    d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=10.0>"
    assert repr(d2y_dx2) == "<tf.Tensor: shape=(), dtype=float32, numpy=2.0>"


def test_reset_in_python_control_flow():
    example = 0  # 예시
    flag = 12
    with tf.GradientTape() as tape:
        los = example
        if los > flag:
            tape.reset()  # reset은 tape에 정보를 초기화해줍니다.
    assert los == 0


def test_stop_recording_constant(capsys):
    x = tf.constant(4.0)
    with tf.GradientTape() as tape:
        with tape.stop_recording():  # 일시적으로 tape에 record를 중지하는 방식입니다.
            y = x ** 2
    dy_dx = tape.gradient(y, x)
    print(dy_dx)
    # The cell has no output on the page; TensorFlow prints None (x is a constant that
    # is never watched, and nothing was recorded anyway).
    assert capsys.readouterr().out == "None\n"


def test_stop_recording_watched():
    # Same cell with x watched: stop_recording still keeps y off the tape.
    x = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x ** 2
    assert tape.gradient(y, x) is None
