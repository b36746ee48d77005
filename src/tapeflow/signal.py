"""`tf.signal`: discrete Fourier transforms (fft, rfft and their inverses, in 1, 2 and 3
dimensions), fftshift, frames and overlap-add, windows, the short-time Fourier transform
and the discrete cosine transforms."""

from .ops.fft import (  # noqa: F401
    fft, fft2d, fft3d, fftshift, ifft, ifft2d, ifft3d, ifftshift, irfft, irfft2d, irfft3d, rfft,
    rfft2d, rfft3d)
from .ops.spectral import (  # noqa: F401
    dct, frame, hamming_window, hann_window, idct, inverse_stft, overlap_and_add, stft)
