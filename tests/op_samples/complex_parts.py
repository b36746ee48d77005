"""Samplers and error cases for ops/complex_parts.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from .common import Case, broadcast_shapes, complexes, floats, shapes
from .common import constant as _c


def _parts(draw):
    sr, si = broadcast_shapes(draw)
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    return Case([floats(draw, sr, dtype=dtype), floats(draw, si, dtype=dtype)])


def _complex_input(draw):
    return Case([complexes(draw, shapes(draw))])


def _away_from_zero(draw):
    """Complex numbers of modulus >= 0.5: ComplexAbs and Angle have no derivative at 0,
    and Angle jumps on the negative reals, where the imaginary part is kept off 0."""
    shape = shapes(draw)
    z = complexes(draw, shape, imag=(0.3, 1.5))
    sign = np.where(floats(draw, shape) > 0, 1.0, -1.0)
    return Case([z.real + 1j * z.imag * sign])


SAMPLES = {
    "Complex": _parts,
    "Real": _complex_input,
    "Imag": _complex_input,
    "Angle": _away_from_zero,
    "ComplexAbs": _away_from_zero,
}

ERRORS = [
    (lambda: tf.complex(_c([1.0]), _c([1.0], tf.float64)), TypeError,
     r"The `real` and `imag` components have incorrect types: float32 float64"),
    (lambda: tf.complex(_c([1]), _c([2])), TypeError, r"incorrect types: int32 int32"),
    (lambda: tf.complex(_c([1.0, 2.0]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Complex\]"),
    (lambda: tf.math.real(_c([True])), TypeError, r"bool"),
    (lambda: tf.math.conj(_c([True])), TypeError, r"Expected numeric or variant tensor"),
    (lambda: tf.constant(1j, tf.float32), TypeError, r"Cannot convert 1j to EagerTensor "
                                                     r"of dtype float"),
    (lambda: _c([1 + 1j]) // _c([1j]), InvalidArgumentError, r"complex128.*\[Op:FloorDiv\]"),
    (lambda: tf.maximum(_c([1j]), _c([1j])), InvalidArgumentError, r"\[Op:Maximum\]"),
    (lambda: _c([1j]) * _c([1.0], tf.float64), InvalidArgumentError,
     r"expected to be a complex128 tensor but is a float64 tensor \[Op:Mul\]"),
]
