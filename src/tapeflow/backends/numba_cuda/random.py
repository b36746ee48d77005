"""Random ops drawn on the device (RandomStandardNormal, RandomUniform, TruncatedNormal,
RandomUniformInt), eagerly and in compiled graphs, with numba.cuda.random's xoroshiro128+
generators (device_random.py): one "random" kernel per op and dtype, each thread drawing
the elements of a grid-stride loop from its own state.

As TensorFlow's, GPU draws are not the CPU's numbers, but they follow from the op's seed
attrs (ops/random.py: the seed pair from tf.random.set_seed and the op seed, and the
call counter). The states of a seed pair and launch width are kept in a pool: a draw
whose counter is the next one of the pooled states draws on from where the last draw
left them (a training loop creates no states after its first step); any other counter
(the first draw, the first after tf.random.set_seed) seeds them again on the device from
the pair and the counter. So the same calls after the same tf.random.set_seed draw the
same numbers, eagerly or compiled."""

import collections
import math

import numpy as np

from ...device_tensor import on_device
from ...ops.random import (
    RANDOM_STANDARD_NORMAL,
    RANDOM_UNIFORM,
    RANDOM_UNIFORM_INT,
    TRUNCATED_NORMAL,
)
from . import device, kernels

_MOST_BLOCKS = 64  # states per pooled array: at most 64 blocks' threads (256 KiB)


def _seed_key():
    return ("random", "\n".join([
        "def kernel(states, seed):",
        "    for t in range(cuda.grid(1), states.shape[0], cuda.gridsize(1)):",
        "        rng_seed_state(states, t, seed)",
    ]) + "\n", ("states", "uint64"))


class StatePool:
    """xoroshiro128+ states per (GPU, seed pair, number of states), the least recently
    used dropped beyond `capacity` (draws without any seed get a new pair each time)."""

    def __init__(self, capacity=256):
        self.capacity = capacity
        self._entries = collections.OrderedDict()  # key -> [states, next counter]
        self.created = 0  # state arrays allocated (a training loop allocates none)

    def states(self, seed, seed2, counter, n):
        """The `n` states a draw with these seed attrs uses, positioned for it."""
        key = (device._current_gpu(), seed, seed2, n)
        entry = self._entries.get(key)
        if entry is None:
            states_dtype = device.cuda_random().xoroshiro128p_dtype
            entry = self._entries[key] = [device.cuda().device_array(n, dtype=states_dtype),
                                          None]
            self.created += 1
            if len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        if entry[1] != counter:
            device.launch(kernels.kernel(_seed_key()), n, entry[0], _seed(seed, seed2, counter))
        entry[1] = counter + 1
        return entry[0]


POOL = StatePool()


def _seed(seed, seed2, counter):
    """One 64-bit seed for the states of a draw: the seed attrs hashed together."""
    entropy = [int(seed) % 2**64, int(seed2) % 2**64, int(counter)]
    return np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]


def _draw_key(element, dtype, extra=()):
    """The kernel writing `element` (an expression over the thread's states `t`)."""
    params = ", ".join(("n", "states", "out") + tuple(name for name, _ in extra))
    return ("random", "\n".join([
        f"def kernel({params}):",
        "    t = cuda.grid(1)",
        "    for i in range(t, n, cuda.gridsize(1)):",
        f"        out[i] = {element}",
    ]) + "\n", ("int64", "states", f"array:{dtype.name}") + tuple(t for _, t in extra))


class Draw:
    """A float sampler: `kind` names its device functions (rng_<kind>_<dtype>)."""

    def __init__(self, kind):
        self.kind = kind

    def key_and_arguments(self, attrs, dtype):
        if dtype.name not in ("float32", "float64"):  # half: drawn on the CPU
            return None, ()
        return _draw_key(f"rng_{self.kind}_{dtype.name}(states, t)", dtype), ()

    def run(self, op, inputs, attrs, shape, dtype, index):
        key, arguments = self.key_and_arguments(attrs, dtype)
        if key is None:
            return None
        n = math.prod(shape)
        out = device.empty(n, dtype)
        if n:
            blocks, threads = device.launch_shape(n)
            blocks = min(blocks, _MOST_BLOCKS)
            states = POOL.states(attrs["seed"], attrs["seed2"], attrs["counter"],
                                 blocks * threads)
            device.launch_as(kernels.kernel(key), (blocks, threads), n, states, out,
                             *arguments)
        return on_device(out, shape, dtype, index)


class UniformInt(Draw):
    """Integers in [minval, maxval): the generator's bits modulo the range, as
    TensorFlow's kernel."""

    def __init__(self):
        super().__init__("bits")

    def key_and_arguments(self, attrs, dtype):
        element = f"np.{dtype.name}(low + np.int64(rng_bits(states, t) % span))"
        key = _draw_key(element, dtype, (("low", "int64"), ("span", "uint64")))
        return key, (np.int64(attrs["minval"]),
                     np.uint64(int(attrs["maxval"]) - int(attrs["minval"])))


def attach(lowers):
    lowers(RANDOM_STANDARD_NORMAL)(Draw("normal"))
    lowers(RANDOM_UNIFORM)(Draw("uniform"))
    lowers(TRUNCATED_NORMAL)(Draw("truncated"))
    lowers(RANDOM_UNIFORM_INT)(UniformInt())
