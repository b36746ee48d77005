"""The candidate samplers of `tf.random` (and `tf.nn`) and `tf.nn.compute_accidental_hits`.

A sampler's draw is one random entry per TensorFlow op (UniformCandidateSampler, ...)
returning an int64 vector: the `num_sampled` candidates, then the number of tries the
draw took (with `unique=True` a repeated candidate is drawn again), then, for the learned
unigram sampler, the counts its probabilities were read from. The expected counts are
composed from that vector with TensorFlow's formula (range_sampler.cc,
ExpectedCountHelper): p * num_sampled when no draw was rejected, else the probability
of being drawn at least once in `num_tries` tries, 1 - (1 - p) ** num_tries, all in
float32 as TensorFlow computes them.

The candidates are drawn from the seeded NumPy generator of the other stateful random
ops (ops/random.py), so they are not TensorFlow's; given the candidates, the expected
counts are TensorFlow's numbers.
"""

import collections
import math
import threading

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError, NotFoundError
from . import rules
from .creation import fill, zeros_like
from .creation import range as tf_range
from .elementwise import cast, equal, expm1, greater_equal, log, log1p, stop_gradient, where
from .indexing import gather
from .random import _random_op, _seed_attrs, is_seeded
from .rearrange import boolean_mask
from .reduce import reduce_max
from .registry import bind
from .shape import expand_dims, reshape

HIT_WEIGHT = float(np.finfo(np.float32).min)


class _LearnedCounts:
    """The class counts of each learned unigram sampler, as TensorFlow's stateful kernel
    keeps them: one kernel per attrs, its seed pair included, so calls with a fixed seed
    learn from the earlier calls' true classes. Calls without any seed share one: their
    kernel's seed attrs are (0, 0) in TensorFlow, whatever pair tapeflow drew. At most
    MAX_KERNELS are kept (a global seed gives each unseeded call a new op seed), the
    least recently used going first."""

    MAX_KERNELS = 256

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.OrderedDict()

    def weights(self, attrs):
        ignored = ("counter", "seed", "seed2") if attrs["unseeded"] else ("counter",)
        key = tuple(sorted((k, v) for k, v in attrs.items() if k not in ignored))
        with self.lock:
            counts = self.counts.pop(key, None)
            if counts is None:
                counts = np.ones(attrs["range_max"], np.int64)
            self.counts[key] = counts
            while len(self.counts) > self.MAX_KERNELS:
                self.counts.popitem(last=False)
            return counts

    def forget(self):
        """Drops every sampler's counts: the next calls start from counts of 1, as a
        new TensorFlow kernel does."""
        with self.lock:
            self.counts.clear()


_LEARNED = _LearnedCounts()


def _picks(gen, attrs, sample_many):
    """The candidates and the number of tries: TensorFlow's rejection of repeats when
    `unique` (RangeSampler::SampleBatchGetExpectedCountAvoid)."""
    num_sampled = attrs["num_sampled"]
    if not attrs["unique"]:
        return [int(v) for v in sample_many(num_sampled)], num_sampled
    picked, seen, tries = [], set(), 0
    while len(picked) < num_sampled:
        for value in sample_many(2 * (num_sampled - len(picked)) + 8):
            tries += 1
            if value not in seen:
                seen.add(value)
                picked.append(int(value))
                if len(picked) == num_sampled:
                    break
    return picked, tries


def _uniform_sample(gen, attrs):
    return lambda n: gen.integers(0, attrs["range_max"], n)


def _log_uniform_sample(gen, attrs):
    log_range = math.log(attrs["range_max"] + 1)
    return lambda n: np.exp(gen.random(n) * log_range).astype(np.int64) - 1


def _weighted_sample(weights):
    def sample(gen, attrs):
        p = np.asarray(weights(attrs), np.float64)
        return lambda n: gen.choice(len(p), n, p=p / p.sum())
    return sample


def _fixed_weights(attrs):
    return np.asarray(attrs["weights"], np.float32)


