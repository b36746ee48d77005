"""Philox-4x32-10 and TensorFlow's conversions of its words to numbers, compiled: the
stateless random ops (ops/stateless.py) inside kernels. ops/philox.py is the NumPy form;
both give TensorFlow's numbers (a float32 normal may differ in its last bit, as sin and
log may). Words are uint64 scalars holding 32 bits; keys and counters come as int64
arrays with the bits of TensorFlow's uint64 ones."""

import numpy as np

from . import helper as _jit
from .allocation import empty_array
from .views import copy_of

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@_jit
def philox_block(key, low, high):
    """The four words of Philox-4x32-10 for the 128-bit counter (low, high) under `key`."""
    k0, k1 = key & _LOW32, key >> _S32
    c0, c1, c2, c3 = low & _LOW32, low >> _S32, high & _LOW32, high >> _S32
    for round_ in range(10):
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _LOW32, (p0 >> _S32) ^ c3 ^ k1, \
            p0 & _LOW32
        k0, k1 = (k0 + _W0) & _LOW32, (k1 + _W1) & _LOW32
    return c0, c1, c2, c3


@_jit
def philox_words(key, counter, offset, count):
    """`count` words of the blocks from counter + offset on (uint64 [count])."""
    k = np.uint64(key[0])
    low0 = np.uint64(counter[0])
    low = low0 + offset
    high = np.uint64(counter[1]) + (_ONE if low < low0 else _ZERO)
    out = empty_array(count, np.uint64)
    i = 0
    while i < count:
        block = philox_block(k, low, high)
        for j in range(4):
            if i + j < count:
                out[i + j] = block[j]
        i += 4
        low += _ONE
        if low == _ZERO:
            high += _ONE
    return out


@_jit
def unit_float(w):
    return np.float32(w & np.uint64(0x7FFFFF)) * np.float32(2.0**-23)


@_jit
def unit_double(w_high, w_low):
    return np.float64(((w_high & np.uint64(0xFFFFF)) << _S32) | w_low) * 2.0**-52


@_jit
def box_muller_f32(w0, w1):
    u1 = max(unit_float(w0), np.float32(1e-7))
    v = np.float32(2.0 * np.pi * np.float64(unit_float(w1)))
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    return np.sin(v) * radius, np.cos(v) * radius


@_jit
def box_muller_f64(w0, w1, w2, w3):
    u1 = max(unit_double(w0, w1), 1e-7)
    v = 2.0 * np.pi * unit_double(w2, w3)
    radius = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v) * radius, np.cos(v) * radius


@_jit
def stateless_uniform_f32(key, counter, size):
    w = philox_words(key, counter, _ZERO, size)
    out = empty_array(size, np.float32)
    for i in range(size):
        out[i] = unit_float(w[i])
    return out


@_jit
def stateless_uniform_f64(key, counter, size):
    w = philox_words(key, counter, _ZERO, 2 * size)
    out = empty_array(size, np.float64)
    for i in range(size):
        out[i] = unit_double(w[2 * i], w[2 * i + 1])
    return out


@_jit
def stateless_normal_f32(key, counter, size):
    w = philox_words(key, counter, _ZERO, size + size % 2)
    out = empty_array(size + size % 2, np.float32)
    for i in range(0, size, 2):
        out[i], out[i + 1] = box_muller_f32(w[i], w[i + 1])
    return out[:size]


@_jit
def stateless_normal_f64(key, counter, size):
    w = philox_words(key, counter, _ZERO, 2 * (size + size % 2))
    out = empty_array(size + size % 2, np.float64)
    for i in range(0, size, 2):
        out[i], out[i + 1] = box_muller_f64(w[2 * i], w[2 * i + 1], w[2 * i + 2],
                                            w[2 * i + 3])
    return out[:size]


@_jit
def stateless_truncated_normal(key, counter, size, double):
    """Output group g (4 float32 or 2 float64 values) draws from its own stream at block
    g * 256 (or 128), keeping the normal values of magnitude < 2 in order (as
    ops/philox.py's truncated_normal and TensorFlow's kernel)."""
    group = 2 if double else 4
    stride = np.uint64(group * 64)
    out = empty_array(size, np.float64)
    candidates = empty_array(4, np.float64)
    for g in range((size + group - 1) // group):
        filled = 0
        block = _ZERO
        while filled < group and g * group + filled < size:
            w = philox_words(key, counter, np.uint64(g) * stride + block, 4)
            if double:
                candidates[0], candidates[1] = box_muller_f64(w[0], w[1], w[2], w[3])
                n = 2
            else:
                a, b = box_muller_f32(w[0], w[1])
                c, d = box_muller_f32(w[2], w[3])
                candidates[0], candidates[1], candidates[2], candidates[3] = a, b, c, d
                n = 4
            for j in range(n):
                if abs(candidates[j]) < 2 and filled < group and g * group + filled < size:
                    out[g * group + filled] = candidates[j]
                    filled += 1
            block += _ONE
    return out


@_jit
def stateless_uniform_int(key, counter, size, wide, minval, maxval):
    """minval + bits % (maxval - minval), 64 bits a value if `wide` (int64) else 32, with
    two's-complement wrapping (int64 [size]; the caller casts int32 results)."""
    if wide:
        w = philox_words(key, counter, _ZERO, 2 * size)
    else:
        w = philox_words(key, counter, _ZERO, size)
    span = np.uint64(maxval - minval)
    if not wide:
        span &= _LOW32
    out = empty_array(size, np.int64)
    for i in range(size):
        bits = (w[2 * i] | (w[2 * i + 1] << _S32)) if wide else w[i]
        out[i] = np.int64(np.uint64(minval) + bits % span)
    return out


@_jit
def stateless_full_int(key, counter, size, wide):
    """Every bit random: one word per value (int32's bits, in int64) or two (int64)."""
    w = philox_words(key, counter, _ZERO, 2 * size if wide else size)
    out = empty_array(size, np.int64)
    for i in range(size):
        if wide:
            out[i] = np.int64(w[2 * i] | (w[2 * i + 1] << _S32))
        else:
            out[i] = np.int64(w[i])
    return out


@_jit
def philox_key_counter(seed):
    """A stateless op's seed pair scrambled into (key [1], counter [2]), as TensorFlow."""
    mix = philox_block(np.uint64(0x02461E293EC8F720), np.uint64(seed[0]), np.uint64(seed[1]))
    key = empty_array(1, np.int64)
    counter = empty_array(2, np.int64)
    key[0] = np.int64(mix[0] | (mix[1] << _S32))
    counter[0] = 0
    counter[1] = np.int64(mix[2] | (mix[3] << _S32))
    return key, counter


@_jit
def philox_skip(state, delta):
    """A Philox state (counter low, counter high, key) advanced by `delta` blocks."""
    out = copy_of(state)
    low0 = np.uint64(state[0])
    low = low0 + np.uint64(delta)
    out[0] = np.int64(low)
    if low < low0:
        out[1] = np.int64(np.uint64(state[1]) + _ONE)
    return out
