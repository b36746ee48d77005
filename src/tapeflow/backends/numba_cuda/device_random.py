"""The device functions random kernels (random.py) draw with, on numba.cuda.random's
xoroshiro128+ generators (its state dtype and its step): one state per thread, advanced
by every number it draws.

Each thread's state is seeded on the device with two successive outputs of SplitMix64
from the draw's 64-bit seed (the seeding xoroshiro's authors recommend), so no state is
computed on the host. Uniform floats take the top 24 (float32) or 53 (float64) bits, so
they lie in [0, 1) as TensorFlow's; normals are Box-Muller on 1 - u, which is never 0
(no infinite draws); truncated normals redraw beyond two standard deviations, as
TensorFlow's TruncatedNormal.

Imported only when a kernel is first generated: it loads numba-cuda.
"""

import math

import numpy as np

from .device import cuda

_device = cuda().jit(device=True, inline="always")
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_UNIT32, _UNIT64 = np.float32(2.0 ** -24), np.float64(2.0 ** -53)
_TWO_PI32, _TWO_PI64 = np.float32(2.0 * math.pi), np.float64(2.0 * math.pi)


@_device
def _splitmix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@_device
def rng_seed_state(states, t, seed):
    start = seed + np.uint64(2) * np.uint64(t) * _GOLDEN
    states[t]["s0"] = _splitmix64(start + _GOLDEN)
    states[t]["s1"] = _splitmix64(start + _GOLDEN + _GOLDEN)


@_device
def rng_bits(states, t):
    """The next 64 bits of thread t's generator: numba.cuda.random's
    xoroshiro128p_next, inlined (numba's is a device function of its own, which only
    compiles with a GPU present)."""
    s0 = states[t]["s0"]
    s1 = states[t]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[t]["s0"] = ((s0 << np.uint64(55)) | (s0 >> np.uint64(9))) ^ s1 ^ (s1 << np.uint64(14))
    states[t]["s1"] = (s1 << np.uint64(36)) | (s1 >> np.uint64(28))
    return result


@_device
def rng_uniform_float32(states, t):
    return np.float32(rng_bits(states, t) >> np.uint64(40)) * _UNIT32


@_device
def rng_uniform_float64(states, t):
    return np.float64(rng_bits(states, t) >> np.uint64(11)) * _UNIT64


@_device
def rng_normal_float32(states, t):
    u1 = np.float32(1.0) - rng_uniform_float32(states, t)
    u2 = rng_uniform_float32(states, t)
    return np.float32(math.sqrt(np.float32(-2.0) * math.log(u1)) * math.cos(_TWO_PI32 * u2))


@_device
def rng_normal_float64(states, t):
    u1 = np.float64(1.0) - rng_uniform_float64(states, t)
    u2 = rng_uniform_float64(states, t)
    return np.float64(math.sqrt(np.float64(-2.0) * math.log(u1)) * math.cos(_TWO_PI64 * u2))


def _truncated(normal, limit):
    """Normals beyond `limit` (two standard deviations) drawn again."""
    def truncated(states, t):
        z = normal(states, t)
        while abs(z) > limit:
            z = normal(states, t)
        return z
    return _device(truncated)


rng_truncated_float32 = _truncated(rng_normal_float32, np.float32(2.0))
rng_truncated_float64 = _truncated(rng_normal_float64, np.float64(2.0))


# The kernels' namespace (device_math.HELPERS) has these under their names.
HELPERS = {"rng_seed_state": rng_seed_state, "rng_bits": rng_bits,
           "rng_uniform_float32": rng_uniform_float32,
           "rng_uniform_float64": rng_uniform_float64,
           "rng_normal_float32": rng_normal_float32, "rng_normal_float64": rng_normal_float64,
           "rng_truncated_float32": rng_truncated_float32,
           "rng_truncated_float64": rng_truncated_float64}
