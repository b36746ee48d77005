"""Random tensors (`tf.random`): normal, uniform, truncated_normal, shuffle, set_seed.

Seeds follow TensorFlow's rules (`tf.random.set_seed` docs): each call gets a pair
(seed, seed2) from the global seed and the op seed, plus `counter`, the number of earlier
calls with that pair since the last `set_seed`. The three are the op's attrs, and the
kernel is a pure function of its attrs (PCG64 seeded from them), so the eager kernel
and bind() agree, and:
- repeated calls give new numbers (the counter advances, as TensorFlow's stateful
  kernels do), with or without an op seed;
- after `set_seed(s)` the sequence of calls is reproducible (counters restart);
- with neither seed, the pair is drawn from OS entropy: numbers differ on every run.

The ops are table entries with no tensor inputs (never on a tape). A compiled graph
must give each execution of a random op a fresh `counter` (`next_counter`) instead of
the one baked in at trace time, and passes must not fold random ops into constants.
"""

import math
import random as _pyrandom
import threading

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..tensor import _Operators, convert_to_tensor
from .creation import _shape_tuple
from .registry import OpDef, bind, register
from .structural import subgraphs_of

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


class _SeedState:
    """The global seed, the op-seed source it starts, and the call counter of each seed
    pair (TensorFlow keeps these per eager context: one per process)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.global_seed = None
        self.op_seeds = _pyrandom.Random()
        self.counters = {}
        self.entropy = np.random.default_rng()

    def reset(self, seed):
        with self.lock:
            self.global_seed = seed
            self.op_seeds = _pyrandom.Random(seed)
            self.counters.clear()

    def get_seed(self, op_seed):
        """TensorFlow's random_seed.get_seed: the (seed, seed2) pair of one op call."""
        with self.lock:
            if self.global_seed is not None:
                if op_seed is None:
                    op_seed = self.op_seeds.randint(0, _MAXINT32)
                seeds = (self.global_seed, int(op_seed))
            elif op_seed is not None:
                seeds = (DEFAULT_GRAPH_SEED, int(op_seed))
            else:  # nondeterministic: a fresh pair from OS entropy
                return tuple(int(v) for v in self.entropy.integers(0, 2**63, size=2))
        # TensorFlow's kernels read (0, 0) as "nondeterministic"; explicit zeros are not.
        return (0, _MAXINT32) if seeds == (0, 0) else seeds

    def next_counter(self, seeds):
        with self.lock:
            counter = self.counters.get(seeds, 0)
            self.counters[seeds] = counter + 1
            return counter


_STATE = _SeedState()


def set_seed(seed):
    """Sets the global random seed, as `tf.random.set_seed`: the random calls that
    follow (with or without an op seed) produce the same sequence on every run.

    >>> import tapeflow as tf
    >>> tf.random.set_seed(5); a = tf.random.uniform([2])
    >>> tf.random.set_seed(5); b = tf.random.uniform([2])
    >>> bool(tf.reduce_all(a == b))
    True
    """
    _STATE.reset(None if seed is None else int(seed))


def get_seed(op_seed):
    """The (seed, seed2) pair an op with `op_seed` uses now (`tf.compat.v1.get_seed`)."""
    return _STATE.get_seed(op_seed)


def is_seeded(op_seed):
    """Whether an op with `op_seed` draws deterministically: it or the global seed is set
    (TensorFlow's kernels then get a seed pair other than (0, 0))."""
    return op_seed is not None or _STATE.global_seed is not None


def next_counter(seed, seed2):
    """The counter attr of the next call with this seed pair (advances it)."""
    return _STATE.next_counter((seed, seed2))


