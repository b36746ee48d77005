"""tf.signal functions TensorFlow writes in Python, composed of the table's ops the same
way, so their gradients, batching and compiled code are those ops': frames and their
overlap-add, the Hann and Hamming windows, the short-time Fourier transform and its
inverse, and the discrete cosine transforms (types I to IV)."""

import math

import numpy as np

from .. import dtypes
from ..tensor import constant
from . import rules
from .complex_parts import complex, real
from .creation import ones, zeros_like
from .elementwise import cast, cos
from .fft import irfft, rfft
from .indexing import gather, unsorted_segment_sum
from .shape import concat, pad, reshape, transpose


def window_params(window_length, dtype):
    """A window function's window_length as an int and dtype as a DType, checked as
    TensorFlow's _check_params checks them."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    return rules.int_scalar(window_length, what="window_length"), dtype


def _raised_cosine(window_length, periodic, dtype, a, b):
    n, dtype = window_params(window_length, dtype)
    if n == 1:
        return ones([1], dtype=dtype)
    periodic = bool(np.asarray(periodic))
    span = n + (1 - n % 2) * periodic - 1
    count = constant(np.arange(n), dtype)
    return cast(a - b * cos(count * (2 * np.pi / span)), dtype)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N), periodic (N = window_length) or symmetric
    (N = window_length - 1), as tf.signal.hann_window."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N), as tf.signal.hamming_window."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Frames of `frame_length` samples every `frame_step` along `axis`, which becomes
    [frames, frame_length] (tf.signal.frame); with pad_end the last frames are filled with
    `pad_value`."""
    x = rules.as_tensor(signal)
    length = rules.int_scalar(frame_length, what="frame_length")
    step = rules.int_scalar(frame_step, what="frame_step")
    axis = rules.int_scalar(axis) % max(len(x._shape), 1)
    samples = x._shape[axis]
    if pad_end:
        count = -(-samples // step)
        missing = max(0, length + step * (count - 1) - samples)
        if missing:
            widths = [[0, 0]] * len(x._shape)
            widths[axis] = [0, missing]
            x = pad(x, widths, constant_values=pad_value)
    else:
        count = max(0, (samples - length + step) // step)
    starts = np.arange(count)[:, None] * step
    indices = (starts + np.arange(length)[None, :]).astype(np.int32)
    return gather(x, constant(indices.reshape(count, length)), axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """The frames of `signal` ([..., frames, frame_length]) added up, each `frame_step`
    samples after the previous one (tf.signal.overlap_and_add)."""
    x = rules.as_tensor(signal)
    if len(x._shape) < 2:
        raise ValueError(f"Shape {list(x._shape)} must have rank at least 2")
    step = rules.int_scalar(frame_step, what="frame_step")
    *outer, frames, length = x._shape
    size = length + step * (frames - 1) if frames else 0
    rank = len(x._shape)
    # Samples first, then a segment sum that adds each sample where its frame put it.
    stacked = reshape(transpose(x, [rank - 2, rank - 1] + list(range(rank - 2))),
                      [frames * length] + outer)
    where = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).ravel()
    summed = unsorted_segment_sum(stacked, constant(where.astype(np.int32)), size)
    return transpose(summed, list(range(1, rank - 1)) + [0])


def _enclosing_power_of_two(n):
    return 1 << max(0, math.ceil(math.log2(n)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """The short-time Fourier transform: rfft of the windowed frames of `signals`
    (tf.signal.stft); fft_length defaults to the smallest power of 2 that holds a frame."""
    x = rules.as_tensor(signals)
    length = rules.int_scalar(frame_length, what="frame_length")
    framed = frame(x, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(length, dtype=framed.dtype)
    n = _enclosing_power_of_two(length) if fft_length is None else fft_length
    return rfft(framed, [int(n)])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The signal whose stft is `stfts`, by overlap-adding the windowed inverse
    transforms of its frames (tf.signal.inverse_stft)."""
    spectra = rules.as_tensor(stfts)
    length = rules.int_scalar(frame_length, what="frame_length")
    n = _enclosing_power_of_two(length) if fft_length is None else int(fft_length)
    frames = irfft(spectra, [n])
    if n > length:
        frames = frames[..., :length]
    elif n < length:
        frames = pad(frames, [[0, 0]] * (len(frames._shape) - 1) + [[0, length - n]])
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=spectra.dtype.real_dtype)
    return overlap_and_add(frames, frame_step)


def _check_dct(x, kind, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if kind not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if kind == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if x._shape[-1] is not None and x._shape[-1] < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _edge_weights(first, rest, size, dtype):
    """[first, rest, rest, ...] of `size` values: the DCT's orthonormal scaling."""
    return constant(np.concatenate([[first], np.full(size - 1, rest)]), dtype)


def _phases(size, sign, dtype):
    """2 exp(sign i pi k / (2 size)) for k < size, complex of `dtype`."""
    k = np.arange(size)
    return constant(2.0 * np.exp(sign * 1j * np.pi * 0.5 * k / size), dtypes.complex_of(dtype))


def _dct(x, kind, n, norm):
    samples = x._shape[-1]
    if n is not None:
        x = x[..., :n] if n <= samples else pad(x, [[0, 0]] * (len(x._shape) - 1)
                                                   + [[0, n - samples]])
    size = x._shape[-1]
    if kind == 1:
        return real(rfft(concat([x, x[..., -2:0:-1]], axis=-1)))
    if kind == 2:
        out = real(rfft(x, fft_length=[2 * size])[..., :size] * _phases(size, -1, x.dtype))
        if norm == "ortho":
            first = 0.5 / math.sqrt(size)
            out = out * _edge_weights(first, first * math.sqrt(2.0), size, x.dtype)
        return out
    if kind == 3:
        if norm == "ortho":
            x = x * _edge_weights(math.sqrt(size), math.sqrt(size) * math.sqrt(0.5), size,
                                  x.dtype)
        else:
            x = x * float(size)
        spectrum = _phases(size, 1, x.dtype) * complex(x, zeros_like(x))
        return real(irfft(spectrum, fft_length=[2 * size]))[..., :size]
    out = _dct(x, 2, 2 * size, None)[..., 1::2]
    return out * (math.sqrt(0.5) / math.sqrt(size)) if norm == "ortho" else out


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The discrete cosine transform of types I to IV over the innermost dimension, as
    tf.signal.dct (SciPy's scipy.fftpack.dct); `n` cuts or pads the signal, norm='ortho'
    makes types II to IV orthonormal."""
    x = rules.as_tensor(input)
    _check_dct(x, type, n, axis, norm)
    return _dct(x, type, n, norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The inverse of dct of the same type, up to a factor 2N (type I: 2(N - 1)) where
    norm is None, as tf.signal.idct: the DCT of the inverse type (II and III swap)."""
    x = rules.as_tensor(input)
    _check_dct(x, type, n, axis, norm)
    return _dct(x, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


__all__ = ["hann_window", "hamming_window", "frame", "overlap_and_add", "stft",
           "inverse_stft", "dct", "idct"]
