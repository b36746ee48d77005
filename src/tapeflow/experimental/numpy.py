"""`tf.experimental.numpy` (tnp): TensorFlow's NumPy-behaviour switch, and the tnp
functions that are thin wrappers of tapeflow ops under NumPy's dtype rules.

`experimental_enable_numpy_behavior()` turns on, for the whole process as in TensorFlow:

- NumPy's dtype promotion in the Python operators of Tensors and Variables (`+ - * / //
  % ** @ & | ^ < <= > >= == !=`): `tf.Variable([1, 2]) + tf.Variable([3.14, 3.14])` is
  float64. The tf.* functions (`tf.add`, ...) still never promote, as in TensorFlow.
- TensorFlow's NumPy methods on Tensors (not on Variables): `.T`, `.size`, `.data`,
  `.tolist()`, `.reshape()`, `.ravel()`, `.flatten()`, `.transpose()`, `.astype()`,
  `.clip()`, `.max()`, `.min()`, `.mean()` and `round()`.

The functions below (`array`, `asarray`, `zeros`, `sum`, `mean`, `exp`, ...) work with or
without it, and follow NumPy's dtype rules as TensorFlow's tnp does: a Python int is int64
and a Python float float64 (float32 with `prefer_float32=True`), `sum` of int32 is int64,
`mean` and `exp` of integers are float64.

>>> import tapeflow.experimental.numpy as tnp
>>> tnp.asarray([1, 2.5])
<tf.Tensor: shape=(2,), dtype=float64, numpy=array([1. , 2.5])>
>>> tnp.mean(tnp.asarray([1, 2]))
<tf.Tensor: shape=(), dtype=float64, numpy=1.5>
"""

import builtins
import math as _math
import numbers

import numpy as np

from .. import dtypes as _dtypes
from .. import tensor as _tensor
from ..errors import InvalidArgumentError
from ..ops import creation as _creation
from ..ops import elementwise as _ew
from ..ops import linalg as _linalg
from ..ops import reduce as _reduce
from ..ops import rules as _rules
from ..ops.shape import broadcast_to as _broadcast_to
from ..ops.shape import reshape as _reshape
from ..ops.shape import stack as _stack
from ..ops.shape import transpose as _transpose
from ..tensor import Tensor, _Operators, convert_to_tensor

# -- dtypes and constants, as tnp exports them (NumPy's own types) -----------------------

bool_ = np.bool_
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
float16 = np.float16
float32 = np.float32
float64 = np.float64
ndarray = Tensor
pi = np.pi
e = np.e
inf = np.inf
nan = np.nan
newaxis = None

_prefer_float32 = False


# -- NumPy's dtype promotion, as TensorFlow's tnp computes it ------------------------------

class _NotPromotable(Exception):
    """An operand NumPy's rules do not cover (None, a string, an object)."""


def _leaves(values, out):
    for v in values:
        if isinstance(v, (list, tuple)):
            _leaves(v, out)
        else:
            out.append(v)
    return out


# Python scalars are ranked bool 0, int 1, float 2; alone, they are NumPy's bool, int64
# and float64.
_WEAK_ALONE = (np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float64))


