"""Philox-4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3"), the
counter-based generator of TensorFlow's stateless random ops and tf.random.Generator, and
TensorFlow's conversions of its bits to numbers (random_distributions.h), in NumPy.

The state is a 64-bit key and a 128-bit counter (two 64-bit words, low first), held in
int64 arrays with the bits of TensorFlow's uint64 ones. Block `i` of a draw is Philox of
counter + i: four 32-bit words. With TensorFlow's order of blocks and words the numbers
are TensorFlow's (backends/numba_cpu/kernels/philox.py computes the same compiled).
"""

import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)
# Groups of a draw that rejects samples each own a stream this many blocks apart per output
# (TensorFlow's kReservedSamplesPerOutput / 4 outputs per block).
SAMPLES_RESERVED_PER_OUTPUT = 256


def as_uint64(words):
    return np.asarray(words, np.int64).view(np.uint64)


def counters(counter, offsets):
    """counter + offsets (uint64 [n]) as 128-bit sums: (low words, high words)."""
    low0, high0 = as_uint64(counter)
    with np.errstate(over="ignore"):
        low = low0 + offsets
        high = high0 + (low < low0).astype(np.uint64)
    return low, high


def blocks_at(key, low, high):
    """The four 32-bit words (uint64 [n, 4]) Philox-4x32-10 gives for the 128-bit
    counters (low, high) under the 64-bit key."""
    k0 = np.full(low.shape, as_uint64(key).reshape(-1)[0] & _LOW32)
    k1 = np.full(low.shape, as_uint64(key).reshape(-1)[0] >> _32)
    c = [low & _LOW32, low >> _32, high & _LOW32, high >> _32]
    with np.errstate(over="ignore"):
        for round_ in range(10):
            p0, p1 = _M0 * c[0], _M1 * c[2]
            c = [(p1 >> _32) ^ c[1] ^ k0, p1 & _LOW32, (p0 >> _32) ^ c[3] ^ k1, p0 & _LOW32]
            if round_ < 9:
                k0, k1 = (k0 + _W0) & _LOW32, (k1 + _W1) & _LOW32
    return np.stack(c, axis=-1)


def blocks(key, counter, n, start=0):
    """Blocks start .. start + n - 1 of the stream at (key, counter)."""
    low, high = counters(counter, np.arange(start, start + n, dtype=np.uint64))
    return blocks_at(key, low, high)


