"""tf.switch_case: TensorFlow's branch choice (out-of-range indices take the default, or
the last branch), its argument checks, and gradients through it eagerly and compiled."""

import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

BRANCHES = [lambda: tf.constant(10.0), lambda: tf.constant(20.0), lambda: tf.constant(30.0)]


@pytest.mark.parametrize("index, plain, with_default", [(0, 10.0, 10.0), (2, 30.0, 30.0),
                                                         (5, 30.0, -1.0), (-1, 30.0, -1.0)])
def test_out_of_range_takes_the_default_or_the_last_branch(index, plain, with_default):
    assert float(tf.switch_case(tf.constant(index), BRANCHES)) == plain
    assert float(tf.switch_case(tf.constant(index), BRANCHES,
                                default=lambda: tf.constant(-1.0))) == with_default
    assert float(tf.switch_case(tf.constant(1), {1: BRANCHES[0], 0: BRANCHES[2]})) == 10.0


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.switch_case(1, BRANCHES), TypeError, "must be a Tensor"),
    (lambda: tf.switch_case(tf.constant(1.0), BRANCHES), TypeError, "integer Tensor"),
    (lambda: tf.switch_case(tf.constant(1), []), ValueError, "at least one item"),
    (lambda: tf.switch_case(tf.constant(1), {0: BRANCHES[0], 4: BRANCHES[1]}), ValueError,
     r"contiguous range of \[0 to 2\) but found \{0,4\}"),
])
def test_argument_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_gradients_through_the_chosen_branch(monkeypatch):
    def scaled(i, x):
        return tf.switch_case(i, [lambda: x * 2.0, lambda: x * x * 3.0])

    v = tf.Variable(2.0)
    traced = tf.function(scaled)
    for index, value, grad in [(0, 4.0, 2.0), (1, 12.0, 12.0), (9, 12.0, 12.0)]:
        for fn in (scaled, traced):
            with tf.GradientTape() as tape:
                y = fn(tf.constant(index), v)
            assert float(y) == value and float(tape.gradient(y, v)) == grad
    assert_compiled_matches_eager(monkeypatch, scaled, tf.constant(1), tf.constant(2.0))


def test_case_takes_the_first_true_predicate_and_needs_one_without_a_default():
    x = tf.constant(5.0)
    pairs = [(x < 3.0, lambda: tf.constant(1.0)), (x < 10.0, lambda: tf.constant(2.0))]
    assert float(tf.case(pairs, default=lambda: tf.constant(3.0))) == 2.0
    none_true = [(x < 3.0, lambda: tf.constant(1.0)), (x < 1.0, lambda: tf.constant(2.0))]
    assert float(tf.case(none_true, default=lambda: tf.constant(3.0))) == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated"):
        tf.case(none_true)
    traced = tf.function(lambda v: tf.case([(v < 3.0, lambda: v * 2.0), (v < 1.0, lambda: v)]))
    assert float(traced(tf.constant(2.0))) == 4.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of conditions evaluated"):
        traced(tf.constant(5.0))