def _result_np_dtype(values, dtype_likes=False):
    """NumPy's result type (NEP 50, as NumPy 2) of values: Tensors, Variables and NumPy
    values have their dtype; Python scalars are "weak" (they take the other operand's kind
    unless theirs is higher: int32 + 2.5 is float64, float16 + 2.5 float16). With
    prefer_float32 a Python float (and, as in TensorFlow, a NumPy float64 scalar) counts
    as float32. `dtype_likes`: a value that is none of these is read as a dtype."""
    strong, weak = [], -1
    for v in _leaves(values, []):
        if isinstance(v, _Operators):
            strong.append(v.dtype._np)
        elif _prefer_float32 and isinstance(v, builtins.float):
            strong.append(np.dtype(np.float32))
        elif isinstance(v, (np.ndarray, np.generic)):
            strong.append(v.dtype)
        elif isinstance(v, (builtins.bool, builtins.int, builtins.float)):
            weak = builtins.max(weak, 0 if isinstance(v, builtins.bool)
                                else 1 if isinstance(v, builtins.int) else 2)
        elif isinstance(v, _dtypes.DType):
            strong.append(v._np)
        elif dtype_likes:
            strong.append(np.dtype(v))  # np.float32, float, "int32": TypeError otherwise
        else:
            raise _NotPromotable(v)
    if not strong:
        return _WEAK_ALONE[weak] if weak >= 0 else np.dtype(np.float64)
    dtype = np.result_type(*strong)
    if weak == 2 and dtype.kind in "biu":
        return np.dtype(np.float64)
    if weak == 1 and dtype.kind == "b":
        return np.dtype(np.int64)
    return dtype


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives these arrays, scalars and dtypes, as tnp's.

    >>> import tapeflow as tf
    >>> result_type(tf.constant([1, 2]), 2.5)
    tf.float64
    """
    return _dtypes.from_numpy(_result_np_dtype(arrays_and_dtypes, dtype_likes=True))


def _value_dtype(value):
    """NumPy's dtype for an array-like value (a Python int is int64, a float float64)."""
    try:
        return _dtypes.from_numpy(_result_np_dtype((value,)))
    except _NotPromotable as e:
        raise TypeError(f"Cannot convert {value!r} to a Tensor: {e.args[0]!r} is not a "
                        f"number, array or tensor") from None


def _dtype_arg(dtype):
    """A tnp `dtype=` argument (np.float32, float, "int32", tf.int32) as a DType; Python's
    `float` and `int` are NumPy's float64 and int64."""
    if dtype is None or isinstance(dtype, _dtypes.DType):
        return dtype
    return _dtypes.from_numpy(np.dtype(dtype))


def _default_float():
    return _dtypes.float32 if _prefer_float32 else _dtypes.float64


def _promote_operands(x, y):
    """What a Tensor operator does first with NumPy behaviour on (TensorFlow's
    maybe_promote_tensors): the Tensors and Variables among the operands cast to NumPy's
    result dtype. Other values are left to the op, which converts them to that dtype (its
    Tensor operand's); operands NumPy's rules do not cover are left for the op to reject.

    The common cases need no promotion and return at once: an operand of the other's
    dtype, a Python int with a non-bool tensor (ints are weak: int32 + 2 is int32, float16
    + 2 float16), a Python float with a float tensor (float16 + 2.5 is float16, unless
    prefer_float32 makes the float a float32)."""
    t, s = (x, y) if isinstance(x, _Operators) else (y, x)
    d, ts = t.dtype, type(s)
    if (ts is builtins.int and not d.is_bool
            or ts is builtins.float and d.is_floating and (d.size >= 4 or not _prefer_float32)
            or isinstance(s, _Operators) and s.dtype is d):
        return x, y
    try:
        dtype = _dtypes.from_numpy(_result_np_dtype((x, y)))
    except (_NotPromotable, TypeError):
        return x, y
    if isinstance(x, _Operators) and x.dtype is not dtype:
        x = _ew.cast(x, dtype)
    if isinstance(y, _Operators) and y.dtype is not dtype:
        y = _ew.cast(y, dtype)
    return x, y


def _promoted(*values):
    """tnp's _promote_dtype: every value as a Tensor of their NumPy result dtype."""
    dtype = result_type(*values)
    return [asarray(v, dtype) for v in values]


# -- creation ---------------------------------------------------------------------------------

def array(val, dtype=None, copy=True, ndmin=0):
    """A Tensor from `val`, with NumPy's dtype rules (Python ints are int64, floats
    float64), at least `ndmin` dimensions."""
    dtype = _dtype_arg(dtype)
    if isinstance(val, _Operators):
        out = _ew.cast(val, dtype) if dtype is not None else convert_to_tensor(val)
    else:
        dtype = dtype or _value_dtype(val)
        if _tensor._contains_tensor(val):
            out = _stack([array(v, dtype, copy=False) for v in val])
        else:  # converted, then cast, as TensorFlow: [1.7, -1.7] as int32 is [1, -1]
            out = convert_to_tensor(np.asarray(val).astype(dtype._np))
    if copy and out is val:
        out = _ew.identity(out)
    if ndmin > 32:
        raise ValueError("ndmin bigger than allowable number of dimensions: 32.")
    if ndmin > out.ndim:
        out = _reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def asarray(a, dtype=None):
    """`a` as a Tensor (itself when it already is one of that dtype)."""
    dtype = _dtype_arg(dtype)
    if isinstance(a, Tensor) and (dtype is None or dtype is a.dtype):
        return a
    return array(a, dtype, copy=False)


