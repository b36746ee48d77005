"""Reductions (sum, mean, max, prod, argmax, all, ...) and scans (cumsum, cumprod)."""

import math

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..tensor import _Operators
from . import rules
from .dynamic import broadcast_to_input, input_dims, reshaped
from .elementwise import (
    _quiet,
    cast,
    conj,
    equal,
    exp,
    less,
    log,
    not_equal,
    stop_gradient,
    where,
    zeros_like,
)
from .elementwise import abs as _abs
from .registry import OpDef, bind, register
from .rules import is_bool, is_number, is_numeric
from .shape import reshape, transpose

# A float32 sum over more elements than this accumulates in float64, so that reducing
# a long strided axis (where NumPy adds naively, not pairwise) keeps TensorFlow's
# accuracy.
_F32_EXACT_SUM = 256


def _kept_shape(shape, axis):
    """`shape` with the reduced axes set to 1 (the keepdims=True result shape)."""
    return tuple(1 if i in axis else d for i, d in enumerate(shape))


def _reduced_count(shape, axis):
    """The number of elements the axes hold; None when one is unknown while tracing."""
    if any(shape[a] is None for a in axis):
        return None
    return math.prod(shape[a] for a in axis)


def _accumulator(dtype, n):
    """The NumPy dtype a float sum of `n` values of `dtype` accumulates in."""
    if dtype == np.float16:
        return np.float32
    if dtype == np.float32 and n > _F32_EXACT_SUM:
        return np.float64
    return dtype


def _reduce_infer(op_name, allowed, what):
    def infer(input, axis, keepdims):
        if not allowed(input.dtype):
            rules.check_dtype_in(op_name, input, allowed, what)
        shape = input._shape
        if axis and any(not 0 <= a < len(shape) for a in axis):
            raise InvalidArgumentError(
                f"Invalid reduction dimension {list(axis)} for input with {len(shape)} "
                f"dimensions. [Op:{op_name}]", op=op_name)
        if keepdims:
            return _kept_shape(shape, axis), input.dtype
        return tuple(d for i, d in enumerate(shape) if i not in axis), input.dtype
    return infer


@_quiet
def _sum_kernel(input, axis, keepdims):
    acc = _accumulator(input.dtype, _reduced_count(input.shape, axis))
    out = np.add.reduce(input, axis=axis, dtype=acc, keepdims=keepdims)
    return out.astype(input.dtype, copy=False)


@_quiet
def _mean_kernel(input, axis, keepdims):
    n = _reduced_count(input.shape, axis)
    if input.dtype.kind in "iu":
        # TensorFlow's integer mean divides in the integer type: truncation toward zero.
        total = np.add.reduce(input, axis=axis, dtype=input.dtype, keepdims=keepdims)
        quotient = np.abs(total) // max(n, 1) * np.sign(total)
        return np.asarray(quotient).astype(input.dtype, copy=False)[()]
    acc = _accumulator(input.dtype, n)
    out = np.add.reduce(input, axis=axis, dtype=acc, keepdims=keepdims) / n
    return out.astype(input.dtype, copy=False)


def _extreme_kernel(fn, lowest):
    def kernel(input, axis, keepdims):
        # Over an empty axis TensorFlow returns the identity (-inf for max, +inf for min
        # on floats, the type's bounds on integers) where NumPy raises.
        if input.dtype.kind == "f":
            initial = -np.inf if lowest else np.inf
        else:
            info = np.iinfo(input.dtype)
            initial = info.min if lowest else info.max
        return fn(input, axis=axis, keepdims=keepdims, initial=initial)
    return kernel


@_quiet
def _prod_kernel(input, axis, keepdims):
    acc = np.float32 if input.dtype == np.float16 else input.dtype
    out = np.multiply.reduce(input, axis=axis, dtype=acc, keepdims=keepdims)
    return out.astype(input.dtype, copy=False)


def _with_kept_dims(x, ctx):
    """A reduction's output-shaped `x` in keepdims form."""
    return reshaped(x, _kept_shape(input_dims(ctx), ctx.attrs["axis"]))


def _sum_grad(ctx, dy):
    """dy reshaped to keepdims form and broadcast back over the reduced axes."""
    return broadcast_to_input(_with_kept_dims(dy, ctx), ctx)


