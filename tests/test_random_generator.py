"""tf.random.Generator gives TensorFlow 2.21's numbers and states (printed by
TensorFlow), advances inside tf.function; the composed stateless draws (binomial,
poisson, categorical, parameterized truncated normal) follow their distributions."""

import numpy as np
import pytest
from scipy import stats

import tapeflow as tf


def test_generator_numbers_and_states_are_tensorflows():
    g = tf.random.Generator.from_seed(1234)
    assert g.state.numpy().tolist() == [1234, 0, 0] and g.algorithm == 1
    np.testing.assert_allclose(g.normal([3]).numpy(), [0.9356609, 1.0854305, -0.93788373],
                               rtol=1e-6)
    assert g.state.numpy().tolist() == [2002, 0, 0]  # 256 blocks a value
    np.testing.assert_allclose(g.uniform([5]).numpy(), [0.31073415, 0.3681823, 0.96182954,
                                                        0.31345785, 0.85380936], rtol=1e-6)
    assert g.skip(10).numpy().tolist() == [3282, 0, 0]
    assert g.state.numpy().tolist() == [5842, 0, 0]
    assert g.make_seeds(3).numpy().tolist() == [
        [-1723169384922343483, 2721854723098062781, -5436526749302356350], [0, 0, 0]]
    assert [s.state.numpy().tolist() for s in g.split(2)] == [
        [0, 0, -1013289102247759829], [0, 0, 4531621439034222364]]
    one = tf.random.Generator.from_seed(1)
    np.testing.assert_allclose(one.truncated_normal([5]).numpy(),
                               [0.43842274, -0.53439844, -0.07710262, 1.5658046, 1.6272374],
                               rtol=1e-6)
    assert tf.random.Generator.from_seed(1).uniform_full_int(
        [2], dtype=tf.int32).numpy().tolist() == [-119223132, 1555169499]


def test_states_seeds_and_algorithms():
    wrap = tf.random.Generator.from_state([2**63 - 1, -1, 7], "philox")
    wrap.skip(1)  # the counter is one 128-bit number: its low word wraps alone here
    assert wrap.state.numpy().tolist() == [-9223372036854775553, -1, 7]
    assert tf.random.create_rng_state(2**70 + 5, 1).numpy().tolist() == [5, 64, 0]
    assert tf.random.create_rng_state([1, 2], "philox").numpy().tolist() == [0, 1, 2]
    assert tf.random.Generator.from_seed(2**64 + 2**63 + 5).state.numpy().tolist() == [
        -9223372036854775803, 1, 0]
    assert tf.random.Generator.from_key_counter(5, [1, 2], "philox").state.numpy().tolist() \
        == [1, 2, 5]
    assert tf.random.Algorithm.PHILOX.value == 1
    assert tf.random.experimental.Generator is tf.random.Generator
    with pytest.raises(ValueError, match=r"Shapes \(2,\) and \[3\] are incompatible"):
        tf.random.Generator.from_state([1, 2], "philox")
    with pytest.raises(ValueError, match="unsupported value foo"):
        tf.random.Generator.from_seed(1, "foo")
    with pytest.raises(tf.errors.UnimplementedError, match="ThreeFry"):
        tf.random.Generator.from_seed(1, "threefry").normal([2])
    g = tf.random.Generator.from_seed(5)
    first = g.normal([4]).numpy()
    g.reset_from_seed(5)
    np.testing.assert_array_equal(g.normal([4]).numpy(), first)
    tf.random.set_global_generator(tf.random.Generator.from_seed(9))
    np.testing.assert_array_equal(tf.random.get_global_generator().normal([2]).numpy(),
                                  tf.random.Generator.from_seed(9).normal([2]).numpy())


def test_generator_advances_per_call_of_a_function():
    gen = tf.random.Generator.from_seed(7)

    @tf.function
    def f():
        return gen.normal([2]), gen.uniform([2])
    calls = [np.concatenate([a.numpy() for a in f()]) for _ in range(2)]
    eager = tf.random.Generator.from_seed(7)
    want = [np.concatenate([eager.normal([2]).numpy(), eager.uniform([2]).numpy()])
            for _ in range(2)]
    np.testing.assert_allclose(calls, want, rtol=1e-6)
    assert gen.state.numpy().tolist() == eager.state.numpy().tolist()


N = 4000


def test_binomial_and_poisson_distributions():
    b = tf.random.stateless_binomial([N], [1, 2], counts=20.0, probs=0.3).numpy()
    assert b.dtype == np.int32 and b.min() >= 0 and b.max() <= 20
    expected = stats.binom(20, 0.3).pmf(np.arange(21)) * N
    observed = np.bincount(b, minlength=21)
    assert stats.chisquare(observed[2:13], expected[2:13] * observed[2:13].sum()
                           / expected[2:13].sum()).pvalue > 1e-3
    g = tf.random.Generator.from_seed(3).binomial([N, 2], counts=[5.0, 50.0], probs=0.5)
    assert abs(g.numpy()[:, 1].mean() - 25) < 0.5 and g.numpy()[:, 0].max() <= 5
    p = tf.random.stateless_poisson([N, 2], [5, 6], lam=[3.5, 40.0]).numpy()
    for column, lam in zip(p.T, (3.5, 40.0)):
        assert abs(column.mean() - lam) < 4 * np.sqrt(lam / N)
        assert abs(column.var() / lam - 1) < 0.12


def test_categorical_and_truncated_normal_distributions():
    c = tf.random.stateless_categorical(tf.math.log([[0.2, 0.8]]), N, [3, 4]).numpy()
    assert c.shape == (1, N) and abs(c.mean() - 0.8) < 4 * np.sqrt(0.16 / N)
    np.testing.assert_array_equal(
        c, tf.random.stateless_categorical(tf.math.log([[0.2, 0.8]]), N, [3, 4]).numpy())
    x = tf.random.stateless_parameterized_truncated_normal(
        [N], [1, 2], means=1.0, stddevs=2.0, minvals=0.0, maxvals=5.0).numpy()
    assert 0 <= x.min() and x.max() <= 5
    assert stats.kstest(x, stats.truncnorm(-0.5, 2.0, loc=1, scale=2).cdf).pvalue > 1e-3
