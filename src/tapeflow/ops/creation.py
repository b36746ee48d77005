"""Ops that create tensors from shapes and scalars: zeros, ones, fill, eye, linspace, range."""

import builtins
import math
import os

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError, ResourceExhaustedError
from ..tensor import Tensor, _Operators, convert_to_tensor, is_symbolic, wrap
from . import rules
from .registry import OpDef, bind, register


def _physical_memory():
    """This machine's RAM in bytes, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


_MEMORY = _physical_memory()


def out_of_memory(op_name, shape, dtype):
    """TensorFlow's error when its CPU allocator cannot hold an op's output."""
    return ResourceExhaustedError(
        f"OOM when allocating tensor with shape{rules.kernel_dims(shape)} and type "
        f"{dtypes.kernel_name(dtype)} on /job:localhost/replica:0/task:0/device:CPU:0 by "
        f"allocator cpu [Op:{op_name}]", op=op_name)


def allocated(op_name, shape, dtype, make):
    """`make()`, the new array of an op's output of `shape`, or TensorFlow's error for
    an output that cannot exist: InvalidArgumentError past 2**63 - 1 elements,
    ResourceExhaustedError past this machine's memory. Checked before allocating:
    NumPy raises a bare MemoryError, or, with Linux's overcommit, hands out pages whose
    filling gets the process killed."""
    count = math.prod(shape)
    if count > np.iinfo(np.int64).max:
        raise InvalidArgumentError(f"Shape {rules.kernel_dims(shape)} would have more than "
                                   f"2**63 - 1 elements [Op:{op_name}]", op=op_name)
    if _MEMORY is not None and count * dtype._np.itemsize > _MEMORY:
        raise out_of_memory(op_name, shape, dtype)
    try:
        return make()
    except MemoryError:
        raise out_of_memory(op_name, shape, dtype) from None


def _shape_tuple(shape, op_name):
    """A shape argument as a tuple of ints. TensorFlow converts it to an int32 tensor: a
    Python float in it is a TypeError, a float tensor an InvalidArgumentError (NumPy
    values are converted, as TensorFlow does)."""
    if isinstance(shape, _Operators):
        if not (shape.dtype.is_integer or shape.dtype.is_bool):
            raise rules.dtype_error(f"{op_name}: shape must be int32 or int64, got "
                                    f"{rules.describe(shape)} [Op:{op_name}]", op_name)
        shape = np.asarray(shape).tolist()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    if type(shape) is float or isinstance(shape, (list, tuple)) and any(
            isinstance(d, (float, np.floating)) for d in shape):
        raise TypeError(f"Cannot convert {shape!r} to EagerTensor of dtype int32 ({op_name}: "
                        f"shape must be a list of ints)")
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{op_name}: shape must be a list of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"{op_name}: dimensions must be >= 0, got {list(dims)} "
                                   f"[Op:{op_name}]", op=op_name)
    if any(d > np.iinfo(np.int64).max for d in dims):  # TensorFlow's int64 shape tensor
        raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")
    return dims


def _like_infer(x, dtype=None):
    return x._shape, dtype or x.dtype


ZEROS_LIKE = register(OpDef(
    name="ZerosLike", args=("x",), infer=_like_infer, differentiable=False,
    eager=lambda x, dtype=None: np.zeros(np.shape(x), dtype=(dtype or _dt(x))._np)))
ONES_LIKE = register(OpDef(
    name="OnesLike", args=("x",), infer=_like_infer, differentiable=False,
    eager=lambda x, dtype=None: np.ones(np.shape(x), dtype=(dtype or _dt(x))._np)))


def _dt(array):
    return dtypes.from_numpy(np.asarray(array).dtype)


def _fill_infer(value, shape):
    if value._shape:
        raise InvalidArgumentError(f"value must be a scalar, got {rules.describe(value)} "
                                   "[Op:Fill]", op="Fill")
    return shape, value.dtype


def _filled(shape, dtype, value):
    # TensorFlow's zeros and ones are Fill ops too: their errors name Fill.
    return allocated("Fill", shape, dtype, lambda: np.full(shape, value, dtype=dtype._np))


FILL = register(OpDef(
    name="Fill", args=("value",), infer=_fill_infer,
    eager=lambda value, shape: _filled(shape, _dt(value), value),
    saves=(),
    grad=lambda ctx, dy: (reduce_sum_all(dy),)))


def reduce_sum_all(x):
    from .reduce import reduce_sum
    return reduce_sum(x)


def _range_infer(start, limit, delta):
    rules.check_same_dtype("Range", (start, limit, delta))
    for v in (start, limit, delta):
        if v._shape:
            raise InvalidArgumentError(f"start, limit and delta must be scalars, got "
                                       f"{rules.describe(v)} [Op:Range]", op="Range")
    return (None,), start.dtype


def _range_kernel(start, limit, delta):
    if delta == 0:
        raise InvalidArgumentError("Requires delta != 0: 0 [Op:Range]", op="Range")
    if delta > 0 and not start <= limit:  # `not <=`: a nan bound fails too, as in TF
        raise InvalidArgumentError(f"Requires start <= limit when delta > 0: {start}/{limit} "
                                   "[Op:Range]", op="Range")
    if delta < 0 and not start >= limit:
        raise InvalidArgumentError(f"Requires start >= limit when delta < 0: {start}/{limit} "
                                   "[Op:Range]", op="Range")
    with np.errstate(all="ignore"):
        size = np.ceil(np.abs((np.float64(limit) - np.float64(start)) / np.float64(delta)))
    if not size <= np.iinfo(np.int64).max:
        raise InvalidArgumentError(f"Requires ((limit - start) / delta) <= "
                                   f"{np.iinfo(np.int64).max}: {start}, {limit}, {delta} "
                                   "[Op:Range]", op="Range")
    return allocated("Range", (int(size),), _dt(start),
                     lambda: np.arange(start, limit, delta, dtype=np.asarray(start).dtype))


RANGE = register(OpDef(name="Range", args=("start", "limit", "delta"), infer=_range_infer,
                       eager=_range_kernel, differentiable=False))


def _linspace_infer(start, stop, num):
    if not start.dtype.is_floating:
        rules.check_dtype_in("LinSpace", start, rules.is_float, "float types")
    rules.check_same_dtype("LinSpace", (start, stop))
    return (None,), start.dtype


def _linspace_kernel(start, stop, num):
    with np.errstate(all="ignore"):  # inf/nan endpoints give nan silently, as in TF
        return np.linspace(start, stop, int(num)).astype(np.asarray(start).dtype)


# TensorFlow's LinSpace kernel: scalar endpoints, and no gradient, as in TensorFlow
# (math_grad.py: NotDifferentiable("LinSpace")). tf.linspace does not use it: it is built
# from differentiable ops below, as TensorFlow's linspace_nd is.
LINSPACE = register(OpDef(
    name="LinSpace", args=("start", "stop", "num"), infer=_linspace_infer,
    eager=_linspace_kernel, differentiable=False))


def _eye_infer(num_rows, num_columns, dtype):
    return (num_rows, num_columns), dtype


# TensorFlow's eye is MatrixDiagV3 of ones: its errors name that op.
EYE = register(OpDef(name="Eye", args=(), infer=_eye_infer,
                     eager=lambda num_rows, num_columns, dtype: allocated(
                         "MatrixDiagV3", (num_rows, num_columns), dtype,
                         lambda: np.eye(num_rows, num_columns, dtype=dtype._np)),
                     differentiable=False))


def _const_infer(shape, dtype, value):
    return shape, dtype


# Zeros/ones of a given shape: no tensor inputs, so never recorded by a tape.
CONST_FILL = register(OpDef(
    name="ConstFill", args=(), infer=_const_infer, eager=_filled,
    differentiable=False))


def _filled_at_run_time(shape, value, dtype):
    """`value` broadcast to a shape the traced graph computes (`tf.shape(x)` of a tensor
    with an unknown dimension), or None when `shape` is known now."""
    from .dynamic import runtime_shape
    dynamic = runtime_shape(shape)
    if dynamic is None:
        return None
    from .dynamic import dynamic_broadcast_to
    value = value if isinstance(value, _Operators) else convert_to_tensor(value, dtype=dtype)
    return dynamic_broadcast_to(value, *dynamic)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros, as `tf.zeros`."""
    filled = _filled_at_run_time(shape, 0, dtypes.as_dtype(dtype))
    if filled is not None:
        return filled
    shape = _shape_tuple(shape, "Zeros")
    return bind(CONST_FILL, (), {"shape": shape, "dtype": dtypes.as_dtype(dtype), "value": 0})


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones, as `tf.ones`."""
    filled = _filled_at_run_time(shape, 1, dtypes.as_dtype(dtype))
    if filled is not None:
        return filled
    shape = _shape_tuple(shape, "Ones")
    return bind(CONST_FILL, (), {"shape": shape, "dtype": dtypes.as_dtype(dtype), "value": 1})


def _like(op, input, dtype):
    x = input if type(input) is Tensor else convert_to_tensor(input)
    attrs = {} if dtype is None else {"dtype": dtypes.as_dtype(dtype)}
    return bind(op, (x,), attrs)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    return _like(ZEROS_LIKE, input, dtype)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    return _like(ONES_LIKE, input, dtype)


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    value = rules.as_tensor(value)
    if value._shape:
        raise InvalidArgumentError(f"value must be a scalar, got {rules.describe(value)} "
                                   f"[Op:Fill]", op="Fill")
    filled = _filled_at_run_time(dims, value, value.dtype)
    if filled is not None:
        return filled
    if isinstance(dims, (list, tuple)) and any(isinstance(d, (float, np.floating)) for d in dims):
        # TensorFlow converts the list to a float tensor, which Fill rejects.
        raise rules.dtype_error(f"Value for attr 'index_type' of float is not in the list of "
                                f"allowed values: int32, int64; got dims {dims!r} [Op:Fill]",
                                "Fill")
    return bind(FILL, (value,), {"shape": _shape_tuple(dims, "Fill")})


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix (or a batch of them), as `tf.eye`."""
    cols = num_rows if num_columns is None else num_columns
    if not any(isinstance(n, _Operators) for n in (num_rows, cols)) and not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))
            for n in (num_rows, cols)):
        raise TypeError(f"Arguments `num_rows` and `num_columns` must be positive integer "
                        f"values. Received: num_rows={num_rows}, num_columns={cols}")
    out = bind(EYE, (), {"num_rows": int(num_rows), "num_columns": int(cols),
                         "dtype": dtypes.as_dtype(dtype)})
    if batch_shape:
        batch = _shape_tuple(batch_shape, "Eye")
        out = wrap(allocated("MatrixDiagV3", batch + out._shape, out.dtype,
                             lambda: np.broadcast_to(out._value, batch + out._shape).copy()))
    return out


