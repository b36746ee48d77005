"""tf.random's stateless ops give TensorFlow 2.21's numbers (Philox-4x32-10; the
expected values were printed by TensorFlow), the same numbers inside tf.function and its
loops, and the distributions they claim."""

import numpy as np
import pytest
from scipy import stats

import tapeflow as tf

SEED = [1, 2]


@pytest.mark.parametrize("call, expected", [
    (lambda: tf.random.stateless_uniform([6], SEED),
     [0.8440604, 0.19204533, 0.9962232, 0.1603874, 0.27199018, 0.649346]),
    (lambda: tf.random.stateless_uniform([3], SEED, dtype=tf.float64),
     [0.75248375, 0.96978577, 0.17592234]),
    (lambda: tf.random.stateless_uniform([4], SEED, dtype=tf.float16),
     [0.543, 0.2354, 0.06055, 0.8936]),
    (lambda: tf.random.stateless_normal([6], SEED),
     [0.5441101, 0.20738031, 0.07356432, 0.04643455, -1.3015898, -0.9538565]),
    (lambda: tf.random.stateless_normal([3], SEED, dtype=tf.float64),
     [-0.14231181, 0.74060725, -1.46904767]),
    (lambda: tf.random.stateless_normal([5], [-1, -2]),
     [-0.04580224, -0.3405163, 0.5670999, -0.50760674, 0.5487819]),
    (lambda: tf.random.stateless_truncated_normal([6], SEED),
     [0.5441101, 0.20738031, 0.07356432, 0.04643455, 0.16820592, -1.6850333]),
    (lambda: tf.random.stateless_truncated_normal([5], SEED, dtype=tf.float64),
     [-0.14231181, 0.74060725, -0.55238776, -0.73445009, -0.39842024]),
])
def test_float_draws_are_tensorflows(call, expected):
    got = call().numpy()
    np.testing.assert_allclose(got, expected, rtol=2e-3 if got.dtype == np.float16 else 1e-6)


def test_integer_draws_and_seeds_are_tensorflows():
    def ints(*args, **kwargs):
        return tf.random.stateless_uniform(*args, **kwargs).numpy().tolist()
    assert ints([5], SEED, 0, 100, dtype=tf.int32) == [40, 49, 94, 79, 27]
    assert ints([5], SEED, -5, 100, dtype=tf.int64) == [4, 28, 27, 88, -2]
    assert ints([3], SEED, -2**31, 2**31 - 1, dtype=tf.int32) == [-1041495508, -409430799,
                                                                 1811907646]
    assert ints([3], tf.constant(SEED, tf.int64), -2**40, 2**40, dtype=tf.int64) == [
        -63318521300, 635319583806, 846119227539]
    assert ints([2], SEED, None, None, dtype=tf.int64) == [7464880146280614444,
                                                          1591045637757961278]
    assert tf.random.split(SEED, 3).numpy().tolist() == [
        [1105988140, 1738052849], [-335576002, 370444179], [10670227, -246211131]]
    folded = tf.random.fold_in(SEED, 3)
    assert folded.dtype == tf.int32 and folded.numpy().tolist() == [1105988140, 3]
    assert tf.random.fold_in(SEED, tf.constant(3, tf.int64)).numpy().tolist() == [
        7464880146280614444, 3]


def test_same_seed_same_numbers_in_functions_and_loops():
    # Each step's seed is computed in the loop: the numbers are the eager ones of that
    # seed, whether the function runs on NumPy or compiled.
    @tf.function
    def steps(seed):
        total = tf.zeros([4])
        for i in tf.range(3):
            total = total * 2.0 + tf.random.stateless_normal([4], tf.random.fold_in(seed, i))
        return total
    seed = tf.constant([7, 11])
    want = np.zeros(4, np.float32)
    for i in range(3):
        want = want * 2 + tf.random.stateless_normal([4], tf.random.fold_in(seed, i)).numpy()
    for _ in range(2):
        np.testing.assert_allclose(steps(seed).numpy(), want, rtol=1e-6, atol=1e-6)
    assert steps.get_concrete_function(seed).wait_compiled()
    np.testing.assert_allclose(steps(seed).numpy(), want, rtol=1e-6, atol=1e-6)


def test_distributions():
    n = 4000
    u = tf.random.stateless_uniform([n], [3, 4], minval=-1.0, maxval=3.0).numpy()
    assert stats.kstest(u, stats.uniform(-1, 4).cdf).pvalue > 1e-3
    z = tf.random.stateless_normal([n], [3, 4], mean=1.0, stddev=2.0,
                                   dtype=tf.float64).numpy()
    assert stats.kstest(z, stats.norm(1, 2).cdf).pvalue > 1e-3
    t = tf.random.stateless_truncated_normal([n], [3, 4]).numpy()
    assert np.abs(t).max() < 2
    assert stats.kstest(t, stats.truncnorm(-2, 2).cdf).pvalue > 1e-3
    k = tf.random.stateless_uniform([n], [3, 4], 0, 10, dtype=tf.int64).numpy()
    assert stats.chisquare(np.bincount(k, minlength=10)).pvalue > 1e-3
    # different seeds, different numbers
    assert not np.array_equal(u, tf.random.stateless_uniform([n], [3, 5], -1.0, 3.0).numpy())
