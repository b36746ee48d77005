"""Kernels a warm process loads from the cache without importing Numba
(backends/numba_cpu/native_loader.py): the same values and errors as the process that
compiled them, and a damaged or unloadable file is a cache miss, never a crash."""

import glob
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cache_store
from tapeflow.backends.numba_cpu import elf_symbols, native_bundle, native_loader
from tapeflow.config import settings

pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64")),
    reason="kernels load without Numba on Linux (ELF) only")

# A gradient step with a float32 product (the helpers called by symbol, microgemm among
# them for an unknown size) and a gather whose index is checked when the kernel runs.
_SCRIPT = r'''
import json, sys
import numpy as np
import tapeflow as tf
tf.config.settings.compile_mode = "sync"
w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))

@tf.function
def step(x, i):
    with tf.GradientTape() as tape:
        logits = x @ w
        loss = tf.reduce_sum(tf.nn.softmax(logits) * tf.gather(logits, i, axis=1))
    return loss, tape.gradient(loss, w)

x = tf.constant(np.arange(8, dtype=np.float32).reshape(2, 4) / 7)
loss, grad = step(x, tf.constant([2, 0, 1]))
report = {"loss": float(loss), "grad": grad.numpy().tolist(),
          "numba_after_first_call": "numba" in sys.modules}
try:
    step(x, tf.constant([3, 0, 1]))
except tf.errors.InvalidArgumentError as e:
    report["error"] = str(e).splitlines()[0]
# A new graph in the same process compiles with Numba, beside the loaded kernel.
new = tf.function(lambda x: tf.reduce_sum(tf.tanh(x @ w)))(x)
report["new_graph"] = float(new)
report["again"] = float(step(x, tf.constant([2, 0, 1]))[0])
print(json.dumps(report))
'''


def _run(cache_dir):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(cache_dir))
    result = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def _bundles(cache_dir):
    return glob.glob(os.path.join(str(cache_dir), cache_store.NUMBA_SUBDIR, "*.native"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache directory where the script ran once (compiled); its report."""
    folder = tmp_path_factory.mktemp("native")
    first, _ = _run(folder)
    assert first["numba_after_first_call"]
    assert _bundles(folder)
    return folder, first


def test_a_warm_process_runs_its_kernel_without_numba_and_gets_the_same_answers(warm_cache):
    folder, first = warm_cache
    second, _ = _run(folder)
    assert not second["numba_after_first_call"]
    assert second == dict(first, numba_after_first_call=False)
    assert "indices[0] = 3 is not in [0, 3)" in first["error"], first["error"]


def _damage(folder, change):
    for path in _bundles(folder):
        body = cache_store.read_signed(path)
        header, objects = native_bundle.unpack(body)
        cache_store.write_signed(path, change(header, objects))


def test_a_bundle_needing_an_unknown_symbol_is_left_to_numba(warm_cache, tmp_path):
    # LLVM's loader would stop the process on a symbol it cannot resolve: the loader
    # must check first. The renamed symbol keeps the object file's layout.
    folder, first = warm_cache
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(folder), str(copy)], check=True)

    def rename(header, objects):
        if header["wrapper"] is not None:  # the kernels' caller: it allocates nothing
            return native_bundle.pack(header, objects)
        renamed = [o.replace(b"NRT_MemInfo_alloc_aligned", b"NRT_MemInfo_alloc_alignex")
                   for o in objects]
        assert renamed != objects
        return native_bundle.pack(header, renamed)

    _damage(copy, rename)
    report, _ = _run(copy)
    assert report["numba_after_first_call"]
    assert report == dict(first, numba_after_first_call=True)


def test_a_damaged_bundle_is_reported_and_written_again(warm_cache, tmp_path):
    folder, first = warm_cache
    copy = tmp_path / "cache"
    subprocess.run(["cp", "-a", str(folder), str(copy)], check=True)
    for path in _bundles(copy):
        with open(path, "r+b") as f:
            f.seek(-10, os.SEEK_END)
            f.write(b"0123456789")
    report, stderr = _run(copy)
    assert report == dict(first, numba_after_first_call=True)
    assert "signature does not match" in stderr
    again, stderr = _run(copy)
    assert again == dict(first, numba_after_first_call=False)
    assert "signature" not in stderr


def test_a_second_trace_of_a_kernel_loads_it_from_its_bundle(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "sync")
    x = tf.constant(np.linspace(-2, 2, 6, dtype=np.float32))

    def make():
        return tf.function(lambda x: tf.reduce_sum(tf.exp(x) * tf.sin(x * 3.0)))

    first, second = make(), make()
    want = first(x)
    assert first.get_concrete_function(x).wait_compiled()
    assert float(second(x)) == float(want)
    loaded = second.get_concrete_function(x)._compilation.kernel._kernel
    assert native_loader.loaded(loaded)


def test_object_files_symbols_are_read_from_their_table(warm_cache):
    folder, _ = warm_cache
    headers = {}
    for path in _bundles(folder):
        header, objects = native_bundle.unpack(cache_store.read_signed(path))
        headers["kernel" if header["wrapper"] is None else "caller"] = header, objects
    header, objects = headers["kernel"]  # no Python wrapper: its caller has one
    defined, needed = elf_symbols.symbols(objects[-1], platform.machine())
    assert header["function"] in defined and header["results"]
    assert "NRT_MemInfo_alloc_aligned" in needed and "PyTuple_New" not in needed
    header, objects = headers["caller"]
    defined, needed = elf_symbols.symbols(objects[-1], platform.machine())
    assert header["wrapper"] in defined and "PyTuple_New" in needed
    with pytest.raises(elf_symbols.NotReadable):
        elf_symbols.symbols(b"\x7fELF" + bytes(60), platform.machine())
    with pytest.raises(elf_symbols.NotReadable):
        elf_symbols.symbols(objects[-1][:100], platform.machine())
