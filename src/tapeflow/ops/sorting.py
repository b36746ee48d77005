"""Sorting: tf.math.top_k (TopKV2, the one op), and tf.sort / tf.argsort built on it as
TensorFlow builds them. Order as TensorFlow's kernel: largest first, equal values by
lower index (so argsort is stable), NaN after every number."""

from collections import namedtuple

import numpy as np

from .. import dtypes
from . import rules
from .axis_moves import along_axis
from .elementwise import INVERT, negative
from .indexing import one_hot
from .reduce import reduce_sum
from .registry import OpDef, bind, register
from .shape import expand_dims


def _top_k_infer(input, k, sorted, index_type):
    op_name = "TopKV2"
    rules.check_dtype_in(op_name, input, rules.is_numeric, "real number types")
    if not input._shape:
        raise rules.op_error(op_name, "input must be >= 1-D, got shape []")
    if k < 0:
        raise rules.op_error(op_name, f"Need k >= 0, got {k}")
    columns = input._shape[-1]
    if columns is None:  # the gradient's one-hot rows need it
        raise rules.op_error(op_name, "the last dimension of top_k's input must be known "
                                      "when the function is traced")
    if columns < k:
        raise rules.op_error(op_name, f"input must have at least k columns. Had {columns}, "
                                      f"needed {k}")
    shape = input._shape[:-1] + (k,)
    return [(shape, input.dtype), (shape, index_type)]


def descending_key(x):
    """An array whose ascending stable order is x's descending order, NaN last: -x for
    floats, ~x (= -x - 1, which cannot overflow) for integers."""
    return -x if x.dtype.kind == "f" else ~x


def _order_reversed(x):
    """descending_key on tensors: ascending sorts are top_k of this, mapped back by it."""
    return negative(x) if x.dtype.is_floating else bind(INVERT, (x,))


def _top_k_kernel(input, k, sorted, index_type):
    order = np.argsort(descending_key(input), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(input, order, axis=-1), order.astype(index_type.as_numpy_dtype)


def _top_k_grad(ctx, dy_values, dy_indices):
    # Each value's gradient goes back to the column it came from.
    columns = one_hot(ctx.out1, ctx.shapes[0][-1], dtype=dy_values.dtype)
    return (reduce_sum(columns * expand_dims(dy_values, -1), axis=-2),)


TOP_K = register(OpDef(
    name="TopKV2", args=("input",), infer=_top_k_infer, eager=_top_k_kernel, n_out=2,
    saves=("out1",), grad=_top_k_grad, none_dys=True))


# What tf.math.top_k returns, as TensorFlow names it.
TopKV2 = namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):
    """The k largest entries of the last axis and their indices (tf.math.top_k); equal
    values in index order.

    >>> import tapeflow as tf
    >>> values, indices = tf.math.top_k(tf.constant([3., 1., 3., 2.]), k=2)
    >>> values.numpy(), indices.numpy()
    (array([3., 3.], dtype=float32), array([0, 2], dtype=int32))
    """
    x = rules.as_tensor(input)
    return TopKV2(*bind(TOP_K, (x,), {"k": rules.int_scalar(k, "TopKV2", "k"),
                                      "sorted": bool(sorted),
                                      "index_type": dtypes.as_dtype(index_type)}))


def _along_last(values, axis, fn):
    """fn applied with `axis` moved last, and the result's axis moved back."""
    x = rules.as_tensor(values)
    rank = len(x._shape)
    axis = rules.int_scalar(axis, "TopKV2")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for a tensor of rank {rank}")
    return along_axis(x, axis % rank, fn)


def _sorted(values, axis, direction, want_indices):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"Argument `direction` should be one of ASCENDING, DESCENDING. "
                         f"Received: direction={direction}")

    def along_last(x):
        n = x._shape[-1]
        if direction == "DESCENDING":
            values_, indices = top_k(x, n)
            return indices if want_indices else values_
        values_, indices = top_k(_order_reversed(x), n)
        return indices if want_indices else _order_reversed(values_)

    return _along_last(values, axis, along_last)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """values sorted along `axis` (tf.sort); NaN last either way.

    >>> import tapeflow as tf
    >>> tf.sort(tf.constant([3, 1, 2])).numpy()
    array([1, 2, 3], dtype=int32)
    """
    return _sorted(values, axis, direction, want_indices=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort `values` along `axis` (tf.argsort); always stable.

    >>> import tapeflow as tf
    >>> tf.argsort(tf.constant([3., 1., 3., 2.])).numpy()
    array([1, 3, 0, 2], dtype=int32)
    """
    return _sorted(values, axis, direction, want_indices=True)


__all__ = ["top_k", "sort", "argsort"]
