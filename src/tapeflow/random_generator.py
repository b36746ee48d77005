"""tf.random.Generator: a Philox state (counter low, counter high, key) in an int64
tf.Variable. Each draw reads the state, advances its counter by 256 blocks per value
(TensorFlow's RngReadAndSkip) and computes the stateless op of the state it read, so a
Generator gives TensorFlow's numbers, and inside tf.function its variable's read and
assignment make every call draw new numbers."""

import enum

import numpy as np

from . import dtypes
from .ops import philox
from .ops.registry import bind
from .ops.stateless import (
    AUTO_SELECT,
    PHILOX,
    PHILOX_SKIP,
    STATELESS_NORMAL,
    STATELESS_TRUNCATED_NORMAL,
    algorithm_id,
    check_algorithm,
    draw,
    uniform_values,
    unsupported_algorithm,
)
from .ops.counted_draws import binomial_from_key_counter
from .ops.creation import _shape_tuple
from .ops.shape import stack
from .tensor import _Operators, convert_to_tensor
from .variable import Variable

_STATE_SIZE = 3  # Philox: two counter words and the key


class Algorithm(enum.Enum):
    """A random-number-generation algorithm, as `tf.random.Algorithm`."""

    PHILOX = PHILOX
    THREEFRY = 2
    AUTO_SELECT = AUTO_SELECT


def _state_size(alg):
    if algorithm_id(alg) not in (1, 2, 3):
        raise ValueError(unsupported_algorithm(alg))
    return 2 if algorithm_id(alg) == 2 else _STATE_SIZE


def _as_int64_words(value):
    """Integers (Python ints up to 2**64, arrays, tensors) as int64 words with the same
    bits, as TensorFlow's conversion of a seed or state."""
    if isinstance(value, _Operators):
        return np.asarray(value).astype(np.int64).reshape(-1)
    flat = np.asarray(value, dtype=object).reshape(-1)
    return np.array([int(v) - 2**64 if int(v) >= 2**63 else int(v) for v in flat], np.int64)


def create_rng_state(seed, alg):
    """An RNG state from an integer or a vector, as `tf.random.create_rng_state`: a Python
    integer is cut into 64-bit words (lowest first); a short vector is padded with zeros
    on the left.

    >>> import tapeflow as tf
    >>> tf.random.create_rng_state(1234, "philox").numpy().tolist()
    [1234, 0, 0]
    """
    size = _state_size(alg)
    if isinstance(seed, int):
        words = []
        for _ in range(size):
            words.append(seed & (2**64 - 1))
            seed >>= 64
        seed = words
    words = _as_int64_words(seed)[:size]
    return convert_to_tensor(np.concatenate([np.zeros(size - len(words), np.int64), words]))


def _checked_state(state, alg):
    state = convert_to_tensor(_as_int64_words(state).reshape(np.shape(state)))
    if tuple(state.shape) != (_state_size(alg),):
        raise ValueError(f"Shapes {tuple(state.shape)} and [{_state_size(alg)}] are "
                         "incompatible")
    return state


class Generator:
    """A random-number generator whose state is a tf.Variable, as `tf.random.Generator`.

    >>> import tapeflow as tf
    >>> g = tf.random.Generator.from_seed(1234)
    >>> g.normal([3]).numpy()
    array([ 0.9356609 ,  1.0854306 , -0.93788373], dtype=float32)
    >>> g.state.numpy().tolist()
    [2002, 0, 0]
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            if alg is not None or state is not None:
                raise ValueError("copy_from excludes state and alg")
            state, alg = copy_from.state.read_value(), copy_from.algorithm
        elif alg is None or state is None:
            raise ValueError("A Generator needs a state and an algorithm (or copy_from)")
        self._alg = algorithm_id(alg)
        if isinstance(state, Variable):
            _checked_state(state.read_value(), self._alg)
            self._state_var = state
        else:
            self._state_var = Variable(_checked_state(state, self._alg), trainable=False,
                                       name="StateVar")

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None):
        alg = PHILOX if alg is None else algorithm_id(alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        alg = PHILOX if alg is None else algorithm_id(alg)
        words = np.random.default_rng().integers(-2**63, 2**63 - 1, _state_size(alg),
                                                 dtype=np.int64, endpoint=True)
        return cls(state=words, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        return cls(state=_key_counter_state(key, counter, alg), alg=alg)

    def reset(self, state):
        self._state_var.assign(_checked_state(state, self._alg))

    def reset_from_seed(self, seed):
        self._state_var.assign(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter):
        self._state_var.assign(_key_counter_state(key, counter, self._alg))

    @property
    def state(self):
        """The variable holding the state."""
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        """The key part of the state (its last word)."""
        return self._state_var[-1]

    def skip(self, delta):
        """Advances the counter as drawing `delta` values would (256 blocks a value);
        returns the state before."""
        check_algorithm(self._alg, "RngReadAndSkip")
        old = self._state_var.read_value()
        delta = convert_to_tensor(delta, dtype=dtypes.int64)
        self._state_var.assign(bind(PHILOX_SKIP, (old, delta * philox.SAMPLES_RESERVED_PER_OUTPUT),
                                    {}))
        return old

    def _key_counter(self, shape):
        old = self.skip(int(np.prod(shape, dtype=np.int64)))
        return old[2:3], old[0:2]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return self._float(STATELESS_NORMAL, shape, mean, stddev, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        return self._float(STATELESS_TRUNCATED_NORMAL, shape, mean, stddev, dtype)

    def _float(self, op, shape, mean, stddev, dtype):
        dtype = dtypes.as_dtype(dtype)
        shape = _shape_tuple(shape, op.name)
        mean, stddev = (convert_to_tensor(v, dtype=dtype) for v in (mean, stddev))
        key, counter = self._key_counter(shape)
        return draw(op, key, counter, shape, dtype) * stddev + mean

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer and (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dtype!r}, minval and maxval must be both "
                             f"`None` or both non-`None`; got minval={minval} and "
                             f"maxval={maxval}")
        shape = _shape_tuple(shape, "StatelessRandomUniformV2")
        key, counter = self._key_counter(shape)
        return uniform_values(key, counter, shape, minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype=dtypes.int64, name=None):
        """Integers over the dtype's whole range (tapeflow has no uint64, TensorFlow's
        default: int64 has the same bits)."""
        return self.uniform(shape, None, None, dtype)

    def make_seeds(self, count=1):
        """Seed pairs for the stateless ops: shape [2, count], int64."""
        keys = self.uniform_full_int([count], dtypes.int64)
        return stack([keys, keys * 0])

    def split(self, count=1):
        """`count` new Generators, each with a key drawn from this one and counter 0."""
        keys = self.uniform_full_int([count], dtypes.int64).numpy()
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        """Binomial draws of `counts` trials with success probability `probs`."""
        shape = _shape_tuple(shape, "StatefulRandomBinomial")
        key, counter = self._key_counter(shape)
        return binomial_from_key_counter(key, counter, shape, counts, probs, dtype)


def _key_counter_state(key, counter, alg):
    counter = _as_int64_words(counter)
    if len(counter) != _state_size(alg) - 1:
        raise ValueError(f"Shapes ({len(counter)},) and [{_state_size(alg) - 1}] are "
                         "incompatible")
    return np.concatenate([counter, _as_int64_words(key).reshape(1)])


_global_generator = None


def get_global_generator():
    """The global Generator (from a non-deterministic state at its first use)."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator):
    """Replaces the global Generator."""
    global _global_generator
    _global_generator = generator


__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator",
           "set_global_generator"]
