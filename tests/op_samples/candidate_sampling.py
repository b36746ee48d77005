"""Samplers for ops/candidate_sampling.py: true classes and the samplers' attrs (the
candidates are random; the ops are not differentiable)."""

from hypothesis import strategies as st

import numpy as np

from .common import Case
from .random import _seeds


def _sampler(draw, **params):
    batch, num_true = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    range_max = draw(st.integers(4, 12))
    unique = draw(st.booleans())
    num_sampled = draw(st.integers(1, range_max if unique else 8))
    true_classes = np.asarray([[draw(st.integers(0, range_max - 1)) for _ in range(num_true)]
                               for _ in range(batch)], np.int64)
    return Case([true_classes], {"num_true": num_true, "num_sampled": num_sampled,
                                 "unique": unique, "range_max": range_max, **params,
                                 **_seeds(draw)}), range_max


def _plain(draw):
    return _sampler(draw)[0]


def _fixed_unigram(draw):
    case, range_max = _sampler(draw)
    case.attrs["weights"] = tuple(float(draw(st.integers(1, 9))) for _ in range(range_max))
    return case


def _learned_unigram(draw):
    case, _ = _sampler(draw)
    case.attrs["unseeded"] = False
    return case


SAMPLES = {
    "UniformCandidateSampler": _plain,
    "LogUniformCandidateSampler": _plain,
    "FixedUnigramCandidateSampler": _fixed_unigram,
    "LearnedUnigramCandidateSampler": _learned_unigram,
}
