"""The Fourier transforms of ops/fft.py inside compiled kernels: Numba has no FFT, so
each helper calls back into NumPy's (the ops' eager kernels) in object mode, its result
typed by the input's (about 45 µs per call besides the transform; docs/performance.md)."""

from numba import objmode, types
from numba.extending import overload

from ....ops.fft import complex_kernel, inverse_real_kernel, real_kernel


def complex_transform(x, rank, inverse):
    """FFT, IFFT and their 2D and 3D forms over the innermost `rank` dimensions."""
    return complex_kernel(x, rank, inverse)


def real_transform(x, lengths):
    """RFFT, RFFT2D, RFFT3D with these fft_length."""
    return real_kernel(x, lengths)


def inverse_real_transform(x, lengths):
    """IRFFT, IRFFT2D, IRFFT3D with these fft_length."""
    return inverse_real_kernel(x, lengths)


def _complex_of(dtype):
    return types.complex64 if dtype == types.float32 else types.complex128


@overload(complex_transform)
def _complex_transform(x, rank, inverse):
    out = types.Array(x.dtype, x.ndim, "C")

    def impl(x, rank, inverse):
        with objmode(y=out):
            y = complex_kernel(x, rank, inverse)
        return y
    return impl


@overload(real_transform)
def _real_transform(x, lengths):
    out = types.Array(_complex_of(x.dtype), x.ndim, "C")

    def impl(x, lengths):
        with objmode(y=out):
            y = real_kernel(x, lengths)
        return y
    return impl


@overload(inverse_real_transform)
def _inverse_real_transform(x, lengths):
    out = types.Array(x.dtype.underlying_float, x.ndim, "C")

    def impl(x, lengths):
        with objmode(y=out):
            y = inverse_real_kernel(x, lengths)
        return y
    return impl
