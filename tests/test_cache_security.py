"""Nothing in the compile cache runs unless tapeflow wrote it: a directory that others
can write is refused, and planted or tampered files in a private one are rejected
(signatures) and rebuilt. The planted files would run code (they create a marker file)
if they were imported or unpickled: the controls below show that they do."""

import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cache_store
from tapeflow.config import settings
from tests.cache_processes import kernel_files, run_function

NOBODY = 65534

# Plants, as the user `uid` ("" for the current one), a .pyc whose header matches the
# kernel module file (Python would import it instead of the source) and pickles whose
# loading creates `marker`, where Numba keeps the kernel's index and data.
_PLANT = r'''
import importlib.util, marshal, os, pickle, sys
folder, name, lineno, source_path, marker, uid, kinds = sys.argv[1:8]
if uid:
    os.setgid(int(uid))
    os.setuid(int(uid))

class Payload:
    def __reduce__(self):
        return (open, (marker, "w"))

module = os.path.join(folder, name + ".py")
if not os.path.exists(module):
    with open(source_path) as source, open(module, "w") as f:
        f.write(source.read())
os.makedirs(os.path.join(folder, "__pycache__"), exist_ok=True)
info = os.stat(module)
code = compile(f"open({marker!r}, 'w').close()\n", module, "exec")
header = (importlib.util.MAGIC_NUMBER + bytes(4) + int(info.st_mtime).to_bytes(4, "little")
          + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
pyc = os.path.join(folder, "__pycache__", f"{name}.{sys.implementation.cache_tag}.pyc")
with open(pyc, "wb") as f:
    f.write(header + marshal.dumps(code))
base = os.path.join(folder, "__pycache__",
                    f"{name}.kernel-{lineno}.py{sys.version_info[0]}{sys.version_info[1]}")
for kind in kinds.split(","):
    with open(base + {"nbi": ".nbi", "nbc": ".1.nbc"}[kind], "wb") as f:
        f.write(pickle.dumps(Payload()))
'''


def _kernel(expression):
    """(cache key, source) of the kernel `lambda x: expression` compiles to."""
    saved = settings.compile_mode
    settings.compile_mode = "sync"
    try:
        f = tf.function(eval("lambda x: " + expression))  # noqa: S307 - the test's text
        concrete = f.get_concrete_function(tf.constant([1.0, 2.0, 4.0]))
        concrete.kernel_source  # compiles it
        source = concrete._compilation.kernel.module_source
        return concrete._compilation.kernel.cache_key, source
    finally:
        settings.compile_mode = saved


def _plant(folder, expression, marker, kinds, uid=""):
    key, source = _kernel(expression)
    lineno = source.splitlines().index(next(
        line for line in source.splitlines() if line.startswith("@njit"))) + 1
    source_path = os.path.join(str(folder), "..", "source.txt")
    with open(source_path, "w") as f:
        f.write(source)
    os.chmod(source_path, 0o644)
    subprocess.run([sys.executable, "-c", _PLANT, str(folder), f"tapeflow_kernel_{key}",
                    str(lineno), source_path, str(marker), str(uid), kinds], check=True,
                   timeout=60)
    return key


def _assert_payload_is_live(pickled, marker):
    """The control: loading what was planted does run code."""
    assert not os.path.exists(marker)
    pickle.loads(pickled)  # noqa: S301 - the point of the control
    assert os.path.exists(marker)
    os.unlink(marker)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="plants files as another user: needs root")
