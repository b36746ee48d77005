"""Shared shape/dtype rules for the op table, input conversion, and unbroadcast()."""

import numbers
import operator

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..tensor import Tensor, ValuelessTensor, _Operators, convert_to_tensor


def describe(x):
    """'float32[2, 3]': how error messages name a value."""
    return f"{x.dtype.name}{list(x._shape)}"


def known_value(x):
    """x's value as a NumPy array when it is known now; None for a tensor of a function
    being traced; anything but a tensor as it is (tf.get_static_value)."""
    if not isinstance(x, _Operators):
        return x
    if isinstance(x, ValuelessTensor):
        return None
    return np.asarray(x.numpy())


def kernel_dims(shape):
    """'[2,3]': how TensorFlow's kernels print a shape in their messages ('?' for a
    dimension known only when a traced function runs)."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def broadcast_shapes(op_name, a, b):
    """NumPy/TensorFlow broadcasting of two shapes; InvalidArgumentError naming the op."""
    if a == b:
        return a
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for da, db in zip(pa, pb):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        elif da is None or db is None:  # unknown while tracing: the known one, or unknown
            out.append(db if da is None else da)
        else:
            raise InvalidArgumentError(
                f"Incompatible shapes: {list(a)} vs. {list(b)} [Op:{op_name}]", op=op_name)
    return tuple(out)


def op_error(op_name, message):
    """InvalidArgumentError for `op_name`, its message ending with [Op:name] as
    TensorFlow's eager errors do."""
    return InvalidArgumentError(f"{message} [Op:{op_name}]", op=op_name)


def dtype_error(message, op_name):
    """An InvalidArgumentError about a dtype: while tracing it becomes a TypeError, as
    TensorFlow's graph construction raises (shape errors become ValueErrors)."""
    error = InvalidArgumentError(message, op=op_name)
    error.about_dtype = True
    return error


def check_same_dtype(op_name, xs):
    first = xs[0].dtype
    for i, x in enumerate(xs[1:], 1):
        if x.dtype is not first:
            raise dtype_error(
                f"cannot compute {op_name} as input #{i}(zero-based) was expected to be a "
                f"{first.name} tensor but is a {x.dtype.name} tensor [Op:{op_name}]",
                op_name)
    return first


def check_dtype_in(op_name, x, allowed, what):
    if not allowed(x.dtype):
        raise dtype_error(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values "
            f"({what}) for {op_name}, got input {describe(x)} [Op:{op_name}]", op_name)


def is_float(d):
    return d.is_floating


def is_numeric(d):
    return d.is_floating or d.is_integer


def is_number(d):
    """TensorFlow's arithmetic (AddV2, Mul, Square, Sum): real and complex numbers."""
    return d.is_floating or d.is_integer or d.is_complex


def is_inexact(d):
    """TensorFlow's division and transcendental functions that take complex numbers
    (RealDiv, Exp, Log, Sqrt): floats and complex numbers."""
    return d.is_floating or d.is_complex


def is_integer(d):
    return d.is_integer


def is_bool(d):
    return d.is_bool


def any_dtype(d):
    return True


def unary(allowed=is_numeric, what="numeric types", out_dtype=None):
    """infer for an elementwise unary op: same shape, dtype restricted to `allowed`."""
    def infer(x, **attrs):
        if not allowed(x.dtype):
            check_dtype_in(infer.op_name, x, allowed, what)
        return x._shape, out_dtype or x.dtype
    infer.op_name = "?"
    return infer


def binary(allowed=is_numeric, what="numeric types", out_dtype=None, same_shape=False):
    """infer for a broadcasting binary op: equal dtypes (no promotion), broadcast shapes
    (or, with same_shape, equal ones: TensorFlow's *Grad helper ops)."""
    def infer(x, y, **attrs):
        name = infer.op_name
        if x.dtype is not y.dtype:
            check_same_dtype(name, (x, y))
        if not allowed(x.dtype):
            check_dtype_in(name, x, allowed, what)
        if x._shape == y._shape:
            return x._shape, out_dtype or x.dtype
        if same_shape:
            raise InvalidArgumentError(
                f"{name} needs inputs of one shape, got {list(x._shape)} and "
                f"{list(y._shape)} [Op:{name}]", op=name)
        return broadcast_shapes(name, x._shape, y._shape), out_dtype or x.dtype
    infer.op_name = "?"
    return infer


def named(op_name, infer):
    """Ties a shared infer closure to the op name it reports in errors."""
    infer.op_name = op_name
    return infer


def as_tensor(x, dtype_hint=None):
    return x if type(x) is Tensor else convert_to_tensor(x, dtype_hint=dtype_hint)


def as_tensors(*xs):
    """Converts op arguments the way TensorFlow's ops do: the first Tensor's dtype (or,
    with none, the first value's) wins for Python and NumPy values; Tensors of another
    dtype are left for infer() to reject, since TensorFlow never promotes."""
    dtype = None
    for x in xs:
        if isinstance(x, _Operators):
            dtype = x.dtype
            break
    out = []
    for x in xs:
        if type(x) is not Tensor:
            x = convert_to_tensor(x, dtype=None if isinstance(x, _Operators) else dtype)
        if dtype is None:
            dtype = x.dtype
        out.append(x)
    return out


