"""Two parts of a first compile, each measured against the way it was done before:

- the scalar helpers' compile with typed constants made before typing
  (backends/numba_cpu/typed_constants.py) and without: each helper compiled afresh,
  again and again in this process, the two ways alternated, best of REPEAT;
- a new kernel's first call through the built-in function of its compiled wrapper
  (machine.entry_point) and through Numba's dispatcher, which types its arguments first:
  each the first call of the process that compiled the kernel (fresh processes, a cache
  directory whose helpers are compiled and whose kernels are removed before each),
  alternated, median of REPEAT.

Usage: python perf/compile_parts.py   (or python perf/run.py compile_parts)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import Result

REPEAT = 5
HELPERS = ("tanh_f32", "log_f32", "sigmoid_f32")

_FIRST_CALL = """
import json, sys, time
import numpy as np
import tapeflow as tf
from tapeflow import cache_store
from tapeflow.backends.numba_cpu import machine, runtime
cache_store.clear(cache_store.directory())  # this graph's kernel is compiled afresh
if sys.argv[1] == "dispatcher":  # the way before: Numba's dispatcher runs the kernel
    machine.entry_point = lambda kernel, signature: kernel
first = []
call = runtime.CompiledGraph.__call__
def timed(self, *args, **kwargs):
    start = time.perf_counter()
    try:
        return call(self, *args, **kwargs)
    finally:
        first.append(time.perf_counter() - start)
runtime.CompiledGraph.__call__ = timed
f = tf.function(lambda x, w: tf.reduce_sum(tf.tanh(x @ w) * 2.0))
f(tf.constant(np.ones((8, 4), np.float32)), tf.constant(np.ones((4, 3), np.float32)))
print(json.dumps({"first call": first[0]}))
"""


def helper_compiles():
    """{helper: (best seconds with the rewrite, best seconds without)}."""
    from tapeflow.backends.numba_cpu import kernels, typed_constants
    from tapeflow.backends.numba_cpu.kernels import scalar_math
    from numba import types
    enabled = typed_constants.TypedConstants.__init__
    times = {name: ([], []) for name in HELPERS}
    for round_ in range(2 * REPEAT):
        on = round_ % 2 == 0

        def init(self, state=None, on=on):
            enabled(self, state)
            self._enabled = self._enabled and on
        typed_constants.TypedConstants.__init__ = init
        try:
            for name in HELPERS:
                fresh = kernels.helper(getattr(scalar_math, name).py_func)
                start = time.process_time()
                fresh.compile((types.float32,))
                times[name][0 if on else 1].append(time.process_time() - start)
        finally:
            typed_constants.TypedConstants.__init__ = enabled
    return {name: (min(with_), min(without)) for name, (with_, without) in times.items()}


def first_calls():
    """(median first kernel call through the entry point, through the dispatcher)."""
    env = dict(os.environ, TAPEFLOW_COMPILE="sync")
    found = {"entry point": [], "dispatcher": []}
    with tempfile.TemporaryDirectory() as cache_dir:
        env["TAPEFLOW_CACHE_DIR"] = cache_dir
        for round_ in range(REPEAT + 1):
            for way in ("entry point", "dispatcher")[::1 if round_ % 2 else -1]:
                out = subprocess.run([sys.executable, "-c", _FIRST_CALL, way.split()[0]],
                                     env=env, capture_output=True, text=True, check=True)
                if round_:  # the first round compiles the helpers into the directory
                    found[way].append(json.loads(out.stdout.splitlines()[-1])["first call"])
    return statistics.median(found["entry point"]), statistics.median(found["dispatcher"])


def run(peers):
    rows = []
    for name, (with_, without) in helper_compiles().items():
        rows.append(Result(f"{name} compile (CPU s)", "typed constants", with_, without,
                           "vs numpy: the same compile without them"))
    entry, dispatcher = first_calls()
    rows.append(Result("a new kernel's first call", "entry point", entry, dispatcher,
                       "vs numpy: through Numba's dispatcher"))
    return rows


if __name__ == "__main__":
    for r in run({}):
        print(f"{r.benchmark:34} {r.impl:16} {r.seconds * 1e3:9.2f} ms {r.ratio:6.2f}x  "
              f"{r.note}")
