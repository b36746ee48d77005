"""tf.nn's transposed and separable convolutions, depthwise gradients, morphology,
max_pool_with_argmax, the statistics and normalizations, space_to_batch and CTC:
TensorFlow 2.21's values (obtained from it), gradients against finite differences, and
compiled parity."""

import itertools

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tests.compiled_parity import assert_compiled_matches_eager

IMAGE = tf.reshape(tf.constant([3.0, 1, 4, 1, 5, 9, 2, 6, 5]), [1, 3, 3, 1])
STRUCTURE = tf.constant([[[0.0], [1.0]], [[2.0], [0.5]]])
CTC_LOGITS = tf.constant(np.log([[[0.6, 0.3, 0.1]], [[0.2, 0.5, 0.3]], [[0.5, 0.1, 0.4]]]),
                         tf.float32)


def test_convolution_transposes_match_tensorflow():
    out = tf.nn.conv3d_transpose(tf.reshape(tf.range(1.0, 13.0), [1, 3, 2, 2, 1]),
                                 tf.reshape(tf.range(1.0, 5.0), [2, 1, 1, 2, 1]),
                                 [1, 3, 2, 2, 2], [1, 1, 1, 1, 1], "SAME")
    np.testing.assert_array_equal(out.numpy().reshape(-1), [
        1, 2, 2, 4, 3, 6, 4, 8, 8, 14, 12, 20, 16, 26, 20, 32, 24, 38, 28, 44, 32, 50, 36, 56])
    out = tf.nn.conv1d_transpose(tf.constant([[[1.0], [2.0]]]),
                                 tf.constant([[[1.0]], [[2.0]], [[3.0]]]), [1, 4, 1], 2)
    assert out.numpy().reshape(-1).tolist() == [1.0, 2.0, 5.0, 4.0]


def test_morphology_and_argmax_pooling_match_tensorflow():
    dilated = tf.nn.dilation2d(IMAGE, STRUCTURE, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    assert dilated.numpy().reshape(-1).tolist() == [5.5, 9.5, 11, 6.5, 10, 9, 7, 6, 5]
    eroded = tf.nn.erosion2d(IMAGE, STRUCTURE, [1, 1, 1, 1], "VALID", "NHWC", [1, 1, 1, 1])
    assert eroded.numpy().reshape(-1).tolist() == [-1.0, 0.5, 0.5, 4.5]
    pooled, argmax = tf.nn.max_pool_with_argmax(
        tf.reshape(tf.constant([3.0, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]), [2, 3, 2, 1]), 2, 1,
        "SAME", include_batch_in_index=True)
    assert pooled.numpy().reshape(-1).tolist() == [4, 1, 9, 9, 9, 9, 6, 6, 8, 8, 8, 8]
    assert argmax.dtype == tf.int64
    assert argmax.numpy().reshape(-1).tolist() == [2, 1, 5, 5, 5, 5, 7, 7, 11, 11, 11, 11]


def test_statistics_and_normalization_match_tensorflow():
    np.testing.assert_allclose(tf.nn.lrn(tf.reshape(tf.range(1.0, 5.0), [1, 1, 1, 4]), 1, 1.0,
                                         0.5, 0.75).numpy().reshape(-1),
                               [0.390795, 0.420448, 0.384036, 0.567949], rtol=1e-5)
    x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
    mean, variance = tf.nn.weighted_moments(x, [0], tf.constant([[1.0], [3.0]]))
    assert mean.numpy().tolist() == [2.5, 5.0] and variance.numpy().tolist() == [0.75, 3.0]
    count, sums, squares, shift = tf.nn.sufficient_statistics(x, [1], shift=1.0)
    assert float(count) == 2.0 and float(shift) == 1.0
    assert sums.numpy().tolist() == [1.0, 7.0] and squares.numpy().tolist() == [1.0, 29.0]
    zeros = tf.nn.zero_fraction(tf.constant([[0, 1, 0], [2, 0, 0]]))
    assert zeros.dtype == tf.float32 and float(zeros) == pytest.approx(2 / 3)
    blocks = tf.space_to_batch_nd(tf.reshape(tf.range(1, 7), [1, 2, 3, 1]), [2, 2],
                                  [[0, 0], [0, 1]])
    assert blocks.numpy()[..., 0].tolist() == [[[1, 3]], [[2, 0]], [[4, 6]], [[5, 0]]]
    np.testing.assert_array_equal(tf.batch_to_space(blocks, [2, 2], [[0, 0], [0, 1]]),
                                  tf.reshape(tf.range(1, 7), [1, 2, 3, 1]))
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 1]])
    assert paddings.numpy().tolist() == [[1, 0], [0, 2]] and crops.numpy().tolist() == [
        [0, 0], [0, 1]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not divisible"):
        tf.space_to_batch_nd(tf.zeros([1, 3, 3, 1]), [2, 2], [[0, 0], [0, 1]])


def test_ctc_loss_in_a_function_is_one_op_whatever_the_frames():
    # The loss and its gradient are one op, as TensorFlow computes the gradient with the
    # loss: neither the function's graph nor its gradient's grows with the frames, and
    # the gradient differentiates no loop over them.
    labels = tf.constant([[1, 2, 1]])

    def graph(frames):
        logits = tf.zeros([frames, 1, 4])

        def loss_and_grad(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.nn.ctc_loss(labels, x, [3], [frames])
            return tape.gradient(loss, x)
        return list(tf.function(loss_and_grad).get_concrete_function(logits).graph.all_nodes())

    short, long = graph(5), graph(60)
    assert len(short) == len(long)
    assert [n.op.name for n in long].count("CTCLossDense") == 1
    assert not any(n.op.name == "While" for n in long)


def _ctc_by_alignments(log_probs, labels):
    """-log of the summed probability of every alignment (a class per frame, blank 0)
    that collapses to labels: repeats merged, then blanks dropped."""
    frames, classes = log_probs.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=frames):
        merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in merged if k] == list(labels):
            total += np.exp(sum(log_probs[t, k] for t, k in enumerate(path)))
    return -np.log(total)