def _mean_grad(ctx, dy):
    dims = input_dims(ctx)
    n = math.prod(dims[a] for a in ctx.attrs["axis"])
    # An empty reduction's gradient is empty: a count of 0 divides nothing.
    return (_sum_grad(ctx, dy) / (cast(n, dy.dtype) if isinstance(n, _Operators)
                                  else float(max(n, 1))),)


def _extreme_grad(ctx, dy):
    # TensorFlow's _MinOrMaxGrad: the gradient is split equally among tied extremes.
    axis = ctx.attrs["axis"]
    indicators = cast(equal(_with_kept_dims(ctx.out, ctx), ctx.input), dy.dtype)
    num_selected = reduce_sum(indicators, axis=axis, keepdims=True)
    return (indicators / num_selected * _with_kept_dims(dy, ctx),)


def _prod_grad(ctx, dy):
    # TensorFlow's _ProdGrad: the product of all *other* elements, as the product of an
    # exclusive cumprod from each side, so zeros in the input are handled exactly.
    dims, axis = input_dims(ctx), ctx.attrs["axis"]
    other = tuple(i for i in range(len(dims)) if i not in axis)
    perm = axis + other
    inverse = tuple(np.argsort(perm).tolist())
    folded = reshaped(transpose(ctx.input, perm), (math.prod(dims[a] for a in axis),
                                                   math.prod(dims[a] for a in other)))
    others = (cumprod(folded, axis=0, exclusive=True)
              * cumprod(folded, axis=0, exclusive=True, reverse=True))
    others = reshaped(conj(others), [dims[p] for p in perm])
    return (_sum_grad(ctx, dy) * transpose(others, inverse),)


SUM = register(OpDef(
    name="Sum", reduction="sum", args=("input",),
    infer=_reduce_infer("Sum", is_number, "numeric or complex types"),
    eager=_sum_kernel, saves=(), grad=lambda ctx, dy: (_sum_grad(ctx, dy),)))
MEAN = register(OpDef(
    name="Mean", reduction="mean", args=("input",),
    infer=_reduce_infer("Mean", is_number, "numeric or complex types"),
    eager=_mean_kernel, saves=(), grad=_mean_grad))
MAX = register(OpDef(
    name="Max", reduction="max", args=("input",),
    infer=_reduce_infer("Max", is_numeric, "numeric types"),
    eager=_extreme_kernel(np.maximum.reduce, lowest=True), saves=("input", "out"),
    grad=_extreme_grad, smooth=False))
MIN = register(OpDef(
    name="Min", reduction="min", args=("input",),
    infer=_reduce_infer("Min", is_numeric, "numeric types"),
    eager=_extreme_kernel(np.minimum.reduce, lowest=False), saves=("input", "out"),
    grad=_extreme_grad, smooth=False))
PROD = register(OpDef(
    name="Prod", reduction="prod", args=("input",),
    infer=_reduce_infer("Prod", is_number, "numeric or complex types"),
    eager=_prod_kernel, saves=("input",), grad=_prod_grad,
    domain=(0.5, 1.5)))
ALL = register(OpDef(
    name="All", reduction="all", args=("input",),
    infer=_reduce_infer("All", is_bool, "bool"),
    eager=lambda input, axis, keepdims: np.all(input, axis=axis, keepdims=keepdims),
    differentiable=False))
ANY = register(OpDef(
    name="Any", reduction="any", args=("input",),
    infer=_reduce_infer("Any", is_bool, "bool"),
    eager=lambda input, axis, keepdims: np.any(input, axis=axis, keepdims=keepdims),
    differentiable=False))


# -- argmax / argmin ----------------------------------------------------------------------

def _arg_infer(op_name):
    def infer(input, axis, output_type):
        if not (input.dtype.is_floating or input.dtype.is_integer or input.dtype.is_bool):
            rules.check_dtype_in(op_name, input, is_numeric, "numeric types")
        shape = input._shape
        if not -len(shape) <= axis < len(shape):
            raise InvalidArgumentError(
                f"Expected dimension in the range [{-len(shape)}, {len(shape)}), but got "
                f"{axis} [Op:{op_name}]", op=op_name)
        axis %= len(shape)
        if shape[axis] == 0:
            raise InvalidArgumentError(
                f"Reduction axis {axis} is empty in shape {list(shape)} [Op:{op_name}]",
                op=op_name)
        if output_type not in (dtypes.int32, dtypes.int64):
            raise rules.dtype_error(
                f"Value for attr 'output_type' of {output_type.name} is not in the list of "
                f"allowed values: int32, int64 [Op:{op_name}]", op_name)
        return shape[:axis] + shape[axis + 1:], output_type
    return infer


