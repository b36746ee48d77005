"""`tf.signal`: discrete Fourier transforms (fft, rfft and their inverses, in 1, 2 and 3
dimensions) and fftshift."""

from .ops.fft import (  # noqa: F401
    fft, fft2d, fft3d, fftshift, ifft, ifft2d, ifft3d, ifftshift, irfft, irfft2d, irfft3d, rfft,
    rfft2d, rfft3d)
