"""TensorFlow functions tapeflow composes of its table's ops (so their gradients and
compiled code are those ops'): values as TensorFlow 2.21's (obtained from it), gradients
against NumPy formulas, errors, and one compiled parity check."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tests.compiled_parity import assert_compiled_matches_eager


def test_in_top_k_counts_ties_in_and_non_finite_targets_out():
    scores = tf.constant([[0.9, 0.1, 0.0], [0.3, 0.3, 0.4], [0.1, 0.8, np.nan]])
    assert tf.math.in_top_k(tf.constant([0, 1, 2]), scores, 1).numpy().tolist() == [
        True, False, False]
    ties = tf.constant([[0.5, 0.5, 0.1], [0.3, 0.3, 0.4]])
    assert tf.nn.in_top_k(tf.constant([0, 1]), ties, 1).numpy().tolist() == [True, False]


def test_cumulative_logsumexp_values_and_gradient():
    np.testing.assert_allclose(
        tf.math.cumulative_logsumexp(tf.constant([0.0, 1.0, 2.0]), exclusive=True).numpy(),
        [-np.inf, 0.0, 1.3132617], rtol=1e-6)
    x = tf.Variable([[0.0, 1.0], [2.0, 3.0]], dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = tf.math.cumulative_logsumexp(x, axis=1, reverse=True)
    np.testing.assert_allclose(y.numpy()[:, 0], np.log(np.exp(x.numpy()).sum(axis=1)))
    # d/dx_j of sum_i log sum_{k >= i} e^x_k = sum_{i <= j} softmax over k >= i, at j
    e = np.exp(x.numpy())
    want = np.stack([e[:, 0] / e.sum(1), e[:, 1] / e.sum(1) + 1.0], axis=1)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want)


def test_small_math_helpers():
    assert float(tf.math.zero_fraction(tf.constant([0, 1, 0, 2]))) == 0.5
    assert bool(tf.math.is_non_decreasing([1, 2, 2]))
    assert not bool(tf.math.is_strictly_increasing([1, 2, 2]))
    assert not bool(tf.math.is_non_decreasing([[1, 2], [0, 3]]))
    np.testing.assert_array_equal(tf.math.rint(tf.constant([0.5, 1.5, -2.5])), [0.0, 2.0, -2.0])
    np.testing.assert_allclose(tf.math.softsign(tf.constant([-2.0, 0.0, 3.0])),
                               [-2 / 3, 0.0, 0.75], rtol=1e-6)
    np.testing.assert_array_equal(tf.math.scalar_mul(2.0, tf.constant([1.0, 2.0])), [2.0, 4.0])
    assert float(tf.math.accumulate_n([tf.constant(1.0), tf.constant(2.0)])) == 3.0


def test_unravel_index_and_reverse_sequence():
    assert tf.unravel_index([5, 7], [3, 4]).numpy().tolist() == [[1, 1], [1, 3]]
    with pytest.raises(InvalidArgumentError, match="index is out of bound"):
        tf.unravel_index([12], [3, 4])
    x = tf.Variable(np.arange(12.0).reshape(3, 4))
    with tf.GradientTape() as tape:
        y = tf.reverse_sequence(x, [2, 4, 0], seq_axis=1, batch_axis=0)
        loss = tf.reduce_sum(y * np.arange(12.0).reshape(3, 4))
    assert y.numpy().tolist() == [[1, 0, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11]]
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(),
                                  [[1, 0, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11]])


def test_segments_and_partitions():
    data = tf.constant([1.0, 2.0, 3.0, 4.0])
    assert tf.math.unsorted_segment_mean(data, [0, 0, 2, 2], 3).numpy().tolist() == [1.5, 0, 3.5]
    np.testing.assert_allclose(tf.math.unsorted_segment_sqrt_n(data, [0, 0, 2, -1], 3),
                               [3 / np.sqrt(2), 0.0, 3.0], rtol=1e-6)
    parts = tf.dynamic_partition(tf.constant([10, 20, 30, 40]), [0, 1, 0, 2], 3)
    assert [p.numpy().tolist() for p in parts] == [[10, 30], [20], [40]]
    with pytest.raises(InvalidArgumentError, match=r"partitions\[1\] = 3 is not in \[0, 2\)"):
        tf.dynamic_partition(tf.constant([1, 2]), [0, 3], 2)
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        a, b = tf.dynamic_partition(v, [1, 0, 1], 2)
        y = tf.reduce_sum(a) * 2 + tf.reduce_sum(b * b)
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 2.0, 6.0]


def test_segment_reductions_match_tensorflow():
    d = tf.constant([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0], [7.0, 8.0]])
    lowest = float(np.finfo(np.float32).min)
    assert tf.math.unsorted_segment_max(d, [0, 0, 2, -1], 3).numpy().tolist() == [
        [3.0, 2.0], [lowest, lowest], [5.0, 6.0]]
    assert tf.math.unsorted_segment_prod(d, [0, 0, 2, -1], 3).numpy().tolist() == [
        [3.0, -8.0], [1.0, 1.0], [5.0, 6.0]]
    assert tf.math.segment_mean(d, [0, 0, 2, 2]).numpy().tolist() == [
        [2.0, -1.0], [0.0, 0.0], [6.0, 7.0]]
    assert tf.math.segment_max(d, [0, 0, 2, 2]).numpy().tolist() == [
        [3.0, 2.0], [0.0, 0.0], [7.0, 8.0]]
    with pytest.raises(InvalidArgumentError, match="segment ids are not increasing"):
        tf.math.segment_sum(d, [0, 2, 1, 2])
    v = tf.Variable([[1.0, 2.0], [3.0, -4.0], [3.0, 6.0], [7.0, 8.0]])
    weights = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tied_max = tf.reduce_sum(tf.math.unsorted_segment_max(v, [0, 0, 0, 1], 2) * weights)
        product = tf.reduce_sum(tf.math.segment_prod(v, [0, 0, 1, 1]) * weights)
    assert tape.gradient(tied_max, v).numpy().tolist() == [
        [0.0, 0.0], [0.5, 0.0], [0.5, 2.0], [3.0, 4.0]]
    assert tape.gradient(product, v).numpy().tolist() == [
        [3.0, -8.0], [1.0, 4.0], [21.0, 32.0], [9.0, 24.0]]


def test_truncation_saturation_histograms_and_permutations():
    assert tf.truncatediv(tf.constant([-7, 7, -7, 6]), tf.constant([2, -2, -2, -3])).numpy(
        ).tolist() == [-3, -3, 3, -2]
    assert tf.truncatemod(tf.constant([-7, 7, -7]), tf.constant([2, -2, -2])).numpy(
        ).tolist() == [-1, 1, -1]
    assert tf.truncatediv(tf.constant([-7.5]), tf.constant([2.0])).numpy().tolist() == [-3.0]
    assert tf.saturate_cast(tf.constant([-3.0, 300.0, 1.5]), tf.uint8).numpy().tolist() == [
        0, 255, 1]
    assert tf.saturate_cast(tf.constant([1e10, -1e10]), tf.int32).numpy().tolist() == [
        2147483520, -2147483648]  # the largest float32 inside int32's range, as TensorFlow
    assert tf.histogram_fixed_width(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0],
                                    nbins=5).numpy().tolist() == [2, 1, 1, 0, 2]
    assert tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy().tolist() == [2, 4, 3, 0, 1]
    with pytest.raises(InvalidArgumentError, match="0 is duplicated in the input"):
        tf.math.invert_permutation([0, 0])
    assert tf.tensor_scatter_nd_sub(tf.constant([1.0, 2.0, 3.0]), [[0], [2]],
                                    [5.0, 6.0]).numpy().tolist() == [-4.0, 2.0, -3.0]


def test_clip_by_global_norm():
    clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), tf.constant([0.0, 12.0])],
                                           6.5)
    assert [t.numpy().tolist() for t in clipped] == [[1.5, 2.0], [0.0, 6.0]]
    assert float(norm) == 13.0
    kept, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None], 100.0)
    assert kept[1] is None and kept[0].numpy().tolist() == [3.0, 4.0] and float(norm) == 5.0
    with pytest.raises(TypeError, match="sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)


def test_ensure_shape_checks_now_or_when_the_function_runs():
    assert tf.ensure_shape(tf.constant([1.0, 2.0]), [None]).shape == (2,)
    with pytest.raises(InvalidArgumentError, match=r"input \[2\] is not compatible with "
                                                   r"expected shape \[3\]"):
        tf.ensure_shape(tf.constant([1.0, 2.0]), [3])
    doubled = tf.function(lambda x: tf.ensure_shape(x, [3]) * 2.0).get_concrete_function(
        tf.TensorSpec([None]))
    assert doubled.outputs[0].shape == (3,)
    assert doubled(tf.constant([1.0, 2.0, 3.0])).numpy().tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(InvalidArgumentError, match=r"input \[\?\] is not compatible"):
        doubled(tf.constant([1.0, 2.0]))


def test_framework_helpers():
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    assert tf.get_static_value(5) == 5
    seen = []

    @tf.function
    def probe(x):
        seen.append((tf.get_static_value(x), tf.is_symbolic_tensor(x), tf.inside_function()))
        return x

    probe(tf.constant(1.0))
    assert seen == [(None, True, True)] and not tf.inside_function()
    assert [s.numpy().tolist() for s in tf.shape_n([tf.ones([2, 3]), tf.ones([4])])] == [
        [2, 3], [4]]
    assert [float(t) for t in tf.identity_n([tf.constant(1.0), tf.constant(2.0)])] == [1.0, 2.0]


def test_compiled_agrees_with_eager(monkeypatch):
    def composed(x):
        return (tf.math.cumulative_logsumexp(x, axis=1), tf.math.in_top_k([0, 1], x, 2),
                tf.reverse_sequence(x, [1, 3], seq_axis=1, batch_axis=0),
                tf.math.unsorted_segment_mean(x, [1, 1], 2), tf.clip_by_global_norm([x], 1.0)[0])

    x = tf.constant([[0.5, 1.0, -1.0], [2.0, 0.0, 1.5]])
    assert_compiled_matches_eager(monkeypatch, composed, x, rtol=1e-6)
