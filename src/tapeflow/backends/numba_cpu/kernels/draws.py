"""The draws of the random ops whose NumPy kernels are more than one Generator call:
gamma and Poisson draws element by element (NumPy's array forms draw in C order, so a
loop gives their numbers), and, in object mode, the draws NumPy alone makes (the
candidate samplers, a gamma draw from a seed known only when the kernel runs)."""

import numpy as np
from numba import objmode, types
from numba.extending import overload

from ....ops.candidate_sampling import FIXED_UNIGRAM_CANDIDATE_SAMPLER, SAMPLERS
from ....ops.shaped_draws import POISSON_RATE_MAX, stateless_gamma_values
from . import helper as _jit
from .allocation import empty_array
from .views import reshaped


@_jit
def gamma_draws(gen, alpha, repeats):
    """`repeats` standard gamma draws of each concentration in `alpha` (C-contiguous),
    flat in C order of (repeats,) + alpha.shape, as ops/shaped_draws.py's gamma_values:
    only finite positive concentrations draw; NaN and negative ones give NaN, 0 and inf
    themselves."""
    flat = reshaped(alpha, -1)
    out = empty_array(repeats * flat.size, np.float64)
    k = 0
    for _ in range(repeats):
        for j in range(flat.size):
            a = np.float64(flat[j])
            if a > 0 and a < np.inf:
                out[k] = gen.standard_gamma(a)
            else:
                out[k] = a if a >= 0 else np.nan
            k += 1
    return out


@_jit
def poisson_draws(gen, rate, repeats):
    """`repeats` Poisson draws (float64) of each rate in `rate`, flat in C order, as
    ops/shaped_draws.py's poisson_values: only rates in (0, NumPy's largest] draw; 0
    and negative rates give 0, larger ones (inf too) the rate, NaN gives NaN."""
    flat = reshaped(rate, -1)
    out = empty_array(repeats * flat.size, np.float64)
    k = 0
    for _ in range(repeats):
        for j in range(flat.size):
            lam = np.float64(flat[j])
            if lam > 0 and lam <= POISSON_RATE_MAX:
                out[k] = gen.poisson(lam)
            elif lam > 0:
                out[k] = lam
            else:
                out[k] = 0.0 if lam <= 0 else np.nan
            k += 1
    return out


_INT64_VECTOR = types.Array(types.int64, 1, "C")
_FLOAT64_ARRAY = types.Array(types.float64, 1, "C")


def _python_candidate_draws(gen, true_classes, code, ints, weights):
    num_true, num_sampled, unique, range_max, unseeded, seed, seed2 = (int(v) for v in ints)
    attrs = {"num_true": num_true, "num_sampled": num_sampled, "unique": bool(unique),
             "range_max": range_max, "unseeded": bool(unseeded), "seed": seed,
             "seed2": seed2, "counter": 0}
    if SAMPLERS[code] is FIXED_UNIGRAM_CANDIDATE_SAMPLER:
        attrs["weights"] = tuple(float(w) for w in weights)
    return np.ascontiguousarray(
        SAMPLERS[code].draw(gen, (np.asarray(true_classes),), attrs), np.int64)


def candidate_draws(gen, true_classes, code, ints, weights):
    """Sampler `code`'s draw from `gen`, its NumPy kernel run in object mode; ints:
    num_true, num_sampled, unique, range_max, unseeded, seed, seed2 (the learned
    sampler's counts are kept per seed pair, or shared when unseeded); weights: the fixed
    unigram sampler's."""
    return _python_candidate_draws(gen, true_classes, code, ints, weights)


@overload(candidate_draws)
def _candidate_draws(gen, true_classes, code, ints, weights):
    def impl(gen, true_classes, code, ints, weights):
        with objmode(y=_INT64_VECTOR):
            y = _python_candidate_draws(gen, true_classes, code, ints, weights)
        return y
    return impl


def _python_stateless_gamma(seed, alpha, shape):
    return np.ascontiguousarray(
        stateless_gamma_values(seed, alpha, tuple(int(d) for d in shape))).reshape(-1)


def stateless_gamma_draws(seed, alpha, shape):
    """StatelessRandomGammaV2's draws (float64, flat) from a generator made of `seed`'s
    values when the kernel runs: NumPy's kernel in object mode, as Numba cannot seed a
    Generator."""
    return _python_stateless_gamma(seed, alpha, shape)


@overload(stateless_gamma_draws)
def _stateless_gamma_draws(seed, alpha, shape):
    def impl(seed, alpha, shape):
        with objmode(y=_FLOAT64_ARRAY):
            y = _python_stateless_gamma(seed, alpha, shape)
        return y
    return impl
