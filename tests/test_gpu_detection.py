"""A GPU that numba-cuda sees but cannot compile for is left unused, with a warning that
says why, instead of failing at every op's first kernel (numba-cuda 0.30 with NumPy 2.5
was such an installation)."""

import sys
from types import SimpleNamespace

import numba.cuda
import pytest

from tapeflow.backends.numba_cuda import device


@pytest.fixture
def one_real_gpu(monkeypatch):
    monkeypatch.setattr(device, "_cuda", SimpleNamespace(is_available=lambda: True,
                                                         gpus=[object()]))
    monkeypatch.setattr(device, "simulated", lambda: False)


def test_a_gpu_whose_compiler_fails_to_load_is_not_used(one_real_gpu, monkeypatch):
    monkeypatch.delattr(numba.cuda, "cudaimpl", raising=False)
    monkeypatch.setitem(sys.modules, "numba.cuda.cudaimpl", None)  # its import fails
    with pytest.warns(RuntimeWarning, match=r"does not use the GPU: numba-cuda .* NumPy"):
        assert device.device_count() == 0


def test_a_gpu_whose_compiler_loads_is_counted(one_real_gpu, recwarn):
    assert device.device_count() == 1
    assert not [w for w in recwarn if "GPU" in str(w.message)]