def test_ctc_loss_sums_every_alignment_and_its_gradient_is_the_loss_derivative():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(5, 2, 3))
    labels, label_length, logit_length = [[1, 1], [2, 0]], [2, 1], [5, 3]
    x = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.nn.ctc_loss(tf.constant(labels), x, label_length, logit_length)
    log_probs = logits - np.log(np.exp(logits).sum(axis=2, keepdims=True))
    expected = [_ctc_by_alignments(log_probs[:n, b], labels[b][:m])
                for b, (m, n) in enumerate(zip(label_length, logit_length))]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    grad = tape.gradient(loss, x).numpy()
    assert not grad[3:, 1].any()  # frames past logit_length get none

    def loss_at(values):
        return tf.nn.ctc_loss(tf.constant(labels), tf.constant(values), label_length,
                              logit_length).numpy().sum()
    step = 1e-6
    for index in [(0, 0, 0), (2, 0, 1), (4, 0, 2), (1, 1, 2), (2, 1, 0)]:
        up, down = logits.copy(), logits.copy()
        up[index] += step
        down[index] -= step
        np.testing.assert_allclose(grad[index], (loss_at(up) - loss_at(down)) / (2 * step),
                                   rtol=1e-6, atol=1e-9)


def test_ctc_loss_of_an_impossible_labeling_and_of_its_gradient():
    # Two repeated labels need three frames: two cannot hold them. The loss is the log of
    # a probability of 0 (finite), and no gradient comes from that sequence; the gradient
    # is a constant to a second derivative, as in TensorFlow.
    x = tf.constant(np.random.default_rng(4).normal(size=(2, 2, 3)))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            loss = tf.nn.ctc_loss(tf.constant([[1, 1], [1, 2]]), x, [2, 2], [2, 2])
        grad = inner.gradient(loss, x)
    assert loss.numpy()[0] == 1e30 and np.isfinite(loss.numpy()[1])
    assert not grad.numpy()[:, 0].any() and grad.numpy()[:, 1].any()
    assert outer.gradient(grad, x) is None