def _generator(seed, seed2, counter):
    entropy = [int(seed) % 2**64, int(seed2) % 2**64, int(counter)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def fresh_generator(seed, seed2):
    """The Generator of the next run of an op with this seed pair (its counter advances):
    what a compiled graph's caller draws with, at every call."""
    return _generator(seed, seed2, next_counter(seed, seed2))


# -- draws inside branches and loops ------------------------------------------------------
# A random op inside a tensor loop runs a number of times known only when the graph runs.
# Each call of the graph gives each such op one Generator (its stream, from a fresh
# counter), and every run of the op draws the next numbers from it: the compiled kernel
# (which takes the Generator as an argument: Numba's Generator draws NumPy's numbers) and
# the NumPy tier draw the same numbers.

def stream_key(attrs):
    """What names one random op of a traced graph: its seed pair and the counter it took
    when traced (unique per op)."""
    return (attrs["seed"], attrs["seed2"], attrs["counter"])


def nested_draws(graph):
    """The stream keys of the random ops inside the branches and loops of `graph`."""
    keys = set()
    for node in graph.nodes:
        for subgraph in subgraphs_of(node):
            keys.update(stream_key(inner.attrs) for inner in subgraph.all_nodes()
                        if inner.op.draw is not None)
    return sorted(keys)


def streams(keys):
    """{key: Generator} for one call of a graph whose nested random ops have `keys`."""
    return {key: fresh_generator(key[0], key[1]) for key in keys}


# -- ops --------------------------------------------------------------------------------

def _float_dtype_infer(op_name):
    def infer(shape, dtype, seed, seed2, counter):
        if not dtype.is_floating:
            raise InvalidArgumentError(
                f"Value for attr 'dtype' of {dtype.name} is not in the list of allowed "
                f"values: half, bfloat16, float, double [Op:{op_name}]", op=op_name)
        return shape, dtype
    return infer


def _random_op(name, draw, emit, infer, args=(), forget=None):
    """A random op: its eager kernel draws from the Generator its seed attrs make
    (forget: OpDef.forget, for an op that keeps state beyond them)."""
    def eager(*arrays, **attrs):
        # draw() sees every attr, as where a graph's branch or loop (or a compiled kernel)
        # draws: the learned unigram sampler keeps its counts per seed pair.
        return draw(_generator(attrs["seed"], attrs["seed2"], attrs["counter"]), arrays, attrs)
    return register(OpDef(name=name, args=args, infer=infer, eager=eager, emit=emit,
                          draw=draw, differentiable=False, stateful=True, forget=forget))


def _floats(sample):
    """draw() of a float sampler: it samples float32 (float64 for float64), as TF."""
    def draw(gen, arrays, attrs):
        dtype = attrs["dtype"]
        work = np.float64 if dtype is dtypes.float64 else np.float32
        return np.asarray(sample(gen, attrs["shape"], work)).astype(dtype._np, copy=False)
    return draw


def _truncated(gen, shape, work):
    # Standard normal values, redrawn until inside two standard deviations.
    out = gen.standard_normal(shape, dtype=work)
    bad = np.abs(out) > 2
    while bad.any():
        out[bad] = gen.standard_normal(int(bad.sum()), dtype=work)
        bad = np.abs(out) > 2
    return out


# `emit` is the draw inside a compiled branch or loop, from the Generator argument {g}.
RANDOM_STANDARD_NORMAL = _random_op(
    "RandomStandardNormal", _floats(lambda gen, shape, work: gen.standard_normal(shape, work)),
    "{g}.standard_normal({shape}, {dtype})", _float_dtype_infer("RandomStandardNormal"))
RANDOM_UNIFORM = _random_op(
    "RandomUniform", _floats(lambda gen, shape, work: gen.random(shape, work)),
    "{g}.random({shape}, {dtype})", _float_dtype_infer("RandomUniform"))
TRUNCATED_NORMAL = _random_op(
    "TruncatedNormal", _floats(_truncated), "truncated_normal({g}, {shape}, {dtype})",
    _float_dtype_infer("TruncatedNormal"))


def _uniform_int_infer(shape, dtype, minval, maxval, seed, seed2, counter):
    op_name = "RandomUniformInt"
    if dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(
            f"Value for attr 'Tout' of {dtype.name} is not in the list of allowed values: "
            f"int32, int64 [Op:{op_name}]", op=op_name)
    # An empty output needs no valid range (TensorFlow checks after that early exit).
    if minval >= maxval and math.prod(shape) > 0:
        raise InvalidArgumentError(f"Need minval < maxval: {minval} >= {maxval} "
                                   f"[Op:{op_name}]", op=op_name)
    return shape, dtype


def _uniform_ints(gen, arrays, attrs):
    shape, dtype = attrs["shape"], attrs["dtype"]
    if math.prod(shape) == 0:
        return np.zeros(shape, dtype._np)
    return gen.integers(attrs["minval"], attrs["maxval"], size=shape, dtype=dtype._np)


RANDOM_UNIFORM_INT = _random_op(
    "RandomUniformInt", _uniform_ints, "{g}.integers({minval}, {maxval}, {shape}, {dtype})",
    _uniform_int_infer)


def _shuffle_infer(value, seed, seed2, counter):
    return value._shape, value.dtype


def _shuffled(gen, arrays, attrs):
    (value,) = arrays
    if value.ndim == 0 or value.shape[0] <= 1:
        return value  # Fisher-Yates over fewer than two rows draws nothing
    return gen.permutation(value)


# Compiled, the rows are gathered through a permutation (backends/codegen.py, _shuffle).
RANDOM_SHUFFLE = _random_op("RandomShuffle", _shuffled, "random_shuffle", _shuffle_infer,
                            args=("value",))


# -- public wrappers --------------------------------------------------------------------

def _is_python(value, target):
    return type(value) in (int, float) and value == target


def _scaled(rnd, dtype, scale, shift):
    """rnd * scale + shift with TensorFlow's conversions; skipped for 1 and 0."""
    if not _is_python(scale, 1):
        rnd = rnd * convert_to_tensor(scale, dtype=dtype)
    if not _is_python(shift, 0):
        rnd = rnd + convert_to_tensor(shift, dtype=dtype)
    return rnd


def _seed_attrs(op_seed):
    seed, seed2 = _STATE.get_seed(op_seed)
    return {"seed": seed, "seed2": seed2, "counter": _STATE.next_counter((seed, seed2))}


def _draw(op, shape, dtype, seed):
    return bind(op, (), {"shape": shape, "dtype": dtype, **_seed_attrs(seed)})


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a normal distribution, as `tf.random.normal`.

    >>> import tapeflow as tf
    >>> tf.random.normal([2, 3]).shape
    TensorShape([2, 3])
    """
    dtype = dtypes.as_dtype(dtype)
    shape = _shape_tuple(shape, "RandomStandardNormal")
    for v in (mean, stddev):  # TypeError for a float mean with an integer dtype
        convert_to_tensor(v, dtype=dtype)
    rnd = _draw(RANDOM_STANDARD_NORMAL, shape, dtype, seed)
    return _scaled(rnd, dtype, stddev, mean)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal samples more than two standard deviations from the mean are redrawn, as
    `tf.random.truncated_normal`."""
    dtype = dtypes.as_dtype(dtype)
    shape = _shape_tuple(shape, "TruncatedNormal")
    for v in (mean, stddev):
        convert_to_tensor(v, dtype=dtype)
    rnd = _draw(TRUNCATED_NORMAL, shape, dtype, seed)
    return _scaled(rnd, dtype, stddev, mean)


def _python_int(value, what):
    if isinstance(value, _Operators):
        if value._shape:
            raise InvalidArgumentError(f"{what} must be 0-D, got shape {list(value._shape)} "
                                       "[Op:RandomUniformInt]", op="RandomUniformInt")
        value = value.numpy()
    return int(value)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples from [minval, maxval), as `tf.random.uniform` (maxval defaults to 1 for
    floats and is required for integer dtypes).

    >>> import tapeflow as tf
    >>> tf.random.uniform([2], maxval=10, dtype=tf.int32).dtype
    tf.int32
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32,
                     dtypes.int64):
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    shape = _shape_tuple(shape, "RandomUniform")
    minval_is_zero = isinstance(minval, int) and minval == 0
    maxval_is_one = isinstance(maxval, int) and maxval == 1
    if not minval_is_zero or not maxval_is_one or dtype.is_integer:
        minval = convert_to_tensor(minval, dtype=dtype)
        maxval = convert_to_tensor(maxval, dtype=dtype)
    if dtype.is_integer:
        return bind(RANDOM_UNIFORM_INT, (), {
            "shape": shape, "dtype": dtype, "minval": _python_int(minval, "minval"),
            "maxval": _python_int(maxval, "maxval"), **_seed_attrs(seed)})
    rnd = _draw(RANDOM_UNIFORM, shape, dtype, seed)
    if minval_is_zero:
        return rnd if maxval_is_one else rnd * maxval
    return rnd * (maxval - minval) + minval


def shuffle(value, seed=None, name=None):
    """A copy of `value` with its first dimension randomly permuted, as
    `tf.random.shuffle`."""
    value = convert_to_tensor(value)
    return bind(RANDOM_SHUFFLE, (value,), _seed_attrs(seed))


__all__ = ["normal", "set_seed", "shuffle", "truncated_normal", "uniform"]
