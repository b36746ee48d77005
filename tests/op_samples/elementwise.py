"""Samplers and error cases for ops/elementwise.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import elementwise as ew
from tapeflow.ops.registry import OPS

from .common import (
    Case,
    apart,
    bools,
    broadcast_shapes,
    complexes,
    floats,
    full_and_broadcast,
    ints,
    nonzero_ints,
    shapes,
    sometimes_complex,
)
from .common import (
    constant as _c,
)


def _domain(name):
    return OPS[name].domain


def _unary(name, avoid=(), int_too=False):
    """x drawn from the op's domain (away from `avoid`); sometimes int32 if allowed."""
    def sample(draw):
        shape = shapes(draw)
        if int_too and draw(st.integers(0, 3)) == 0:
            return Case([ints(draw, shape)])
        return Case([floats(draw, shape, _domain(name), avoid=avoid)])
    return sample


def _binary(name, int_too=False, same_shape=False, avoid=((), ())):
    """Two broadcastable float inputs from the op's domain; sometimes int32 if allowed."""
    def sample(draw):
        if same_shape:
            sx = sy = shapes(draw)
        else:
            sx, sy = broadcast_shapes(draw)
        if int_too and draw(st.integers(0, 3)) == 0:
            return Case([ints(draw, sx), ints(draw, sy)])
        return Case([floats(draw, sx, _domain(name), avoid=avoid[0]),
                     floats(draw, sy, _domain(name), avoid=avoid[1])])
    return sample


def _any_dtype(draw, shape):
    kind = draw(st.sampled_from(["float64", "float32", "int32", "int64", "bool"]))
    if kind == "bool":
        return bools(draw, shape)
    if kind.startswith("int"):
        return ints(draw, shape, dtype=np.dtype(kind))
    return floats(draw, shape, dtype=np.dtype(kind))


def _comparison(equality=False):
    def sample(draw):
        kind = draw(st.sampled_from(["float", "int"] + (["bool"] if equality else [])))
        if kind == "bool":
            sx, sy = broadcast_shapes(draw)
            return Case([bools(draw, sx), bools(draw, sy)])
        if kind == "int":  # small ints, so that ties (equal elements) occur
            sx, sy = broadcast_shapes(draw)
            return Case([ints(draw, sx, -2, 2), ints(draw, sy, -2, 2)])
        # Copy some elements of the smaller input into the larger one: exact ties.
        full, part = full_and_broadcast(draw)
        small = floats(draw, part)
        big = np.where(bools(draw, full), small, floats(draw, full))
        return Case([big, small] if draw(st.booleans()) else [small, big])
    return sample


def _apart_pair(draw):
    """x, y of broadcastable shapes, one of them full, never within 0.1 of each other."""
    if draw(st.integers(0, 4)) == 0:
        return Case([ints(draw, shapes(draw)), ints(draw, ())])
    full, part = full_and_broadcast(draw)
    small = floats(draw, part)
    big = apart(draw, small, full)
    return Case([big, small] if draw(st.booleans()) else [small, big])


def _pow(draw):
    sx, sy = broadcast_shapes(draw)
    if draw(st.integers(0, 3)) == 0:
        return Case([ints(draw, sx, 1, 4), ints(draw, sy, 0, 4)])
    return Case([floats(draw, sx, (0.5, 2.0)), floats(draw, sy, (-2.0, 2.0))])


def _floor_mod(draw):
    """x / y kept at least 0.1 away from integers: FloorMod jumps there."""
    if draw(st.integers(0, 3)) == 0:
        sx, sy = broadcast_shapes(draw)
        return Case([ints(draw, sx, -9, 9), nonzero_ints(draw, sy)])
    full, part = full_and_broadcast(draw)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    quotient = rng.integers(-3, 3, size=full) + rng.uniform(0.1, 0.9, size=full)
    if draw(st.booleans()):  # y is the small one
        y = rng.uniform(0.5, 2.0, size=part) * rng.choice([-1.0, 1.0], size=part)
        x = quotient * y
    else:
        x = rng.uniform(0.5, 2.0, size=part) * rng.choice([-1.0, 1.0], size=part)
        y = x / quotient
    return Case([np.asarray(x, np.float64), np.asarray(y, np.float64)])


def _floor_div(draw):
    sx, sy = broadcast_shapes(draw)
    if draw(st.booleans()):
        return Case([ints(draw, sx, -9, 9), nonzero_ints(draw, sy)])
    return Case([floats(draw, sx), floats(draw, sy, (0.5, 2.0))])


def _real_div(draw):
    sx, sy = broadcast_shapes(draw)
    y = floats(draw, sy, (0.5, 2.0)) * np.where(bools(draw, sy), 1.0, -1.0)
    return Case([floats(draw, sx), y])


