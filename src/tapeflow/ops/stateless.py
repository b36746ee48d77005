"""Stateless random ops (`tf.random.stateless_*`, `tf.random.split`, `tf.random.fold_in`):
pure functions of a seed pair, Philox-4x32-10 as TensorFlow computes it (ops/philox.py),
so the numbers are TensorFlow's.

As in TensorFlow, a seed becomes a key and a counter (StatelessRandomGetKeyCounter) that
the draws (StatelessRandomUniformV2, ...) read. The entries are deterministic: not
`stateful`, not draws, so graphs fold and share them like any op, and the same seed gives
the same numbers eagerly, traced, compiled and inside loops. PhiloxSkip advances a state
(counter, key): tf.random.Generator (random_generator.py) is built on these entries.
"""

import math

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError, UnimplementedError
from ..tensor import convert_to_tensor
from . import philox, rules
from .creation import _shape_tuple
from .registry import OpDef, bind, register
from .shape import stack

PHILOX, THREEFRY, AUTO_SELECT = 1, 2, 3
_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _check_vector(op_name, x, what, length):
    if len(x._shape) != 1 or x._shape[0] is not None and x._shape[0] < length:
        raise InvalidArgumentError(
            f"{what} must be a vector with length at least {length}; got shape: "
            f"{rules.kernel_dims(x._shape)}. (Note that batched counters are not supported "
            f"yet.) [Op:{op_name}]", op=op_name)


def _key_counter_infer(seed):
    op_name = "StatelessRandomGetKeyCounter"
    if seed.dtype not in (dtypes.int32, dtypes.int64):
        raise rules.dtype_error(f"Value for attr 'Tseed' of {seed.dtype.name} is not in the "
                                f"list of allowed values: int32, int64 [Op:{op_name}]",
                                op_name)
    if tuple(seed._shape) != (2,):
        raise InvalidArgumentError(f"seed must have shape [2], not "
                                   f"{rules.kernel_dims(seed._shape)} [Op:{op_name}]",
                                   op=op_name)
    return [((1,), dtypes.int64), ((2,), dtypes.int64)]


KEY_COUNTER = register(OpDef(
    name="StatelessRandomGetKeyCounter", args=("seed",), infer=_key_counter_infer,
    eager=lambda seed: philox.key_counter_from_seed(seed), n_out=2, differentiable=False))


def _draw_infer(op_name, allowed, what):
    def infer(key, counter, shape, dtype, **bounds):
        _check_vector(op_name, key, "key", 1)
        _check_vector(op_name, counter, "counter", 2)
        if dtype not in allowed:
            raise rules.dtype_error(f"Value for attr 'dtype' of {dtype.name} is not in the "
                                    f"list of allowed values: {what} [Op:{op_name}]", op_name)
        if bounds and bounds["minval"] >= bounds["maxval"] and math.prod(shape) > 0:
            raise InvalidArgumentError(f"Need minval < maxval, got {bounds['minval']} >= "
                                       f"{bounds['maxval']} [Op:{op_name}]", op=op_name)
        return shape, dtype
    return infer


def _draw_op(name, sample, allowed, what):
    """An entry drawing `sample(key, counter, size, np dtype, **bounds)` in `shape`."""
    def eager(key, counter, shape, dtype, **bounds):
        flat = sample(key, counter, math.prod(shape), dtype._np, **bounds)
        return np.asarray(flat, dtype._np).reshape(shape)
    return register(OpDef(name=name, args=("key", "counter"), eager=eager,
                          infer=_draw_infer(name, allowed, what), differentiable=False))


_FLOAT_NAMES = "half, bfloat16, float, double"
_INT_NAMES = "int32, int64, uint32, uint64"
STATELESS_UNIFORM = _draw_op("StatelessRandomUniformV2", philox.uniform, _FLOATS,
                             _FLOAT_NAMES)
STATELESS_NORMAL = _draw_op("StatelessRandomNormalV2", philox.normal, _FLOATS, _FLOAT_NAMES)
STATELESS_TRUNCATED_NORMAL = _draw_op("StatelessTruncatedNormalV2", philox.truncated_normal,
                                      _FLOATS, _FLOAT_NAMES)
