"""custom_gradient (with and without variables=), RegisterGradient, stop_gradient."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops.registry import GRADIENT_OVERRIDES


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


def test_custom_gradient_replaces_the_rule():
    # TensorFlow's documented example: the naive gradient at 100 is nan, the custom 1.0.
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == 1.0


def test_custom_gradient_second_order_goes_through_grad_fn():
    x = tf.constant(0.3)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = log1pexp(x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    sigmoid = 1 / (1 + np.exp(-0.3))
    np.testing.assert_allclose(float(dy), sigmoid, rtol=1e-6)
    np.testing.assert_allclose(float(d2y), sigmoid * (1 - sigmoid), rtol=1e-5)


def test_custom_gradient_with_variables():
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            return dy * w * 10.0, [dy * x * 100.0]
        return x * w, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    dx, dw = tape.gradient(y, [x, w])
    assert float(dx) == 20.0 and float(dw) == 300.0


def test_custom_gradient_using_variables_needs_a_variables_argument():
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def scaled(x):
        return x * w, lambda dy: dy * w

    with pytest.raises(TypeError, match="variables"):
        scaled(tf.constant(1.0))


def test_custom_gradient_with_two_outputs():
    @tf.custom_gradient
    def split(x):
        return (x * 2.0, x * 3.0), lambda d1, d2: d1 * 20.0 + d2 * 30.0

    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = split(x)
        total = a + b
    assert float(tape.gradient(total, x)) == 50.0
    assert float(tape.gradient(b, x)) == 30.0  # the unused output's cotangent is zero


def test_register_gradient_overrides_the_table_rule():
    @tf.RegisterGradient("Sin")
    def _sin_grad(op, grad):
        assert op.type == "Sin" and len(op.inputs) == 1 and len(op.outputs) == 1
        return grad * 7.0

    try:
        x = tf.constant(0.5)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.sin(x)
        assert float(tape.gradient(y, x)) == 7.0
        with pytest.raises(KeyError):
            tf.RegisterGradient("Sin")(lambda op, grad: grad)
    finally:
        GRADIENT_OVERRIDES.pop("Sin", None)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.sin(x)
    np.testing.assert_allclose(float(tape.gradient(y, x)), np.cos(0.5), rtol=1e-6)


def test_stop_gradient_blocks_the_path():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * tf.stop_gradient(x * x)
    assert float(tape.gradient(y, x)) == 4.0


# -- arguments, variables and keywords, eager and traced ------------------------------------
# Expected values are TensorFlow 2.21's, in eager mode and inside tf.function.

MODES = ["eager", "function"]


def _run(mode, body):
    return (tf.function(body) if mode == "function" else body)()


@pytest.mark.parametrize("mode", MODES)
def test_variable_argument_is_an_input_not_a_captured_variable(mode):
    v = tf.Variable(3.0)

    @tf.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 2.0 * x * 10.0  # no `variables=` needed

    def body():
        with tf.GradientTape() as tape:
            y = square(v)
        return tape.gradient(y, v)

    assert float(_run(mode, body)) == 60.0  # TF: 60.0


@pytest.mark.parametrize("mode", MODES)
def test_variables_lists_only_variables_that_are_not_arguments(mode):
    v = tf.Variable(3.0)
    w = tf.Variable(2.0)
    seen = []

    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            seen.append(list(variables))
            return dy * 100.0, [dy * 1000.0]
        return x * w, grad

    def body():
        with tf.GradientTape() as tape:
            y = scaled(v)
        return tape.gradient(y, [v, w])

    dv, dw = _run(mode, body)
    assert (float(dv), float(dw)) == (100.0, 1000.0)  # TF: 100.0, 1000.0
    assert all(len(vs) == 1 and vs[0] is w for vs in seen) and seen


@pytest.mark.parametrize("mode", MODES)
def test_python_number_argument_takes_a_gradient_slot(mode):
    @tf.custom_gradient
    def clip_grad(x, norm):
        return tf.identity(x), lambda dy: (tf.clip_by_norm(dy, norm), None)

    def body():
        x = tf.constant([3.0, 4.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x, 1.0) * tf.constant([3.0, 4.0])
        return tape.gradient(y, x)

    np.testing.assert_allclose(_run(mode, body).numpy(), [0.6, 0.8], rtol=1e-6)  # TF


@pytest.mark.parametrize("mode", MODES)
def test_numpy_argument_takes_a_gradient_slot(mode):
    @tf.custom_gradient
    def scale(x, s):
        return x * s, lambda dy: (dy * 10.0, dy * 5.0)  # the second is dropped

    def body():
        x = tf.constant([3.0, 4.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = scale(x, np.array([1.0, 2.0], np.float32))
        return tape.gradient(y, x)

    np.testing.assert_array_equal(_run(mode, body).numpy(), [10.0, 10.0])  # TF: [10, 10]


@pytest.mark.parametrize("mode", MODES)
def test_one_gradient_for_two_arguments_raises(mode):
    @tf.custom_gradient
    def clip_grad(x, norm):
        return tf.identity(x), lambda dy: tf.clip_by_norm(dy, norm)

    def body():
        x = tf.constant([3.0, 4.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x, 1.0)
        return tape.gradient(y, x)

    # TF: ValueError eagerly (InternalError "returned too few gradients" in tf.function).
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        _run(mode, body)


def test_body_sees_python_arguments_eagerly_and_tensors_when_traced():
    seen = []

    @tf.custom_gradient
    def scale(x, s):
        seen.append(s)
        return x * s, lambda dy: (dy * s, None)

    scale(tf.constant(1.0), 2.0)
    tf.function(lambda x: scale(x, 2.0))(tf.constant(1.0))
    # TF: the float itself, then a (symbolic) Tensor.
    assert type(seen[0]) is float and isinstance(seen[1], tf.Tensor)


def test_none_argument_raises_as_tensorflow():
    @tf.custom_gradient
    def f(x, unused):
        return x * 2.0, lambda dy: (dy, None)

    with pytest.raises(ValueError, match="None"):  # TF: None cannot become a tensor
        f(tf.constant(1.0), None)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_variable_grads", [0, 2])
def test_wrong_number_of_variable_gradients_raises(mode, n_variable_grads):
    w = tf.Variable(3.0)

    @tf.custom_gradient
    def scaled(x):
        return x * w, lambda dy, variables=None: (dy * w, [dy * x] * n_variable_grads)

    def body():
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = scaled(x)
        return tape.gradient(y, [x, w])

    with pytest.raises(ValueError, match="Must return gradient for each variable"):  # TF
        _run(mode, body)


def test_keyword_argument_gradient_goes_through_the_body():
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 7.0

    a = tf.constant(2.0)
    b = tf.constant(5.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = f(x=a)           # no positional input: the custom op is not recorded
        z = f(a) * b  # positional: grad_fn
    assert float(tape.gradient(y, a)) == 4.0  # TF: 4.0, d(x*x)/dx, not 7.0
    assert float(tape.gradient(z, a)) == 35.0  # TF: 35.0


def test_tape_watching_no_input_differentiates_the_body():
    a = tf.constant(2.0)
    c = tf.constant(3.0)

    @tf.custom_gradient
    def times_a(x):
        return x * a, lambda dy: dy * 7.0

    with tf.GradientTape() as tape_a, tf.GradientTape() as tape_c:
        tape_a.watch(a)
        tape_c.watch(c)
        y = times_a(c)
    # TF: 3.0 (the body's x, on the tape that watches no input) and 7.0 (grad_fn).
    assert float(tape_a.gradient(y, a)) == 3.0
    assert float(tape_c.gradient(y, c)) == 7.0


def test_keyword_argument_inside_function_raises_as_tensorflow():
    @tf.custom_gradient
    def f(x):
        return x * x, lambda dy: dy * 7.0

    with pytest.raises(ValueError, match="keywords arguments only when eager"):  # TF
        tf.function(lambda a: f(x=a))(tf.constant(2.0))


def test_function_of_custom_gradients_under_an_outer_tape():
    v = tf.Variable(3.0)
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def clip_grad(x, norm):
        return tf.identity(x), lambda dy: (tf.clip_by_norm(dy, norm), None)

    @tf.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 2.0 * x * 10.0

    @tf.custom_gradient
    def scaled(x):
        return x * w, lambda dy, variables=None: (dy * w * 10.0, [dy * x * 100.0])

    f = tf.function(lambda x: clip_grad(x * v, 1.0) + square(v) + scaled(x))
    for _ in range(2):  # the second call runs the traced function
        x = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        grads = [float(g) for g in tape.gradient(y, [x, v, w])]
        assert grads == [23.0, 62.0, 200.0]  # TF: [23.0, 62.0, 200.0]
