"""Runs tests/gpu in its own pytest process under numba-cuda's simulator: the simulator
must be chosen (NUMBA_ENABLE_CUDASIM=1) before Numba loads, and this session loaded it
without. CI has no GPU; this is how `make test` checks placement, transfers, the
generated kernels (and their PTX for sm_90) and gradients on the device."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_gpu_tests_pass_under_the_simulator():
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install '.[test]')")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/gpu", "-q", "-x",
                           "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
