"""Fast Fourier transforms over the innermost 1, 2 or 3 dimensions, as TensorFlow's FFT,
IFFT, RFFT and IRFFT ops (and their 2D and 3D forms), with NumPy's FFT as the kernel and
TensorFlow's gradients; tf.signal's fftshift and ifftshift."""

import math

import numpy as np

from ..dtypes import complex_of, kernel_name
from ..errors import InvalidArgumentError
from ..tensor import _Operators
from . import rules
from .complex_parts import REAL
from .dynamic import input_dims
from .elementwise import cast
from .registry import OpDef, bind, register


def _fft_axes(rank):
    return tuple(range(-rank, 0))


def _check_rank(name, x, rank):
    if len(x._shape) < rank:
        raise rules.op_error(name, f"Input must have rank of at least {rank} but got: "
                                   f"{rules.kernel_dims(x._shape)}")


def _transform_size(dims, rank, dtype):
    """The number of points a transform over the innermost `rank` of `dims` adds up, as
    a scalar of `dtype` (a tensor where a dimension is known only when the graph runs)."""
    n = math.prod(dims[-rank:])
    return cast(n, dtype) if isinstance(n, _Operators) else float(n)


# -- complex to complex ---------------------------------------------------------------------

def _complex_infer(name, rank):
    def infer(input):
        if not input.dtype.is_complex:
            raise rules.dtype_error(
                f"Value for attr 'Tcomplex' of {kernel_name(input.dtype)} is not in "
                f"the list of allowed values: complex64, complex128 [Op:{name}]", name)
        _check_rank(name, input, rank)
        return input._shape, input.dtype
    return infer


def complex_kernel(x, rank, inverse):
    """The (inverse) DFT over the innermost `rank` dimensions, in x's dtype: NumPy's FFT,
    which computes in complex128."""
    if x.size == 0:  # NumPy refuses a transform of no points; TensorFlow gives none
        return np.zeros_like(x)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    with np.errstate(all="ignore"):  # inf and nan propagate silently, as in TensorFlow
        return np.ascontiguousarray(transform(x, axes=_fft_axes(rank)), dtype=x.dtype)


def _complex_entry(name, rank, inverse):
    def grad(ctx, dy):
        # The adjoint of the DFT is n times the inverse DFT (TensorFlow's _FFTGrad,
        # _IFFTGrad): the conjugate form of the gradient of a linear map.
        size = _transform_size(input_dims(ctx), rank, dy.dtype)
        if inverse:
            return (bind(FORWARD[rank], (dy,)) * (1.0 / size),)
        return (bind(INVERSE[rank], (dy,)) * size,)
    return register(OpDef(name=name, args=("input",), infer=_complex_infer(name, rank),
                          eager=lambda input: complex_kernel(input, rank, inverse), saves=(),
                          grad=grad))


FFT = _complex_entry("FFT", 1, inverse=False)
IFFT = _complex_entry("IFFT", 1, inverse=True)
FFT2D = _complex_entry("FFT2D", 2, inverse=False)
IFFT2D = _complex_entry("IFFT2D", 2, inverse=True)
FFT3D = _complex_entry("FFT3D", 3, inverse=False)
IFFT3D = _complex_entry("IFFT3D", 3, inverse=True)
FORWARD = {1: FFT, 2: FFT2D, 3: FFT3D}
INVERSE = {1: IFFT, 2: IFFT2D, 3: IFFT3D}


# -- real to complex and back: the innermost dimension holds fft_length // 2 + 1 points ------

def _half(n):
    """The points a real signal of length n keeps of its transform (0 for no signal)."""
    return n // 2 + 1 if n else 0


def _check_lengths(name, input, fft_length, rank):
    _check_rank(name, input, rank)
    if len(fft_length) != rank:
        raise rules.op_error(name, f"fft_length must have shape [{rank}]")
    if any(n < 0 for n in fft_length):
        raise rules.op_error(name, f"fft_length must be non-negative, got {list(fft_length)}")


def _real_infer(name, rank):
    def infer(input, fft_length):
        if input.dtype.name not in ("float32", "float64"):
            rules.check_dtype_in(name, input, rules.is_float, "float, double")
        _check_lengths(name, input, fft_length, rank)
        shape = tuple(input._shape[:-rank]) + tuple(fft_length[:-1]) + (_half(fft_length[-1]),)
        return shape, complex_of(input.dtype)
    return infer


def _inverse_real_infer(name, rank):
    def infer(input, fft_length):
        if not input.dtype.is_complex:
            rules.check_dtype_in(name, input, lambda d: d.is_complex, "complex64, complex128")
        _check_lengths(name, input, fft_length, rank)
        return tuple(input._shape[:-rank]) + tuple(fft_length), input.dtype.real_dtype
    return infer


