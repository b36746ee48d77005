"""The gamma, Poisson and stateless gamma draws and the candidate samplers compiled: the
kernel draws NumPy's numbers from the same Generators as the NumPy interpreter, so a
compiled function gives the interpreted one's numbers, call after call."""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.ops import candidate_sampling

pytest.importorskip("numba")


def _two_calls(monkeypatch, mode, fn, args):
    """Two calls of tf.function(fn) after set_seed(3), under compile mode `mode`."""
    monkeypatch.setattr(settings, "compile_mode", mode)
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    # the learned sampler's counts are kept per seed pair: each tier starts afresh
    monkeypatch.setattr(candidate_sampling, "_LEARNED", candidate_sampling._LearnedCounts())
    f = tf.function(fn)
    tf.random.set_seed(3)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        return [[t.numpy() for t in tf.nest.flatten(f(*args))] for _ in range(2)]


def assert_compiled_draws_match(monkeypatch, fn, *args, rtol=0.0):
    """The draws (the first output) equal; the rest (computed from them) within rtol."""
    interpreted = _two_calls(monkeypatch, "off", fn, args)
    compiled = _two_calls(monkeypatch, "sync", fn, args)
    for want, got in zip(interpreted, compiled):
        for k, (a, b) in enumerate(zip(want, got)):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=0.0 if k == 0 else rtol)
    assert not np.array_equal(compiled[0][0], compiled[1][0])  # each call draws anew


def test_gamma_and_its_gradient(monkeypatch):
    def sample(alpha):
        with tf.GradientTape() as tape:
            tape.watch(alpha)
            draws = tf.random.gamma([4], alpha, beta=2.0)
        return draws, tape.gradient(draws, alpha)
    # the gradient's special functions are the kernels' own: within float32 rounding
    assert_compiled_draws_match(monkeypatch, sample, tf.constant([0.5, 1.5, 4.0]),
                                rtol=1e-6)


def test_poisson_inside_a_loop_and_at_top_level(monkeypatch):
    def sample(rate):
        total = tf.random.poisson([2], rate, dtype=tf.int32)
        for _ in tf.range(3):
            total += tf.random.poisson([2], rate, dtype=tf.int32)
        return total
    assert_compiled_draws_match(monkeypatch, sample, tf.constant([[1.0], [30.0]]))


def test_stateless_gamma_of_a_constant_seed_and_of_a_seed_argument(monkeypatch):
    def sample(seed, alpha):
        return (tf.random.stateless_gamma([3, 2], [1, 2], alpha)
                + tf.random.stateless_gamma([3, 2], seed, alpha) + tf.random.uniform([3, 2]))
    assert_compiled_draws_match(monkeypatch, sample, tf.constant([4, 5]),
                                tf.constant([1.0, 3.0]))


@pytest.mark.parametrize("sampler", [tf.random.uniform_candidate_sampler,
                                     tf.random.learned_unigram_candidate_sampler])
def test_candidate_samplers(monkeypatch, sampler):
    def sample(true_classes):
        return sampler(true_classes, 1, 4, True, 10, seed=7)
    assert_compiled_draws_match(monkeypatch, sample, tf.constant([[1], [3]], tf.int64))


def test_special_parameters_give_the_same_values_in_both_tiers(monkeypatch):
    # TensorFlow 2.21: gamma of NaN or a negative alpha is NaN, of inf inf, of 0 the
    # dtype's tiny; Poisson of a negative rate 0, of inf inf. The valid elements between
    # them draw the same numbers in both tiers (the special ones draw nothing).
    def sample(parameters):
        return (tf.random.gamma([2], parameters, dtype=tf.float64),
                tf.random.poisson([2], parameters, dtype=tf.float64),
                tf.random.stateless_gamma([2, 7], [1, 2], parameters, dtype=tf.float64))
    parameters = tf.constant([np.nan, 2.0, np.inf, 0.0, -1.0, 1e30, 0.5], tf.float64)
    assert_compiled_draws_match(monkeypatch, sample, parameters)
    gamma, poisson, stateless = tf.function(sample)(parameters)
    tiny = np.finfo(np.float64).tiny
    for draws in (gamma.numpy(), stateless.numpy()):
        np.testing.assert_array_equal(draws[:, [0, 2, 3, 4]], [[np.nan, np.inf, tiny, np.nan]] * 2)
    np.testing.assert_array_equal(poisson.numpy()[:, [0, 2, 3, 4, 5]],
                                  [[np.nan, np.inf, 0.0, 0.0, 1e30]] * 2)


@pytest.mark.parametrize("mode", ["off", "sync"])
@pytest.mark.parametrize("rate", [np.nan, 1e10])
def test_integer_poisson_of_a_nan_or_too_large_rate_is_an_error(monkeypatch, mode, rate):
    monkeypatch.setattr(settings, "compile_mode", mode)
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    f = tf.function(lambda r: tf.random.poisson([2], r, dtype=tf.int32))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"beyond the range of int32.*\[Op:RandomPoissonV2\]"):
        f(tf.constant([1.0, rate]))
