"""TensorFlow 2's initializer objects at `tf`'s top level (tf.constant_initializer,
zeros_initializer, ones_initializer, random_normal_initializer,
random_uniform_initializer): callables of (shape, dtype) that make a Variable's initial
value, with get_config / from_config."""

import abc

import numpy as np

from . import dtypes
from .ops import creation
from .ops import random as random_ops
from .tensor import constant


class _Initializer(abc.ABC):
    @abc.abstractmethod
    def __call__(self, shape, dtype=None, **kwargs):
        """The initial value, a Tensor of `shape` and `dtype`."""

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


def _numeric_or_bool(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer or dtype == dtypes.bool):
        raise ValueError(f"Argument `dtype` expected to be numeric or boolean. Received "
                         f"{dtype!r}.")
    return dtype


def _floating(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: "
                         f"{dtype!r}.")
    return dtype


class zeros_initializer(_Initializer):  # noqa: N801 (TensorFlow's name)
    """Zeros of the shape and dtype asked for."""

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        return creation.zeros(shape, dtype=_numeric_or_bool(dtype))


class ones_initializer(_Initializer):  # noqa: N801
    """Ones of the shape and dtype asked for."""

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        return creation.ones(shape, dtype=_numeric_or_bool(dtype))


class constant_initializer(_Initializer):  # noqa: N801
    """`value` (a scalar filling the shape, or as many elements as the shape has),
    in the dtype asked for or, without one, the value's own."""

    def __init__(self, value=0, support_partition=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))
                or hasattr(value, "numpy")):
            raise TypeError(f"Invalid type for initial value={value} of type: "
                            f"{type(value).__name__}. Expected Python scalar, list or "
                            f"tuple of values, or numpy.ndarray.")
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        value = self.value.numpy() if hasattr(self.value, "numpy") else self.value
        shape = tuple(int(d) for d in shape)
        array = np.asarray(value)
        if array.size not in (1, int(np.prod(shape, dtype=np.int64))):
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{array} (converted from {value}) has {array.size} elements, "
                            f"but got `shape` {shape} with {int(np.prod(shape))} elements).")
        return constant(value, dtype=None if dtype is None else dtypes.as_dtype(dtype),
                        shape=shape)

    def get_config(self):
        return {"value": self.value}


class random_normal_initializer(_Initializer):  # noqa: N801
    """Normal draws of mean `mean` and standard deviation `stddev`."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        return random_ops.normal(shape, self.mean, self.stddev, dtype=_floating(dtype),
                                 seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class random_uniform_initializer(_Initializer):  # noqa: N801
    """Uniform draws in [minval, maxval)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        dtype = dtypes.as_dtype(dtype)
        if not (dtype.is_floating or dtype.is_integer):
            raise ValueError(f"Argument `dtype` is expected to be floating point or "
                             f"integer. Received: {dtype!r}.")
        return random_ops.uniform(shape, self.minval, self.maxval, dtype=dtype,
                                  seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


__all__ = ["constant_initializer", "ones_initializer", "random_normal_initializer",
           "random_uniform_initializer", "zeros_initializer"]
