"""Circulant operators (one, two or three levels of circulant blocks), held as their
spectrum: products and solves are Fourier transforms, as TensorFlow computes them
(tensorflow/python/ops/linalg/linear_operator_circulant.py)."""

import math

from ... import dtypes
from .. import rules
from ..complex_parts import complex as make_complex
from ..complex_parts import imag, real
from ..creation import ones
from ..elementwise import abs, cast, conj, log
from ..fft import fft, fft2d, fft3d, ifft, ifft2d, ifft3d
from ..reduce import reduce_max, reduce_min, reduce_prod, reduce_sum
from ..shape import broadcast_to, reshape, transpose
from .base import LinearOperator, adjointed, broadcast_batch

_TRANSFORMS = {1: (fft, ifft), 2: (fft2d, ifft2d), 3: (fft3d, ifft3d)}
_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


class _Circulant(LinearOperator):
    """What the three depths share: the spectrum's last `_depth` dimensions are the block
    shape, the rest the batch shape."""

    _depth = 1

    def __init__(self, spectrum, input_output_dtype=dtypes.complex64, is_non_singular=None,
                 is_self_adjoint=None, is_positive_definite=None, is_square=True, name=None):
        self._spectrum = rules.as_tensor(spectrum)
        if len(self._spectrum._shape) < self._depth:
            raise ValueError(f"Argument `spectrum` must have at least {self._depth} "
                             f"dimensions. Received: {self._spectrum}.")
        if not self._spectrum.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(f"A real spectrum always corresponds to a self-adjoint "
                                 f"operator. Expected argument `is_self_adjoint` to be True "
                                 f"when `spectrum.dtype.is_complex` = True. Received: "
                                 f"{is_self_adjoint}.")
            is_self_adjoint = True
        super().__init__(dtypes.as_dtype(input_output_dtype), None, is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square,
                         name or type(self).__name__,
                         {"spectrum": self._spectrum, "input_output_dtype": input_output_dtype})

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self):
        return self._depth

    @property
    def block_shape(self):
        from ...tensor import TensorShape
        return TensorShape(self._spectrum._shape[-self._depth:])

    def block_shape_tensor(self):
        return rules.as_tensor(list(self.block_shape), dtypes.int32)

    def _shape(self):
        n = math.prod(self._spectrum._shape[-self._depth:])
        return tuple(self._spectrum._shape[:-self._depth]) + (n, n)

    def _block_axes(self):
        return [-(i + 1) for i in range(self._depth)]

    def _complex_spectrum(self, adjoint):
        spectrum = self._spectrum
        if not spectrum.dtype.is_complex:
            spectrum = cast(spectrum, _COMPLEX[spectrum.dtype])
        return conj(spectrum) if adjoint else spectrum

    def _transformed(self, x, adjoint, adjoint_arg, divide):
        """ifft(spectrum * fft(x)) (or fft(x) / spectrum) on each column of x, viewed as
        a block tensor of the spectrum's block shape."""
        spectrum = self._complex_spectrum(adjoint)
        x = cast(adjointed(x, adjoint_arg), spectrum.dtype)
        block = tuple(spectrum._shape[-self._depth:])
        batch = broadcast_batch(spectrum._shape[:-self._depth], x._shape[:-2])
        x = broadcast_to(x, list(batch) + list(x._shape[-2:]))
        columns = x._shape[-1]
        rank = len(batch)
        # [..., N, R] -> [..., R, N] -> [..., R, block...]
        blocks = reshape(transpose(x, list(range(rank)) + [rank + 1, rank]),
                         batch + (columns,) + block)
        spectrum = reshape(broadcast_to(spectrum, list(batch) + list(block)),
                           batch + (1,) + block)
        forward, inverse = _TRANSFORMS[self._depth]
        transformed = forward(blocks)
        result = inverse(transformed / spectrum if divide else spectrum * transformed)
        result = reshape(result, batch + (columns, math.prod(block)))
        return cast(transpose(result, list(range(rank)) + [rank + 1, rank]), self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._transformed(x, adjoint, adjoint_arg, divide=False)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._transformed(rhs, adjoint, adjoint_arg, divide=True)

    def _determinant(self):
        return cast(reduce_prod(self._spectrum, axis=self._block_axes()), self.dtype)

    def _log_abs_determinant(self):
        return cast(reduce_sum(log(abs(self._spectrum)), axis=self._block_axes()), self.dtype)

    def _trace(self):
        total = reduce_sum(real(self._spectrum), axis=self._block_axes())
        if self.dtype.is_complex and self._spectrum.dtype.is_complex \
                and not self.is_self_adjoint:
            total = make_complex(total, reduce_sum(imag(self._spectrum),
                                                   axis=self._block_axes()))
        return cast(total, self.dtype)

    def _diag_part(self):
        shape = self._shape()
        return (self.trace() / cast(shape[-1], self.dtype))[..., None] * ones(shape[:-1],
                                                                              self.dtype)

    def _flat_spectrum(self):
        return reshape(self._spectrum, self._shape()[:-1])

    def _eigvals(self):
        return self._flat_spectrum()

    def _cond(self):
        magnitude = abs(self._flat_spectrum())
        return reduce_max(magnitude, axis=-1) / reduce_min(magnitude, axis=-1)

    def convolution_kernel(self, name="convolution_kernel"):
        """The kernel whose circular convolution this operator is: ifft(spectrum)."""
        inverse = _TRANSFORMS[self._depth][1]
        return cast(inverse(self._complex_spectrum(False)), self.dtype)

    def _same(self, spectrum, dtype):
        return type(self)(spectrum, dtype, self.is_non_singular, self.is_self_adjoint,
                          self.is_positive_definite, True)

    def _adjoint(self):
        # TensorFlow's adjoint takes the default complex64 dtype, whatever this one's.
        return self._same(conj(self._spectrum) if self._spectrum.dtype.is_complex
                          else self._spectrum, dtypes.complex64)

    def _inverse(self):
        return self._same(1.0 / self._spectrum, self.dtype)


class LinearOperatorCirculant(_Circulant):
    """Circulant matrices [..., N, N] of spectrum [..., N]: x -> ifft(spectrum * fft(x))."""

    _depth = 1


class LinearOperatorCirculant2D(_Circulant):
    """Block circulant matrices with circulant blocks, of spectrum [..., N0, N1]."""

    _depth = 2


class LinearOperatorCirculant3D(_Circulant):
    """Three levels of circulant blocks, of spectrum [..., N0, N1, N2]."""

    _depth = 3


__all__ = ["LinearOperatorCirculant", "LinearOperatorCirculant2D",
           "LinearOperatorCirculant3D"]