def _arg_kernel(pick, largest):
    def kernel(input, axis, output_type):
        # TensorFlow (Eigen's argmax) starts from the dtype's lowest finite value at
        # index 0 and moves on only to a strictly larger value: a NaN never wins, and
        # -inf (or the lowest value itself) never beats index 0. Clamping everything
        # that cannot win to that bound gives the same index from NumPy's first-wins
        # argmax. argmin mirrors it with the highest value.
        if input.dtype.kind == "f":
            info = np.finfo(input.dtype)
            bound = info.min if largest else info.max
            wins = input > bound if largest else input < bound
            input = np.where(wins, input, bound)
        return pick(input, axis=axis).astype(output_type._np)
    return kernel


ARG_MAX = register(OpDef(
    name="ArgMax", args=("input",), infer=_arg_infer("ArgMax"),
    eager=_arg_kernel(np.argmax, largest=True), differentiable=False))
ARG_MIN = register(OpDef(
    name="ArgMin", args=("input",), infer=_arg_infer("ArgMin"),
    eager=_arg_kernel(np.argmin, largest=False), differentiable=False))


# -- scans --------------------------------------------------------------------------------

def _scan_infer(op_name):
    def infer(x, axis, exclusive, reverse):
        if not is_number(x.dtype):
            rules.check_dtype_in(op_name, x, is_number, "numeric or complex types")
        rank = len(x._shape)
        if not -rank <= axis < rank:
            raise InvalidArgumentError(
                f"{op_name} expects axis in the range [{-rank}, {rank}), but got {axis} "
                f"[Op:{op_name}]", op=op_name)
        return x._shape, x.dtype
    return infer