def words(key, counter, count, per_block=4):
    """`count` 32-bit words from consecutive blocks, `per_block` of each block's four used
    (TensorFlow's distributions use all four; uint64 [count])."""
    n = -(-count // per_block) if count else 0
    return blocks(key, counter, n).reshape(-1)[:count]


def skipped(state, delta):
    """A Philox state (counter low, counter high, key) advanced by `delta` blocks."""
    low, high = counters(state[:2], np.array([delta], np.uint64))
    return np.array([low[0], high[0], as_uint64(state[2:3])[0]], np.uint64).view(np.int64)


def key_counter_from_seed(seed):
    """TensorFlow's scrambling of a stateless op's seed pair into (key [1], counter [2]):
    Philox under a fixed key of the seed taken as a counter."""
    seed = np.asarray(seed).astype(np.int64).view(np.uint64)
    mix = blocks_at(np.array([0x02461E293EC8F720], np.uint64).view(np.int64),
                    seed[:1], seed[1:2])[0]
    key = mix[0] | (mix[1] << _32)
    return (np.array([key], np.uint64).view(np.int64),
            np.array([0, mix[2] | (mix[3] << _32)], np.uint64).view(np.int64))


# -- TensorFlow's conversions of words to numbers -----------------------------------------

def unit_floats(w):
    """Floats in [0, 1) from the low 23 bits of each word (TensorFlow's Uint32ToFloat
    builds 1.m as bits and subtracts 1: the same number as m * 2**-23, exactly)."""
    return (w & np.uint64(0x7FFFFF)).astype(np.float32) * np.float32(2.0**-23)


def unit_doubles(w_high, w_low):
    """Doubles in [0, 1) from 52 bits of two words (Uint64ToDouble), as unit_floats."""
    return (((w_high & np.uint64(0xFFFFF)) << _32) | w_low).astype(np.float64) * 2.0**-52


def _box_muller(u1, u2, dtype):
    u1 = np.maximum(u1, dtype(1e-7))
    v = (2.0 * np.pi * u2.astype(np.float64)).astype(dtype)  # C++'s 2.0f * M_PI is a double
    radius = np.sqrt(dtype(-2.0) * np.log(u1))
    return np.sin(v) * radius, np.cos(v) * radius


def uniform(key, counter, size, dtype):
    if dtype == np.float16:  # Uint16ToHalf: 10 bits of each word
        return ((words(key, counter, size) & np.uint64(0x3FF)).astype(np.float32)
                * np.float32(2.0**-10)).astype(np.float16)
    if dtype == np.float64:
        w = words(key, counter, 2 * size)
        return unit_doubles(w[0::2], w[1::2])
    return unit_floats(words(key, counter, size)).astype(dtype)


def _normal_pairs(w, dtype):
    """Box-Muller: each two words (float32) or four (float64) give two normal values,
    interleaved as TensorFlow writes them."""
    if dtype == np.float64:
        a, b = _box_muller(unit_doubles(w[0::4], w[1::4]), unit_doubles(w[2::4], w[3::4]),
                           np.float64)
    else:
        a, b = _box_muller(unit_floats(w[0::2]), unit_floats(w[1::2]), np.float32)
    return np.stack([a, b], axis=-1).reshape(-1)


def normal(key, counter, size, dtype):
    work = np.float64 if dtype == np.float64 else np.float32
    per_value = 2 if work == np.float64 else 1
    w = words(key, counter, per_value * (size + size % 2))
    return _normal_pairs(w, work)[:size].astype(dtype)


def truncated_normal(key, counter, size, dtype):
    """Normal values inside two standard deviations. Output group g (4 float32 or 2
    float64 values) reads its own stream, from block g * 256 (or 128) on, its normal
    pairs in order, keeping those of magnitude < 2, as TensorFlow's kernel."""
    work = np.float64 if dtype == np.float64 else np.float32
    group = 2 if work == np.float64 else 4
    groups = -(-size // group)
    stride = group * SAMPLES_RESERVED_PER_OUTPUT // 4
    base = np.arange(groups, dtype=np.uint64) * np.uint64(stride)
    values = np.empty((groups, group), work)
    filled = np.zeros(groups, np.int64)
    block = 0
    while (filled < group).any():
        pending = np.nonzero(filled < group)[0]
        low, high = counters(counter, base[pending] + np.uint64(block))
        candidates = _normal_pairs(blocks_at(key, low, high).reshape(-1), work).reshape(
            len(pending), -1)
        for j in range(candidates.shape[1]):  # 4 (float32) or 2 (float64) per block
            take = (np.abs(candidates[:, j]) < 2) & (filled[pending] < group)
            rows = pending[take]
            values[rows, filled[rows]] = candidates[take, j]
            filled[rows] += 1
        block += 1
    return values.reshape(-1)[:size].astype(dtype)


def uniform_int(key, counter, size, dtype, minval, maxval):
    """minval + bits % (maxval - minval): 32 bits (int32) or 64 (int64) per value."""
    if np.dtype(dtype) == np.int64:
        w = words(key, counter, 2 * size)
        bits = w[0::2] | (w[1::2] << _32)
        span = np.uint64((int(maxval) - int(minval)) % 2**64)
        with np.errstate(over="ignore"):
            return (np.uint64(int(minval) % 2**64) + bits % span).view(np.int64)
    bits = words(key, counter, size)
    span = np.uint64((int(maxval) - int(minval)) % 2**32)
    return ((int(minval) + (bits % span).astype(np.int64)) % 2**32).astype(
        np.uint32).view(np.int32)


def full_int(key, counter, size, dtype):
    """Every bit random: one word per int32, two per int64 (low word first)."""
    if np.dtype(dtype) == np.int64:
        w = words(key, counter, 2 * size)
        return (w[0::2] | (w[1::2] << _32)).view(np.int64)
    return words(key, counter, size).astype(np.uint32).view(np.int32)
