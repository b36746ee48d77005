"""TensorFlow's dtypes over NumPy's, and `as_dtype`."""

import builtins

import numpy as np


class DType:
    """A tensor element type: `tf.float32`, `tf.int32`, ..."""

    __slots__ = ("name", "as_numpy_dtype", "_np", "is_floating", "is_integer", "is_bool",
                 "is_complex", "is_differentiable")

    def __init__(self, name, np_type):
        self.name = name
        self.as_numpy_dtype = np_type
        self._np = np.dtype(np_type)
        # Plain attributes, not properties: they are read on every op's hot path.
        self.is_floating = self._np.kind == "f"
        self.is_integer = self._np.kind in "iu"
        self.is_bool = self._np.kind == "b"
        self.is_complex = self._np.kind == "c"
        # Not TensorFlow API: whether gradients flow through values of this dtype, floats
        # and complex numbers (TensorFlow's backprop_util.IsTrainable).
        self.is_differentiable = self._np.kind in "fc"

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        """The dtype of a complex dtype's parts (float32 for complex64); any other dtype
        itself."""
        return _REAL_PARTS.get(self.name, self)

    @property
    def is_numeric(self):
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def size(self):
        return self._np.itemsize

    @property
    def min(self):
        self._check_ordered("minimum")
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        self._check_ordered("maximum")
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def _check_ordered(self, what):
        if self.is_complex:  # complex numbers have no order, so no extremes
            raise TypeError(f"Cannot find {what} value of {self} with type {self}.")

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other):
        if other is self:
            return True
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16)
half = float16
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
double = float64
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool = DType("bool", np.bool_)  # noqa: A001 - TensorFlow's public name
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64,
       complex128)
_REAL_PARTS = {"complex64": float32, "complex128": float64}


def complex_of(real):
    """The complex dtype whose parts are `real` (complex64 for float32)."""
    return complex64 if real is float32 else complex128

_BY_NUMPY = {d._np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["half"] = float16
_BY_NAME["double"] = float64


# TensorFlow's C++ names (DataTypeString), which its kernels and converters print:
# "Cannot convert 1.5 to EagerTensor of dtype float".
_KERNEL_NAMES = {"float16": "half", "float32": "float", "float64": "double"}


def kernel_name(dtype):
    """The name TensorFlow's messages give `dtype`: 'float' for float32, 'double' for
    float64, 'half' for float16, else its Python name."""
    return _KERNEL_NAMES.get(dtype.name, dtype.name)


def from_numpy(np_dtype):
    """The DType of a NumPy dtype; TypeError naming it when tapeflow has none."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(f"tapeflow has no dtype for NumPy's {np_dtype}") from None


def as_dtype(type_value):
    """Converts a DType, NumPy dtype/type or name into a tapeflow DType.

    >>> as_dtype("float32")
    tf.float32
    >>> as_dtype(np.int64)
    tf.int64
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        try:
            return _BY_NAME[type_value]
        except KeyError:
            raise TypeError(f"Cannot convert {type_value!r} to a dtype") from None
    if type_value is builtins.float:
        return float32
    try:
        return from_numpy(np.dtype(type_value))
    except (TypeError, ValueError):
        raise TypeError(f"Cannot convert {type_value!r} to a dtype") from None
