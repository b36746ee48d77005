"""Runs a small tf.function in a fresh Python process against a given compile cache, for
the cache tests: what it computed, whether it compiled, and tapeflow's warnings."""

import glob
import json
import os
import subprocess
import sys

_SCRIPT = r'''
import json, os, sys, warnings
expression, mode, umask = sys.argv[1], sys.argv[2], sys.argv[3]
if umask:
    os.umask(int(umask, 8))
import tapeflow as tf
tf.config.settings.compile_mode = mode
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    f = tf.function(eval("lambda x: " + expression))
    x = tf.constant([1.0, 2.0, 4.0])
    first = f(x).numpy().tolist()
    concrete = f.get_concrete_function(x)
    compiled = concrete.wait_compiled()
    again = f(x).numpy().tolist()
import importlib
from tapeflow.backends.numba_cpu import kernels
numba_used = "numba" in sys.modules  # a kernel loaded from its bundle needs no Numba
from numba.core.dispatcher import Dispatcher
helpers = [d for name in kernels.HELPER_MODULES
           for d in vars(importlib.import_module(f"{kernels.__name__}.{name}")).values()
           if isinstance(d, Dispatcher)]
print(json.dumps({
    "first": first, "again": again, "compiled": compiled, "numba_used": numba_used,
    "helpers_loaded": sum(sum(d._cache_hits.values()) for d in helpers),
    "helpers_compiled": sum(sum(d._cache_misses.values()) for d in helpers),
    "key": concrete._compilation.kernel.cache_key if compiled else None,
    "warnings": [str(w.message) for w in caught
                 if "tapeflow" in str(w.message) or "tf.function" in str(w.message)]}))
'''


def run_function(cache_dir, expression, mode="sync", umask=None):
    """Runs `lambda x: <expression>` on [1, 2, 4] in a new process whose cache directory
    is `cache_dir`; returns its report (a dict)."""
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache_dir))
    result = subprocess.run([sys.executable, "-c", _SCRIPT, expression, mode,
                             "" if umask is None else f"{umask:o}"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def kernel_files(cache_dir, key):
    """{'.py' | '.nbi' | '.nbc': path} of one kernel's files."""
    found = {}
    for path in glob.glob(os.path.join(str(cache_dir), f"tapeflow_kernel_{key}*")) + \
            glob.glob(os.path.join(str(cache_dir), "__pycache__", f"tapeflow_kernel_{key}*")):
        found[os.path.splitext(path)[1]] = path
    return found
