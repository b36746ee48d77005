"""Samplers and error cases for ops/dynamic.py: the static ops' samplers, with the target
shape given as an int32 tensor instead of an attribute."""

import numpy as np

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import dynamic

from .common import Case
from .common import constant as _c
from .indexing import _strided_slice_grad
from .shape import _broadcast_to, _reshape


def _shape_input(case):
    shape = np.array(case.attrs.pop("shape"), dtype=np.int32).reshape(-1)
    differentiable = np.asarray(case.inputs[0]).dtype.kind == "f"
    return Case(case.inputs + [shape], case.attrs, wrt=(0,) if differentiable else ())


def _dynamic_reshape(draw):
    case = _shape_input(_reshape(draw))
    case.attrs["hint"] = None
    return case


def _dynamic_broadcast_to(draw):
    case = _shape_input(_broadcast_to(draw))
    case.attrs["hint"] = None
    return case


def _dynamic_strided_slice_grad(draw):
    case = _shape_input(_strided_slice_grad(draw))
    case.attrs["hint"] = None
    return case


SAMPLES = {
    "DynamicReshape": _dynamic_reshape,
    "DynamicBroadcastTo": _dynamic_broadcast_to,
    "DynamicStridedSliceGrad": _dynamic_strided_slice_grad,
}



ERRORS = [
    (lambda: dynamic.dynamic_reshape(_c([1.0, 2.0, 3.0]), _c([2, 2])), InvalidArgumentError,
     r"Input to reshape is a tensor with 3 values.*\[Op:DynamicReshape\]"),
    (lambda: dynamic.dynamic_reshape(_c([1.0, 2.0]), _c([[2]])), InvalidArgumentError,
     r"1-D int32 or int64.*\[Op:DynamicReshape\]"),
    (lambda: dynamic.dynamic_broadcast_to(_c([1.0, 2.0]), _c([3, 3])), InvalidArgumentError,
     r"Unable to broadcast tensor of shape \[2\].*\[Op:DynamicBroadcastTo\]"),
    (lambda: dynamic.dynamic_broadcast_to(_c([1.0, 2.0]), _c([2.0])), InvalidArgumentError,
     r"1-D int32 or int64.*\[Op:DynamicBroadcastTo\]"),
]

__all__ = ["ERRORS", "SAMPLES"]
