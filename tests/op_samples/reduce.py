"""Samplers and error cases for ops/reduce.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import reduce as rd

from .common import Case, bools, floats, ints, shapes, sometimes_complex
from .common import constant as _c


def _axes(draw, rank):
    """A normalized reduction axis tuple (as the wrappers pass it): all, none or some."""
    kind = draw(st.sampled_from(["all", "some", "some", "none"]))
    if kind == "all":
        return tuple(range(rank))
    if kind == "none":
        return ()
    return tuple(sorted(draw(st.sets(st.integers(0, max(rank - 1, 0)), max_size=rank))))


def _reduction(domain=(-2.0, 2.0), ints_too=True, empty_ok=True):
    def sample(draw):
        shape = shapes(draw, min_side=0 if empty_ok and draw(st.integers(0, 5)) == 0 else 1)
        attrs = {"axis": _axes(draw, len(shape)), "keepdims": draw(st.booleans())}
        if ints_too and draw(st.integers(0, 3)) == 0:
            dtype = draw(st.sampled_from([np.int32, np.int64]))
            return Case([ints(draw, shape, dtype=dtype)], attrs)
        # Random floats: no two equal, so max/min have no ties in reach of a step.
        return Case([floats(draw, shape, domain)], attrs)
    return sample


def _tied_extreme(draw):
    """Exact ties (integers as floats): the gradient splits among them; not a smooth
    point, so only the infer/eager tests use the occasional tied case."""
    shape = shapes(draw, min_dims=1)
    attrs = {"axis": _axes(draw, len(shape)), "keepdims": draw(st.booleans())}
    if draw(st.integers(0, 4)) == 0:
        return Case([ints(draw, shape, -2, 2).astype(np.float64)], attrs, wrt=())
    return Case([floats(draw, shape)], attrs)


def _logical(draw):
    shape = shapes(draw, min_side=0 if draw(st.integers(0, 5)) == 0 else 1)
    return Case([bools(draw, shape)],
                {"axis": _axes(draw, len(shape)), "keepdims": draw(st.booleans())})


def _arg(draw):
    shape = shapes(draw, min_dims=1)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    attrs = {"axis": axis, "output_type": draw(st.sampled_from([tf.int64, tf.int32]))}
    kind = draw(st.sampled_from(["float", "int", "bool"]))
    if kind == "int":  # small ints: ties, where the first index wins
        return Case([ints(draw, shape, -2, 2)], attrs)
    if kind == "bool":
        return Case([bools(draw, shape)], attrs)
    return Case([floats(draw, shape)], attrs)


def _scan(domain):
    def sample(draw):
        shape = shapes(draw, min_dims=1)
        attrs = {"axis": draw(st.integers(-len(shape), len(shape) - 1)),
                 "exclusive": draw(st.booleans()), "reverse": draw(st.booleans())}
        if draw(st.integers(0, 3)) == 0:
            return Case([ints(draw, shape, -3, 3)], attrs)
        return Case([floats(draw, shape, domain)], attrs)
    return sample


SAMPLES = {
    "Sum": sometimes_complex(_reduction()),
    "Mean": sometimes_complex(_reduction()),
    "Max": _tied_extreme,
    "Min": _tied_extreme,
    "Prod": sometimes_complex(_reduction((0.5, 1.5))),
    "All": _logical,
    "Any": _logical,
    "ArgMax": _arg,
    "ArgMin": _arg,
    "Cumsum": sometimes_complex(_scan((-2.0, 2.0))),
    "Cumprod": sometimes_complex(_scan((0.5, 1.5))),
}



_M = [[1.0, 2.0], [3.0, 4.0]]

ERRORS = [
    # axes out of range
    (lambda: rd.reduce_sum(_c(_M), axis=2), InvalidArgumentError,
     r"Invalid reduction dimension 2 for input with 2 dimensions.*\[Op:Sum\]"),
    (lambda: rd.reduce_mean(_c(_M), axis=[0, -3]), InvalidArgumentError, r"\[Op:Mean\]"),
    (lambda: rd.reduce_max(_c(1.0), axis=0), InvalidArgumentError, r"\[Op:Max\]"),
    (lambda: rd.reduce_prod(_c(_M), axis=tf.constant([5])), InvalidArgumentError,
     r"\[Op:Prod\]"),
    (lambda: rd.argmax(_c(_M), axis=2), InvalidArgumentError,
     r"Expected dimension in the range \[-2, 2\), but got 2 \[Op:ArgMax\]"),
    (lambda: rd.argmin(_c(3.0)), InvalidArgumentError, r"\[Op:ArgMin\]"),
    (lambda: rd.argmax(tf.zeros([2, 0]), axis=1), InvalidArgumentError,
     r"Reduction axis 1 is empty in shape \[2, 0\] \[Op:ArgMax\]"),
    (lambda: rd.cumsum(_c([1.0, 2.0]), axis=1), InvalidArgumentError, r"\[Op:Cumsum\]"),
    # an axis named twice (TensorFlow 2.21's message)
    (lambda: rd.reduce_sum(_c(_M), axis=[1, -1]), InvalidArgumentError,
     r"Invalid reduction arguments: Axes contains duplicate dimension: 1 \[Op:Sum\]"),
    (lambda: rd.reduce_sum(_c(_M), axis=[[0], [0]]), InvalidArgumentError,
     r"duplicate dimension: 0 \[Op:Sum\]"),
    (lambda: rd.reduce_sum(_c(_M), axis=np.array([1, 1])), InvalidArgumentError,
     r"duplicate dimension: 1 \[Op:Sum\]"),
    # a scalar has no axis 0: TF 2.21 "Invalid reduction dimension (0 for input with 0
    # dimension(s)", for [0, 0] too (the range comes before the repeat)
    (lambda: rd.reduce_sum(_c(1.0), axis=[0, 0]), InvalidArgumentError,
     r"Invalid reduction dimension.*for input with 0 dimensions.*\[Op:Sum\]"),
    # axes that are not integers, as TF 2.21: a Python float is a TypeError ("Cannot
    # convert 1.0 to EagerTensor of dtype int32"); float lists, float tensors and
    # strings reach the op ("Value for attr 'Tidx' of float is not in the list of allowed
    # values: int32, int64"); a nested list of ints works
    (lambda: rd.reduce_sum(_c(_M), axis=1.0), TypeError,
     r"Cannot convert 1\.0 to EagerTensor of dtype int32.*axis of Sum"),
    # A NumPy float scalar is a float as well. (TF 2.21 converts one to int32 by
    # truncation and reduces over axis 1 for np.float32(1.5); tapeflow, as for the other
    # integer arguments, does not round a float.)
    (lambda: rd.reduce_sum(_c(_M), axis=np.float32(1.0)), TypeError,
     r"Cannot convert np\.float32\(1\.0\).*axis of Sum"),
    (lambda: rd.reduce_mean(_c(_M), axis=np.float64(1.5)), TypeError, r"axis of Mean"),
    (lambda: rd.reduce_mean(_c(_M), axis=[0.0]), InvalidArgumentError, r"\[Op:Mean\]"),
    (lambda: rd.reduce_max(_c(_M), axis="0"), InvalidArgumentError, r"'0' \[Op:Max\]"),
    (lambda: rd.reduce_min(_c(_M), axis=tf.constant(1.0)), InvalidArgumentError,
     r"float32.*\[Op:Min\]"),
    # dtypes
    (lambda: rd.reduce_sum(_c([True, False])), InvalidArgumentError, r"bool.*\[Op:Sum\]"),
    (lambda: rd.reduce_min(_c([True, False])), InvalidArgumentError, r"bool.*\[Op:Min\]"),
    (lambda: rd.reduce_all(_c([1, 0])), InvalidArgumentError, r"int32.*\[Op:All\]"),
    (lambda: rd.reduce_any(_c([1.0])), InvalidArgumentError, r"float32.*\[Op:Any\]"),
    (lambda: rd.reduce_logsumexp(_c([1, 2])), InvalidArgumentError, r"int32"),
    (lambda: rd.cumprod(_c([True])), InvalidArgumentError, r"bool.*\[Op:Cumprod\]"),
    # TF 2.21: "Value for attr 'output_type' of float is not in the list of allowed
    # values: int16, uint16, int32, int64 [Op:ArgMax]" (tapeflow has no int16 or uint16)
    (lambda: rd.argmax(_c([1.0]), output_type=tf.float32), InvalidArgumentError,
     r"'output_type' of float32 is not in the list of allowed values: int32, int64 "
     r"\[Op:ArgMax\]"),
    (lambda: rd.argmin(_c([1.0]), output_type=tf.uint8), InvalidArgumentError,
     r"allowed values: int32, int64 \[Op:ArgMin\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