def real_kernel(x, fft_length):
    """The first fft_length[-1] // 2 + 1 points of the DFT of real x over its innermost
    len(fft_length) dimensions, cut or padded to fft_length first."""
    rank = len(fft_length)
    out_type = np.complex64 if x.dtype == np.float32 else np.complex128
    if 0 in fft_length or 0 in x.shape:
        shape = x.shape[:-rank] + tuple(fft_length[:-1]) + (_half(fft_length[-1]),)
        return np.zeros(shape, out_type)
    with np.errstate(all="ignore"):
        out = np.fft.rfftn(x, s=tuple(fft_length), axes=_fft_axes(rank))
    return np.ascontiguousarray(out, dtype=out_type)


def inverse_real_kernel(x, fft_length):
    """The real signal of fft_length points whose DFT's first half is x (cut or padded
    with zeros to fft_length[:-1] and fft_length[-1] // 2 + 1 points)."""
    rank = len(fft_length)
    out_type = x.real.dtype
    if 0 in fft_length or 0 in x.shape:
        return np.zeros(x.shape[:-rank] + tuple(fft_length), out_type)
    with np.errstate(all="ignore"):
        out = np.fft.irfftn(x, s=tuple(fft_length), axes=_fft_axes(rank))
    return np.ascontiguousarray(out, dtype=out_type)


def fitted(x, dims, rank):
    """`x` cut or padded with zeros to `dims` in its innermost `rank` dimensions: the
    adjoint of the transforms' own cutting and padding of their input."""
    from .indexing import strided_slice
    from .shape import pad
    inner = x._shape[-rank:]
    want = dims[-rank:]
    if tuple(inner) == tuple(want):
        return x
    outer = len(x._shape) - rank
    cut = [min(a, b) for a, b in zip(inner, want)]
    if any(c < a for c, a in zip(cut, inner)):
        x = strided_slice(x, [0] * len(x._shape), list(x._shape[:outer]) + cut)
    if any(c < b for c, b in zip(cut, want)):
        x = pad(x, [[0, 0]] * outer + [[0, b - c] for c, b in zip(cut, want)])
    return x


def _real_grad(rank):
    def grad(ctx, dy):
        # Of x -> the first n // 2 + 1 points of DFT(x), for real x: the real part of
        # the adjoint DFT (n times the inverse) of dy padded with zeros to n points. This
        # is TensorFlow's _RFFTGrad, written without its Hermitian correction terms.
        fft_length = ctx.attrs["fft_length"]
        full = fitted(dy, tuple(dy._shape[:-1]) + (fft_length[-1],), 1)
        spread = bind(INVERSE[rank], (full,)) * float(math.prod(fft_length))
        return (fitted(bind(REAL, (spread,)), ctx.shapes[0], rank),)
    return grad


def _inverse_real_grad(rank):
    def grad(ctx, dy):
        # TensorFlow's _IRFFTGrad: rfft(dy) / n, its points other than the first and
        # (for even n) the last counted twice, as the transform's Hermitian half stands
        # for two of them.
        fft_length = ctx.attrs["fft_length"]
        n = fft_length[-1]
        half = bind(REAL_FFT[rank], (dy,), {"fft_length": fft_length})
        twice = np.full(_half(n), 2.0)
        twice[0] = 1.0
        if n % 2 == 0:
            twice[-1] = 1.0
        weights = twice / math.prod(fft_length)
        weighted = half * cast(weights.astype(dy.dtype._np), half.dtype)
        return (fitted(weighted, ctx.shapes[0], rank),)
    return grad


def _no_registered_gradient(name):
    def grad(ctx, dy):
        raise LookupError(f"gradient registry has no entry for: {name}")
    return grad


def _real_entry(name, rank, inverse, grad=None):
    """An RFFT or IRFFT entry; without `grad`, differentiating it raises TensorFlow's
    LookupError (TensorFlow registers no gradient for RFFT3D and IRFFT3D)."""
    infer = (_inverse_real_infer if inverse else _real_infer)(name, rank)
    kernel = inverse_real_kernel if inverse else real_kernel
    return register(OpDef(name=name, args=("input",), infer=infer, eager=kernel, saves=(),
                          grad=grad or _no_registered_gradient(name), smooth=grad is not None))


RFFT = _real_entry("RFFT", 1, False, _real_grad(1))
IRFFT = _real_entry("IRFFT", 1, True, _inverse_real_grad(1))
RFFT2D = _real_entry("RFFT2D", 2, False, _real_grad(2))
IRFFT2D = _real_entry("IRFFT2D", 2, True, _inverse_real_grad(2))
RFFT3D = _real_entry("RFFT3D", 3, False)
IRFFT3D = _real_entry("IRFFT3D", 3, True)
REAL_FFT = {1: RFFT, 2: RFFT2D, 3: RFFT3D}
INVERSE_REAL_FFT = {1: IRFFT, 2: IRFFT2D, 3: IRFFT3D}
FFT_OPS = (*FORWARD.values(), *INVERSE.values(), *REAL_FFT.values(),
           *INVERSE_REAL_FFT.values())


# -- public functions ---------------------------------------------------------------------------

