"""Every kernel the GPU tests generated compiles to PTX for sm_90. The simulator runs
kernels as Python, so it accepts what a real target refuses (NumPy ufuncs on scalars, a
device function that is not inlined); NVVM (from the CUDA wheels the `cuda` and `test`
extras install) compiles them without a GPU, in a process without the simulator."""

import json
import os
import subprocess
import sys

import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda import ctc, kernels

from . import test_parity

_COMPILE = """
import json, sys
from numba.cuda.cudadrv import nvvm
try:
    nvvm.NVVM()
except Exception as e:
    print(json.dumps({"no_nvvm": str(e)}))
    sys.exit(0)
from tapeflow.backends.numba_cuda import kernels
failed = {}
for key in json.load(sys.stdin):
    try:
        assert ".entry" in kernels.ptx(key, cc=(9, 0))
    except Exception as e:
        failed[repr(key)] = f"{type(e).__name__}: {e}"
print(json.dumps({"failed": failed}))
"""


def _representatives(keys):
    """One kernel per element expression and dtypes, and one per way of indexing (rank
    and broadcast modes): the code of a map kernel is its indexing plus its element, so
    these cover every generated line (every reduction key is kept). A way of indexing
    not yet covered is taken with the cheapest element at hand: a special function's
    element (igamma, betainc) takes seconds to compile."""
    chosen, elements, indexings = [], set(), set()
    maps = [key for key in keys if key[0] == "map"]
    for key in keys:
        if key[0] != "map":
            chosen.append(key)
        elif _element(key) not in elements:
            elements.add(_element(key))
            indexings.add(_indexing(key))
            chosen.append(key)
    for key in sorted(maps, key=lambda key: len(key[5])):
        if _indexing(key) not in indexings:
            indexings.add(_indexing(key))
            chosen.append(key)
    return chosen


def _element(key):
    _, out, _, inputs, attrs, expression, check = key
    return out, tuple(d for d, _ in inputs), attrs, expression, check


def _indexing(key):
    _, _, rank, inputs, *_ = key
    return rank, tuple(m for _, m in inputs)


def test_every_generated_kernel_compiles_to_ptx_for_sm_90():
    if not kernels.compiled_keys():  # run alone: generate the parity tests' kernels
        for name in test_parity.ELEMENTWISE + test_parity.REDUCTIONS:
            test_parity.test_gpu_matches_cpu_on_the_samplers_inputs(name=name)
    keys = _representatives(kernels.compiled_keys())
    # CTC's kernel is one text whatever the shapes: both float dtypes, always.
    keys += [k for k in (ctc._key(tf.float32, tf.int32), ctc._key(tf.float64, tf.int32))
             if k not in keys]
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", _COMPILE], input=json.dumps(keys), env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if "no_nvvm" in result:
        pytest.skip(f"NVVM is not installed (pip install '.[cuda]'): {result['no_nvvm']}")
    assert result["failed"] == {}
