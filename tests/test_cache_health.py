"""The compile cache heals: damaged files are rebuilt (with one warning), failed compiles
are reported, forks compile what was in flight, the cache has a size cap and can be
cleared, and a deleted function's kernel module is freed."""

import gc
import os
import signal
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cache_store
from tapeflow.backends.numba_cpu import cache
from tapeflow.config import settings
from tests.cache_processes import kernel_files, run_function

SESSION_CACHE = os.environ["TAPEFLOW_CACHE_DIR"]
DAMAGED = "damaged or unverifiable"


def _damage_warnings(report):
    return [w for w in report["warnings"] if DAMAGED in w]


def _assert_healthy(report, expected):
    assert report["compiled"], report
    np.testing.assert_allclose(report["first"], expected, rtol=1e-6)
    np.testing.assert_allclose(report["again"], expected, rtol=1e-6)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_damaged_kernel_files_are_rebuilt_with_one_warning_in_sync_and_tiered_mode():
    expression, expected = "tf.abs(x) * 3.0 - 0.25", [2.75, 5.75, 11.75]
    first = run_function(SESSION_CACHE, expression, "sync")
    _assert_healthy(first, expected)
    files = kernel_files(SESSION_CACHE, first["key"])
    assert set(files) == {".py", ".nbi", ".nbc", ".native"}
    good = {kind: _read(path) for kind, path in files.items()}

    # Numba's files are read only where the kernel's bundle is not (native_loader.py;
    # test_native_loader.py damages that)
    os.unlink(files[".native"])
    with open(files[".nbc"], "r+b") as f:  # truncated by a crash or a full disk
        f.truncate(len(good[".nbc"]) // 2)
    report = run_function(SESSION_CACHE, expression, "sync")
    _assert_healthy(report, expected)
    assert len(_damage_warnings(report)) == 1, report["warnings"]
    assert len(_read(files[".nbc"])) > len(good[".nbc"]) // 2  # written again

    os.unlink(files[".native"])
    with open(files[".nbi"], "wb") as f:
        f.write(os.urandom(300))
    with open(files[".py"], "wb") as f:
        f.write(good[".py"][:40])
    report = run_function(SESSION_CACHE, expression, "tiered")
    _assert_healthy(report, expected)
    assert len(_damage_warnings(report)) == 1, report["warnings"]
    assert _read(files[".py"]) == good[".py"]
    assert _read(files[".nbi"]).startswith(good[".nbi"][:18])  # signed again

    report = run_function(SESSION_CACHE, expression, "sync")  # and now it is healthy
    _assert_healthy(report, expected)
    assert report["warnings"] == []


def test_a_damaged_microgemm_cache_is_rebuilt_and_new_files_are_private_under_umask_0(
        tmp_path):
    cache_dir = tmp_path / "private" / "cache"
    script = ("import os, warnings; os.umask(0); warnings.simplefilter('always')\n"
              "import numpy as np\n"
              "from tapeflow.backends.numba_cpu.kernels import microgemm\n"
              "a = np.arange(12, dtype=np.float32).reshape(3, 4); b = a.T.copy()\n"
              "out = np.empty((3, 3), np.float32); microgemm.matmul_into(a, b, out)\n"
              "assert np.allclose(out, a @ b), out\n")
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache_dir))

    def run():
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return [line for line in done.stderr.splitlines() if DAMAGED in line]

    assert run() == []
    assert os.stat(cache_dir).st_mode & 0o777 == 0o700
    assert os.stat(cache_dir / "__pycache__").st_mode & 0o777 == 0o700
    names = sorted(os.listdir(cache_dir)) + sorted(os.listdir(cache_dir / "__pycache__"))
    files = [p for p in list(cache_dir.iterdir()) + list((cache_dir / "__pycache__").iterdir())
             if p.is_file()]
    assert {p.suffix for p in files} == {"", ".py", ".nbi", ".nbc"}, names  # "": the key
    assert all(os.stat(p).st_mode & 0o777 == 0o600 for p in files), names

    for path in files:
        if path.suffix in (".nbc", ".nbi", ".py"):
            path.write_bytes(path.read_bytes()[:-7] + b"garbage")
    assert len(run()) == 1
    assert run() == []