def _drawer(sample):
    def draw(gen, arrays, attrs):
        picked, tries = _picks(gen, attrs, sample(gen, attrs))
        return np.asarray(picked + [tries], np.int64)
    return draw


def _learned_draw(gen, arrays, attrs):
    (true_classes,) = arrays
    counts = _LEARNED.weights(attrs)
    with _LEARNED.lock:
        before = counts.copy()
        np.add.at(counts, true_classes.reshape(-1), 1)  # TensorFlow updates after the draw
    picked, tries = _picks(gen, attrs, _weighted_sample(lambda a: before)(gen, attrs))
    return np.concatenate([np.asarray(picked + [tries], np.int64),
                           before[np.clip(true_classes.reshape(-1), 0, len(before) - 1)],
                           before[picked], [before.sum()]])


def _sampler_infer(op_name):
    def infer(true_classes, num_true, num_sampled, unique, range_max, seed, seed2, counter,
              **params):
        if true_classes.dtype != dtypes.int64:
            raise InvalidArgumentError(
                f"cannot compute {op_name} as input #0(zero-based) was expected to be a int64 "
                f"tensor but is a {true_classes.dtype.name} tensor [Op:{op_name}]", op=op_name)
        for what, value in (("num_true", num_true), ("num_sampled", num_sampled),
                            ("range_max", range_max)):
            if value < 1:
                raise InvalidArgumentError(f"Value for attr '{what}' of {value} must be at "
                                           f"least minimum 1 [Op:{op_name}]", op=op_name)
        if len(true_classes._shape) != 2:
            raise InvalidArgumentError(f"true_classes must be a matrix [Op:{op_name}]",
                                       op=op_name)
        if true_classes._shape[1] not in (None, num_true):
            raise InvalidArgumentError(
                f"true_classes must have num_true columns, expected: {true_classes._shape[1]} "
                f"was: {num_true} [Op:{op_name}]", op=op_name)
        possible = range_max if "weights" not in params else \
            int(np.count_nonzero(_fixed_weights(params)))
        if unique and num_sampled > possible:
            raise InvalidArgumentError(f"Sampler's range is too small. [Op:{op_name}]",
                                       op=op_name)
        size = num_sampled + 1
        if op_name == "LearnedUnigramCandidateSampler":
            rows = true_classes._shape[0]
            size = None if rows is None else size + rows * num_true + num_sampled + 1
        return (size,), dtypes.int64
    return infer


def _sampler_op(name, draw, forget=None):
    return _random_op(name, draw, None, _sampler_infer(name), args=("true_classes",),
                      forget=forget)


UNIFORM_CANDIDATE_SAMPLER = _sampler_op("UniformCandidateSampler", _drawer(_uniform_sample))
LOG_UNIFORM_CANDIDATE_SAMPLER = _sampler_op("LogUniformCandidateSampler",
                                            _drawer(_log_uniform_sample))
FIXED_UNIGRAM_CANDIDATE_SAMPLER = _sampler_op("FixedUnigramCandidateSampler",
                                              _drawer(_weighted_sample(_fixed_weights)))


def _forget_learned_counts():
    _LEARNED.forget()


LEARNED_UNIGRAM_CANDIDATE_SAMPLER = _sampler_op("LearnedUnigramCandidateSampler",
                                                _learned_draw, _forget_learned_counts)
# In a fixed order: compiled kernels name a sampler by its index here.
SAMPLERS = (UNIFORM_CANDIDATE_SAMPLER, LOG_UNIFORM_CANDIDATE_SAMPLER,
            FIXED_UNIGRAM_CANDIDATE_SAMPLER, LEARNED_UNIGRAM_CANDIDATE_SAMPLER)


def _filled(like, value):
    """float32 `value` in the shape of `like` (known only when the graph runs, traced)."""
    return cast(zeros_like(like), dtypes.float32) + np.float32(value)


def expected_counts(probability, num_sampled, num_tries):
    """TensorFlow's expected count of a candidate of `probability` (float32) in a draw of
    `num_sampled` that took `num_tries` tries."""
    wide = cast(probability, dtypes.float64)  # TensorFlow's to within a float32 rounding
    at_least_once = cast(-expm1(cast(num_tries, dtypes.float64) * log1p(-wide)),
                         dtypes.float32)
    return where(equal(num_tries, num_sampled), probability * float(num_sampled),
                 at_least_once)


