"""tf.signal's audio functions, composed of the table's ops as TensorFlow writes them in
Python (so their gradients, batching and compiled code are those ops'): the Kaiser,
Kaiser-Bessel-derived and Vorbis windows, the modified DCT and its inverse, the window
that inverts stft, the mel filterbank matrix and the MFCCs of log-mel spectrograms."""

import numpy as np

from .. import dtypes
from ..tensor import constant
from . import rules
from .creation import linspace, ones, zeros_like
from .elementwise import cast, equal, exp, log, maximum, minimum, relu, rsqrt, sin, sqrt, where
from .reduce import cumsum, reduce_sum
from .shape import concat, pad, reshape, reverse, split, tile
from .special import bessel_i0e
from .spectral import dct, frame, overlap_and_add, window_params


def kaiser_window(window_length, beta=12., dtype=dtypes.float32, name=None):
    """The Kaiser window I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta), written with
    the exponentially scaled I0 to stay finite for large beta (tf.signal.kaiser_window)."""
    n, dtype = window_params(window_length, dtype)
    if n == 1:
        return ones([1], dtype=dtype)
    half = (n - 1) / 2.0
    # TensorFlow steps a float32 range from -half to half, then casts.
    arg = cast(constant(np.arange(-half, half + 0.1, dtype=np.float32)), dtype)
    beta = cast(beta, dtype)
    num = beta * sqrt(relu(1.0 - (arg / cast(half, dtype)) ** 2))
    return exp(num - beta) * (bessel_i0e(num) / bessel_i0e(beta))