def zeros(shape, dtype=float):
    """Zeros of `shape`; `dtype` defaults to float64 (NumPy's float)."""
    dtype = _dtype_arg(dtype) or _default_float()
    return _creation.zeros(shape, dtype=dtype)


def ones(shape, dtype=float):
    """Ones of `shape`; `dtype` defaults to float64 (NumPy's float)."""
    dtype = _dtype_arg(dtype) or _default_float()
    return _creation.ones(shape, dtype=dtype)


def zeros_like(a, dtype=None):
    """Zeros shaped like `a`, of its dtype (NumPy's for a Python value) or `dtype`."""
    dtype = _dtype_arg(dtype) or _value_dtype(a)
    return _creation.zeros_like(asarray(a), dtype=dtype)


def ones_like(a, dtype=None):
    """Ones shaped like `a`, of its dtype (NumPy's for a Python value) or `dtype`."""
    dtype = _dtype_arg(dtype) or _value_dtype(a)
    return _creation.ones_like(asarray(a), dtype=dtype)


def arange(start, stop=None, step=1, dtype=None):
    """Values from `start` to `stop` (excluded) by `step`, of NumPy's result dtype."""
    if not step:
        raise ValueError("step must be non-zero.")
    dtype = _dtype_arg(dtype) or _value_dtype((start, step) if stop is None
                                              else (start, step, stop))
    if step > 0 and ((stop is not None and start > stop) or (stop is None and start < 0)):
        return array([], dtype=dtype)
    if step < 0 and ((stop is not None and start < stop) or (stop is None and start > 0)):
        return array([], dtype=dtype)
    # As TensorFlow's tnp (and unlike NumPy), the range of Python floats is computed in
    # float32 and then cast: arange(0, 1, 0.1)[3] is 0.30000001192092896 in float64.
    return _ew.cast(_creation.range(start, stop, step), dtype)


# -- reductions -------------------------------------------------------------------------------

_TO_INT, _TO_FLOAT = "int", "float"


def _reduction(fn, a, axis, dtype, keepdims, promote_int=None, bool_fn=None,
               keep_bool=False):
    """tnp's _reduce: `dtype` casts first; otherwise integers and bools become int64
    (sum; TensorFlow sums unsigned ints as uint64, a dtype tapeflow lacks) or float64
    (mean), and bools reduce with `bool_fn` where NumPy keeps them."""
    dtype = _dtype_arg(dtype)
    a = asarray(a, dtype)
    if bool_fn is not None and a.dtype.is_bool and (keep_bool or dtype is _dtypes.bool):
        return bool_fn(a, axis=axis, keepdims=bool(keepdims))
    if dtype is None and (a.dtype.is_integer or a.dtype.is_bool):
        if promote_int == _TO_INT and a.dtype.size < 8:
            a = _ew.cast(a, _dtypes.int64)
        elif promote_int == _TO_FLOAT:
            a = _ew.cast(a, _dtypes.float64)
    return fn(a, axis=axis, keepdims=bool(keepdims))


def _no_out(out):
    if out is not None:
        raise ValueError("Setting out is not supported.")


def sum(a, axis=None, dtype=None, keepdims=None):  # NumPy's name
    """Sum over `axis`; integers and bools sum as int64, as NumPy's."""
    return _reduction(_reduce.reduce_sum, a, axis, dtype, keepdims, _TO_INT,
                      _reduce.reduce_any)


def mean(a, axis=None, dtype=None, out=None, keepdims=None):
    """Mean over `axis`; integers and bools average as float64, as NumPy's."""
    _no_out(out)
    return _reduction(_reduce.reduce_mean, a, axis, dtype, keepdims, _TO_FLOAT)


def amax(a, axis=None, out=None, keepdims=None):
    """Maximum over `axis` (logical or for bools)."""
    _no_out(out)
    return _reduction(_reduce.reduce_max, a, axis, None, keepdims, None,
                      _reduce.reduce_any, keep_bool=True)


