"""Random shapes, dtypes, axes and indices (in range, out of range, negative, empty) fed to
the indexing and shape ops: each call returns, or raises one of TensorFlow's classes
(never a raw NumPy or Numba error), and a compiled tf.function gives what its Python
function gives eagerly.

The compiled part traces a small fixed set of functions once: their index, size and
shape arguments are tensors of fixed shapes, so new values reuse the compiled kernel."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.errors import InvalidArgumentError

TF_ERRORS = (InvalidArgumentError, ValueError, TypeError)

small = st.integers(-6, 6)


@st.composite
def tensors(draw, min_dims=0):
    shape = draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=3))
    dtype = draw(st.sampled_from([np.float32, np.int32, np.float64]))
    return tf.constant(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))


def _eager_case(draw, x):
    """(an op's name, a call of it on x with drawn arguments)."""
    rank = len(x.shape)
    axis = draw(st.integers(-rank - 1, rank))
    ints = st.lists(small, min_size=rank, max_size=rank)
    index = st.lists(small, min_size=0, max_size=3)
    cases = {
        "slice": lambda: tf.slice(x, draw(ints), draw(ints)),
        "getitem": lambda: x[tuple(draw(st.one_of(small, st.builds(
            slice, st.none() | small, st.none() | small, st.sampled_from([None, 1, -1, 2]))))
            for _ in range(draw(st.integers(0, rank + 1))))],
        "gather": lambda: tf.gather(x, draw(index), axis=axis,
                                    batch_dims=draw(st.integers(-1, 1))),
        "gather_nd": lambda: tf.gather_nd(x, [draw(st.lists(
            small, min_size=1, max_size=max(rank, 1)))]),
        "reshape": lambda: tf.reshape(x, draw(st.lists(small, max_size=3))),
        "transpose": lambda: tf.transpose(x, draw(st.permutations(range(rank)))
                                          if draw(st.booleans()) else draw(index)),
        "concat": lambda: tf.concat([x, x], axis),
        "split": lambda: tf.split(x, draw(st.integers(1, 3)) if draw(st.booleans())
                                  else draw(index), axis=axis),
        "tile": lambda: tf.tile(x, draw(st.lists(st.integers(-1, 3), min_size=rank,
                                                 max_size=rank + 1))),
        "pad": lambda: tf.pad(x, [[draw(st.integers(-1, 3)), draw(st.integers(0, 3))]
                                  for _ in range(rank)],
                              mode=draw(st.sampled_from(["CONSTANT", "REFLECT", "SYMMETRIC"]))),
        "one_hot": lambda: tf.one_hot(tf.cast(x, tf.int32), draw(st.integers(0, 4)),
                                      axis=draw(st.integers(-1, rank))),
        "expand_dims": lambda: tf.expand_dims(x, axis),
        "squeeze": lambda: tf.squeeze(x, draw(st.lists(st.integers(-rank - 1, rank),
                                                       max_size=2))),
        "segment_sum": lambda: tf.math.unsorted_segment_sum(
            x, draw(st.lists(small, min_size=x.shape[0], max_size=x.shape[0])) if rank
            else [], draw(st.integers(0, 4))),
        "scatter_nd": lambda: tf.scatter_nd([[draw(small)]], tf.ones([1]), [3]),
    }
    name = draw(st.sampled_from(sorted(cases)))
    return name, cases[name]


@given(data=st.data())
def test_eager_indexing_ops_return_or_raise_tensorflow_errors(data):
    x = data.draw(tensors())
    name, call = _eager_case(data.draw, x)
    try:
        call()
    except TF_ERRORS:
        pass


# -- compiled: one trace per function, many values ----------------------------------------

X = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))


def _index(i, j):
    return X[i, j]


def _bounds(a, b):
    return X[a:b, 1]


def _slice(begin, size):
    return tf.slice(X, begin, size)


def _gather(i):
    return tf.gather(X, i, axis=1), tf.gather(X, i[:1])


def _gather_nd(i):
    return tf.gather_nd(X, i)


def _reshape(shape):
    return tf.reshape(X, shape)


def _sizes(n, m):
    return tf.zeros([n, m]), tf.fill([m], 2.0), tf.tile(X, tf.stack([n, m]))


def _segment_sum(ids):
    return tf.math.unsorted_segment_sum(X, ids, 4)


def _scatter(i):
    return tf.scatter_nd(i, tf.ones([2, 4]), [3, 4]), tf.tensor_scatter_nd_add(
        X, i, tf.ones([2, 4]))


def _one_hot(i):
    return tf.one_hot(i, 4)


COMPILED = {
    "index": (_index, [()] * 2),
    "bounds": (_bounds, [()] * 2),
    "slice": (_slice, [(2,)] * 2),
    "gather": (_gather, [(3,)]),
    "gather_nd": (_gather_nd, [(2, 2)]),
    "reshape": (_reshape, [(2,)]),
    "sizes": (_sizes, [()] * 2),
    "segment_sum": (_segment_sum, [(3,)]),
    "scatter": (_scatter, [(2, 1)]),
    "one_hot": (_one_hot, [(3,)]),
}
_FUNCTIONS = {}


def _traced(name):
    if name not in _FUNCTIONS:
        _FUNCTIONS[name] = tf.function(COMPILED[name][0])
    return _FUNCTIONS[name]


def _outcome(fn, args):
    try:
        out = fn(*args)
    except TF_ERRORS as e:
        return type(e)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


@pytest.fixture(scope="module")
def compiled_mode():
    saved = settings.compile_mode, settings.run_functions_eagerly
    settings.compile_mode, settings.run_functions_eagerly = "sync", False
    yield
    settings.compile_mode, settings.run_functions_eagerly = saved


@pytest.mark.parametrize("name", sorted(COMPILED))
@given(data=st.data())
def test_compiled_indexing_matches_eager(name, data, compiled_mode):
    python_fn, shapes = COMPILED[name]
    compiled = _traced(name)
    for _ in range(4):  # several values per example: the kernel is compiled once
        args = [tf.constant(np.array(data.draw(st.lists(small, min_size=int(np.prod(s)),
                                                        max_size=int(np.prod(s)))),
                                     np.int32).reshape(s)) for s in shapes]
        expected = _outcome(python_fn, args)
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*runs with NumPy kernels")
            got = _outcome(compiled, args)
        if isinstance(expected, type):
            assert got is InvalidArgumentError or got is expected, (name, args, got)
        else:
            assert not isinstance(got, type), (name, args, got)
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