def kaiser_bessel_derived_window(window_length, beta=12., dtype=dtypes.float32, name=None):
    """The Kaiser-Bessel-derived window: square roots of the running sums of a Kaiser
    window of half the length, mirrored (tf.signal.kaiser_bessel_derived_window)."""
    n, dtype = window_params(window_length, dtype)
    sums = cumsum(kaiser_window(n // 2 + 1, beta, dtype=dtype))
    half = sqrt(sums[:-1] / sums[-1])
    return concat([half, half[::-1]], axis=0)


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """sin(pi/2 sin^2(pi (n + 1/2) / N)), the Vorbis power-complementary window
    (tf.signal.vorbis_window)."""
    n, dtype = window_params(window_length, dtype)
    arg = constant(np.arange(n), dtype)
    return sin(np.pi / 2.0 * sin(np.pi / float(n) * (arg + 0.5)) ** 2.0)


def _windowed(frames, window_fn, length):
    if window_fn is None:
        return frames * (1.0 / np.sqrt(2))
    return frames * window_fn(length, dtype=frames.dtype)


def mdct(signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None,
         name=None):
    """The modified discrete cosine transform of frames of `frame_length` (a multiple of
    4) every frame_length // 2 samples: [..., frames, frame_length // 2]
    (tf.signal.mdct); window_fn None is a rectangular window scaled by 1/sqrt(2)."""
    x = rules.as_tensor(signals)
    if not x._shape:
        raise ValueError(f"Shape {list(x._shape)} must have rank at least 1")
    length = rules.int_scalar(frame_length, what="frame_length")
    if length % 4:
        raise ValueError("The frame length must be a multiple of 4.")
    framed = _windowed(frame(x, length, length // 2, pad_end=pad_end), window_fn, length)
    a, b, c, d = split(framed, 4, axis=-1)
    rearranged = concat([-reverse(c, [-1]) - d, a - reverse(b, [-1])], axis=-1)
    return dct(rearranged, type=4, norm=norm)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The signal whose mdct is `mdcts` ([..., frames, frame_length // 2]), by
    overlap-adding the windowed inverse DCT-IV of its frames (tf.signal.inverse_mdct)."""
    x = rules.as_tensor(mdcts)
    if len(x._shape) < 2:
        raise ValueError(f"Shape {list(x._shape)} must have rank at least 2")
    half = x._shape[-1]
    if norm is None:
        inverse = (0.5 / float(half)) * dct(x, type=4)
    elif norm == "ortho":
        inverse = dct(x, type=4, norm="ortho")
    else:
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    first, second = split(inverse, 2, axis=-1)
    frames = concat([second, -reverse(second, [-1]), -reverse(first, [-1]), -first], axis=-1)
    return overlap_and_add(_windowed(frames, window_fn, 2 * half), half)


def inverse_stft_window_fn(frame_step, forward_window_fn=None, name=None):
    """A window_fn for inverse_stft that undoes `forward_window_fn` (Hann by default)
    at hop `frame_step`: the forward window over the sum of its squared overlaps
    (Griffin and Lim's equation 7; tf.signal.inverse_stft_window_fn)."""
    if forward_window_fn is None:
        from .spectral import hann_window
        forward_window_fn = hann_window
    step = rules.int_scalar(frame_step, what="frame_step")

    def inverse_stft_window_fn_inner(frame_length, dtype):
        length = rules.int_scalar(frame_length, what="frame_length")
        forward = forward_window_fn(length, dtype=dtype)
        overlaps = -(-length // step)
        squares = pad(forward ** 2, [[0, overlaps * step - length]])
        summed = reduce_sum(reshape(squares, [overlaps, step]), 0, keepdims=True)
        denom = reshape(tile(summed, [overlaps, 1]), [overlaps * step])[:length]
        return where(equal(denom, 0.0), zeros_like(forward), forward / denom)
    return inverse_stft_window_fn_inner


# HTK's mel scale: mel(f) = 1127 ln(1 + f / 700).
_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz):
    return _MEL_HIGH_FREQUENCY_Q * log(1.0 + hertz / _MEL_BREAK_FREQUENCY_HERTZ)


def _check_mel_arguments(num_mel_bins, sample_rate, lower_edge_hertz, upper_edge_hertz,
                         dtype):
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz "
                         f"{upper_edge_hertz:.1f}")
    if sample_rate is None:
        pass  # a traced rate: TensorFlow checks it only when its value is known
    elif sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    elif upper_edge_hertz > sample_rate / 2:
        raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """The [num_spectrogram_bins, num_mel_bins] matrix of triangular mel filters (peak
    1, HTK's mel scale) that maps a linear spectrogram over [0, sample_rate / 2] onto
    mel bands between the two edges (tf.signal.linear_to_mel_weight_matrix); the DC bin
    gets no weight."""
    dtype = dtypes.as_dtype(dtype)
    known_rate = rules.known_value(sample_rate)
    if isinstance(known_rate, np.ndarray):
        known_rate = known_rate.item()
    _check_mel_arguments(num_mel_bins, known_rate, lower_edge_hertz, upper_edge_hertz, dtype)
    zero = constant(0.0, dtype)
    nyquist = cast(sample_rate, dtype) / 2.0
    bins = rules.int_scalar(num_spectrogram_bins, what="num_spectrogram_bins")
    bins_mel = reshape(_hertz_to_mel(linspace(zero, nyquist, bins)[1:]), [-1, 1])
    edges = frame(linspace(_hertz_to_mel(constant(lower_edge_hertz, dtype)),
                           _hertz_to_mel(constant(upper_edge_hertz, dtype)),
                           num_mel_bins + 2), frame_length=3, frame_step=1)
    lower, center, upper = (reshape(t, [1, num_mel_bins]) for t in split(edges, 3, axis=1))
    rising = (bins_mel - lower) / (center - lower)
    falling = (upper - bins_mel) / (upper - center)
    return pad(maximum(zero, minimum(rising, falling)), [[1, 0], [0, 0]])


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: HTK's scaled DCT-II of the innermost
    dimension of log-mel spectrograms (tf.signal.mfccs_from_log_mel_spectrograms)."""
    x = rules.as_tensor(log_mel_spectrograms)
    bins = x._shape[-1] if x._shape else None
    if bins == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {x}")
    transformed = dct(x, type=2)
    return transformed * rsqrt(cast(bins * 2.0, transformed.dtype))


__all__ = [
    "inverse_mdct",
    "inverse_stft_window_fn",
    "kaiser_bessel_derived_window",
    "kaiser_window",
    "linear_to_mel_weight_matrix",
    "mdct",
    "mfccs_from_log_mel_spectrograms",
    "vorbis_window",
]