def normalize_axis(op_name, axis, rank):
    """Axis (int, list, tuple, Tensor or None) as a sorted tuple of non-negative ints.

    As TensorFlow's reduction kernels, each axis in turn is checked for its range and
    then for a repeat (`[0, 0]`, or `[1, -1]` on a matrix), so the first bad one decides
    the error."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, _Operators):
        if not axis.dtype.is_integer:
            raise dtype_error(f"axis must be int32 or int64, got {describe(axis)} "
                              f"[Op:{op_name}]", op_name)
        axis = np.asarray(axis).tolist()
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    elif isinstance(axis, (float, np.floating)):  # TensorFlow converts axis to int32:
        # a float cannot be (a NumPy one neither, here: TensorFlow would truncate it)
        raise TypeError(f"Cannot convert {axis!r} to EagerTensor of dtype int32: the axis "
                        f"of {op_name} must be an integer or a list of them")
    else:  # a list, tuple or array (nested ones too, as TensorFlow reads them as tensors)
        values = np.asarray(axis)
        if values.size and values.dtype.kind not in "iub":
            raise dtype_error(f"axis must be int32 or int64 values, got {axis!r} "
                              f"[Op:{op_name}]", op_name)
        axis = values.ravel().tolist()
    out = []
    for a in axis:
        a = int(a)
        if not -rank <= a < max(rank, 1):
            raise InvalidArgumentError(
                f"Invalid reduction dimension {a} for input with {rank} dimensions. "
                f"[Op:{op_name}]", op=op_name)
        a = a % rank if rank else 0
        if a in out:
            if rank:
                raise InvalidArgumentError(
                    f"Invalid reduction arguments: Axes contains duplicate dimension: {a} "
                    f"[Op:{op_name}]", op=op_name)
            continue  # a scalar's 0 again: infer reports it out of range, once
        out.append(a)
    return tuple(sorted(out))


def check_axis(op_name, axis, rank):
    """`axis` in [-rank, rank), made non-negative; TensorFlow's error otherwise."""
    if not -rank <= axis < rank:
        raise op_error(op_name, f"Expected axis in the range [{-rank}, {rank}), but got "
                                f"{axis}")
    return axis % rank


def int_tuple(value, what, op_name=None):
    """A shape-like argument (list, tuple, TensorShape, Tensor, int) as a tuple of ints.

    TensorFlow converts such an argument to a tensor, so floats (or a string) reach the op
    `op_name` as a tensor of the wrong dtype: InvalidArgumentError naming it (TypeError
    where no op is named)."""
    if isinstance(value, _Operators):
        value = np.asarray(value).tolist()
    if isinstance(value, (numbers.Integral, np.integer)):
        return (int(value),)
    try:
        return tuple(operator.index(d) for d in value)
    except TypeError:
        if op_name is None:
            raise TypeError(f"{what} must be a list of integers, got {value!r}") from None
        raise dtype_error(f"{what} must be int32 or int64 values, got {value!r} "
                          f"[Op:{op_name}]", op_name) from None


def int_scalar(value, op_name=None, what="axis"):
    """An int argument (axis, depth, batch_dims): a Python or NumPy integer, or a scalar
    integer Tensor. A Tensor of another dtype (float, bool) is the InvalidArgumentError
    TensorFlow's op raises for it ("Value for attr 'Tidx' of float is not in the list of
    allowed values: int32, int64"); anything else a TypeError naming the op (TensorFlow
    cannot convert a float to int32)."""
    if isinstance(value, _Operators):
        if not value.dtype.is_integer:
            where = f" [Op:{op_name}]" if op_name else ""
            raise dtype_error(f"{what} must be int32 or int64, got "
                              f"{describe(value)}{where}", op_name)
        return int(np.asarray(value))
    try:
        return operator.index(value)
    except TypeError:
        where = f" of {op_name}" if op_name else ""
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype int32: the "
                        f"{what}{where} must be an integer") from None


def check_int_dtype(op_name, x, what="indices"):
    """An index-like tensor (indices, paddings, segment ids) must be int32 or int64."""
    if x.dtype not in (dtypes.int32, dtypes.int64):
        raise dtype_error(f"{what} must be int32 or int64, got {describe(x)} "
                          f"[Op:{op_name}]", op_name)


def _summed_if_one(g, x, k):
    """g summed over axis k (kept) when x's axis k is 1 when the graph runs."""
    from .control import cond
    from .reduce import reduce_sum
    from .shape import shape as shape_of
    return cond(shape_of(x)[k] == 1, lambda: reduce_sum(g, axis=k, keepdims=True),
                lambda: g)


def unbroadcast(dy, shape):
    """Sums `dy` down to `shape`: the gradient of broadcasting a value of `shape`."""
    if dy is None or (dy._shape == shape and None not in shape):
        return dy
    # `from . import shape` would get the package's `shape` function, not the module.
    from .reduce import reduce_sum
    from .shape import reshape
    extra = len(dy._shape) - len(shape)
    axes = list(range(extra))
    for i, d in enumerate(shape):
        if d == 1 and dy._shape[extra + i] != 1:
            axes.append(extra + i)
    if None in shape:
        # Sum the new leading axes, then the size-1 ones in place; a dimension unknown
        # while tracing was broadcast if it is 1 when the graph runs (asked then, when
        # the shape says of which tensor it is).
        out = reduce_sum(dy, axis=list(range(extra))) if extra else dy
        ones = [a - extra for a in axes[extra:]]
        out = reduce_sum(out, axis=ones, keepdims=True) if ones else out
        of = getattr(shape, "of", None)
        for k, d in enumerate(shape):
            if d is None and of is not None and out._shape[k] != 1:
                # Also when dy's size is unknown too: two unknown sizes broadcast a 1.
                out = _summed_if_one(out, of, k)
        return out
    out = reduce_sum(dy, axis=axes) if axes else dy
    if out._shape != tuple(shape):
        out = reshape(out, shape)
    return out
