"""Segment reductions beyond the sum: UnsortedSegmentMax / Min / Prod (a static number of
segments, negative ids dropped) and SegmentSum / Mean / Max / Min / Prod (ids sorted,
as many segments as the last id + 1, known only when the values are), with TensorFlow's
empty-segment values, errors and gradients (ties share a max's gradient; a product's
gradient is exact around zeros)."""

import numpy as np

from ..errors import InvalidArgumentError
from . import rules
from .creation import ones_like, zeros_like
from .elementwise import cast, equal, greater, greater_equal, maximum, where
from .indexing import gather, unsorted_segment_sum
from .registry import OpDef, bind, register
from .shape import reshape

_KINDS = ("sum", "mean", "max", "min", "prod")


def _empty_value(kind, dtype, sorted_ids):
    """What a segment with no rows holds: TensorFlow's sorted max/min give 0, the
    unsorted ones the dtype's lowest/highest value."""
    if kind == "prod":
        return 1
    if kind in ("max", "min") and not sorted_ids:
        info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return 0


def _infer(op_name, sorted_ids):
    def infer(data, segment_ids, num_segments=None):
        rules.check_dtype_in(op_name, data, rules.is_numeric, "real number types")
        rules.check_int_dtype(op_name, segment_ids, "segment_ids")
        k = len(segment_ids._shape)
        if sorted_ids:
            if k != 1:
                raise rules.op_error(op_name, f"segment_ids should be a vector, got shape "
                                              f"{rules.kernel_dims(segment_ids._shape)}")
            n, m = data._shape[:1], segment_ids._shape
            if data._shape and None not in n + m and n != m:
                raise rules.op_error(op_name, "segment_ids should be the same size as "
                                              "dimension 0 of input.")
            return (None,) + data._shape[1:], data.dtype
        if data._shape[:k] != segment_ids._shape:
            raise rules.op_error(op_name, f"data.shape = {list(data._shape)} does not start "
                                          f"with segment_ids.shape = "
                                          f"{list(segment_ids._shape)}")
        if num_segments < 0:
            raise rules.op_error(op_name, f"num_segments must be >= 0, got {num_segments}")
        return (num_segments,) + data._shape[k:], data.dtype
    return rules.named(op_name, infer)


def check_sorted_ids(op_name, ids, rows):
    """TensorFlow's checks of sorted segment ids; the number of segments."""
    if ids.shape[0] != rows:
        raise InvalidArgumentError(f"segment_ids should be the same size as dimension 0 of "
                                   f"input. [Op:{op_name}]", op=op_name)
    if ids.size == 0:
        return 0
    if ids[0] < 0:
        raise InvalidArgumentError(f"Segment id {int(ids[0])} out of range [0, 1), possibly "
                                   f"because 'segment_ids' input is not sorted. "
                                   f"[Op:{op_name}]", op=op_name)
    if np.any(ids[1:] < ids[:-1]):
        raise InvalidArgumentError(f"segment ids are not increasing [Op:{op_name}]",
                                   op=op_name)
    return int(ids[-1]) + 1


def _kernel(op_name, kind, sorted_ids):
    ufunc = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
             "prod": np.multiply}[kind]

    def kernel(data, segment_ids, num_segments=None):
        k = segment_ids.ndim
        if sorted_ids:
            num_segments = check_sorted_ids(op_name, segment_ids, data.shape[0])
        elif segment_ids.size and segment_ids.max() >= num_segments:
            bad = int(np.argmax(segment_ids.reshape(-1) >= num_segments))
            raise InvalidArgumentError(
                f"segment_ids[{bad}] = {int(segment_ids.reshape(-1)[bad])} is out of range "
                f"[0, {num_segments}) [Op:{op_name}]", op=op_name)
        shape = (num_segments,) + data.shape[k:]
        start = {"max": "min", "min": "max"}.get(kind)
        out = np.full(shape, _empty_value(kind, data.dtype, False) if start else
                      _empty_value(kind, data.dtype, sorted_ids), data.dtype)
        keep = segment_ids >= 0
        ufunc.at(out, segment_ids[keep], data[keep])
        if kind == "mean":
            counts = np.bincount(segment_ids[keep].reshape(-1), minlength=num_segments)
            out = (out / np.maximum(counts, 1).reshape((-1,) + (1,) * (out.ndim - 1))
                   ).astype(data.dtype)
        if start and sorted_ids:  # an empty sorted segment is 0, not the fill value
            counts = np.bincount(segment_ids.reshape(-1), minlength=num_segments)
            out[counts == 0] = 0
        return out
    return kernel


def _rows_mask(ids, like):
    """ids >= 0, shaped to broadcast against rows of `like` (data or its gradient)."""
    kept = cast(greater_equal(ids, 0), like.dtype)
    return reshape(kept, tuple(-1 if d is None else d for d in ids._shape)
                   + (1,) * (len(like._shape) - len(ids._shape)))


