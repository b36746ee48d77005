"""The GPU kernels' disk cache without a GPU: an entry's name covers the kernel, the
device's compute capability and the versions; its files are numba-cuda's index and data
files, signed in the private cache directory; a damaged or planted file is a miss (one
warning) and the entry is written anew; eviction and clearing treat them as the CPU
kernels' files. The entries here hold a kernel's PTX for sm_90 (NVVM compiles it without
a GPU) where a GPU's hold its code library with the cubin; what goes around them is the
code a GPU runs (numba-cuda's CUDACache, its _Kernel rebuilt from the entry). That a
second process launches the loaded kernel is tests/gpu/test_disk_cache.py's, on a GPU.
"""

import os
import pickle
import stat

import pytest

pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install '.[test]')")

from numba.cuda.cudadrv import nvvm  # noqa: E402

try:
    nvvm.NVVM()
except Exception as e:  # noqa: BLE001
    pytest.skip(f"NVVM is not installed (pip install '.[cuda]'): {e}", allow_module_level=True)

from numba import cuda  # noqa: E402

from tapeflow import cache_store  # noqa: E402
from tapeflow.backends.numba_cuda import disk_cache, kernels  # noqa: E402

SM_90 = (9, 0)
KEY = ("map", "float32", 1, (("float32", "same"),), (), "tanh_f32(x0)", None)


class _Codegen:
    """What numba-cuda's cache asks of the target's code generator: the CUDA runtime and
    the device's compute capability it compiles for."""

    def __init__(self, cc):
        self.cc = cc

    def magic_tuple(self):
        return ((12, 9), self.cc)


class _Target:
    def __init__(self, cc):
        self._codegen = _Codegen(cc)

    def refresh(self):
        pass

    def codegen(self):
        return self._codegen


class _PTXKernel:
    """A compiled kernel as numba-cuda's cache sees one (its _Kernel's reduced state),
    holding the PTX in place of the code library."""

    def __init__(self, signature, ptx, cc):
        self.codegen = _Codegen(cc)
        self.signature = signature
        self.ptx = ptx

    def _reduce_states(self):
        return dict(cooperative=False, name="kernel", signature=self.signature,
                    codelibrary=self.ptx, debug=False, lineinfo=False, call_helper=None,
                    extensions=[])


class _Planted:
    """Unpickling it creates `marker`: code run from the cache's files."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def compiled():
    """(python function, signature, text, PTX for sm_90) of one eager kernel."""
    function, signature, text = kernels._python_function(KEY)
    ptx, _ = cuda.compile_ptx(function, signature.args, cc=SM_90)
    return function, signature, text, ptx


@pytest.fixture
def one_warning(monkeypatch):
    monkeypatch.setattr(cache_store, "_damage_reported", False)


def _cache(folder, compiled):
    function, signature, text, _ = compiled
    return disk_cache.SignedKernelCache(function, str(folder),
                                        disk_cache.digest(text, signature, SM_90))


def _store(folder, compiled):
    function, signature, text, ptx = compiled
    _cache(folder, compiled).save_overload(signature, _PTXKernel(signature, ptx, SM_90))


def _load(folder, compiled):
    """What a later process finds for the kernel: its rebuilt _Kernel, or None."""
    return _cache(folder, compiled).load_overload(compiled[1], _Target(SM_90))


def _entry_files(folder):
    return sorted(os.path.join(folder, "__pycache__", name)
                  for name in os.listdir(os.path.join(folder, "__pycache__")))


def test_the_entry_name_covers_source_signature_device_and_versions(compiled, monkeypatch):
    _, signature, text, _ = compiled
    name = disk_cache.digest(text, signature, SM_90)
    assert name == disk_cache.digest(text, signature, SM_90)
    others = {disk_cache.digest(text, signature, (8, 0)),
              disk_cache.digest(text.replace("tanh", "exp"), signature, SM_90),
              disk_cache.digest(text, kernels._signature([kernels._array("float64")] * 2),
                                SM_90)}
    assert name not in others and len(others) == 3
    versions = disk_cache.versions()
    for library in ("tapeflow", "numba", "numba-cuda", "NVVM", "CUDA runtime"):
        assert any(v.startswith(library + " ") for v in versions), versions
    monkeypatch.setattr(disk_cache, "_salt", None)
    monkeypatch.setattr(disk_cache, "versions", lambda: versions[:3] + ["NVVM (2, 1)"]
                        + versions[4:])
    assert disk_cache.digest(text, signature, SM_90) != name


def test_an_entry_is_signed_private_and_loads_back(compiled, tmp_path):
    folder = str(tmp_path)
    _store(folder, compiled)
    files = _entry_files(folder)
    assert [path.rsplit(".", 1)[1] for path in files] == ["nbc", "nbi"]
    for path in files:
        assert cache_store._KERNEL_FILE.match(os.path.basename(path)), path
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        with open(path, "rb") as f:
            assert f.read().startswith(cache_store._SIGNED_MAGIC)
    kernel = _load(folder, compiled)
    assert kernel.entry_name == "kernel" and kernel._codelibrary == compiled[3]
    assert ".entry" in kernel._codelibrary
    assert _cache(folder, compiled).load_overload(compiled[1], _Target((8, 0))) is None


@pytest.mark.parametrize("damage", ["truncated", "edited", "planted"])
def test_a_damaged_entry_is_a_miss_with_one_warning_and_is_rebuilt(compiled, tmp_path, damage,
                                                                   one_warning):
    folder = str(tmp_path)
    _store(folder, compiled)
    index, = [f for f in _entry_files(folder) if f.endswith(".nbi")]
    data, = [f for f in _entry_files(folder) if f.endswith(".nbc")]
    marker = tmp_path / "ran"
    with open(data, "rb") as f:
        content = f.read()
    if damage == "truncated":
        content = content[:len(content) // 2]
    elif damage == "edited":
        content = content[:-1] + bytes([content[-1] ^ 1])
    else:  # a pickle that creates `marker` when loaded, in place of both files
        content = pickle.dumps(_Planted(str(marker)))
        with open(index, "wb") as f:
            f.write(content)
    with open(data, "wb") as f:
        f.write(content)
    with pytest.warns(RuntimeWarning, match="damaged or unverifiable") as caught:
        assert _load(folder, compiled) is None
        _store(folder, compiled)  # the process compiled it again: the entry is rewritten
        assert _load(folder, compiled)._codelibrary == compiled[3]
    assert len(caught) == 1
    assert not marker.exists()


def test_entries_are_evicted_and_cleared_as_the_cpu_kernels(compiled, tmp_path):
    folder = str(tmp_path)
    _store(folder, compiled)
    assert cache_store.evict(folder, 10**9) == 0 and len(_entry_files(folder)) == 2
    assert cache_store.evict(folder, 0) == 1 and _entry_files(folder) == []
    _store(folder, compiled)
    cache_store.clear(folder)
    assert _entry_files(folder) == [] and _load(folder, compiled) is None


def test_the_planted_payload_would_run_if_unpickled(tmp_path):
    """The control for the planted case: what was planted does run code when loaded."""
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(_Planted(str(marker)))).close()  # noqa: S301 - the control
    assert marker.exists()