def test_a_compile_that_fails_is_kept_and_warned_once_in_sync_and_tiered_mode(monkeypatch):
    from tapeflow.backends import numba_cpu

    def broken(graph):
        raise RuntimeError("the compiler broke")

    monkeypatch.setattr(numba_cpu, "compile_graph", broken)
    for mode in ("sync", "tiered"):
        monkeypatch.setattr(settings, "compile_mode", mode)
        f = tf.function(lambda x: x * 2.0 + 1.0)
        x = tf.constant([1.0, 2.0])
        with pytest.warns(RuntimeWarning, match="compiling it failed with RuntimeError: "
                                                "the compiler broke") as record:
            np.testing.assert_allclose(f(x).numpy(), [3.0, 5.0])
            concrete = f.get_concrete_function(x)
            assert not concrete.wait_compiled()
            np.testing.assert_allclose(f(x).numpy(), [3.0, 5.0])
        assert len([w for w in record if "compiling it failed" in str(w.message)]) == 1
        assert isinstance(concrete._compilation.error, RuntimeError)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_during_a_background_compile_compiles_it_itself(monkeypatch):
    from tapeflow.backends import numba_cpu
    from tapeflow.graph import compile_worker
    monkeypatch.setattr(settings, "compile_mode", "tiered")
    monkeypatch.setattr(compile_worker, "WORTH_COMPILING", 0.0)  # from the first call
    real = numba_cpu.compile_graph
    started, release = threading.Event(), threading.Event()

    def held_compile(graph):
        started.set()
        release.wait()
        return real(graph)

    monkeypatch.setattr(numba_cpu, "compile_graph", held_compile)
    f = tf.function(lambda x: tf.sqrt(x) + 0.5)
    x = tf.constant([1.0, 4.0])
    f(x)  # queues the compile, which now waits inside compile_graph
    assert started.wait(30)
    pid = os.fork()
    if pid == 0:  # the child: the worker thread that held the compile is not here
        try:
            signal.alarm(120)  # a hang fails the test instead of stopping the suite
            release.set()
            compiled = f.get_concrete_function(x).wait_compiled()
            good = np.allclose(f(x).numpy(), [1.5, 2.5])
            os._exit(0 if compiled and good else 1)
        except BaseException:
            os._exit(2)
    release.set()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert f.get_concrete_function(x).wait_compiled(60)


def _fake_kernel(folder, digest, size, age):
    """A kernel's module and Numba files, `size` bytes each, last used `age` s ago."""
    name = f"{cache_store.PREFIX}_{digest}"
    os.makedirs(folder / "__pycache__", exist_ok=True)
    paths = [folder / f"{name}.py", folder / "__pycache__" / f"{name}.kernel-9.py311.nbi",
             folder / "__pycache__" / f"{name}.kernel-9.py311.1.nbc"]
    for path in paths:
        path.write_bytes(b"x" * size)
        os.utime(path, (0, 1_000_000_000 - age))
    return paths


def test_the_cache_is_capped_least_recently_used_first_and_can_be_cleared(
        tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setattr(settings, "cache_dir", str(folder))
    kernels = {age: _fake_kernel(folder, f"{age:064x}", 1000, age) for age in (50, 40, 30)}
    (folder / "notes.txt").write_text("not tapeflow's")
    source = "VALUE = 1\n"
    cache.write(source, cache.key(source))           # used now: the newest
    monkeypatch.setattr(settings, "cache_max_bytes", 7000)
    cache.write("VALUE = 2\n", cache.key("VALUE = 2\n"))  # a new kernel: over the cap
    assert not any(p.exists() for p in kernels[50])  # all files of the oldest went
    assert all(p.exists() for age in (40, 30) for p in kernels[age])
    os.utime(kernels[40][0], (0, 1_000_000_100))     # used again: 30 is now the oldest
    monkeypatch.setattr(settings, "cache_max_bytes", 4000)
    cache.write("VALUE = 3\n", cache.key("VALUE = 3\n"))
    assert not any(p.exists() for p in kernels[30])
    assert all(p.exists() for p in kernels[40])

    tf.config.clear_cache()
    left = sorted(p.name for p in folder.rglob("*") if p.is_file())
    assert left == ["notes.txt"]


def test_a_deleted_functions_kernel_module_is_freed(monkeypatch, numba_dispatchers):
    monkeypatch.setattr(settings, "compile_mode", "sync")
    f = tf.function(lambda x: tf.exp(x) * 0.5 + x)
    x = tf.constant([0.0, 1.0])
    np.testing.assert_allclose(f(x).numpy(), [0.5, np.e / 2 + 1], rtol=1e-6)
    key = f.get_concrete_function(x)._compilation.kernel.cache_key
    module = weakref.ref(cache._modules[cache.module_name(key)][0])
    assert cache.module_name(key) not in sys.modules
    del f
    gc.collect()
    assert module() is None


def test_a_new_kernel_loads_the_helpers_that_an_earlier_process_compiled(tmp_path):
    """Helpers are compiled once per cache directory, not once per process: a second
    process compiling another graph that calls them loads them (signed, private files)."""
    first = run_function(tmp_path, "tf.tanh(x) * 2.0")
    _assert_healthy(first, np.tanh([1.0, 2.0, 4.0]) * 2.0)
    assert first["helpers_compiled"] > 0 and first["helpers_loaded"] == 0, first
    (folder,) = tmp_path.glob("tapeflow_helpers_*")
    index_files = list(folder.glob("*.nbi"))
    assert index_files
    for path in index_files:
        assert os.stat(path).st_mode & 0o077 == 0
        assert cache_store.verified(str(path), _read(path)) is not None
    second = run_function(tmp_path, "tf.tanh(x) + tf.tanh(x) * x")
    _assert_healthy(second, np.tanh([1.0, 2.0, 4.0]) * (1.0 + np.array([1.0, 2.0, 4.0])))
    assert second["helpers_compiled"] == 0 and second["helpers_loaded"] > 0, second