def test_a_cache_directory_another_user_can_write_is_refused_and_nothing_planted_runs():
    base = tempfile.mkdtemp(prefix="tapeflow-shared-")
    try:
        os.chmod(base, 0o755)
        owned_by_nobody = os.path.join(base, "owned_by_nobody")
        world_writable = os.path.join(base, "world_writable")
        os.mkdir(owned_by_nobody)
        os.chown(owned_by_nobody, NOBODY, NOBODY)
        os.mkdir(world_writable)
        os.chmod(world_writable, 0o777)
        marker = os.path.join(base, "marker")
        expression, expected = "tf.square(x) - 1.5", [-0.5, 2.5, 14.5]
        for folder in (owned_by_nobody, world_writable):
            key = _plant(folder, expression, marker, "nbi,nbc", uid=NOBODY)
            report = run_function(folder, expression, "sync")
            assert report["compiled"] and report["key"] == key
            np.testing.assert_allclose(report["again"], expected)
            refusals = [w for w in report["warnings"] if "does not use" in w]
            assert len(refusals) == 1 and folder in refusals[0], report["warnings"]
            assert not os.path.exists(marker)
            planted = kernel_files(folder, key)
            assert os.stat(planted[".nbi"]).st_uid == NOBODY  # untouched
            with open(planted[".nbi"], "rb") as f:
                _assert_payload_is_live(f.read(), marker)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run_rejecting(folder, expression, mode, planted_path, marker, expected):
    """Runs the function over a planted file: it computes, warns once, replaces the file,
    and runs nothing planted. Returns what was planted."""
    with open(planted_path, "rb") as f:
        planted = f.read()
    report = run_function(folder, expression, mode)
    assert report["compiled"] and not marker.exists()
    np.testing.assert_allclose(report["first"], expected)
    np.testing.assert_allclose(report["again"], expected)
    assert len([w for w in report["warnings"] if "damaged or unverifiable" in w]) == 1
    with open(planted_path, "rb") as f:
        assert f.read() != planted  # rebuilt
    return planted


def test_files_planted_in_a_private_cache_are_rejected_rebuilt_and_never_run(tmp_path):
    folder, marker = tmp_path / "cache", tmp_path / "marker"
    expression, expected = "tf.square(x) * 0.5 + x", [1.5, 4.0, 12.0]
    first = run_function(folder, expression, "sync")
    files = kernel_files(folder, first["key"])

    # Numba's files are read where the kernel's bundle is not (native_loader.py; a bundle
    # that does not verify is test_native_loader.py's)
    os.unlink(files[".native"])
    assert _plant(folder, expression, marker, "nbc") == first["key"]  # a valid index
    _run_rejecting(folder, expression, "sync", files[".nbc"], marker, expected)
    os.unlink(files[".native"])
    _plant(folder, expression, marker, "nbi")
    planted = _run_rejecting(folder, expression, "tiered", files[".nbi"], marker, expected)
    _assert_payload_is_live(planted, str(marker))


def test_a_world_writable_cache_directory_of_ours_is_refused_with_one_warning(
        tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setattr(cache_store, "_usable", {})
    monkeypatch.setattr(cache_store, "_fallback", None)
    monkeypatch.setattr(settings, "cache_dir", str(shared))
    with pytest.warns(RuntimeWarning, match="writable by group or others") as record:
        used = cache_store.directory()
        assert cache_store.directory() == used
    assert len(record) == 1
    assert used != str(shared)
    info = os.stat(used)
    assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700


def test_a_new_cache_directory_is_private(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_store, "_usable", {})
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "new" / "cache"))
    old = os.umask(0)
    try:
        used = cache_store.directory()
    finally:
        os.umask(old)
    assert used == str(tmp_path / "new" / "cache")
    assert stat.S_IMODE(os.stat(used).st_mode) == 0o700


def test_a_signing_key_file_others_could_read_is_replaced_by_a_private_one(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    key_file = folder / ".tapeflow-key"
    key_file.write_bytes(b"k" * 32)
    os.chmod(key_file, 0o644)
    signed = cache_store.sign(str(folder / "__pycache__" / "a.nbi"), b"body")
    assert key_file.read_bytes() != b"k" * 32
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert cache_store.verified(str(folder / "__pycache__" / "a.nbi"), signed) == b"body"
    assert cache_store.verified(str(folder / "__pycache__" / "b.nbi"), signed) is None
    assert cache_store.verified(str(folder / "__pycache__" / "a.nbi"), signed[:-1]) is None
