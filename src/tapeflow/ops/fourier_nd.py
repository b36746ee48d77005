"""tf.signal.fftnd, ifftnd, rfftnd and irfftnd: discrete Fourier transforms over any
axes, composed of the table's one-dimensional transforms, one axis at a time (the
transform separates), so gradients, batching and compiled code are theirs.

TensorFlow 2.21 registers kernels for its FFTND ops on GPUs only (on a CPU they raise
NotFoundError); the values here are the GPU kernels', NumPy's fftn, rfftn and irfftn
with s=fft_length. TensorFlow has no gradient for these ops; the composition has one."""

import numpy as np

from ..dtypes import kernel_name
from ..errors import InvalidArgumentError
from . import rules
from .axis_moves import along_axis
from .fft import fft, fitted, ifft, irfft, rfft


def _axes_and_lengths(name, x, fft_length, axes, inverse_real=False):
    rank = len(x._shape)
    axes = tuple(range(rank)) if axes is None else rules.int_tuple(axes, "axes", name)
    normalized = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise InvalidArgumentError(f"{name}: axis {axis} is out of range for an input of "
                                       f"rank {rank} [Op:{name}]")
        normalized.append(axis % rank)
    if len(set(normalized)) != len(normalized):
        raise InvalidArgumentError(f"{name}: axes {list(axes)} repeat an axis [Op:{name}]")
    if fft_length is None:
        lengths = [x._shape[a] for a in normalized]
        if inverse_real and lengths:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    else:
        lengths = list(rules.int_tuple(fft_length, "fft_length", name))
    if len(lengths) != len(normalized):
        raise InvalidArgumentError(f"{name}: fft_length {lengths} and axes {list(axes)} "
                                   f"must have the same length [Op:{name}]")
    return normalized, lengths


def _scaled(x, lengths, norm, forward):
    """The input scaled as TensorFlow's wrappers scale it for `norm` ("backward", the
    default, leaves it; another name is ignored as TensorFlow ignores it)."""
    count = float(np.prod(lengths))
    factor = {"forward": count, "ortho": np.sqrt(count)}.get(norm or "backward")
    if factor is None:
        return x
    return x / factor if forward else x * factor


def _complex_nd(name, transform, forward):
    def transform_nd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        x = rules.as_tensor(input_tensor)
        if not x.dtype.is_complex:
            raise rules.dtype_error(
                f"Value for attr 'Tcomplex' of {kernel_name(x.dtype)} is not in the list of "
                f"allowed values: complex64, complex128 [Op:{op_name}]", op_name)
        axes, lengths = _axes_and_lengths(op_name, x, fft_length, axes)
        x = _scaled(x, lengths, norm, forward)
        for axis, n in zip(axes, lengths):
            x = along_axis(x, axis, lambda v, n=n: transform(fitted(v, (n,), 1)))
        return x
    op_name = name
    transform_nd.__name__ = transform_nd.__qualname__ = name.lower()
    return transform_nd


fftnd = _complex_nd("FFTND", fft, True)
fftnd.__doc__ = ("The discrete Fourier transform of a complex tensor over `axes` (default: "
                 "all), each cut or padded to its fft_length; norm 'backward' (default), "
                 "'forward' or 'ortho' (tf.signal.fftnd, NumPy's fftn).")
ifftnd = _complex_nd("IFFTND", ifft, False)
ifftnd.__doc__ = ("The inverse of fftnd over `axes` (tf.signal.ifftnd, NumPy's ifftn).")


def _check_dtype(x, allowed, message):
    if x.dtype.name not in allowed:
        raise ValueError(f"{message} requires tf.{allowed[0]} or tf.{allowed[1]} inputs, "
                         f"got: {x}")


def rfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The discrete Fourier transform of a real tensor over `axes`: the last axis keeps
    its fft_length // 2 + 1 nonredundant points (tf.signal.rfftnd, NumPy's rfftn)."""
    x = rules.as_tensor(input_tensor)
    _check_dtype(x, ("float32", "float64"), "RFFT")
    axes, lengths = _axes_and_lengths("RFFTND", x, fft_length, axes)
    if not axes:
        return x
    x = _scaled(x, lengths, norm, True)
    x = along_axis(x, axes[-1], lambda v: rfft(v, [lengths[-1]]))
    for axis, n in zip(axes[:-1], lengths[:-1]):
        x = along_axis(x, axis, lambda v, n=n: fft(fitted(v, (n,), 1)))
    return x


def irfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The real tensor whose rfftnd over `axes` is the input; fft_length defaults to the
    input's sizes with 2 (n - 1) for the last axis (tf.signal.irfftnd, NumPy's irfftn)."""
    x = rules.as_tensor(input_tensor)
    _check_dtype(x, ("complex64", "complex128"), "IRFFT")
    axes, lengths = _axes_and_lengths("IRFFTND", x, fft_length, axes, inverse_real=True)
    if not axes:
        return x
    x = _scaled(x, lengths, norm, False)
    for axis, n in zip(axes[:-1], lengths[:-1]):
        x = along_axis(x, axis, lambda v, n=n: ifft(fitted(v, (n,), 1)))
    return along_axis(x, axes[-1], lambda v: irfft(v, [lengths[-1]]))


def _raw(transform):
    """TensorFlow's top-level op function: fft_length and axes are required."""
    def raw(input, fft_length, axes, name=None):  # noqa: A002 - TensorFlow's name
        return transform(input, fft_length, axes)
    raw.__name__ = raw.__qualname__ = transform.__name__
    raw.__doc__ = f"tf.{transform.__name__}: tf.signal.{transform.__name__} without norm."
    return raw


raw_fftnd, raw_ifftnd, raw_rfftnd, raw_irfftnd = (_raw(t) for t in (fftnd, ifftnd, rfftnd,
                                                                    irfftnd))

__all__ = ["fftnd", "ifftnd", "irfftnd", "rfftnd"]
