"""The GPU tests run under numba-cuda's simulator (one simulated GPU, each thread a
Python thread), which must be chosen before Numba loads: in their own pytest process,
with NUMBA_ENABLE_CUDASIM=1 (tests/test_gpu_simulator.py starts it inside the main
suite). On a machine with a GPU, perf/gpu.py runs them on the device instead
(TAPEFLOW_GPU_TESTS_ON_DEVICE=1). Collected by a session with neither, they are left
out."""

import os

import pytest

if (os.environ.get("NUMBA_ENABLE_CUDASIM") != "1"
        and os.environ.get("TAPEFLOW_GPU_TESTS_ON_DEVICE") != "1"):
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def sync_compiles():
    """tf.function compiles at its first call (not in the background), so that the
    calls a test counts run the compiled program."""
    from tapeflow.config import settings
    mode = settings.compile_mode
    settings.compile_mode = "sync"
    yield
    settings.compile_mode = mode


@pytest.fixture
def notes(capfd):
    """The soft-placement notes written to stderr since the last read, the notes of
    earlier tests forgotten first so that they are written again."""
    from tapeflow import placement
    placement._devices.noted_ops.clear()

    def read():
        return [line for line in capfd.readouterr().err.splitlines()
                if "has no GPU kernel" in line]
    return read
