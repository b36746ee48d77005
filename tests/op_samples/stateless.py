"""Samplers and error cases for ops/stateless.py: seeds, keys, counters and states of
every size of int64 (their bits are TensorFlow's uint64 words), shapes and dtypes."""

import importlib

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, UnimplementedError

sl = importlib.import_module("tapeflow.ops.stateless")

from .common import Case, shapes

_INT64 = st.integers(-2**63, 2**63 - 1)


def _words(draw, n):
    return np.array([draw(_INT64) for _ in range(n)], np.int64)


def _seed(draw):
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    info = np.iinfo(dtype)
    return Case([np.array([draw(st.integers(info.min, info.max)) for _ in range(2)], dtype)])


def _shape(draw):
    return tuple(shapes(draw, min_side=0 if draw(st.integers(0, 5)) == 0 else 1))


def _float_draw(draw):
    return Case([_words(draw, 1), _words(draw, 2)],
                {"shape": _shape(draw), "dtype": draw(st.sampled_from([tf.float32,
                                                                        tf.float64]))})


def _int_draw(draw):
    dtype = draw(st.sampled_from([tf.int32, tf.int64]))
    info = np.iinfo(dtype._np)
    lo = draw(st.integers(info.min, info.max - 1))
    return Case([_words(draw, 1), _words(draw, 2)],
                {"shape": _shape(draw), "dtype": dtype, "minval": lo,
                 "maxval": draw(st.integers(lo + 1, info.max))})


def _full_int_draw(draw):
    return Case([_words(draw, 1), _words(draw, 2)],
                {"shape": _shape(draw), "dtype": draw(st.sampled_from([tf.int32, tf.int64]))})


def _skip(draw):
    return Case([_words(draw, 3), np.array(draw(st.integers(0, 2**62)), np.int64)])


SAMPLES = {
    "StatelessRandomGetKeyCounter": _seed,
    "StatelessRandomUniformV2": _float_draw,
    "StatelessRandomNormalV2": _float_draw,
    "StatelessTruncatedNormalV2": _float_draw,
    "StatelessRandomUniformIntV2": _int_draw,
    "StatelessRandomUniformFullIntV2": _full_int_draw,
    "PhiloxSkip": _skip,
}

ERRORS = [
    (lambda: sl.stateless_uniform([2], [1, 2, 3]), InvalidArgumentError,
     r"seed must have shape \[2\], not \[3\] \[Op:StatelessRandomGetKeyCounter\]"),
    (lambda: sl.stateless_uniform([2], [1.0, 2.0]), InvalidArgumentError,
     r"Value for attr 'Tseed' of float32 is not in the list of allowed values: int32, int64"),
    (lambda: sl.stateless_uniform([2], [1, 2], 5, 5, dtype=tf.int32), InvalidArgumentError,
     r"Need minval < maxval, got 5 >= 5 \[Op:StatelessRandomUniformIntV2\]"),
    (lambda: sl.stateless_uniform([2], [1, 2], maxval=None, minval=None), ValueError,
     r"Attempt to convert a value \(None\)"),
    (lambda: sl.stateless_uniform([2], [1, 2], minval=None, maxval=3, dtype=tf.int32),
     ValueError, r"`minval` and `maxval` must be both None or not None"),
    (lambda: sl.stateless_uniform([2], [1, 2], dtype=tf.bool), ValueError,
     r"Argument `dtype` got invalid value tf.bool"),
    (lambda: sl.stateless_normal([2], [1, 2], dtype=tf.int32), TypeError,
     r"Cannot convert 0.0 to EagerTensor of dtype int32"),
    (lambda: sl.stateless_normal([2], [1, 2], alg="threefry"), UnimplementedError,
     r"Non-XLA devices don't support the ThreeFry algorithm"),
    (lambda: sl.stateless_truncated_normal([2], [1, 2], alg="mt"), ValueError,
     r"Argument `alg` got unsupported value mt"),
    (lambda: sl.stateless_uniform([-1], [1, 2]), InvalidArgumentError,
     r"dimensions must be >= 0"),
    (lambda: sl.draw(sl.STATELESS_NORMAL, tf.constant([1], tf.int64),
                     tf.constant([1], tf.int64), (2,), tf.float32), InvalidArgumentError,
     r"counter must be a vector with length at least 2; got shape: \[1\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