def test_ctc_matches_tensorflow():
    with tf.GradientTape() as tape:
        tape.watch(CTC_LOGITS)
        loss = tf.nn.ctc_loss(tf.constant([[1, 2]]), CTC_LOGITS, [2], [3])
    np.testing.assert_allclose(loss, [1.255266], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, CTC_LOGITS).numpy().reshape(3, 3), [
        [0.178947, -0.278947, 0.1], [0.115789, -0.131579, 0.015789],
        [0.342105, 0.1, -0.442105]], atol=1e-6)
    labels, lengths = tf.nn.collapse_repeated(tf.constant([[1, 1, 2, 2, 1], [3, 4, 4, 5, 5]]),
                                              tf.constant([5, 4]))
    assert labels.numpy().tolist() == [[1, 2, 1], [3, 4, 5]]
    assert lengths.numpy().tolist() == [3, 3]
    unique, index = tf.nn.ctc_unique_labels(tf.constant([[3, 4, 4, 3]]))
    assert unique.numpy().tolist() == [[3, 4, 0, 0]] and index.numpy().tolist() == [
        [0, 1, 1, 0]]


def test_ctc_loss_label_outside_the_classes_names_it_compiled_too(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "sync")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    logits = tf.zeros([4, 1, 3])
    # Labels past label_length are padding, never read.
    assert np.isfinite(tf.nn.ctc_loss([[1, 9]], logits, [1], [4]).numpy()).all()
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"label value of 9 which is outside the valid range"):
        tf.function(lambda x: tf.nn.ctc_loss([[1, 9]], x, [2], [4]))(logits)


def test_ctc_kernels_share_the_ops_log_of_zero():
    # The compiled helper keeps its own copy (importing ops/ctc.py would make that file
    # part of every helper's cache key); an impossible labeling's loss is that number in
    # every form.
    from tapeflow.backends.numba_cpu.kernels import ctc as compiled_ctc
    from tapeflow.ops import ctc
    assert compiled_ctc._LOG_ZERO == ctc.LOG_ZERO


def _finite_difference_check(fn, *args, eps=1e-6, rtol=1e-5):
    """The tape's gradient of sum(fn(*args) * weights) against central differences."""
    rng = np.random.default_rng(0)
    values = [np.asarray(a, np.float64) for a in args]
    out_shape = fn(*[tf.constant(v) for v in values]).shape
    weights = tf.constant(rng.standard_normal(out_shape))

    def scalar(*vs):
        return float(tf.reduce_sum(fn(*[tf.constant(v) for v in vs]) * weights))

    sources = [tf.constant(v) for v in values]
    with tf.GradientTape() as tape:
        tape.watch(sources)
        total = tf.reduce_sum(fn(*sources) * weights)
    for k, grad in enumerate(tape.gradient(total, sources)):
        numeric = np.zeros_like(values[k])
        for i in np.ndindex(values[k].shape):
            up = [v.copy() for v in values]
            down = [v.copy() for v in values]
            up[k][i] += eps
            down[k][i] -= eps
            numeric[i] = (scalar(*up) - scalar(*down)) / (2 * eps)
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=rtol, atol=1e-7)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 4, 3, 2))
    _finite_difference_check(lambda dy, w: tf.nn.conv3d_transpose(
        dy, w, [1, 4, 4, 3, 2], [1, 2, 1, 2, 1], "SAME"),
        rng.standard_normal((1, 2, 4, 2, 3)), rng.standard_normal((2, 2, 1, 2, 3)))
    _finite_difference_check(lambda x, a, b: tf.nn.separable_conv2d(
        x, a, b, [1, 1, 1, 1], "SAME"), x, rng.standard_normal((2, 2, 2, 1)),
        rng.standard_normal((1, 1, 2, 3)))
    _finite_difference_check(lambda x, f: tf.nn.dilation2d(
        x, f, [1, 2, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]), x, rng.standard_normal((2, 2, 2)))
    _finite_difference_check(lambda x: tf.nn.max_pool_with_argmax(x, 2, 2, "SAME")[0], x)
    _finite_difference_check(lambda x: tf.cast(tf.nn.lrn(tf.cast(x, tf.float32), 1, 1.0,
                                                         0.5, 0.75), tf.float64),
                             x, eps=1e-2, rtol=1e-2)
    _finite_difference_check(lambda x, w: tf.nn.weighted_moments(x, [0, 1], w)[1],
                             x[0, :, :, 0], rng.uniform(0.5, 2.0, (4, 1)))
    _finite_difference_check(lambda x: tf.nn.ctc_loss(
        tf.constant([[1, 1, 2], [2, 0, 0]]), x, [3, 1], [5, 4]),
        rng.standard_normal((5, 2, 3)))


