"""Samplers for ops/shaped_draws.py (gamma and Poisson draws): shapes, dtypes and
parameters only, as for the other random ops; their values are random and the ops are not
differentiable (tf.random.gamma's gradient is a composition around RandomGamma)."""

from hypothesis import strategies as st

import numpy as np
import tapeflow as tf

from .common import Case, shapes
from .random import _seeds


def _parameters(draw, shape):
    """Positive concentrations or rates (tests/test_op_errors.py draws the special
    values)."""
    return np.asarray(draw(st.lists(st.floats(0.1, 5.0), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape)))),
                      np.float32).reshape(shape)


def _draw_shape(draw):
    return tuple(shapes(draw, max_dims=2, min_side=0 if draw(st.integers(0, 5)) == 0 else 1))


def _gamma(draw):
    alpha = _parameters(draw, tuple(shapes(draw, max_dims=1)))
    dtype = draw(st.sampled_from([tf.float32, tf.float64]))
    return Case([alpha.astype(dtype._np)], {"shape": _draw_shape(draw), **_seeds(draw)})


def _poisson(draw):
    rate = _parameters(draw, tuple(shapes(draw, max_dims=1)))
    dtype = draw(st.sampled_from([tf.float32, tf.float64, tf.int32, tf.int64]))
    return Case([rate], {"shape": _draw_shape(draw), "dtype": dtype, **_seeds(draw)})


def _stateless_gamma(draw):
    shape = _draw_shape(draw)
    alpha = _parameters(draw, shape[len(shape) - draw(st.integers(0, len(shape))):])
    seed = np.asarray([draw(st.integers(0, 2**31 - 1)) for _ in range(2)], np.int64)
    dtype = draw(st.sampled_from([tf.float32, tf.float64]))
    return Case([seed, alpha.astype(dtype._np)], {"shape": shape})


SAMPLES = {
    "RandomGamma": _gamma,
    "RandomPoissonV2": _poisson,
    "StatelessRandomGammaV2": _stateless_gamma,
}
