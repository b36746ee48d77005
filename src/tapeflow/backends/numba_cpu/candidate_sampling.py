"""Lowerings of the candidate samplers (ops/candidate_sampling.py). At top level a
sampler that reads no tensor is drawn by the caller, as the other random ops; the learned
unigram sampler (which learns from its true classes) and samplers inside branches and
loops run their NumPy kernel in object mode (kernels/draws.py), on the Generator
argument the other draws use (random.stream)."""

import numpy as np

from ...ops.candidate_sampling import LEARNED_UNIGRAM_CANDIDATE_SAMPLER, SAMPLERS
from ...tensor import wrap
from .generator import lowers
from .random import caller_draws, stream

_INT_ATTRS = ("num_true", "num_sampled", "unique", "range_max", "unseeded", "seed", "seed2")


@lowers(*SAMPLERS)
def _sampler(cg, node):
    if not cg.nesting and node.op is not LEARNED_UNIGRAM_CANDIDATE_SAMPLER:
        caller_draws(cg, node)
        return
    attrs = node.attrs
    true_classes = cg.contiguous(cg.val(node.inputs[0]))
    # Values reach the kernel as arguments, so the source is one per sampler and dtype.
    ints = cg.array(cg.constant(_kept(cg, np.array([int(attrs.get(k, 0)) for k in _INT_ATTRS],
                                                   np.int64))))
    weights = cg.array(cg.constant(_kept(cg, np.asarray(attrs.get("weights", ()),
                                                        np.float64))))
    code = SAMPLERS.index(node.op)
    cg.output(node, cg.assign(
        f"candidate_draws({stream(cg, node)}, {true_classes}, {code}, {ints}, {weights})"))


def _kept(cg, array):
    """A constant tensor of `array` that lives as long as the kernel being generated
    (constants are keyed by identity)."""
    tensor = wrap(array)
    cg.keep.append(tensor)
    return tensor