def _grad_helper(name, y_domain=None, avoid_y=()):
    """TensorFlow's *Grad kernels take (y, dy) or (dy, y) of one shape."""
    y_first = OPS[name].args[0] in ("y",)

    def sample(draw):
        shape = shapes(draw)
        y = floats(draw, shape, y_domain or _domain(name), avoid=avoid_y)
        dy = floats(draw, shape)
        return Case([y, dy] if y_first else [dy, y])
    return sample


def _select(draw):
    sc, sx, sy = broadcast_shapes(draw, n=3)
    return Case([bools(draw, sc), floats(draw, sx), floats(draw, sy)], wrt=(1, 2))


def _clip(draw):
    shape = shapes(draw)
    if draw(st.integers(0, 4)) == 0:
        return Case([ints(draw, shape), np.int32(-2), np.int32(2)], wrt=())
    bound_shape = shape if draw(st.booleans()) else ()
    lo = floats(draw, bound_shape, (-1.5, -0.3))
    hi = floats(draw, bound_shape, (0.3, 1.5))
    t = floats(draw, shape)
    near = (np.abs(t - lo) < 0.1) | (np.abs(t - hi) < 0.1)
    t = np.where(near, t + 0.2, t)  # bounds are >= 0.6 apart, so this clears both
    return Case([t, lo, hi])


_CAST_TARGETS = [tf.float64, tf.float32, tf.float16, tf.int32, tf.int64, tf.bool,
                 tf.complex64, tf.complex128]


def _cast(draw):
    shape = shapes(draw)
    source = draw(st.sampled_from(["float64", "float64", "float32", "int32", "bool",
                                   "complex128"]))
    if source == "bool":
        x = bools(draw, shape)
    elif source == "int32":
        x = ints(draw, shape)
    elif source == "complex128":  # real parts away from .0: casts to int keep them
        x = floats(draw, shape, (-3.0, 3.0), avoid=(-2, -1, 0, 1, 2)) + 1j * floats(draw, shape)
    else:  # away from .0 so that casts to int are not at a jump
        x = floats(draw, shape, (-3.0, 3.0), dtype=np.dtype(source), avoid=(-2, -1, 0, 1, 2))
    target = draw(st.sampled_from(_CAST_TARGETS))
    return Case([x], {"dtype": target})


def _unary_any(draw):
    return Case([_any_dtype(draw, shapes(draw))])


def _bitwise_binary(draw):
    sx, sy = broadcast_shapes(draw)
    dtype = draw(st.sampled_from([np.int32, np.int64]))
    return Case([ints(draw, sx, -50, 50, dtype), ints(draw, sy, -50, 50, dtype)])


def _logical_binary(draw):
    sx, sy = broadcast_shapes(draw)
    return Case([bools(draw, sx), bools(draw, sy)])


def _rounding(draw):
    shape = shapes(draw)
    if draw(st.integers(0, 3)) == 0:
        return Case([ints(draw, shape)])
    # Include exact halves: Round rounds them to even, as TensorFlow does.
    x = floats(draw, shape, (-4.0, 4.0))
    return Case([np.where(bools(draw, shape), np.round(x * 2) / 2, x)])


def _float_rounding(draw):
    return Case([floats(draw, shapes(draw), (-4.0, 4.0))])