STATELESS_UNIFORM_INT = _draw_op("StatelessRandomUniformIntV2", philox.uniform_int,
                                 (dtypes.int32, dtypes.int64), _INT_NAMES)
STATELESS_UNIFORM_FULL_INT = _draw_op("StatelessRandomUniformFullIntV2", philox.full_int,
                                      (dtypes.int32, dtypes.int64), _INT_NAMES)


def _skip_infer(state, delta):
    op_name = "PhiloxSkip"
    if state.dtype is not dtypes.int64 or tuple(state._shape) != (3,):
        raise InvalidArgumentError(f"The RNG state must be an int64 vector of length 3, got "
                                   f"{rules.describe(state)} [Op:{op_name}]", op=op_name)
    if not delta.dtype.is_integer or delta._shape:
        raise InvalidArgumentError(f"delta must be an integer scalar, got "
                                   f"{rules.describe(delta)} [Op:{op_name}]", op=op_name)
    return state._shape, state.dtype


# A Philox state (counter low, counter high, key) advanced by `delta` blocks (the counter
# is one 128-bit number): what TensorFlow's RngReadAndSkip writes back.
PHILOX_SKIP = register(OpDef(
    name="PhiloxSkip", args=("state", "delta"), infer=_skip_infer,
    eager=lambda state, delta: philox.skipped(state, int(delta) % 2**64),
    differentiable=False))

STATELESS_DRAWS = (KEY_COUNTER, STATELESS_UNIFORM, STATELESS_NORMAL, STATELESS_TRUNCATED_NORMAL,
                   STATELESS_UNIFORM_INT, STATELESS_UNIFORM_FULL_INT, PHILOX_SKIP)


# -- public functions -----------------------------------------------------------------------

def algorithm_id(alg):
    """An algorithm argument (name, tf.random.Algorithm, int) as TensorFlow's number."""
    if isinstance(alg, (int, np.integer)):
        return int(alg)
    value = getattr(alg, "value", None)
    if isinstance(value, int):
        return value
    if isinstance(alg, str):
        canon = alg.strip().lower().replace("-", "").replace("_", "")
        ids = {"philox": PHILOX, "threefry": THREEFRY, "autoselect": AUTO_SELECT}
        if canon in ids:
            return ids[canon]
        raise ValueError(unsupported_algorithm(alg))
    raise TypeError(f"Can't convert argument `alg` (of value {alg} and type {type(alg)}) "
                    "to int.")


def unsupported_algorithm(alg):
    names = (("philox", "threefry", "auto_select") if isinstance(alg, str)
             else (PHILOX, THREEFRY, AUTO_SELECT))
    return (f"Argument `alg` got unsupported value {alg}. Supported values are {names[0]} "
            f"for the Philox algorithm, {names[1]} for the ThreeFry algorithm, and "
            f"{names[2]} for auto-selection.")


def check_algorithm(alg, op_name):
    """Philox, or Philox for auto-selection (TensorFlow's choice on a CPU); ThreeFry runs
    only under XLA in TensorFlow, which raises the same error on a CPU."""
    alg = algorithm_id(alg)
    if alg == THREEFRY:
        raise UnimplementedError(f"Non-XLA devices don't support the ThreeFry algorithm. "
                                 f"[Op:{op_name}]", op=op_name)
    if alg not in (PHILOX, AUTO_SELECT):
        raise ValueError(unsupported_algorithm(alg))
    return alg


def key_counter(seed, alg="auto_select", op_name="StatelessRandomGetKeyCounter"):
    """The (key, counter) of a stateless op's seed pair."""
    check_algorithm(alg, op_name)
    seed = rules.as_tensor(seed)
    return tuple(bind(KEY_COUNTER, (seed,), {}))


def draw(op, key, counter, shape, dtype, **bounds):
    return bind(op, (key, counter), {"shape": shape, "dtype": dtype, **bounds})


def _scaled(rnd, dtype, scale, shift):
    return rnd * convert_to_tensor(scale, dtype=dtype) + convert_to_tensor(shift, dtype=dtype)


def _float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"Cannot convert 0.0 to EagerTensor of dtype {dtype.name}")
    return dtype


