"""tf.debugging: check_numerics and the assertions. Eagerly their messages are
TensorFlow 2.21's (compared side by side); inside tf.function they check at every call,
interpreted and compiled (in loops too), and name the user's line."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.errors import InvalidArgumentError

HERE = r"test_debugging\.py:\d+"


@pytest.mark.parametrize("values, problem", [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"),
                                             ([np.nan, -np.inf], "Inf and NaN")])
def test_check_numerics_names_what_it_found(values, problem):
    with pytest.raises(InvalidArgumentError, match=f"bad x : Tensor had {problem} values"):
        tf.debugging.check_numerics(tf.constant(values), "bad x")
    np.testing.assert_array_equal(tf.debugging.check_numerics(tf.constant([1.0]), "ok"), [1.0])


def test_check_numerics_checks_the_gradient_too():
    x = tf.Variable([1.0, 0.0])
    with tf.GradientTape() as tape:
        y = tf.sqrt(tf.debugging.check_numerics(x, "x"))  # d sqrt / dy is Inf at 0
    with pytest.raises(InvalidArgumentError, match="detected in gradient. x : Tensor had Inf"):
        tape.gradient(y, x)


def test_eager_assertion_messages():
    with pytest.raises(InvalidArgumentError, match=r"(?s)oops\nCondition x == y did not hold."
                                                   r"\nIndices of first 1 different values:"):
        tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="oops")
    with pytest.raises(InvalidArgumentError, match=r"Condition x > 0 did not hold element-wise"):
        tf.debugging.assert_positive(tf.constant([1.0, -5.0]))
    with pytest.raises(InvalidArgumentError, match="not equal to tolerance"):
        tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.1]))
    assert tf.debugging.assert_less(tf.constant([1.0]), 3.0) is None
    tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.debugging.assert_rank(tf.constant([1, 2]), 2, message="rk"), ValueError,
     r"rk.  Tensor  must have rank 2.  Received rank 1, shape \(2,\)"),
    (lambda: tf.debugging.assert_scalar(tf.constant([1, 2])), ValueError, "Expected scalar"),
    (lambda: tf.debugging.assert_type(tf.constant([1]), tf.float32), TypeError,
     "must be of type tf.float32; got tf.int32"),
    (lambda: tf.debugging.assert_integer(tf.constant([1.0])), TypeError, "integer type"),
    (lambda: tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")),
                                         (tf.ones([2, 4]), ("N", "D"))]), ValueError,
     r"Specified by tensor shape=\(2, 3\) dtype=float32 dimension 1.  Tensor shape=\(2, 4\) "
     r"dtype=float32 dimension 1 must have size 3.  Received size 4"),
])
def test_static_facts_are_checked_at_once(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_checks_inside_a_function_run_at_every_call_and_name_the_line(monkeypatch, mode):
    monkeypatch.setattr(settings, "compile_mode", "sync" if mode == "compiled" else "off")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)

    @tf.function
    def steps(x, n):
        total = tf.constant([0.0])
        for _ in tf.range(n):
            total = total + tf.debugging.check_numerics(tf.math.log(x), "log of x")
        tf.debugging.assert_positive(total, message="need a positive total")
        return total

    np.testing.assert_allclose(steps(tf.constant([2.0]), tf.constant(2)), [2 * np.log(2.0)],
                               rtol=1e-6)
    with pytest.raises(InvalidArgumentError, match=f"(?s)log of x : Tensor had Inf values.*{HERE}"):
        steps(tf.constant([0.0]), tf.constant(2))
    with pytest.raises(InvalidArgumentError, match=f"(?s)need a positive total.*{HERE}"):
        steps(tf.constant([0.5]), tf.constant(1))
    concrete = steps.get_concrete_function(tf.constant([2.0]), tf.constant(2))
    assert concrete.wait_compiled(timeout=0) == (mode == "compiled")