def test_compiled_agrees_with_eager(monkeypatch):
    def composed(image, logits):
        pooled, argmax = tf.nn.max_pool_with_argmax(image, 2, 1, "SAME")
        return (tf.nn.dilation2d(image, STRUCTURE, [1, 1, 1, 1], "SAME", "NHWC",
                                 [1, 1, 1, 1]), pooled, argmax,
                tf.nn.ctc_loss(tf.constant([[1, 2]]), logits, [2], [3]))

    assert_compiled_matches_eager(monkeypatch, composed, IMAGE, CTC_LOGITS, rtol=1e-6)


def test_top_level_counting_shapes_and_initializers_match_tensorflow():
    bins = tf.histogram_fixed_width_bins(tf.constant([[-1.0, 0.0, 1.5], [2.0, 5.0, 15.0]]),
                                         [0.0, 5.0], 5)
    assert bins.numpy().tolist() == [[0, 0, 1], [2, 4, 4]]
    assert tf.math.bincount(tf.constant([1, 1, 3, 0, 5])).numpy().tolist() == [1, 2, 0, 1,
                                                                               0, 1]
    assert tf.math.bincount(tf.constant([[1, 1, 3], [0, 0, 2]]), axis=-1).numpy().tolist() \
        == [[0, 2, 0, 1], [2, 0, 1, 0]]
    weighted = tf.math.bincount(tf.constant([1, 1, 3]), weights=tf.constant([0.5, 1.0, 2.0]))
    assert weighted.numpy().tolist() == [0.0, 1.5, 0.0, 2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        tf.math.bincount(tf.constant([1, -1]))
    matrix = tf.math.confusion_matrix([1, 2, 0], [2, 2, 0], num_classes=3,
                                      weights=[1.5, 2.0, 3.0], dtype=tf.float32)
    assert matrix.numpy().tolist() == [[3, 0, 0], [0, 0, 1.5], [0, 0, 2]]
    assert tf.broadcast_static_shape(tf.TensorShape([2, 1]), tf.TensorShape([3])) == [2, 3]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    assert tf.broadcast_dynamic_shape([2, 1, 1], [4, 3]).numpy().tolist() == [2, 4, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.broadcast_dynamic_shape([2], [3])
    values = tf.constant_initializer([1, 2])(shape=[2])
    assert values.dtype == tf.int32 and values.numpy().tolist() == [1, 2]
    assert tf.zeros_initializer()([2], tf.int32).numpy().tolist() == [0, 0]
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer()([2], tf.int32)
    assert tf.random_normal_initializer(stddev=0.5).get_config() == {
        "mean": 0.0, "stddev": 0.5, "seed": None}
    with tf.name_scope("a"), tf.name_scope("b"):
        assert tf.get_current_name_scope() == "a/b"
    assert tf.group(tf.constant(1)) is None and tf.no_op() is None
    assert tf.tuple([tf.constant(1.0), None])[1] is None


def test_scatter_compositions_match_tensorflow():
    tensor = tf.constant([1.0, 5.0, 3.0])
    updates = tf.constant([4.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([tensor, updates])
        largest = tf.tensor_scatter_nd_max(tensor, [[0], [0], [2]], updates)
        replaced = tf.tensor_scatter_nd_update(tensor, [[0], [0], [2]], updates)
    assert largest.numpy().tolist() == [4.0, 5.0, 3.0]
    # Equal values share the gradient, as TensorFlow's _TensorScatterMinOrMaxGrad.
    assert [g.numpy().tolist() for g in tape.gradient(largest, [tensor, updates])] == [
        [0.0, 1.0, 0.5], [1.0, 0.0, 0.5]]
    assert replaced.numpy().tolist() == [2.0, 5.0, 3.0]  # the last duplicate wins
    assert [g.numpy().tolist() for g in tape.gradient(replaced, [tensor, updates])] == [
        [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    smallest = tf.function(tf.tensor_scatter_nd_min)(tf.constant([[1, 5], [3, 0]]), [[1]],
                                                     tf.constant([[2, -1]]))
    assert smallest.numpy().tolist() == [[1, 5], [2, -1]]
    stitched = tf.dynamic_stitch([[0, 2], [1, 2]], [tf.constant([1.0, 2.0]),
                                                    tf.constant([3.0, 4.0])])
    assert stitched.numpy().tolist() == [1.0, 3.0, 4.0]
