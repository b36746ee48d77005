"""Lowerings of the stateless random ops (ops/stateless.py) through kernels/philox.py:
the key, counter and state are int64 arrays, the draws flat arrays reshaped to the op's
static shape."""

import math

from ...ops.stateless import (
    KEY_COUNTER,
    PHILOX_SKIP,
    STATELESS_NORMAL,
    STATELESS_TRUNCATED_NORMAL,
    STATELESS_UNIFORM,
    STATELESS_UNIFORM_FULL_INT,
    STATELESS_UNIFORM_INT,
)
from .generator import lowers
from .text import np_name, tuple_expr


def _int64_array(cg, x):
    return f"cast_array({cg.contiguous(cg.val(x))}, np.int64)"


@lowers(KEY_COUNTER)
def _key_counter(cg, node):
    pair = cg.assign(f"philox_key_counter({_int64_array(cg, node.inputs[0])})")
    cg.output(node, cg.assign(f"{pair}[0]"), k=0)
    cg.output(node, cg.assign(f"{pair}[1]"), k=1)


@lowers(PHILOX_SKIP)
def _skip(cg, node):
    delta = cg.scalar(cg.val(node.inputs[1]))
    cg.output(node, cg.assign(f"philox_skip({_int64_array(cg, node.inputs[0])}, {delta})"))


def _draw_lowering(flat_draw):
    """A draw's lowering: `flat_draw(args, size, wide, attrs)` is the helper call giving
    its values flat (args: the key and counter), cast and shaped here."""
    def lower(cg, node):
        y = node.outputs[0]
        shape = node.attrs["shape"]
        args = f"{_int64_array(cg, node.inputs[0])}, {_int64_array(cg, node.inputs[1])}"
        flat = flat_draw(args, math.prod(shape), y.dtype._np.itemsize, node.attrs)
        cg.output(node, cg.assign(f"reshaped(cast_array({flat}, {np_name(y.dtype)}), "
                                  f"{tuple_expr(map(str, shape))})"))
    return lower


def _uniform(args, size, itemsize, attrs):
    if itemsize == 2:  # float16: 10 bits of each word (TensorFlow's Uint16ToHalf)
        return (f"(cast_array(philox_words({args}, np.uint64(0), {size}) & np.uint64(0x3FF), "
                f"np.float32) * np.float32(2.0**-10))")
    return f"stateless_uniform_{'f64' if itemsize == 8 else 'f32'}({args}, {size})"


def _normal(args, size, itemsize, attrs):
    return f"stateless_normal_{'f64' if itemsize == 8 else 'f32'}({args}, {size})"


def _truncated_normal(args, size, itemsize, attrs):
    return f"stateless_truncated_normal({args}, {size}, {itemsize == 8})"


def _uniform_int(args, size, itemsize, attrs):
    return (f"stateless_uniform_int({args}, {size}, {itemsize == 8}, "
            f"np.int64({attrs['minval']}), np.int64({attrs['maxval']}))")


def _full_int(args, size, itemsize, attrs):
    return f"stateless_full_int({args}, {size}, {itemsize == 8})"


lowers(STATELESS_UNIFORM)(_draw_lowering(_uniform))
lowers(STATELESS_NORMAL)(_draw_lowering(_normal))
lowers(STATELESS_TRUNCATED_NORMAL)(_draw_lowering(_truncated_normal))
lowers(STATELESS_UNIFORM_INT)(_draw_lowering(_uniform_int))
lowers(STATELESS_UNIFORM_FULL_INT)(_draw_lowering(_full_int))
