"""The candidate samplers, tf.nn.compute_accidental_hits, tf.nn.nce_loss and
tf.nn.sampled_softmax_loss against TensorFlow 2.21's numbers (expected counts are
deterministic given the candidates; the losses given sampled_values)."""

import math

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops.candidate_sampling import expected_counts

TRUE = [[1, 5], [7, 2]]


@pytest.mark.parametrize("sampler, kwargs, expected", [
    (tf.random.uniform_candidate_sampler, {}, [[0.6, 0.6], [0.6, 0.6]]),
    (tf.random.log_uniform_candidate_sampler, {},
     [[1.0145525932312012, 0.38571497797966003], [0.2947160601615906, 0.7198364734649658]]),
    (tf.random.fixed_unigram_candidate_sampler,
     {"unigrams": [1.0 * k for k in range(1, 11)], "distortion": 0.75},
     [[0.19304881989955902, 0.4400561451911926], [0.5460245013237, 0.2616589665412903]]),
])
def test_true_expected_counts_without_rejections_are_tensorflows(sampler, kwargs, expected):
    # unique=False: p * num_sampled, whatever was drawn (num_sampled=6, or 4 for unigrams)
    num_sampled = 4 if kwargs else 6
    sampled, true_count, sampled_count = sampler(
        tf.constant(TRUE, tf.int64), 2, num_sampled, False, 10, seed=1, **kwargs)
    np.testing.assert_allclose(true_count.numpy(), expected, rtol=1e-7)
    assert sampled.dtype == tf.int64 and sampled.shape == [num_sampled]
    assert sampled_count.dtype == tf.float32


def test_expected_counts_after_rejections_are_tensorflows():
    # TensorFlow's log-uniform draw of [0, 4, 3, 5, 9, 1] (range 10) took 10 tries.
    ids = np.array([0, 4, 3, 5, 9, 1])
    p = tf.constant([math.log((i + 2) / (i + 1)) / math.log(11) for i in ids], tf.float32)
    np.testing.assert_allclose(
        expected_counts(p, 6, tf.constant(10, tf.int64)).numpy(),
        [0.9670162, 0.54651815, 0.62347424, 0.4854447, 0.33341616, 0.8431339], rtol=2e-7)
    # A uniform draw of 6 of 10 in 7 tries; none rejected: p * 6
    tenth = tf.constant([0.1], tf.float32)
    assert expected_counts(tenth, 6, tf.constant(7, tf.int64)).numpy()[0] == np.float32(0.5217031)
    assert expected_counts(tenth, 6, tf.constant(6, tf.int64)).numpy()[0] == np.float32(0.6)


def test_reserved_ids_have_probability_zero_and_are_never_drawn():
    tf.random.set_seed(4)
    for _ in range(5):
        sampled, true_count, _ = tf.random.fixed_unigram_candidate_sampler(
            TRUE, 2, 4, True, 10, unigrams=[1.0 * k for k in range(1, 9)],
            distortion=0.5, num_reserved_ids=2)
        assert min(sampled.numpy()) >= 2 and len(set(sampled.numpy())) == 4
    np.testing.assert_array_equal(true_count.numpy()[0, 0], 0.0)


def test_draws_follow_their_distributions():
    tf.random.set_seed(1)
    uniform = tf.random.uniform_candidate_sampler([[0]], 1, 5000, False, 5, seed=2)[0]
    counts = np.bincount(uniform.numpy(), minlength=5)
    assert np.all(np.abs(counts - 1000) < 150)  # a binomial's sd is 28
    zipf = tf.random.log_uniform_candidate_sampler([[0]], 1, 5000, False, 10, seed=2)[0]
    counts = np.bincount(zipf.numpy(), minlength=10)
    p = np.log((np.arange(10) + 2) / (np.arange(10) + 1)) / np.log(11)
    assert np.all(np.abs(counts - 5000 * p) < 5 * np.sqrt(5000 * p * (1 - p)) + 1)
    unique = tf.random.log_uniform_candidate_sampler([[0]], 1, 8, True, 10, seed=3)[0]
    assert sorted(unique.numpy()) == sorted(set(unique.numpy()))