def amin(a, axis=None, out=None, keepdims=None):
    """Minimum over `axis` (logical and for bools)."""
    _no_out(out)
    return _reduction(_reduce.reduce_min, a, axis, None, keepdims, None,
                      _reduce.reduce_all, keep_bool=True)


max = amax  # NumPy's name
min = amin  # NumPy's name


# -- elementwise ------------------------------------------------------------------------------

def _float_unary(op):
    def fn(x):
        x = asarray(x)
        if not x.dtype.is_floating:  # NumPy computes integers and bools in float64
            x = _ew.cast(x, _dtypes.float64)
        return op(x)
    fn.__name__ = fn.__qualname__ = op.__name__
    fn.__doc__ = f"Elementwise {op.__name__}; integers and bools are computed as float64."
    return fn


exp = _float_unary(_ew.exp)
log = _float_unary(_ew.log)
sqrt = _float_unary(_ew.sqrt)
sin = _float_unary(_ew.sin)
cos = _float_unary(_ew.cos)
tanh = _float_unary(_ew.tanh)


def abs(x):  # NumPy's name
    """Elementwise absolute value, in x's dtype."""
    return _ew.abs(asarray(x))


def maximum(x1, x2):
    """Elementwise maximum in NumPy's result dtype (logical or for bools); against a
    plain 0 it is relu, as TensorFlow's tnp computes it."""
    if (isinstance(x2, numbers.Real) and not isinstance(x2, builtins.bool) and x2 == 0
            and isinstance(x1, Tensor) and not x1.dtype.is_bool):
        return _ew.relu(x1)
    x1, x2 = _promoted(x1, x2)
    return _ew.logical_or(x1, x2) if x1.dtype.is_bool else _ew.maximum(x1, x2)


def minimum(x1, x2):
    """Elementwise minimum in NumPy's result dtype (logical and for bools)."""
    x1, x2 = _promoted(x1, x2)
    return _ew.logical_and(x1, x2) if x1.dtype.is_bool else _ew.minimum(x1, x2)


def matmul(x1, x2):
    """NumPy's matmul, in NumPy's result dtype: a 1-D operand is a vector (contracted
    with the last axis of x1, or the second-to-last of x2). Shape errors are ValueError,
    as TensorFlow's tnp raises them. With NumPy behaviour on, `@` runs this."""
    x1, x2 = _promoted(x1, x2)
    try:
        if x2.ndim == 1:
            return _linalg.tensordot(x1, x2, axes=1)
        if x1.ndim == 1:
            return _linalg.tensordot(x1, x2, axes=[[0], [-2]])
        return _linalg.matmul(x1, x2)
    except InvalidArgumentError as err:
        raise ValueError(str(err)) from None


def clip(a, a_min, a_max):
    """`a` clipped to [a_min, a_max] (either may be None), in NumPy's result dtype."""
    if a_min is None and a_max is None:
        raise ValueError("Not more than one of `a_min` and `a_max` may be `None`.")
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    values = _promoted(a, a_min, a_max)
    shape = values[0]._shape
    for v in values[1:]:
        shape = _rules.broadcast_shapes("BroadcastTo", shape, v._shape)
    values = [v if v._shape == shape else _broadcast_to(v, shape) for v in values]
    return _ew.clip_by_value(*values)


# -- shapes -----------------------------------------------------------------------------------

def reshape(a, newshape, order="C"):
    """`a` with shape `newshape`, read in C (row-major) or F (column-major) order."""
    if order not in ("C", "F"):
        raise ValueError(f"Unsupported order argument {order}")
    a = asarray(a)
    if isinstance(newshape, numbers.Integral):
        newshape = [newshape]
    if order == "F":
        return _transpose(_reshape(_transpose(a), list(newshape)[::-1]))
    return _reshape(a, newshape)


def ravel(a):
    """`a` as one dimension."""
    return _reshape(asarray(a), [-1])


def transpose(a, axes=None):
    """`a` with its axes permuted by `axes` (default: reversed)."""
    return _transpose(asarray(a), perm=axes)


# -- the Tensor methods TensorFlow adds with NumPy behaviour on -------------------------------

def _size(t):
    if None in t._shape:
        return None
    return np.prod(list(t._shape))  # as TensorFlow: a scalar's size is float 1.0


