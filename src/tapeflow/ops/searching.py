"""Searching: tf.searchsorted (LowerBound / UpperBound) and tf.unique /
tf.unique_with_counts (Unique / UniqueWithCounts), none differentiable, as in TensorFlow."""

from collections import namedtuple

import numpy as np

from .. import dtypes
from . import rules
from .registry import OpDef, bind, register


def _bound_infer(op_name):
    def infer(sorted_inputs, values, out_type):
        rules.check_dtype_in(op_name, sorted_inputs, rules.is_numeric, "real number types")
        rules.check_same_dtype(op_name, (sorted_inputs, values))
        if out_type not in (dtypes.int32, dtypes.int64):
            raise rules.dtype_error(f"Value for attr 'out_type' of {out_type.name} is not in "
                                    f"the list of allowed values: int32, int64 "
                                    f"[Op:{op_name}]", op_name)
        s, v = sorted_inputs._shape, values._shape
        if not s or len(s) != len(v) or any(
                a is not None and b is not None and a != b for a, b in zip(s[:-1], v[:-1])):
            raise rules.op_error(op_name, "Leading dim_size of both tensors must match.")
        return v, out_type
    return rules.named(op_name, infer)


def _bound_kernel(side):
    def kernel(sorted_inputs, values, out_type):
        rows = int(np.prod(values.shape[:-1]))  # not -1: a row may be empty
        rows_s = sorted_inputs.reshape(rows, sorted_inputs.shape[-1])
        rows_v = values.reshape(rows, values.shape[-1])
        out = np.empty(rows_v.shape, out_type.as_numpy_dtype)
        for r in range(rows_v.shape[0]):
            out[r] = np.searchsorted(rows_s[r], rows_v[r], side=side)
        return out.reshape(values.shape)
    return kernel


LOWER_BOUND = register(OpDef(
    name="LowerBound", args=("sorted_inputs", "values"), infer=_bound_infer("LowerBound"),
    eager=_bound_kernel("left"), differentiable=False))
UPPER_BOUND = register(OpDef(
    name="UpperBound", args=("sorted_inputs", "values"), infer=_bound_infer("UpperBound"),
    eager=_bound_kernel("right"), differentiable=False))


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """Where each of `values` would go in the last axis of `sorted_sequence` to keep it
    sorted (tf.searchsorted): before equal entries ('left') or after them ('right').

    >>> import tapeflow as tf
    >>> tf.searchsorted(tf.constant([1, 3, 5]), tf.constant([3, 4])).numpy()
    array([1, 2], dtype=int32)
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: "
                         f"`side` = '{side}'.")
    sorted_sequence, values = rules.as_tensors(sorted_sequence, values)
    op = LOWER_BOUND if side == "left" else UPPER_BOUND
    return bind(op, (sorted_sequence, values), {"out_type": dtypes.as_dtype(out_type)})


# -- Unique ---------------------------------------------------------------------------------

def _unique_infer(op_name):
    def infer(x, out_idx):
        if len(x._shape) != 1:
            raise rules.op_error(op_name, "unique expects a 1D vector.")
        if out_idx not in (dtypes.int32, dtypes.int64):
            raise rules.dtype_error(f"Value for attr 'out_idx' of {out_idx.name} is not in "
                                    f"the list of allowed values: int32, int64 "
                                    f"[Op:{op_name}]", op_name)
        found = [((None,), x.dtype), (x._shape, out_idx)]
        return found + [((None,), out_idx)] if op_name == "UniqueWithCounts" else found
    return rules.named(op_name, infer)


def unique_first(x):
    """x's distinct values in order of first appearance (every NaN its own), the position
    of each element's value among them, and how often each appears: a stable sort, then
    runs of equal values."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.ones(x.shape, bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    run_of_sorted = np.cumsum(starts) - 1
    firsts = order[starts]  # each run's first position in x (the sort is stable)
    rank_of_run = np.empty(firsts.shape, np.int64)
    rank_of_run[np.argsort(firsts, kind="stable")] = np.arange(firsts.size)
    index = np.empty(x.shape, np.int64)
    index[order] = rank_of_run[run_of_sorted]
    return x[np.sort(firsts)], index, np.bincount(index, minlength=firsts.size)


def _unique_kernel(with_counts):
    def kernel(x, out_idx):
        values, index, counts = unique_first(x)
        found = [values, index.astype(out_idx.as_numpy_dtype)]
        return found + [counts.astype(out_idx.as_numpy_dtype)] if with_counts else found
    return kernel


UNIQUE = register(OpDef(
    name="Unique", args=("x",), infer=_unique_infer("Unique"), eager=_unique_kernel(False),
    n_out=2, differentiable=False))
UNIQUE_WITH_COUNTS = register(OpDef(
    name="UniqueWithCounts", args=("x",), infer=_unique_infer("UniqueWithCounts"),
    eager=_unique_kernel(True), n_out=3, differentiable=False))

# What tf.unique and tf.unique_with_counts return, as TensorFlow names them.
Unique = namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of 1-D `x` in order of first appearance, and for each element
    the index of its value among them (tf.unique).

    >>> import tapeflow as tf
    >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4]))
    >>> y.numpy(), idx.numpy()
    (array([1, 2, 4], dtype=int32), array([0, 0, 1, 2, 2], dtype=int32))
    """
    return Unique(*bind(UNIQUE, (rules.as_tensor(x),), {"out_idx": dtypes.as_dtype(out_idx)}))


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """tf.unique, and how many times each distinct value appears."""
    return UniqueWithCounts(*bind(UNIQUE_WITH_COUNTS, (rules.as_tensor(x),),
                                  {"out_idx": dtypes.as_dtype(out_idx)}))


__all__ = ["searchsorted", "unique", "unique_with_counts"]
