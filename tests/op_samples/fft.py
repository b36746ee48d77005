"""Samplers and error cases for ops/fft.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from .common import Case, complexes, floats, shapes
from .common import constant as _c


def _signal_shape(draw, rank):
    """Some outer dimensions, then `rank` inner ones of 1 to 5 points."""
    outer = shapes(draw, max_dims=2, max_side=3)
    return tuple(outer) + tuple(draw(st.integers(1, 5)) for _ in range(rank))


def _complex(rank):
    def sample(draw):
        return Case([complexes(draw, _signal_shape(draw, rank))])
    return sample


def _lengths(draw, inner):
    """fft_length: the signal's own sizes, or others (the op cuts or pads with zeros)."""
    if draw(st.booleans()):
        return tuple(inner)
    return tuple(draw(st.integers(1, 6)) for _ in inner)


def _real(rank, differentiable=True):
    def sample(draw):
        shape = _signal_shape(draw, rank)
        lengths = _lengths(draw, shape[-rank:])
        dtype = draw(st.sampled_from([np.float64, np.float32]))
        return Case([floats(draw, shape, dtype=dtype)], {"fft_length": lengths},
                    wrt=None if differentiable else ())
    return sample


def _inverse_real(rank, differentiable=True):
    def sample(draw):
        shape = _signal_shape(draw, rank)
        inner = shape[-rank:-1] + (2 * (shape[-1] - 1) or 1,)
        lengths = _lengths(draw, inner)
        return Case([complexes(draw, shape)], {"fft_length": lengths},
                    wrt=None if differentiable else ())
    return sample


SAMPLES = {
    "FFT": _complex(1), "IFFT": _complex(1),
    "FFT2D": _complex(2), "IFFT2D": _complex(2),
    "FFT3D": _complex(3), "IFFT3D": _complex(3),
    "RFFT": _real(1), "IRFFT": _inverse_real(1),
    "RFFT2D": _real(2), "IRFFT2D": _inverse_real(2),
    # Values only: TensorFlow has no gradient for these (tests/test_signal.py).
    "RFFT3D": _real(3, differentiable=False), "IRFFT3D": _inverse_real(3, differentiable=False),
}

ERRORS = [
    (lambda: tf.signal.fft(_c([1.0, 2.0])), InvalidArgumentError,
     r"Value for attr 'Tcomplex' of float is not in the list of allowed values: complex64, "
     r"complex128 \[Op:FFT\]"),
    (lambda: tf.signal.fft(_c(1j)), InvalidArgumentError,
     r"Input must have rank of at least 1 but got: \[\] \[Op:FFT\]"),
    (lambda: tf.signal.ifft2d(_c([1j])), InvalidArgumentError,
     r"Input must have rank of at least 2 but got: \[1\] \[Op:IFFT2D\]"),
    (lambda: tf.signal.rfft(_c([1j])), ValueError, r"RFFT requires tf.float32 or tf.float64"),
    (lambda: tf.signal.irfft(_c([1.0])), ValueError,
     r"IRFFT requires tf.complex64 or tf.complex128"),
    (lambda: tf.signal.rfft(_c([1.0, 2.0]), fft_length=[2, 2]), InvalidArgumentError,
     r"fft_length must have shape \[1\] \[Op:RFFT\]"),
    (lambda: tf.signal.rfft2d(_c([1.0, 2.0])), InvalidArgumentError,
     r"Input must have rank of at least 2 but got: \[2\] \[Op:RFFT2D\]"),
]