def _reshape_method(t, *newshape, **kwargs):
    order = kwargs.pop("order", "C")
    if kwargs:
        raise ValueError(f"Unsupported arguments: {kwargs.keys()}")
    if len(newshape) == 1 and not isinstance(newshape[0], builtins.int):
        newshape = newshape[0]
    return reshape(t, newshape, order=order)


def _flatten(t, order="C"):
    if order in ("C", "A", "K"):
        return _reshape(t, [-1])
    if order == "F":
        return _reshape(_transpose(t), [-1])
    raise ValueError("order can only be C, A, K (all row major) or F (column major).")


def _around(t, decimals=None):
    """round(t, decimals), as tnp.around: scaled by 10**decimals (a float32 factor, as
    TensorFlow casts it), rounded half to even, scaled back; integers go through float64."""
    dtype = t.dtype
    work = dtype if dtype.is_floating else _dtypes.float64
    factor = _ew.cast(convert_to_tensor(np.float32(_math.pow(10, decimals or 0))), work)
    scaled = _ew.multiply(_ew.cast(t, work), factor)
    return _ew.cast(_ew.truediv(_ew.round(scaled), factor), dtype)


_TENSOR_METHODS = {
    "T": _transpose,
    "size": _size,
    "data": lambda t: t,
    "tolist": lambda t: t.numpy().tolist(),
    "reshape": _reshape_method,
    "ravel": ravel,
    "flatten": _flatten,
    "transpose": transpose,
    "astype": _ew.cast,
    "clip": clip,
    "max": amax,
    "min": amin,
    "mean": mean,
    "__round__": _around,
    "__matmul__": matmul,  # what `@` runs while NumPy's promotion is on
}


# -- the switch ------------------------------------------------------------------------------

_MODES = ("off", "legacy", "safe", "all")


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Turns on TensorFlow's NumPy behaviour for the whole process (there is no way back,
    as in TensorFlow): Tensor operators promote mixed dtypes as NumPy does, and Tensors
    gain NumPy methods (see the module docstring).

    Args:
      prefer_float32: Python floats count as float32 rather than float64 (NumPy's) in
        promotion and in tnp's conversions.
      dtype_conversion_mode: "legacy" (NumPy's promotion in operators) or "off" (no
        promotion; the methods only). TensorFlow's "safe" and "all" modes are not
        implemented.

    Raises:
      ValueError: for an unknown dtype_conversion_mode.
      NotImplementedError: for "safe" and "all".
    """
    global _prefer_float32
    if dtype_conversion_mode not in _MODES:
        raise ValueError(f"The provided promotion mode {dtype_conversion_mode} does not "
                         f"exist. Make sure the provided dtype conversion mode is one of "
                         f"the followings: 'off', 'legacy', 'safe' or 'all'.")
    if dtype_conversion_mode in ("safe", "all"):
        raise NotImplementedError(f"dtype_conversion_mode={dtype_conversion_mode!r} "
                                  f"(TensorFlow's auto dtype conversion) is not implemented "
                                  f"in tapeflow; use 'legacy'")
    _prefer_float32 = bool(prefer_float32)
    promote = _promote_operands if dtype_conversion_mode == "legacy" else None
    _tensor.set_numpy_behavior(promote, _TENSOR_METHODS)


def _disable_numpy_behavior():
    """Back to TensorFlow's default behaviour, for tests (TensorFlow has no way back)."""
    global _prefer_float32
    _prefer_float32 = False
    _tensor.set_numpy_behavior(None, None)


__all__ = [
    "abs",
    "amax",
    "amin",
    "arange",
    "array",
    "asarray",
    "bool_",
    "clip",
    "cos",
    "e",
    "exp",
    "experimental_enable_numpy_behavior",
    "float16",
    "float32",
    "float64",
    "inf",
    "int8",
    "int16",
    "int32",
    "int64",
    "log",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "nan",
    "ndarray",
    "newaxis",
    "ones",
    "ones_like",
    "pi",
    "ravel",
    "reshape",
    "result_type",
    "sin",
    "sqrt",
    "sum",
    "tanh",
    "transpose",
    "uint8",
    "zeros",
    "zeros_like",
]
