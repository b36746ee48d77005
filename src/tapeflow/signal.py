"""`tf.signal`: discrete Fourier transforms (fft, rfft and their inverses, in 1, 2, 3 and
any number of dimensions), fftshift, frames and overlap-add, windows, the short-time
Fourier transform, the discrete and modified discrete cosine transforms, the mel
filterbank and MFCCs."""

from .ops.audio import (  # noqa: F401
    inverse_mdct, inverse_stft_window_fn, kaiser_bessel_derived_window, kaiser_window,
    linear_to_mel_weight_matrix, mdct, mfccs_from_log_mel_spectrograms, vorbis_window)
from .ops.fft import (  # noqa: F401
    fft, fft2d, fft3d, fftshift, ifft, ifft2d, ifft3d, ifftshift, irfft, irfft2d, irfft3d, rfft,
    rfft2d, rfft3d)
from .ops.fourier_nd import fftnd, ifftnd, irfftnd, rfftnd  # noqa: F401
from .ops.spectral import (  # noqa: F401
    dct, frame, hamming_window, hann_window, idct, inverse_stft, overlap_and_add, stft)