SAMPLES = {
    # gradient helpers: (y, dy) or (dy, y), one shape, as TensorFlow's kernels take them
    "TanhGrad": _grad_helper("TanhGrad", (-0.99, 0.99)),
    "SigmoidGrad": _grad_helper("SigmoidGrad", (0.01, 0.99)),
    "ReciprocalGrad": sometimes_complex(_grad_helper("ReciprocalGrad")),
    "SqrtGrad": sometimes_complex(_grad_helper("SqrtGrad")),
    "RsqrtGrad": _grad_helper("RsqrtGrad"),
    "ReluGrad": _grad_helper("ReluGrad", avoid_y=(0.0,)),
    "EluGrad": _grad_helper("EluGrad", (-0.95, 2.0), avoid_y=(0.0,)),
    "SoftplusGrad": _grad_helper("SoftplusGrad", (-4.0, 4.0)),
    # arithmetic
    "AddV2": sometimes_complex(_binary("AddV2", int_too=True)),
    "Sub": sometimes_complex(_binary("Sub", int_too=True)),
    "Mul": sometimes_complex(_binary("Mul", int_too=True)),
    "RealDiv": sometimes_complex(_real_div),
    "FloorDiv": _floor_div,
    "FloorMod": _floor_mod,
    "Pow": sometimes_complex(_pow),
    "Maximum": _apart_pair,
    "Minimum": _apart_pair,
    "SquaredDifference": _binary("SquaredDifference", int_too=True),
    "Xlogy": _binary("Xlogy"),
    "NextAfter": _binary("NextAfter"),
    "Neg": sometimes_complex(_unary("Neg", int_too=True)),
    "Square": sometimes_complex(_unary("Square", int_too=True)),
    "Sqrt": sometimes_complex(_unary("Sqrt")),
    "Rsqrt": _unary("Rsqrt"),
    "Reciprocal": sometimes_complex(_unary("Reciprocal")),
    "Exp": sometimes_complex(_unary("Exp")),
    "Expm1": _unary("Expm1"),
    "Erf": _unary("Erf"),
    "Erfc": _unary("Erfc"),
    "Log": sometimes_complex(_unary("Log")),
    "Log1p": _unary("Log1p"),
    "Sin": _unary("Sin"),
    "Cos": _unary("Cos"),
    "Tan": _unary("Tan"),
    "Tanh": _unary("Tanh"),
    "Sigmoid": _unary("Sigmoid"),
    "Abs": _unary("Abs", avoid=(0.0,), int_too=True),
    "Sign": _unary("Sign", avoid=(0.0,), int_too=True),
    "Round": _rounding,
    "Floor": _float_rounding,
    "Ceil": _float_rounding,
    "Relu": _unary("Relu", avoid=(0.0,), int_too=True),
    "Elu": _unary("Elu", avoid=(0.0,)),
    "Softplus": _unary("Softplus"),
    "Identity": _unary_any,
    "StopGradient": _unary_any,
    "Cast": _cast,
    "Conj": lambda draw: Case([complexes(draw, shapes(draw))]),
    # comparison and logic
    "Less": _comparison(),
    "LessEqual": _comparison(),
    "Greater": _comparison(),
    "GreaterEqual": _comparison(),
    "Equal": _comparison(equality=True),
    "NotEqual": _comparison(equality=True),
    "LogicalAnd": _logical_binary,
    "LogicalOr": _logical_binary,
    "LogicalNot": lambda draw: Case([bools(draw, shapes(draw))]),
    "BitwiseAnd": _bitwise_binary,
    "BitwiseOr": _bitwise_binary,
    "BitwiseXor": _bitwise_binary,
    "Invert": lambda draw: Case([ints(draw, shapes(draw), -50, 50,
                                      draw(st.sampled_from([np.int32, np.int64])))]),
    "SelectV2": _select,
    "ClipByValue": _clip,
}