def _gather_rows(values, ids):
    """values[id] for each row's id (0 where the id is negative: those rows got none)."""
    return gather(values, maximum(ids, 0)) * _rows_mask(ids, values)


def _sum_like(sorted_ids, data, ids, num):
    return segment_sum(data, ids) if sorted_ids else unsorted_segment_sum(data, ids, num)


def _extreme_grad(sorted_ids):
    def grad(ctx, dy):
        x, ids, out = ctx.data, ctx.segment_ids, ctx.out
        num = ctx.attrs.get("num_segments")
        selected = cast(equal(x, _gather_rows(out, ids)), dy.dtype) * _rows_mask(ids, dy)
        count = _sum_like(sorted_ids, selected, ids, num)
        return _gather_rows(dy / maximum(count, ones_like(count)), ids) * selected, None
    return grad


def _prod_grad(sorted_ids):
    def grad(ctx, dy):
        x, ids, out = ctx.data, ctx.segment_ids, ctx.out
        num = ctx.attrs.get("num_segments")
        is_zero = equal(x, zeros_like(x))
        zeros = _sum_like(sorted_ids, cast(is_zero, dy.dtype), ids, num)
        dy = where(greater(zeros, ones_like(zeros)), zeros_like(dy), dy)
        non_zero = where(is_zero, ones_like(x), x)
        op = SEGMENT_OPS[("prod", sorted_ids)]
        non_zero_prod = bind(op, (non_zero, ids), ctx.attrs)
        safe_x = where(is_zero, ones_like(x), x)
        partial = where(is_zero, _gather_rows(non_zero_prod, ids), _gather_rows(out, ids) / safe_x)
        return _gather_rows(dy, ids) * partial, None
    return grad


def _sum_grad(ctx, dy):
    return _gather_rows(dy, ctx.segment_ids), None


def _mean_grad(ctx, dy):
    ids = ctx.segment_ids
    counts = segment_sum(cast(greater_equal(ids, 0), dy.dtype), ids)
    counts = reshape(maximum(counts, ones_like(counts)),
                     (-1,) + (1,) * (len(dy._shape) - 1))
    return _gather_rows(dy / counts, ids), None


_GRADS = {"sum": lambda s: _sum_grad, "mean": lambda s: _mean_grad, "max": _extreme_grad,
          "min": _extreme_grad, "prod": _prod_grad}

SEGMENT_OPS = {}
for _sorted in (True, False):
    for _kind in _KINDS:
        if not _sorted and _kind in ("sum", "mean"):
            continue  # UnsortedSegmentSum is indexing.py's; the mean composes it
        _name = ("Segment" if _sorted else "UnsortedSegment") + _kind.capitalize()
        SEGMENT_OPS[(_kind, _sorted)] = register(OpDef(
            name=_name, args=("data", "segment_ids"), infer=_infer(_name, _sorted),
            eager=_kernel(_name, _kind, _sorted), saves=("data", "segment_ids", "out"),
            grad=_GRADS[_kind](_sorted), smooth=_kind in ("sum", "mean")))


def _unsorted(kind, data, segment_ids, num_segments):
    op = SEGMENT_OPS[(kind, False)]
    return bind(op, (rules.as_tensor(data), rules.as_tensor(segment_ids)),
                {"num_segments": rules.int_scalar(num_segments, op.name, "num_segments")})


def _sorted_op(kind, data, segment_ids):
    return bind(SEGMENT_OPS[(kind, True)], (rules.as_tensor(data), rules.as_tensor(segment_ids)))


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The largest row of `data` in each segment (the dtype's lowest value if empty)."""
    return _unsorted("max", data, segment_ids, num_segments)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The smallest row of `data` in each segment (the dtype's highest value if empty)."""
    return _unsorted("min", data, segment_ids, num_segments)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the rows of `data` in each segment (1 if empty)."""
    return _unsorted("prod", data, segment_ids, num_segments)


def segment_sum(data, segment_ids, name=None):
    """Sums of the rows of `data` by sorted segment ids (tf.math.segment_sum): segments
    0 .. last id, empty ones 0.

    >>> import tapeflow as tf
    >>> tf.math.segment_sum(tf.constant([1, 2, 3, 4]), [0, 0, 2, 2]).numpy()
    array([3, 0, 7], dtype=int32)
    """
    return _sorted_op("sum", data, segment_ids)


def segment_mean(data, segment_ids, name=None):
    return _sorted_op("mean", data, segment_ids)


def segment_max(data, segment_ids, name=None):
    return _sorted_op("max", data, segment_ids)


def segment_min(data, segment_ids, name=None):
    return _sorted_op("min", data, segment_ids)


def segment_prod(data, segment_ids, name=None):
    return _sorted_op("prod", data, segment_ids)


__all__ = ["unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
           "segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod"]
