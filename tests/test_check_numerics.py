"""tf.debugging.enable_check_numerics: eager ops and ops traced afterwards raise
TensorFlow's InvalidArgumentError on NaN or Inf outputs, naming the op."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings


@pytest.fixture
def checking():
    tf.debugging.enable_check_numerics()
    try:
        yield
    finally:
        tf.debugging.disable_check_numerics()


def test_an_eager_op_with_nan_or_inf_output_raises_with_tensorflows_report(checking):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.math.log(tf.constant([-1.0, 0.0]))
    message = str(info.value)
    assert 'output 0 of eagerly-executing op "Log" (# of outputs: 1)' in message
    assert "dtype: <dtype: 'float32'>" in message and "shape: (2,)" in message
    assert "# of -Inf elements: 1" in message and "# of +NaN elements: 1" in message
    assert "Input tensor: tf.Tensor([-1.  0.], shape=(2,), dtype=float32)" in message
    assert message.endswith(": Tensor had -Inf and NaN values [Op:CheckNumericsV2]")


def test_finite_values_gradients_and_integer_ops_pass(checking):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.log(x) * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.log([1.0, 2.0]) + 1.0,
                               rtol=1e-6)
    assert (tf.constant([1, 2]) * 0).numpy().tolist() == [0, 0]  # ints are not checked


def test_an_op_on_constants_is_checked_while_tracing(checking):
    # Tracing runs an op whose inputs are all constants eagerly, and folds its result.
    @tf.function
    def f():
        return tf.math.log(tf.constant([-1.0, 2.0]))

    with pytest.raises(tf.errors.InvalidArgumentError, match='op "Log"'):
        f()


def test_a_function_traced_while_checking_checks_at_every_call(checking, monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "sync")

    @tf.function
    def f(x):
        return tf.math.sqrt(x) * 2.0

    np.testing.assert_allclose(f(tf.constant([4.0])).numpy(), [4.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r'graph op "Sqrt"'):
        f(tf.constant([-4.0]))
    tf.debugging.disable_check_numerics()
    with pytest.raises(tf.errors.InvalidArgumentError):  # its trace keeps the check
        f(tf.constant([-4.0]))
    assert np.isnan(tf.math.sqrt(tf.constant(-4.0)).numpy())  # new eager ops are free
