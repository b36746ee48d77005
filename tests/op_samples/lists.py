"""Samplers and error cases for ops/lists.py."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import lists

from .common import Case, floats, ints, shapes
from .common import constant as _c


def _value(draw, shape, kind):
    return ints(draw, shape) if kind == "int32" else floats(draw, shape)


def _push_back(draw):
    element = shapes(draw, max_dims=2, max_side=3)
    kind = draw(st.sampled_from(["float64", "float64", "int32"]))
    rows = draw(st.integers(0, 3))
    return Case([_value(draw, (rows,) + element, kind), _value(draw, element, kind)])


def _pop_back(draw):
    element = shapes(draw, max_dims=2, max_side=3)
    kind = draw(st.sampled_from(["float64", "float64", "int32"]))
    return Case([_value(draw, (draw(st.integers(1, 4)),) + element, kind)])


SAMPLES = {
    "TensorListPushBack": _push_back,
    "TensorListPopBack": _pop_back,
}



ERRORS = [
    (lambda: lists.list_push_back(_c([[1.0, 2.0]]), _c([1, 2])), InvalidArgumentError,
     r"\[Op:TensorListPushBack\]"),
    (lambda: lists.list_push_back(_c([[1.0, 2.0]]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"cannot append an element of shape \[3\] to a list of elements of shape \[2\]"),
    (lambda: lists.list_push_back(_c(1.0), _c(2.0)), InvalidArgumentError,
     r"rank >= 1.*\[Op:TensorListPushBack\]"),
    (lambda: lists.list_pop_back(_c(1.0)), InvalidArgumentError,
     r"rank >= 1.*\[Op:TensorListPopBack\]"),
    (lambda: lists.list_pop_back(_c(np.zeros((0, 2), np.float32))), InvalidArgumentError,
     r"empty list \[Op:TensorListPopBack\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
