"""tf.TensorArray eagerly (a Python list of tensors) and inside tf.function (lists grown
in loops), with TensorFlow 2.21's values, errors and gradients."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, OutOfRangeError

from .compiled_parity import assert_compiled_matches_eager


def _rnn_with_tensor_array(x, w):
    """The tutorial loop: one step per time, each output written at its step."""
    steps = tf.shape(x)[0]
    outputs = tf.TensorArray(x.dtype, size=steps)
    h = tf.zeros([x.shape[1], w.shape[1]], x.dtype)
    for t in tf.range(steps):
        h = tf.tanh(x[t] + tf.matmul(h, w))
        outputs = outputs.write(t, h)
    return outputs.stack()


def _rnn_with_list(x, w):
    h = tf.zeros([x.shape[1], w.shape[1]], x.dtype)
    outputs = []
    for t in range(x.shape[0]):
        h = tf.tanh(x[t] + tf.matmul(h, w))
        outputs.append(h)
    return tf.stack(outputs)


def _inputs(dtype="float64"):
    rng = np.random.RandomState(0)
    return (tf.constant(rng.randn(4, 2, 3).astype(dtype)),
            tf.constant(0.5 * rng.randn(3, 3).astype(dtype)))


def _loss_and_grads(fn, x, w):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        loss = tf.reduce_sum(fn(x, w) ** 2)
    return loss, tape.gradient(loss, [x, w])


def test_eager_write_read_stack_as_tensorflow():
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10).write(2, 30)
    assert ta.read(2).numpy() == 30.0 and ta.size().numpy() == 3
    np.testing.assert_array_equal(ta.stack().numpy(), [10.0, 0.0, 30.0])
    ta = tf.TensorArray(tf.float32, size=3)
    unstacked = ta.unstack([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(unstacked.gather([2, 0]).numpy(), [[5, 6], [1, 2]])
    split = tf.TensorArray(tf.float32, size=2).split([1.0, 2.0, 3.0], [1, 2])
    np.testing.assert_array_equal(split.read(1).numpy(), [2.0, 3.0])
    assert tf.TensorArray(tf.float32, size=2).scatter([1], [7.0]).stack().numpy().tolist() \
        == [0.0, 7.0]


@pytest.mark.parametrize("make, error, message", [
    (lambda: tf.TensorArray(tf.float32, size=3).write(5, 1.0), OutOfRangeError,
     "Tried to write to index 5 but array is not resizeable and size is: 3 "),
    (lambda: tf.TensorArray(tf.float32, size=3).read(-1), OutOfRangeError,
     "Reading from negative indices (index -1) is not allowed."),
    (lambda: tf.TensorArray(tf.float32, size=3).write(0, tf.constant(1)), InvalidArgumentError,
     "TensorArray dtype is float32 but Op is trying to write dtype int32 "),
    (lambda: tf.TensorArray(tf.float32, size=3).write(0, 1.0).write(1, [1.0, 2.0]), ValueError,
     "Incompatible shape for value ((2,)), expected (())"),
    (lambda: tf.TensorArray(tf.float32, size=3).read(0), ValueError,
     "Cannot convert a partially known TensorShape <unknown> to a Tensor."),
    (lambda: tf.TensorArray(tf.float32), ValueError,
     "Size must be declared for TensorArrays when eager execution is enabled."),
])
def test_eager_errors_as_tensorflow(make, error, message):
    with pytest.raises(error) as raised:
        make()
    assert str(raised.value) == message


def test_eager_read_clears_unless_told_not_to():
    ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    ta.read(0)
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice because it "
                                                   "was cleared after a previous read"):
        ta.read(0)


def test_traced_semantics_as_tensorflow():
    """TensorList semantics inside tf.function: overwrites win, unset elements are zeros,
    a dynamic array grows to the largest index written."""
    @tf.function
    def f():
        fixed = tf.TensorArray(tf.float32, size=3).write(0, 1.0).write(0, 2.0).write(2, 5.0)
        grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(2, 1.0)
        known = tf.TensorArray(tf.float32, size=3, element_shape=[2])
        return fixed.stack(), grown.stack(), grown.size(), known.read(1), fixed.read(0)

    fixed, grown, size, unset, read = f()
    np.testing.assert_array_equal(fixed.numpy(), [2.0, 0.0, 5.0])
    np.testing.assert_array_equal(grown.numpy(), [0.0, 0.0, 1.0])
    assert size.numpy() == 3 and read.numpy() == 2.0
    np.testing.assert_array_equal(unset.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("body, error, message", [
    (lambda i: tf.TensorArray(tf.float32, size=3).write(5, 1.0).stack(),
     InvalidArgumentError, "Trying to modify element 5 in a list with 3 elements."),
    (lambda i: tf.TensorArray(tf.float32, size=3).write(i, 1.0).stack(),
     InvalidArgumentError, "Trying to modify an element past the end of a list with 3 "),
    (lambda i: tf.TensorArray(tf.float32, size=3).write(0, tf.constant(1)).stack(),
     InvalidArgumentError, "Invalid data types; op elements int32 but list elements float"),
    (lambda i: tf.TensorArray(tf.float32, size=3).write(0, 1.0).write(1, [1.0, 2.0]).stack(),
     ValueError, "Inconsistent shapes: saw (2,) but expected () "),
    (lambda i: tf.TensorArray(tf.float32, size=3).read(0),
     InvalidArgumentError, "Trying to read an uninitialized tensor but element_shape is not "
                           "fully defined: <unknown> and no list element is set."),
    (lambda i: tf.TensorArray(tf.float32, size=3).write(0, 1.0).read(3),
     InvalidArgumentError, "Trying to access element 3 in a list with 3 elements."),
])
def test_traced_errors_as_tensorflow(body, error, message):
    with pytest.raises(error) as raised:
        tf.function(body)(tf.constant(5))
    assert str(raised.value).startswith(message)


def test_loop_gradients_match_the_list_version_and_finite_differences():
    x, w = _inputs()
    traced = tf.function(_rnn_with_tensor_array)
    loss, grads = _loss_and_grads(traced, x, w)
    eager_loss, eager_grads = _loss_and_grads(_rnn_with_tensor_array, x, w)
    list_loss, list_grads = _loss_and_grads(_rnn_with_list, x, w)
    assert traced(x, w).shape == (4, 2, 3)
    np.testing.assert_allclose(loss.numpy(), list_loss.numpy(), rtol=1e-12)
    np.testing.assert_allclose(eager_loss.numpy(), list_loss.numpy(), rtol=1e-12)
    for g, e, ref in zip(grads, eager_grads, list_grads):
        np.testing.assert_allclose(g.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(e.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)
    eps, w0 = 1e-6, w.numpy()
    for index in [(0, 0), (1, 2), (2, 1)]:
        bumped = [w0.copy(), w0.copy()]
        bumped[0][index] += eps
        bumped[1][index] -= eps
        up, down = (tf.reduce_sum(_rnn_with_list(x, tf.constant(b)) ** 2).numpy()
                    for b in bumped)
        np.testing.assert_allclose(grads[1].numpy()[index], (up - down) / (2 * eps),
                                   rtol=1e-6)


def test_tensor_array_through_while_loop_and_reads_in_the_loop():
    @tf.function
    def fibonacci(n):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        ta = ta.unstack([0.0, 1.0])
        for i in tf.range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()

    @tf.function
    def doubled(x):
        def body(i, ta):
            return i + 1, ta.write(i, 2.0 * x[i])
        _, ta = tf.while_loop(lambda i, ta: i < tf.shape(x)[0], body,
                              [0, tf.TensorArray(tf.float32, size=tf.shape(x)[0])])
        return ta.stack(), ta.element_shape

    np.testing.assert_array_equal(fibonacci(tf.constant(7)).numpy(), [0, 1, 1, 2, 3, 5, 8])
    stacked, element_shape = doubled(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(stacked.numpy(), [[2.0, 4.0], [6.0, 8.0]])
    assert element_shape == tf.TensorShape([2])


def test_compiled_loop_with_gradient_matches_eager(monkeypatch):
    x, w = _inputs("float32")

    def loss_and_grad(x, w):
        loss, grads = _loss_and_grads(_rnn_with_tensor_array, x, w)
        return loss, grads[1]

    assert_compiled_matches_eager(monkeypatch, loss_and_grad, x, w, rtol=1e-5)


def test_tensor_array_spec():
    spec = tf.TensorArraySpec([2], tf.float32)
    assert repr(spec) == "TensorArraySpec(TensorShape([2]), tf.float32, False, True)"
    assert spec.is_compatible_with(tf.TensorArraySpec([None], tf.float32))
    assert not spec.is_compatible_with(tf.TensorArraySpec([2], tf.float64))
    ta = tf.TensorArray(tf.float32, size=1, element_shape=[2])
    assert tf.TensorArraySpec.from_value(ta) == spec
