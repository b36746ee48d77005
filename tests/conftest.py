"""Session-wide test settings: hypothesis profiles and one Numba cache directory.

This file runs before any test module imports tapeflow, so the environment variables
set here are the ones tapeflow's config reads.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

# One compiled-kernel cache for the whole session (compiled tests share it), never the
# user's ~/.cache/tapeflow. config.py reads it when tapeflow is first imported. Under
# pytest-xdist (`make test`) each worker imports this file, so each has its own: tests
# that damage or count a cache's files see only their worker's.
_CACHE_DIR = tempfile.mkdtemp(prefix="tapeflow-test-cache-")
os.environ["TAPEFLOW_CACHE_DIR"] = _CACHE_DIR
# Background compiles in threads: a process per tiered compile would start hundreds of
# interpreters over the session. test_compile_process.py runs them in processes.
os.environ["TAPEFLOW_COMPILE_PROCESSES"] = "0"
if "tapeflow.config" in sys.modules:  # imported early (by a plugin): point it here too
    sys.modules["tapeflow.config"].settings.cache_dir = _CACHE_DIR

# `tests.op_samples` must import however pytest was started (from the repo root or not).
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import pytest
from hypothesis import HealthCheck, settings

# The generated op suite draws ~10 examples per (op, test): enough to hit broadcasting,
# scalars and each dtype branch, while the whole suite stays well under a minute on two
# cores. CI is derandomized so a failure reproduces from the log alone.
_COMMON = {"deadline": None,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("default", max_examples=10, **_COMMON)
settings.register_profile("ci", max_examples=12, derandomize=True, database=None,
                          print_blob=True, **_COMMON)
settings.register_profile("thorough", max_examples=200, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "default"))


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _tapeflow_warning_filter():
    """pytest restores the warning filters around collection and each test, dropping the
    one tapeflow installs at import; put it back, so tests see what a user sees."""
    from tapeflow.ops.registry import quiet_numpy_warnings
    quiet_numpy_warnings()
    yield


@pytest.fixture
def numba_dispatchers(monkeypatch):
    """Kernels compiled or loaded by Numba, never from their bundle (native_loader.py),
    for tests that inspect Numba's dispatcher."""
    from tapeflow.backends.numba_cpu import native_loader
    monkeypatch.setattr(native_loader, "kernel", lambda digest, signature: None)
