"""On a GPU, a second process loads the kernels the first one compiled from the disk
cache (numba-cuda's cache hits, no compile) and computes the same numbers. Under the
simulator kernels are Python and nothing is cached; tests/test_gpu_disk_cache.py checks
the entries' names, signatures and rebuilds there without a GPU."""

import json
import os
import subprocess
import sys

import pytest

from tapeflow.backends.numba_cuda.device import simulated

pytestmark = pytest.mark.skipif(simulated(), reason="the simulator's kernels are Python: "
                                                    "nothing is cached")

_RUN = """
import json
import numpy as np
import tapeflow as tf
from tapeflow.backends.numba_cuda import kernels
x = tf.constant(np.linspace(-1.0, 1.0, 1000, dtype=np.float32))
y = tf.reduce_sum(tf.tanh(x) * x).numpy()
stats = [k.stats for k in kernels._kernels.values()]
print(json.dumps({"value": float(y),
                  "hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats)}))
"""


def _run(cache_dir):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache_dir))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernels_from_the_disk_cache(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["hits"] == 0 and first["misses"] >= 3  # tanh, the product, the sum
    assert second["misses"] == 0 and second["hits"] == first["misses"]
    assert second["value"] == first["value"]