def _count(num):
    """`num` as a Python int, or as an int64 tensor of a graph being traced (its value
    comes when the graph runs); TensorFlow converts it to an integer tensor, so a float
    (or bool) count is a TypeError."""
    from .elementwise import cast
    tensor = convert_to_tensor(num)
    if not tensor.dtype.is_integer:
        raise TypeError(f"Argument `tensor` (name: num) must be of type integer. Received "
                        f"`tensor` = {num} of dtype: {tensor.dtype.name}")
    return cast(tensor, dtypes.int64) if is_symbolic(tensor) else int(tensor)


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included, as `tf.linspace`.

    `start` and `stop` may be tensors (broadcast against each other); the values run
    along the new dimension `axis`. Built from differentiable ops, as TensorFlow's
    `linspace_nd`, so the values are TensorFlow's (`start + i * delta`, with both
    endpoints exact) and the result has a gradient with respect to `start` and `stop`.
    Integer endpoints give a float result (float64 for int32 and int64).

    >>> import tapeflow as tf
    >>> tf.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=-1)
    <tf.Tensor: shape=(2, 3), dtype=float32, numpy=
    array([[0. , 0.5, 1. ],
           [1. , 2. , 3. ]], dtype=float32)>
    """
    from .elementwise import cast, zeros_like
    from .rules import int_scalar
    from .shape import concat, expand_dims, reshape
    start = convert_to_tensor(start)
    stop = convert_to_tensor(stop, dtype=start.dtype)
    n = _count(num)
    axis = int_scalar(axis, "ExpandDims")  # TensorFlow's error comes from expand_dims
    diff = stop - start  # broadcasts the two, and rejects bool as TensorFlow's Sub does
    if start._shape != diff._shape or None in diff._shape:
        start = start + zeros_like(diff)
    if stop._shape != diff._shape or None in diff._shape:
        stop = stop + zeros_like(diff)
    first, last = expand_dims(start, axis), expand_dims(stop, axis)
    axis %= len(first._shape)
    if is_symbolic(n):
        return _spaced_by_tensor(first, last, diff, n, axis)
    steps = max(n - 1, 1)  # n = 0 and 1 take a slice of [start, stop] below
    delta = expand_dims(diff, axis) / convert_to_tensor(steps, dtype=start.dtype)
    first, last = cast(first, delta.dtype), cast(last, delta.dtype)
    # range(1, -1) is TensorFlow's error for a negative num.
    inner = cast(range(1, steps if n >= 0 else -1, dtype=dtypes.int64), delta.dtype)
    inner_shape = [1] * len(first._shape)
    inner_shape[axis] = max(n - 2, 0)
    values = concat([first, first + delta * reshape(inner, inner_shape), last], axis)
    if n < 2:
        values = values[(slice(None),) * axis + (slice(0, n),)]
    return values


def _spaced_by_tensor(first, last, diff, n, axis):
    """linspace's values for a count `n` known only when the graph runs (an int64
    tensor): the same ops, their sizes computed from `n`, so the length along `axis` is
    unknown to the trace."""
    from .elementwise import cast, maximum, where
    from .shape import concat, expand_dims, reshape, stack
    steps = maximum(n - 1, 1)
    delta = expand_dims(diff, axis) / cast(steps, first.dtype)
    first, last = cast(first, delta.dtype), cast(last, delta.dtype)
    inner = cast(range(1, where(n >= 0, steps, -1), dtype=dtypes.int64), delta.dtype)
    one = convert_to_tensor(1, dtype=dtypes.int64)
    inner_shape = stack([maximum(n - 2, 0) if i == axis else one
                         for i in builtins.range(len(first._shape))])
    values = concat([first, first + delta * reshape(inner, inner_shape), last], axis)
    return values[(slice(None),) * axis + (slice(0, n),)]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001
    """Like Python's range, as a 1-D tensor (`tf.range`)."""
    if limit is None:
        start, limit = 0, start
    from .elementwise import cast  # a cast op: bounds may be known only when a graph runs
    values = [start, limit, delta]
    if dtype is not None:
        # As TensorFlow: tensors are cast, Python values converted (so a Python float
        # bound for an integer dtype is a TypeError, not truncated).
        dtype = dtypes.as_dtype(dtype)
        values = [cast(v, dtype) if isinstance(v, _Operators) else
                  convert_to_tensor(v, dtype=dtype) for v in values]
    else:
        tensors = [convert_to_tensor(v) for v in values]
        # TensorFlow picks the widest of the three dtypes (float wins over int).
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        widest = max((t.dtype for t in tensors),
                     key=lambda d: order.index(d) if d in order else -1)
        values = [t if t.dtype is widest else cast(t, widest) for t in tensors]
    return bind(RANGE, tuple(values))


__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "linspace", "range"]