def test_learned_sampler_learns_from_true_classes_under_a_fixed_seed():
    tf.random.set_seed(3)
    first = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 4, True, 10, seed=7)
    second = tf.random.learned_unigram_candidate_sampler(TRUE, 2, 4, True, 10, seed=7)
    # first call: every count 1; second: the four true classes counted once more (14)
    tries = round(math.log(1 - first[1].numpy()[0, 0]) / math.log(0.9))
    assert tries >= 4
    p_true, p_other = 2 / 14, 1 / 14
    true_count = second[1].numpy()
    tries2 = round(math.log(1 - true_count[0, 0]) / math.log(1 - p_true))
    np.testing.assert_allclose(true_count, 1 - (1 - p_true) ** tries2 if tries2 > 4 else
                               4 * p_true, rtol=1e-5)
    for k, count in zip(second[0].numpy(), second[2].numpy()):
        p = p_true if k in (1, 5, 7, 2) else p_other
        np.testing.assert_allclose(count, 1 - (1 - p) ** tries2 if tries2 > 4 else 4 * p,
                                   rtol=1e-5)


def test_all_candidate_sampler_and_errors():
    sampled, true_count, sampled_count = tf.random.all_candidate_sampler(TRUE, 2, 10, True)
    assert sampled_count.numpy().tolist() == [1.0] * 10
    assert sampled.numpy().tolist() == list(range(10))
    assert true_count.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):
        tf.random.uniform_candidate_sampler(TRUE, 2, 12, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_true columns"):
        tf.random.uniform_candidate_sampler(TRUE, 3, 2, True, 10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be equal to weights size"):
        tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, True, 10, unigrams=[1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="either vocab_file or unigrams"):
        tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, True, 10)


def test_fixed_unigram_reads_a_vocabulary_file_as_numbers_only(tmp_path):
    """The last comma-separated field of each line is a count (TensorFlow's format); a
    file that is not one is TensorFlow's error, never anything run."""
    good = tmp_path / "vocab.csv"
    good.write_text("".join(f"word{i},{i + 1}\n" for i in range(10)))
    by_file = tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, False, 10,
                                                        vocab_file=str(good), seed=3)
    by_list = tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, False, 10,
                                                        unigrams=list(range(1, 11)), seed=3)
    np.testing.assert_array_equal(by_file[1].numpy(), by_list[1].numpy())
    latin = tmp_path / "latin1.csv"  # words in another encoding than UTF-8
    latin.write_bytes("".join(f"m\u00e9t\u00e9o{i},{i + 1}\n" for i in range(10)).encode("latin-1"))
    by_latin = tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, False, 10,
                                                         vocab_file=str(latin), seed=3)
    np.testing.assert_array_equal(by_latin[1].numpy(), by_list[1].numpy())
    bad = tmp_path / "bad.csv"
    bad.write_text("word0,1\nword1,__import__('os')\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Wrong vocabulary format"):
        tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, False, 2, vocab_file=str(bad))
    with pytest.raises(tf.errors.NotFoundError, match="missing.csv"):
        tf.random.fixed_unigram_candidate_sampler(TRUE, 2, 4, False, 2,
                                                  vocab_file=str(tmp_path / "missing.csv"))


def test_compute_accidental_hits_is_tensorflows():
    indices, ids, weights = tf.nn.compute_accidental_hits(
        tf.constant(TRUE, tf.int64), tf.constant([5, 1, 3, 7, 2, 5], tf.int64), 2)
    assert indices.dtype == tf.int32 and indices.numpy().tolist() == [0, 0, 1, 1]
    assert ids.numpy().tolist() == [1, 5, 3, 4]  # the last position of a repeated 5
    assert weights.numpy().tolist() == [float(np.finfo(np.float32).min)] * 4