def _sample(op, true_classes, num_true, num_sampled, unique, range_max, seed, **params):
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled),
             "unique": bool(unique), "range_max": int(range_max), **params,
             **_seed_attrs(seed)}
    drawn = bind(op, (rules.as_tensor(true_classes, dtypes.int64),), attrs)
    return drawn[:num_sampled], drawn[num_sampled]


def _counts(true_classes, sampled, num_tries, num_sampled, probability):
    true_classes = rules.as_tensor(true_classes, dtypes.int64)
    return (stop_gradient(sampled),
            stop_gradient(expected_counts(probability(true_classes), num_sampled, num_tries)),
            stop_gradient(expected_counts(probability(sampled), num_sampled, num_tries)))


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Candidates drawn uniformly from [0, range_max), as
    `tf.random.uniform_candidate_sampler`: (sampled_candidates, true_expected_count,
    sampled_expected_count).

    >>> import tapeflow as tf
    >>> s, t, e = tf.random.uniform_candidate_sampler([[1], [3]], 1, 4, True, 10, seed=1)
    >>> s.shape, t.shape, e.shape
    (TensorShape([4]), TensorShape([2, 1]), TensorShape([4]))
    """
    sampled, tries = _sample(UNIFORM_CANDIDATE_SAMPLER, true_classes, num_true, num_sampled,
                             unique, range_max, seed)
    p = np.float32(1.0) / np.float32(range_max)
    return _counts(true_classes, sampled, tries, num_sampled,
                   lambda ids: _filled(ids, p))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Candidates from Zipf's law, P(k) = log((k + 2) / (k + 1)) / log(range_max + 1), as
    `tf.random.log_uniform_candidate_sampler`."""
    sampled, tries = _sample(LOG_UNIFORM_CANDIDATE_SAMPLER, true_classes, num_true,
                             num_sampled, unique, range_max, seed)
    log_range = math.log(range_max + 1)

    def probability(ids):  # in float64, rounded to float32, as TensorFlow
        ids = cast(ids, dtypes.float64)
        return cast(log((ids + 2.0) / (ids + 1.0)) / log_range, dtypes.float32)
    return _counts(true_classes, sampled, tries, num_sampled, probability)