def _public(transform, op, rank, doc):
    """`transform` named as TensorFlow names op's function, `doc` completed."""
    name = op.name.lower()
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc.format(dims=f"{rank} dimension{'s' if rank > 1 else ''}",
                                   name=f"tf.signal.{name}")
    return transform


def _complex_api(op, rank):
    def transform(input, name=None):  # noqa: A002 - TensorFlow's name
        return bind(op, (rules.as_tensor(input),))
    kind = "inverse " if op.name.startswith("I") else ""
    return _public(transform, op, rank, f"The {kind}discrete Fourier transform over the "
                   "innermost {dims} of a complex tensor ({name}).")


fft = _complex_api(FFT, 1)
ifft = _complex_api(IFFT, 1)
fft2d = _complex_api(FFT2D, 2)
ifft2d = _complex_api(IFFT2D, 2)
fft3d = _complex_api(FFT3D, 3)
ifft3d = _complex_api(IFFT3D, 3)


def _lengths(name, fft_length, default):
    if fft_length is None:
        return default
    return rules.int_tuple(fft_length, "fft_length")


def _padded(x, lengths, rank):
    """`x` padded with zeros to `lengths` in its innermost `rank` dimensions where it is
    shorter, as TensorFlow's Python wrappers pad before the op (whose gradient then cuts
    the padding off again); an empty tensor is left as it is."""
    from .shape import pad
    inner = x._shape[-rank:]
    if len(lengths) != rank or None in inner or 0 in x._shape:
        return x
    extra = [max(n - d, 0) for n, d in zip(lengths, inner)]
    if not any(extra):
        return x
    return pad(x, [[0, 0]] * (len(x._shape) - rank) + [[0, e] for e in extra])


def _real_api(op, rank):
    def transform(input_tensor, fft_length=None, name=None):
        x = rules.as_tensor(input_tensor)
        if x.dtype.name not in ("float32", "float64"):
            raise ValueError(f"{op.name} requires tf.float32 or tf.float64 inputs, got: {x}")
        _check_rank(op.name, x, rank)
        lengths = _lengths(op.name, fft_length, tuple(x._shape[-rank:]))
        return bind(op, (_padded(x, lengths, rank),), {"fft_length": lengths})
    return _public(transform, op, rank, "The discrete Fourier transform of a real signal "
                   "over its innermost {dims}: the fft_length[-1] // 2 + 1 points that "
                   "determine the rest ({name}). `fft_length` (default: the input's sizes) "
                   "cuts the signal or pads it with zeros.")


def _inverse_real_api(op, rank):
    def transform(input_tensor, fft_length=None, name=None):
        x = rules.as_tensor(input_tensor)
        if not x.dtype.is_complex:
            raise ValueError(f"{op.name} requires tf.complex64 or tf.complex128 inputs, "
                             f"got: {x}")
        _check_rank(op.name, x, rank)
        inner = tuple(x._shape[-rank:])
        default = inner[:-1] + (2 * (inner[-1] - 1),)
        lengths = _lengths(op.name, fft_length, default)
        if len(lengths) == rank:
            x = _padded(x, lengths[:-1] + (_half(lengths[-1]),), rank)
        return bind(op, (x,), {"fft_length": lengths})
    return _public(transform, op, rank, "The real signal whose transform over the innermost "
                   "{dims} has the given fft_length[-1] // 2 + 1 points ({name}); "
                   "fft_length defaults to 2 * (n - 1) for the innermost size n.")


rfft = _real_api(RFFT, 1)
irfft = _inverse_real_api(IRFFT, 1)
rfft2d = _real_api(RFFT2D, 2)
irfft2d = _inverse_real_api(IRFFT2D, 2)
rfft3d = _real_api(RFFT3D, 3)
irfft3d = _inverse_real_api(IRFFT3D, 3)


def _shifted(x, axes, sign):
    from .rearrange import roll
    x = rules.as_tensor(x)
    rank = len(x._shape)
    if axes is None:
        axes = tuple(range(rank))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    else:
        axes = rules.int_tuple(axes, "axes")
    if None in [x._shape[a] for a in axes]:
        raise InvalidArgumentError("fftshift needs the sizes of the shifted axes while "
                                   "tracing")
    shifts = [sign * (x._shape[a] // 2) for a in axes]
    return roll(x, shifts, list(axes))


def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency point to the middle of `axes` (all by default), as
    tf.signal.fftshift (NumPy's fftshift).

    >>> import tapeflow as tf
    >>> tf.signal.fftshift(tf.constant([0, 1, 2, -2, -1]))
    <tf.Tensor: shape=(5,), dtype=int32, numpy=array([-2, -1,  0,  1,  2], dtype=int32)>
    """
    return _shifted(x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift (tf.signal.ifftshift)."""
    return _shifted(x, axes, -1)


__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d",
           "irfft2d", "rfft3d", "irfft3d", "fftshift", "ifftshift"]
