"""Complex numbers from and into their parts: Complex, Real, Imag, Angle and ComplexAbs,
with TensorFlow's gradients (a real loss's gradient for a complex input packs the
derivatives along the real and imaginary directions as one complex number)."""

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import rules
from .elementwise import equal, negative, ones_like, reciprocal, where, zeros_like
from .registry import OpDef, bind, register
from .rules import unbroadcast


def _is_complex(d):
    return d.is_complex


_COMPLEX = "complex64, complex128"


def _parts_infer(real, imag):
    """Complex: two float32 or two float64 parts, broadcast; complex64 or complex128."""
    rules.check_same_dtype("Complex", (real, imag))
    if real.dtype not in (dtypes.float32, dtypes.float64):
        rules.check_dtype_in("Complex", real, rules.is_float, "float, double")
    shape = rules.broadcast_shapes("Complex", real._shape, imag._shape)
    return shape, dtypes.complex_of(real.dtype)


def _from_parts(real, imag):
    # Filled part by part rather than real + 1j * imag, which turns an infinite
    # imaginary part into a NaN real part.
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape),
                   np.complex64 if real.dtype == np.float32 else np.complex128)
    out.real = real
    out.imag = imag
    return out


COMPLEX = register(OpDef(
    name="Complex", args=("real", "imag"), infer=_parts_infer, eager=_from_parts,
    emit="complex({0}, {1})", elementwise=True,
    grad=lambda ctx, dy: (unbroadcast(real(dy), ctx.shapes[0]) if ctx.needs[0] else None,
                          unbroadcast(imag(dy), ctx.shapes[1]) if ctx.needs[1] else None)))


def _part_entry(name, eager, emit, grad, saves=()):
    """A function of a complex tensor whose value is real (its dtype's real_dtype)."""
    def infer(input):
        if not input.dtype.is_complex:
            rules.check_dtype_in(name, input, _is_complex, _COMPLEX)
        return input._shape, input.dtype.real_dtype
    return register(OpDef(name=name, args=("input",), infer=infer, eager=eager, emit=emit,
                          elementwise=True, saves=saves, grad=grad))


def _as_complex(x):
    """A real tensor as complex numbers with zero imaginary parts."""
    return bind(COMPLEX, (x, zeros_like(x)))


REAL = _part_entry("Real", np.real, "{0}.real",
                   grad=lambda ctx, dy: (_as_complex(dy),))
IMAG = _part_entry("Imag", np.imag, "{0}.imag",
                   grad=lambda ctx, dy: (bind(COMPLEX, (zeros_like(dy), dy)),))


def _angle_grad(ctx, dy):
    # TensorFlow's _AngleGrad: -dy / (Im(x) + i Re(x)).
    x = ctx.input
    turned = bind(COMPLEX, (bind(IMAG, (x,)), bind(REAL, (x,))))
    return (negative(_as_complex(dy)) * reciprocal(turned),)


ANGLE = _part_entry("Angle", np.angle, "np.arctan2({0}.imag, {0}.real)", grad=_angle_grad,
                    saves=("input",))


def _complex_abs_grad(ctx, dy):
    # TensorFlow's _ComplexAbsGrad: dy * x / |x|, and 0 where |x| is 0.
    out = ctx.out
    at_zero = equal(out, zeros_like(out))
    ratio = where(at_zero, zeros_like(dy), dy / where(at_zero, ones_like(out), out))
    return (_as_complex(ratio) * ctx.input,)


COMPLEX_ABS = _part_entry("ComplexAbs", np.abs, "abs({0})", grad=_complex_abs_grad,
                          saves=("input", "out"))


# -- public functions ---------------------------------------------------------------------

def complex(real, imag, name=None):  # noqa: A001 - TensorFlow's name
    """The complex numbers real + i imag (tf.complex): float32 parts give complex64,
    float64 parts complex128; the parts broadcast.

    >>> import tapeflow as tf
    >>> tf.complex(1.0, 2.0)
    <tf.Tensor: shape=(), dtype=complex64, numpy=(1+2j)>
    """
    # Each part converted alone, as TensorFlow does: a Python float beside a float64
    # tensor is float32, so the dtypes differ.
    real, imag = rules.as_tensor(real), rules.as_tensor(imag)
    if real.dtype is not imag.dtype or real.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"The `real` and `imag` components have incorrect types: "
                        f"{real.dtype.name} {imag.dtype.name}. They must be consistent, "
                        f"and one of [tf.float32, tf.float64]")
    return bind(COMPLEX, (real, imag))


def _input(x):
    x = x if type(x) is Tensor else rules.as_tensor(x)
    if x.dtype.is_bool:
        raise TypeError(f"Expected numeric tensor, got dtype {x.dtype!r}")
    return x


def real(input, name=None):  # noqa: A002
    """The real part of a complex tensor; a real tensor itself (tf.math.real)."""
    x = _input(input)
    return bind(REAL, (x,)) if x.dtype.is_complex else x


def imag(input, name=None):  # noqa: A002
    """The imaginary part of a complex tensor; zeros for a real tensor (tf.math.imag)."""
    x = _input(input)
    return bind(IMAG, (x,)) if x.dtype.is_complex else zeros_like(x)


def angle(input, name=None):  # noqa: A002
    """The argument of a complex tensor, atan2(imag, real); for a real tensor pi where it
    is negative and 0 elsewhere, as tf.math.angle."""
    x = _input(input)
    if x.dtype.is_complex:
        return bind(ANGLE, (x,))
    return where(x < zeros_like(x), zeros_like(x) + np.pi, zeros_like(x))


def complex_abs(x):
    """|x| of a complex tensor, real-valued (what tf.abs runs on complex numbers)."""
    return bind(COMPLEX_ABS, (x,))


__all__ = ["complex", "real", "imag", "angle"]