def int_bound(value, dtype, what):
    """An integer bound (Python int or scalar tensor) as a Python int of `dtype`'s range."""
    value = convert_to_tensor(value, dtype=dtype)
    if value._shape:
        raise InvalidArgumentError(f"{what} must be 0-D, got shape {list(value._shape)}",
                                   op="StatelessRandomUniformIntV2")
    return int(value.numpy())


def uniform_values(key, counter, shape, minval, maxval, dtype):
    """Uniform floats in [minval, maxval), integers in the same range, or every integer
    (minval and maxval None) from (key, counter): what stateless_uniform and
    Generator.uniform compute once they have a key and counter."""
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` and "
                             f"`maxval` must be both None or not None. Got `minval`={minval}"
                             f" and `maxval`={maxval}.")
        if minval is None:
            return draw(STATELESS_UNIFORM_FULL_INT, key, counter, shape, dtype)
        return draw(STATELESS_UNIFORM_INT, key, counter, shape, dtype,
                    minval=int_bound(minval, dtype, "minval"),
                    maxval=int_bound(maxval, dtype, "maxval"))
    maxval = 1 if maxval is None else maxval
    minval, maxval = (convert_to_tensor(v, dtype=dtype) for v in (minval, maxval))
    rnd = draw(STATELESS_UNIFORM, key, counter, shape, dtype)
    return rnd * (maxval - minval) + minval


def _check_uniform_dtype(dtype):
    if dtype not in _FLOATS + (dtypes.int32, dtypes.int64):
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         "(tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, "
                         "tf.int64, tf.uint32, tf.uint64).")


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                      alg="auto_select"):
    """Uniform values in [minval, maxval) that depend only on `seed`, as
    `tf.random.stateless_uniform` (TensorFlow's numbers: Philox).

    >>> import tapeflow as tf
    >>> tf.random.stateless_uniform([3], seed=[1, 2]).numpy()
    array([0.8440604 , 0.19204533, 0.9962232 ], dtype=float32)
    """
    dtype = dtypes.as_dtype(dtype)
    _check_uniform_dtype(dtype)
    shape = _shape_tuple(shape, "StatelessRandomUniformV2")
    key, counter = key_counter(seed, alg, "StatelessRandomUniformV2")
    return uniform_values(key, counter, shape, minval, maxval, dtype)


def _stateless_float(op, shape, seed, mean, stddev, dtype, alg):
    dtype = _float_dtype(dtype)
    shape = _shape_tuple(shape, op.name)
    key, counter = key_counter(seed, alg, op.name)
    return _scaled(draw(op, key, counter, shape, dtype), dtype, stddev, mean)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                     alg="auto_select"):
    """Normal values that depend only on `seed`, as `tf.random.stateless_normal`."""
    return _stateless_float(STATELESS_NORMAL, shape, seed, mean, stddev, dtype, alg)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None, alg="auto_select"):
    """Normal values within two standard deviations that depend only on `seed`, as
    `tf.random.stateless_truncated_normal`."""
    return _stateless_float(STATELESS_TRUNCATED_NORMAL, shape, seed, mean, stddev, dtype, alg)


def split(seed, num=2, alg="auto_select"):
    """`num` new seed pairs from `seed` (shape [num, 2], seed's dtype), as
    `tf.random.split`.

    >>> import tapeflow as tf
    >>> tf.random.split([1, 2], num=2).numpy().tolist()
    [[1105988140, 1738052849], [-335576002, 370444179]]
    """
    seed = rules.as_tensor(seed)
    num = rules.int_scalar(num, "StatelessRandomUniformFullIntV2", "num")
    return stateless_uniform([num, 2], seed, minval=None, maxval=None, dtype=seed.dtype,
                             alg=alg)


def fold_in(seed, data, alg="auto_select"):
    """A new seed pair from `seed` and the integer `data`, as `tf.random.fold_in`:
    [a draw of `seed` of data's dtype, data]."""
    data = rules.as_tensor(data)
    first = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype, alg=alg)
    return stack([first, data])


__all__ = ["fold_in", "split", "stateless_normal", "stateless_truncated_normal",
           "stateless_uniform"]