ERRORS = [
    # no implicit promotion between dtypes, as TensorFlow
    (lambda: ew.add(_c([1, 2]), _c([1.5])), InvalidArgumentError,
     r"AddV2.*int32.*float.*\[Op:AddV2\]"),
    (lambda: _c([1, 2]) + _c([1.5]), InvalidArgumentError, r"\[Op:AddV2\]"),
    (lambda: ew.multiply(_c(1.0), _c(2.0, tf.float64)), InvalidArgumentError,
     r"float32.*float64.*\[Op:Mul\]"),
    (lambda: ew.maximum(_c([1.0, 2.0]), _c([1.0, 2.0, 3.0])), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Maximum\]"),
    (lambda: ew.subtract(_c([[1.0], [2.0]]) * _c([1.0, 2.0, 3.0]), _c([1.0, 2.0])),
     InvalidArgumentError, r"Incompatible shapes: \[2, 3\] vs. \[2\] \[Op:Sub\]"),
    # float-only ops on integers
    (lambda: ew.sqrt(_c([1, 4])), InvalidArgumentError, r"int32.*\[Op:Sqrt\]"),
    (lambda: ew.exp(_c(1)), InvalidArgumentError, r"int32.*\[Op:Exp\]"),
    (lambda: ew.log(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:Log\]"),
    (lambda: ew.tanh(_c([1])), InvalidArgumentError, r"int32.*\[Op:Tanh\]"),
    (lambda: ew.sigmoid(_c([1])), InvalidArgumentError, r"int32.*\[Op:Sigmoid\]"),
    (lambda: ew.realdiv(_c([1]), _c([2])), InvalidArgumentError, r"int32.*\[Op:RealDiv\]"),
    (lambda: ew.floor(_c([1])), InvalidArgumentError, r"int32.*\[Op:Floor\]"),
    # numeric-only and bool-only ops
    (lambda: ew.negative(_c([True])), InvalidArgumentError, r"bool.*\[Op:Neg\]"),
    (lambda: ew.less(_c([True]), _c([False])), InvalidArgumentError, r"bool.*\[Op:Less\]"),
    (lambda: ew.logical_and(_c([1]), _c([0])), InvalidArgumentError,
     r"int32.*\[Op:LogicalAnd\]"),
    (lambda: ew.logical_not(_c([1.0])), InvalidArgumentError, r"float32.*\[Op:LogicalNot\]"),
    # values
    (lambda: ew.pow(_c([2, 3]), _c([-1, 2])), InvalidArgumentError,
     r"Integers to negative integer powers are not allowed"),
    (lambda: ew.floordiv(_c([1, 2]), _c([1, 0])), InvalidArgumentError,
     r"Integer division by zero \[Op:FloorDiv\]"),
    (lambda: _c(7) // 0, InvalidArgumentError, r"Integer division by zero"),
    (lambda: ew.floormod(_c([1, 2], tf.int64), _c([0, 1], tf.int64)), InvalidArgumentError,
     r"Integer division by zero \[Op:FloorMod\]"),
    # where / select
    (lambda: ew.where(_c([1, 0]), _c([1.0, 2.0]), _c([3.0, 4.0])), InvalidArgumentError,
     r"\[Op:SelectV2\]"),
    (lambda: ew.where(_c([True, False]), _c([1.0, 2.0])), ValueError, r"x and y"),
    (lambda: ew.where(_c([True, False]), _c([1.0, 2.0]), _c([3, 4])), InvalidArgumentError,
     r"float32.*int32.*\[Op:SelectV2\]"),
    (lambda: ew.where(_c([True, False, True]), _c([1.0, 2.0]), _c([3.0, 4.0])),
     InvalidArgumentError, r"Incompatible shapes: \[3\] vs. \[2\] \[Op:SelectV2\]"),
    # clip_by_value
    (lambda: ew.clip_by_value(_c([[1.0, 2.0, 3.0]]), _c([0.0, 1.0]), 2.0),
     InvalidArgumentError, r"\[Op:ClipByValue\]"),
    (lambda: ew.clip_by_value(_c([1.0, 2.0]), _c([0.0, 1.0, 0.0]), 2.0),
     InvalidArgumentError, r"\[Op:ClipByValue\]"),
    (lambda: ew.clip_by_value(_c([1.0, 2.0]), _c(0), _c(1)), InvalidArgumentError,
     r"float32.*int32.*\[Op:ClipByValue\]"),
    # TF 2.21: "Value for attr 'T' of bool is not in the list of allowed values"
    (lambda: ew.clip_by_value(_c([True]), False, True), InvalidArgumentError,
     r"bool.*\[Op:ClipByValue\]"),
    # operators where TensorFlow's differs from its tf.* op. `*` with a bool multiplies as
    # int32 (below, test_values); tf.multiply itself, and `+`, reject bool (TF 2.21)
    (lambda: ew.multiply(_c([True]), _c([True])), InvalidArgumentError, r"bool.*\[Op:Mul\]"),
    (lambda: _c([True]) + _c([True]), InvalidArgumentError, r"bool.*\[Op:AddV2\]"),
    (lambda: _c([True, False]) * _c([True, True, False]), InvalidArgumentError,
     r"Incompatible shapes: \[2\] vs. \[3\] \[Op:Mul\]"),
    # `& | ^ ~` on non-bool tensors are TensorFlow's Bitwise* ops: floats are rejected as
    # TF 2.21 does ("Value for attr 'T' of float is not in the list of allowed values:
    # int8, ..."; "cannot compute BitwiseXor as input #1(zero-based) was expected to be
    # a int32 tensor but is a bool tensor").
    (lambda: _c([1.5]) & _c([1.5]), InvalidArgumentError, r"float32.*\[Op:BitwiseAnd\]"),
    (lambda: _c([1.5]) ^ 2, InvalidArgumentError, r"float32.*\[Op:BitwiseXor\]"),
    (lambda: ~_c([1.5]), InvalidArgumentError, r"float32.*\[Op:Invert\]"),
    (lambda: _c([6, 3]) ^ _c([True, False]), InvalidArgumentError,
     r"cannot compute BitwiseXor as input #1.*int32.*bool.*\[Op:BitwiseXor\]"),
    # bool operands: TF 2.21 converts the other operand to bool ("Cannot convert 1 to
    # EagerTensor of dtype bool"), or names LogicalOr for a tensor of another dtype
    (lambda: _c([True]) ^ 1, TypeError, r"Cannot convert 1 to EagerTensor of dtype bool"),
    (lambda: _c([True]) ^ _c([1]), InvalidArgumentError,
     r"cannot compute LogicalOr as input #1.*\[Op:LogicalOr\]"),
    (lambda: ew.logical_xor(_c([1, 0]), _c([1, 1])), InvalidArgumentError, r"\[Op:Logical"),
    # cast
    (lambda: ew.cast(_c([1.0]), "no_such_dtype"), TypeError, r"no_such_dtype"),
]