# TensorFlow 2.21's losses, gradients of sum(loss * [1, 2, 3]) (row sums for weights)
REFERENCE = {"nce_loss-False": [[12.40731, 12.14442, 12.00275], [3.06205, -0.17564, -0.07126, 1.48407, 0.0, 3.11944, 0.0, -0.11571, 0.0, 3.12238, 0.0, 0.0], [5.61872, 0.48415, 4.5439, -1.43218, 0.0, 1.569, 0.0, -0.0389, 0.0, 5.92054, 0.0, 0.0], [[-2.0361, -1.35414, 1.22939, 1.78688], [-1.90371, -0.02618, 1.45124, 3.61214], [0.46421, -3.25544, 4.13847, 6.287]]], "nce_loss-True": [[12.21025, 11.5107, 11.85643], [3.06205, -0.17564, -2.86337, 1.82481, 0.0, 3.18433, 0.0, -0.11571, 0.0, 3.12238, 0.0, 0.0], [5.61872, 0.48415, 3.60513, -1.84053, 0.0, 1.39014, 0.0, -0.0389, 0.0, 5.92054, 0.0, 0.0], [[-2.01311, -1.59854, 1.34836, 1.72401], [-1.24307, 1.16176, 2.03635, 3.57335], [1.41362, -3.1661, 4.64723, 6.58602]]], "sampled_softmax_loss-False": [[3.6842, 6.19379, 6.27516], [-0.06864, 0.02756, -3.59364, 2.48836, 0.0, 0.19322, 0.0, -2.96181, 0.0, 3.91494, 0.0, 0.0], [0.63909, -0.07598, -0.20564, -2.97998, 0.0, -0.48282, 0.0, -0.99582, 0.0, 4.10115, 0.0, 0.0], [[-0.16189, -0.81291, 0.61473, 0.35829], [-0.06159, 0.78785, 3.15761, 2.98425], [5.25422, -0.58522, 4.92058, 4.98955]]], "sampled_softmax_loss-True": [[3.68271, 6.19179, 6.27328], [-0.06871, 0.02734, -3.6067, 2.49306, 0.0, 0.19378, 0.0, -2.96178, 0.0, 3.92302, 0.0, 0.0], [0.64025, -0.07535, -0.20815, -2.9856, 0.0, -0.48427, 0.0, -0.99582, 0.0, 4.10894, 0.0, 0.0], [[-0.16244, -0.81487, 0.61712, 0.35927], [-0.06122, 0.7924, 3.16316, 2.98972], [5.26413, -0.58633, 4.92986, 4.99896]]]}


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_sampled_losses_and_gradients_are_tensorflows(key):
    name, remove_hits = key.split("-")
    loss_fn = getattr(tf.nn, name)
    rng = np.random.default_rng(0)
    weights = tf.Variable(rng.normal(size=(12, 4)).astype(np.float32))
    biases = tf.Variable(rng.normal(size=(12,)).astype(np.float32))
    inputs = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32))
    sampled_values = (tf.constant([5, 0, 3, 9, 2], tf.int64),
                      tf.constant([[0.3, 0.5], [0.2, 0.7], [0.4, 0.4]]),
                      tf.constant([0.5, 0.9, 0.4, 0.1, 0.7]))
    with tf.GradientTape() as tape:
        loss = loss_fn(weights, biases, [[1, 5], [7, 2], [3, 3]], inputs, 5, 12, num_true=2,
                       sampled_values=sampled_values,
                       remove_accidental_hits=remove_hits == "True")
        total = tf.reduce_sum(loss * [1.0, 2.0, 3.0])
    dw, db, dx = (np.asarray(tf.convert_to_tensor(g)) for g in
                  tape.gradient(total, [weights, biases, inputs]))
    want_loss, want_dw, want_db, want_dx = REFERENCE[key]
    np.testing.assert_allclose(loss.numpy(), want_loss, atol=2e-5)
    np.testing.assert_allclose(dw.sum(axis=1), want_dw, atol=2e-5)
    np.testing.assert_allclose(db, want_db, atol=2e-5)
    np.testing.assert_allclose(dx, want_dx, atol=2e-5)


def test_sampled_softmax_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    weights = rng.normal(size=(8, 3))
    inputs = tf.constant(rng.normal(size=(2, 3)))
    sampled_values = (tf.constant([4, 6, 1], tf.int64), tf.constant([[0.4], [0.6]]),
                      tf.constant([0.5, 0.3, 0.8]))

    def loss(w):
        return tf.reduce_sum(tf.nn.sampled_softmax_loss(
            w, tf.zeros([8], tf.float64), [[1], [2]], inputs, 3, 8,
            sampled_values=sampled_values))
    w = tf.constant(weights)
    with tf.GradientTape() as tape:
        tape.watch(w)
        value = loss(w)
    grad = np.asarray(tf.convert_to_tensor(tape.gradient(value, w)))
    eps = 1e-6
    for i, j in [(1, 0), (2, 2), (4, 1), (6, 0)]:
        step = np.zeros_like(weights)
        step[i, j] = eps
        numeric = (loss(tf.constant(weights + step)) - loss(tf.constant(weights - step))) / (2 * eps)
        np.testing.assert_allclose(grad[i, j], numeric.numpy(), rtol=1e-6, atol=1e-8)


def test_sampled_softmax_loss_traced_draws_new_candidates():
    weights = tf.ones([10, 3])

    @tf.function
    def loss(x):
        return tf.nn.sampled_softmax_loss(weights, tf.zeros([10]), [[1], [2]], x, 4, 10)
    values = {tuple(loss(tf.ones([2, 3])).numpy()) for _ in range(3)}
    assert len(values) > 1