def _scan_kernel(fn, identity):
    def kernel(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = fn(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            first = np.full_like(np.take(out, [0], axis=axis), identity)
            rest = np.take(out, np.arange(x.shape[axis] - 1), axis=axis)
            out = np.concatenate([first, rest], axis=axis)
        return np.flip(out, axis) if reverse else out
    return _quiet(kernel)


def _cumsum_grad(ctx, dy):
    a = ctx.attrs
    return (cumsum(dy, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"]),)


def _cumprod_grad(ctx, dy):
    # TensorFlow's _CumprodGrad (with div_no_nan, so an input zero gives a zero, not nan).
    a, x = ctx.attrs, ctx.x
    prod = conj(cumprod(x, a["axis"], exclusive=a["exclusive"], reverse=a["reverse"]))
    out = cumsum(prod * dy, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"])
    is_zero = equal(x, zeros_like(x))
    return (where(is_zero, zeros_like(out), out / conj(where(is_zero, x + 1.0, x))),)


CUMSUM = register(OpDef(
    name="Cumsum", args=("x",), infer=_scan_infer("Cumsum"), eager=_scan_kernel(np.cumsum, 0),
    saves=(), grad=_cumsum_grad))
CUMPROD = register(OpDef(
    name="Cumprod", args=("x",), infer=_scan_infer("Cumprod"),
    eager=_scan_kernel(np.cumprod, 1), saves=("x",), grad=_cumprod_grad,
    domain=(0.5, 1.5)))


# -- public wrappers ------------------------------------------------------------------------

def _reduce(op, input_tensor, axis, keepdims):
    x = rules.as_tensor(input_tensor)
    axes = rules.normalize_axis(op.name, axis, len(x._shape))
    return bind(op, (x,), {"axis": axes, "keepdims": bool(keepdims)})


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over `axis` (int, list, Tensor or None for all axes), as `tf.reduce_sum`.

    >>> import tapeflow as tf
    >>> tf.reduce_sum(tf.constant([[1, 2], [3, 4]]), axis=0)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([4, 6], dtype=int32)>
    """
    return _reduce(SUM, input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over `axis`; an integer mean stays an integer (truncated), as in TensorFlow.

    >>> import tapeflow as tf
    >>> tf.reduce_mean(tf.constant([1, 2, 3, 4]))
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    return _reduce(MEAN, input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum over `axis`; its gradient is split equally among tied maxima."""
    return _reduce(MAX, input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum over `axis`; its gradient is split equally among tied minima."""
    return _reduce(MIN, input_tensor, axis, keepdims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over `axis`; the gradient is exact when the input holds zeros."""
    return _reduce(PROD, input_tensor, axis, keepdims)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over `axis` of a bool tensor."""
    return _reduce(ALL, input_tensor, axis, keepdims)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over `axis` of a bool tensor."""
    return _reduce(ANY, input_tensor, axis, keepdims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over `axis`, computed stably (TensorFlow's formula).

    >>> import tapeflow as tf
    >>> round(float(reduce_logsumexp(tf.constant([1000.0, 1000.0]))), 4)
    1000.6932
    """
    x = rules.as_tensor(input_tensor)
    if not x.dtype.is_floating:  # TensorFlow fails in its IsFinite step
        rules.check_dtype_in("IsFinite", x, rules.is_float, "float types")
    raw_max = reduce_max(x, axis=axis, keepdims=True)
    finite = less(_abs(raw_max), float("inf"))
    shift = stop_gradient(where(finite, raw_max, zeros_like(raw_max)))
    result = log(reduce_sum(exp(x - shift), axis=axis, keepdims=keepdims))
    return result + reshape(shift, result._shape)


def count_nonzero(input, axis=None, keepdims=None, dtype=dtypes.int64, name=None):
    """The number of non-zero (non-False) elements over `axis`, as `dtype` (int64)."""
    x = rules.as_tensor(input)
    nonzero = not_equal(x, zeros_like(x))
    return cast(reduce_sum(cast(nonzero, dtypes.int64), axis=axis, keepdims=bool(keepdims)),
                dtype)


def _arg(op, input, axis, output_type):
    x = rules.as_tensor(input)
    if axis is None:
        axis = 0
    elif isinstance(axis, _Operators):
        axis = np.asarray(axis).item()
    output_type = dtypes.as_dtype(output_type)  # infer checks it, as TensorFlow's kernel
    return bind(op, (x,), {"axis": int(axis), "output_type": output_type})


def argmax(input, axis=None, output_type=dtypes.int64, name=None):
    """Index of the largest value along `axis` (0 when None); the first one on ties.

    NaNs are skipped, as in TensorFlow; a row with nothing above the dtype's lowest
    finite value (all NaN or -inf) gives 0.

    >>> import tapeflow as tf
    >>> tf.argmax(tf.constant([[1, 5], [7, 2]]), axis=1)
    <tf.Tensor: shape=(2,), dtype=int64, numpy=array([1, 0])>
    >>> tf.argmax(tf.constant([1.0, float("nan"), 5.0]))
    <tf.Tensor: shape=(), dtype=int64, numpy=2>
    """
    return _arg(ARG_MAX, input, axis, output_type)


def argmin(input, axis=None, output_type=dtypes.int64, name=None):
    """Index of the smallest value along `axis` (0 when None); the first one on ties.

    NaNs are skipped, as in TensorFlow; a row with nothing below the dtype's highest
    finite value (all NaN or inf) gives 0.
    """
    return _arg(ARG_MIN, input, axis, output_type)


def _scan(op, x, axis, exclusive, reverse):
    x = rules.as_tensor(x)
    if isinstance(axis, _Operators):
        axis = np.asarray(axis).item()
    return bind(op, (x,), {"axis": int(axis), "exclusive": bool(exclusive),
                           "reverse": bool(reverse)})


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis`, as `tf.math.cumsum`.

    >>> import tapeflow as tf
    >>> cumsum(tf.constant([1, 2, 3]), exclusive=True).numpy()
    array([0, 1, 3], dtype=int32)
    """
    return _scan(CUMSUM, x, axis, exclusive, reverse)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis`, as `tf.math.cumprod`."""
    return _scan(CUMPROD, x, axis, exclusive, reverse)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed stably (tf.math.cumulative_logsumexp);
    an exclusive scan starts at -inf.

    >>> import tapeflow as tf
    >>> tf.math.cumulative_logsumexp(tf.constant([0.0, 0.0])).numpy()
    array([0.       , 0.6931472], dtype=float32)
    """
    x = rules.as_tensor(x)
    if not x.dtype.is_floating:
        rules.check_dtype_in("CumulativeLogsumexp", x, rules.is_float, "float types")
    raw_max = reduce_max(x, axis=axis, keepdims=True)
    shift = stop_gradient(where(less(_abs(raw_max), float("inf")), raw_max, zeros_like(raw_max)))
    return log(cumsum(exp(x - shift), axis=axis, exclusive=exclusive, reverse=reverse)) + shift


__all__ = [
    "argmax",
    "argmin",
    "count_nonzero",
    "cumulative_logsumexp",
    "cumprod",
    "cumsum",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
]
