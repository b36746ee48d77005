"""Samplers and error cases for ops/creation.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import creation

from .common import Case, bools, floats, ints, shapes

_DTYPES = [tf.float64, tf.float32, tf.int32, tf.int64, tf.bool]


def _value(draw, shape, kind=None):
    kind = kind or draw(st.sampled_from(["float64", "float32", "int32", "bool"]))
    if kind == "bool":
        return bools(draw, shape)
    if kind.startswith("int"):
        return ints(draw, shape, dtype=np.dtype(kind))
    return floats(draw, shape, dtype=np.dtype(kind))


def _like(draw):
    attrs = {"dtype": draw(st.sampled_from(_DTYPES))} if draw(st.booleans()) else {}
    return Case([_value(draw, shapes(draw))], attrs)


def _fill(draw):
    kind = draw(st.sampled_from(["float64", "float64", "int32", "bool"]))
    shape = shapes(draw, min_side=0)
    return Case([_value(draw, (), kind)], {"shape": tuple(shape)})


def _range(draw):
    kind = draw(st.sampled_from(["int32", "int64", "float64", "float32"]))
    if kind.startswith("int"):
        start = draw(st.integers(-5, 5))
        delta = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
    else:
        start = draw(st.floats(-5, 5))
        delta = draw(st.sampled_from([-1.5, -0.7, 0.25, 0.5, 1.0, 2.5]))
    # limit = start + a non-negative number of steps (0 steps: an empty range)
    limit = start + delta * draw(st.integers(0, 6)) + delta * draw(st.sampled_from([0, 0.5]))
    if kind.startswith("int"):
        limit = int(np.floor(limit) if delta > 0 else np.ceil(limit))
    return Case([np.asarray(v, dtype=np.dtype(kind)) for v in (start, limit, delta)])


def _linspace(draw):
    kind = draw(st.sampled_from(["float64", "float32"]))
    start, stop = (np.asarray(draw(st.floats(-5, 5)), np.dtype(kind)) for _ in range(2))
    return Case([start, stop, np.asarray(draw(st.integers(1, 6)), np.int32)])


def _eye(draw):
    rows = draw(st.integers(0, 4))
    cols = draw(st.integers(0, 4))
    return Case([], {"num_rows": rows, "num_columns": cols,
                     "dtype": draw(st.sampled_from(_DTYPES))})


def _const_fill(draw):
    return Case([], {"shape": tuple(shapes(draw, min_side=0)),
                     "dtype": draw(st.sampled_from(_DTYPES)),
                     "value": draw(st.sampled_from([0, 1]))})


SAMPLES = {
    "ZerosLike": _like,
    "OnesLike": _like,
    "Fill": _fill,
    "Range": _range,
    "LinSpace": _linspace,
    "Eye": _eye,
    "ConstFill": _const_fill,
}

ERRORS = [
    (lambda: creation.fill([2, 3], tf.constant([1.0, 2.0])), InvalidArgumentError,
     r"scalar.*\[Op:Fill\]"),
    (lambda: creation.fill([2, -3], 1.0), InvalidArgumentError, r"-3.*\[Op:Fill\]"),
    (lambda: creation.fill("ab", 1.0), TypeError, r"shape"),
    (lambda: creation.zeros([2, -1]), InvalidArgumentError, r"-1"),
    (lambda: creation.ones([None, 2]), TypeError, r"shape"),
    (lambda: creation.range(1, 5, 0), InvalidArgumentError, r"delta != 0.*\[Op:Range\]"),
    (lambda: creation.range(5, 1, 1), InvalidArgumentError,
     r"start <= limit.*\[Op:Range\]"),
    (lambda: creation.range(1, 5, -1), InvalidArgumentError,
     r"start >= limit when delta < 0.*\[Op:Range\]"),
    (lambda: creation.range(0.0, float("inf")), InvalidArgumentError, r"\[Op:Range\]"),
    (lambda: creation.range(float("nan"), 1.0), InvalidArgumentError, r"\[Op:Range\]"),
    # TF 2.21 converts Python bounds to `dtype`: TypeError "Cannot convert 0.5 to
    # EagerTensor of dtype int32" (no truncation)
    (lambda: creation.range(0.5, 3.7, dtype=tf.int32), TypeError,
     r"Cannot convert 0\.5 to EagerTensor of dtype int32"),
    (lambda: creation.range(0, 3.5, dtype=tf.int64), TypeError, r"int64"),
    # shapes holding Python floats: TypeError "Cannot convert [2.0, 2] to EagerTensor of
    # dtype int32"; a float tensor shape, or Fill's float list: InvalidArgumentError
    # ("Value for attr 'index_type' of float is not in the list of allowed values")
    (lambda: creation.zeros([2.0, 2]), TypeError,
     r"Cannot convert \[2\.0, 2\] to EagerTensor of dtype int32.*Zeros"),
    (lambda: creation.ones((2, 2.0)), TypeError, r"Cannot convert.*Ones"),
    (lambda: creation.zeros(2.0), TypeError, r"Cannot convert 2\.0"),
    (lambda: creation.zeros(tf.constant([2.0, 2.0])), InvalidArgumentError,
     r"float32.*\[Op:Zeros\]"),
    (lambda: creation.fill([2.0], 1), InvalidArgumentError, r"index_type.*\[Op:Fill\]"),
    # TF 2.21: TypeError "Arguments `num_rows` and `num_columns` must be positive integer
    # values. Received: num_rows=2.5, num_columns=2.5"
    (lambda: creation.eye(2.5), TypeError,
     (r"`num_rows` and `num_columns` must be positive integer values. Received: "
      r"num_rows=2\.5, num_columns=2\.5")),
    (lambda: creation.eye(2, 2.5), TypeError, r"num_columns=2\.5"),
    (lambda: creation.eye(np.float64(2)), TypeError, r"num_rows"),
    (lambda: creation.eye(2, batch_shape=[2.0]), TypeError, r"Cannot convert \[2\.0\]"),
    # NumPy floats in a shape list too, as TF 2.21: TypeError "Cannot convert
    # [np.float64(2.5), 2] to EagerTensor of dtype int32" (Fill: InvalidArgumentError,
    # "Value for attr 'index_type' of double is not in the list of allowed values")
    (lambda: creation.zeros([np.float64(2.5), 2]), TypeError, r"Cannot convert.*Zeros"),
    (lambda: creation.ones([np.float32(2.0), 2]), TypeError, r"Cannot convert.*Ones"),
    (lambda: creation.eye(2, batch_shape=[np.float64(2.0)]), TypeError, r"Cannot convert"),
    (lambda: creation.fill([np.float64(2.5), 2], 1.0), InvalidArgumentError,
     r"index_type.*\[Op:Fill\]"),
    # tf.linspace (TensorFlow 2.21's classes and messages; it is built from these ops)
    (lambda: creation.linspace(0.0, 1.0, 3.0), TypeError, r"num.*must be of type integer"),
    (lambda: creation.linspace(0.0, 1.0, tf.constant(3.0)), TypeError,
     r"num.*must be of type integer"),
    (lambda: creation.linspace(0.0, 1.0, -1), InvalidArgumentError,
     r"Requires start <= limit when delta > 0: 1/-1 \[Op:Range\]"),
    (lambda: creation.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=2), InvalidArgumentError,
     r"Tried to expand dim index 2 for tensor with 1 dimensions\. \[Op:ExpandDims\]"),
    (lambda: creation.linspace(0.0, 1.0, 3, axis=1), InvalidArgumentError,
     r"Tried to expand dim index 1 for tensor with 0 dimensions\. \[Op:ExpandDims\]"),
    # an axis that is not an integer, as TF 2.21 (whose expand_dims reports it): TypeError
    # "Cannot convert 0.5 to EagerTensor of dtype int32"; for a float or bool tensor
    # InvalidArgumentError "Value for attr 'Tdim' of float is not in the list of allowed
    # values: int32, int64 [Op:ExpandDims]"
    (lambda: creation.linspace([0.0], [1.0], 3, axis=0.5), TypeError, r"Cannot convert 0\.5"),
    (lambda: creation.linspace([0.0], [1.0], 3, axis=0.0), TypeError, r"Cannot convert 0\.0"),
    (lambda: creation.linspace([0.0], [1.0], 3, axis=tf.constant(1.0)), InvalidArgumentError,
     r"float32.*\[Op:ExpandDims\]"),
    (lambda: creation.linspace([0.0], [1.0], 3, axis=tf.constant(True)), InvalidArgumentError,
     r"bool.*\[Op:ExpandDims\]"),
    (lambda: creation.linspace(tf.constant(0.0), tf.constant(1.0, tf.float64), 3), ValueError,
     r"requested dtype float32 for Tensor with dtype float64"),
    (lambda: creation.linspace(0, 1.5, 3), TypeError, r"1\.5"),
    (lambda: creation.linspace(True, False, 3), InvalidArgumentError, r"bool.*\[Op:Sub\]"),
    (lambda: creation.linspace([0.0, 1.0], [1.0, 3.0, 4.0], 3), InvalidArgumentError,
     r"Incompatible shapes"),
    (lambda: creation.zeros([2], dtype="no_such_dtype"), TypeError, r"no_such_dtype"),
]