def _read_unigrams(vocab_file):
    """The last comma-separated field of each line of a vocabulary file, as TensorFlow's
    FixedUnigramSampler::LoadFromFile reads it; read as numbers only, with its errors."""
    op_name = "FixedUnigramCandidateSampler"
    try:
        with open(vocab_file, "rb") as lines:  # bytes: a word in any encoding
            text = [line.rstrip(b"\r\n") for line in lines]
    except OSError as e:
        raise NotFoundError(f"{vocab_file}; {e.strerror} [Op:{op_name}]", op=op_name) from None
    values = []
    for line in text:
        if not line.strip():
            continue
        try:
            values.append(float(line.rsplit(b",", 1)[-1]))
        except ValueError:
            shown = line.decode("utf-8", "replace")
            raise InvalidArgumentError(f"Wrong vocabulary format at line: {shown} "
                                       f"[Op:{op_name}]", op=op_name) from None
    return values


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Candidates drawn with probabilities proportional to `unigrams ** distortion` (the
    first `num_reserved_ids` ids never drawn), as
    `tf.random.fixed_unigram_candidate_sampler`."""
    op_name = "FixedUnigramCandidateSampler"
    if not vocab_file and not len(unigrams):
        raise InvalidArgumentError(f"Must provide either vocab_file or unigrams. "
                                   f"[Op:{op_name}]", op=op_name)
    values = _read_unigrams(vocab_file) if vocab_file else np.asarray(unigrams, np.float32)
    weights = [np.float32(0.0) for word in range(num_reserved_ids) if word % num_shards == shard]
    for word, value in enumerate(values, start=num_reserved_ids):
        if word % num_shards == shard:
            weights.append(np.float32(value) ** np.float32(distortion))
    if len(weights) != range_max:
        raise InvalidArgumentError(f"range is {range_max} must be equal to weights size  "
                                   f"{len(weights)} [Op:{op_name}]", op=op_name)
    weights = np.asarray(weights, np.float32)
    probabilities = weights / np.cumsum(weights, dtype=np.float32)[-1]
    sampled, tries = _sample(FIXED_UNIGRAM_CANDIDATE_SAMPLER, true_classes, num_true,
                             num_sampled, unique, range_max, seed,
                             weights=tuple(float(w) for w in weights))

    def probability(ids):  # ids outside the table have probability 0
        inside = greater_equal(ids, 0) & (ids < range_max)
        return where(inside, gather(probabilities, where(inside, ids, 0)), np.float32(0))
    return _counts(true_classes, sampled, tries, num_sampled, probability)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Candidates drawn with probabilities proportional to 1 plus how often each class was
    a true class in earlier calls of this sampler, as
    `tf.random.learned_unigram_candidate_sampler` (with a fixed seed the counts carry over
    from call to call, as TensorFlow's kernel keeps them)."""
    true_classes = rules.as_tensor(true_classes, dtypes.int64)
    drawn = bind(LEARNED_UNIGRAM_CANDIDATE_SAMPLER, (true_classes,), {
        "num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
        "range_max": int(range_max), "unseeded": not is_seeded(seed), **_seed_attrs(seed)})
    n_true = math.prod(true_classes.shape)
    sampled, tries = drawn[:num_sampled], drawn[num_sampled]
    true_counts = drawn[num_sampled + 1:num_sampled + 1 + n_true]
    sampled_counts = drawn[num_sampled + 1 + n_true:-1]
    total = cast(drawn[-1], dtypes.float32)

    def expected(counts):
        return expected_counts(cast(counts, dtypes.float32) / total, num_sampled, tries)
    return (stop_gradient(sampled),
            stop_gradient(reshape(expected(true_counts), true_classes.shape)),
            stop_gradient(expected(sampled_counts)))


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class in [0, num_sampled), each with expected count 1, as
    `tf.random.all_candidate_sampler` (a baseline for the samplers above)."""
    true_classes = rules.as_tensor(true_classes, dtypes.int64)
    _sampler_infer("AllCandidateSampler")(
        true_classes, num_true, num_sampled, False, num_sampled, 0, 0, 0)
    return (tf_range(num_sampled, dtype=dtypes.int64),
            fill(true_classes.shape, np.float32(1.0)),
            fill([num_sampled], np.float32(1.0)))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where a sampled candidate is one of its row's true classes, as
    `tf.nn.compute_accidental_hits`: (row indices int32, positions in
    `sampled_candidates` int64 — the last one for a repeated candidate —, weights of
    float32's lowest value), one per matching true class, row by row."""
    op_name = "ComputeAccidentalHits"
    true_classes = rules.as_tensor(true_classes, dtypes.int64)
    sampled = rules.as_tensor(sampled_candidates, dtypes.int64)
    if len(true_classes.shape) != 2 or true_classes.shape[1] != num_true:
        raise InvalidArgumentError(f"true_classes must be a matrix with num_true columns "
                                   f"[Op:{op_name}]", op=op_name)
    positions = tf_range(sampled.shape[0], dtype=dtypes.int64)
    matches = equal(expand_dims(true_classes, -1), sampled)
    last = reduce_max(where(matches, positions, -1), axis=-1)
    hit = greater_equal(last, 0)
    rows = expand_dims(tf_range(true_classes.shape[0], dtype=dtypes.int32), -1) + \
        cast(zeros_like(true_classes), dtypes.int32)
    ids = boolean_mask(last, hit)
    return boolean_mask(rows, hit), ids, _filled(ids, HIT_WEIGHT)


__all__ = ["all_candidate_sampler", "compute_accidental_hits",
           "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
           "log_uniform_candidate_sampler", "uniform_candidate_sampler"]
