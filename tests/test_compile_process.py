"""Tiered mode's background compile in a process of its own: the kernel it leaves in the
cache directory is what the calls then run, and a process that fails leaves the compile
to the thread, which reports what fails as before."""

import os
import platform
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import cache_store
from tapeflow.backends.numba_cpu import cache, compile_process, native_loader
from tapeflow.config import settings
from tapeflow.graph import compile_worker


@pytest.fixture
def in_processes(monkeypatch):
    monkeypatch.setattr(settings, "compile_processes", True)
    monkeypatch.setattr(settings, "compile_mode", "tiered")
    monkeypatch.setattr("tapeflow.graph.compile_worker._cpus", lambda: 2)
    outcomes = []
    compiled = compile_process.compiled

    def spy(source, digest, params):
        before = compile_process.in_cache(digest)
        outcomes.append((before, compiled(source, digest, params), digest))
        return outcomes[-1][1]
    monkeypatch.setattr(compile_process, "compiled", spy)
    return outcomes


def test_a_background_compile_runs_in_a_process_and_the_calls_load_its_kernel(
        in_processes, tmp_path, monkeypatch):
    # Run from a folder where someone planted a module the process imports: it runs in
    # the private cache directory, so the plant is never found.
    (tmp_path / "numpy.py").write_text("raise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)

    @tf.function
    def f(x):
        return tf.reduce_sum(tf.sin(x) * 3.0 + x * x)

    x = tf.constant(np.linspace(-1.0, 1.0, 7).astype(np.float32))
    concrete = f.get_concrete_function(x)
    expected = f(x).numpy()  # interpreted
    assert concrete.wait_compiled()
    (before, succeeded, digest), = in_processes
    assert not before and succeeded and compile_process.in_cache(digest)
    # The thread loaded what the process compiled: from the kernel's bundle, without
    # Numba (native_loader.py), or where that cannot be, from Numba's cache.
    compiled = concrete._compilation.kernel
    if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64"):
        assert native_loader.loaded(compiled._kernel) and compiled.dispatcher is None
    else:
        dispatcher = compiled.dispatcher
        assert sum(dispatcher._cache_hits.values()) == 1 and not dispatcher._cache_misses
    np.testing.assert_allclose(f(x).numpy(), expected, rtol=1e-6)


def test_a_new_cache_directory_gets_the_helpers_names_from_a_process_not_the_thread(
        in_processes, tmp_path, monkeypatch):
    # Finding them imports kernels/ and Numba: in the thread, beside the calls, that
    # took seconds of lock hand-overs before the compile could start.
    from tapeflow.backends.numba_cpu import kernels
    expected = kernels.helper_names()
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    assert cache.kept_helper_names() is None

    def not_here(*args, **kwargs):
        raise AssertionError("the helpers' names were found in this process")
    monkeypatch.setattr(kernels, "helper_names", not_here)
    popen = compile_process.subprocess.Popen
    started, jobs, intervals = [], [], []

    def spy(args, **kwargs):
        started.append(args[3:])
        return popen(args, **kwargs)
    monkeypatch.setattr(compile_process.subprocess, "Popen", spy)
    run = compile_process._Worker.run

    def job(self, arguments):
        jobs.append(list(arguments))
        intervals.append(sys.getswitchinterval())
        return run(self, arguments)
    monkeypatch.setattr(compile_process._Worker, "run", job)

    @tf.function
    def h(x):
        return tf.reduce_sum(tf.exp(x) - x)

    x = tf.constant(np.linspace(-1.0, 1.0, 6).astype(np.float32))
    concrete = h.get_concrete_function(x)
    assert concrete.wait_compiled()
    assert jobs[0] == ["--helper-names"] and len(jobs) == 2  # then the kernel's
    assert started == [["--serve"]]  # one process for both
    assert intervals == [pytest.approx(compile_worker._SWITCH_INTERVAL)] * 2
    assert cache.kept_helper_names() == expected
    assert compile_process.helper_names_kept()  # kept: no process now
    assert len(jobs) == 2
    np.testing.assert_allclose(h(x).numpy(), np.sum(np.exp(x.numpy()) - x.numpy()),
                               rtol=1e-6)


def test_the_thread_hands_the_lock_over_quickly_and_then_sets_the_interval_back():
    before = sys.getswitchinterval()
    try:
        with compile_worker._quick_lock_handovers():
            assert sys.getswitchinterval() == pytest.approx(compile_worker._SWITCH_INTERVAL)
        assert sys.getswitchinterval() == before
        with compile_worker._quick_lock_handovers():
            sys.setswitchinterval(0.002)  # the program's own, meanwhile: kept
        assert sys.getswitchinterval() == pytest.approx(0.002)
    finally:
        sys.setswitchinterval(before)


def test_a_failed_process_leaves_the_compile_to_the_thread(in_processes, monkeypatch):
    monkeypatch.setattr(compile_process.sys, "executable", "/nonexistent/python")

    @tf.function
    def g(x):
        return tf.reduce_max(tf.cos(x) - 2.0 * x)

    x = tf.constant(np.linspace(0.0, 2.0, 5).astype(np.float32))
    concrete = g.get_concrete_function(x)
    assert concrete.wait_compiled()
    (before, succeeded, _), = in_processes
    assert not before and not succeeded
    np.testing.assert_allclose(g(x).numpy(), np.max(np.cos(x.numpy()) - 2.0 * x.numpy()),
                               rtol=1e-6)


def test_the_process_compiles_only_a_module_named_by_its_own_hash(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    digest = "0" * 64
    with open(cache.path_for(digest, str(tmp_path)), "w") as f:
        f.write("import os\nos.remove('anything')\n")
    assert compile_process._main([digest, "[]"]) == 2
    assert compile_process._main(["1" * 64, "[]"]) == 2  # no such file


def test_a_frozen_application_starts_no_process(monkeypatch):
    # Its executable is the application itself, which `-m` would start again.
    monkeypatch.setattr(compile_process.sys, "frozen", True, raising=False)
    started = []
    monkeypatch.setattr(compile_process.subprocess, "Popen",
                        lambda *args, **kwargs: started.append(args))
    assert compile_process.compiled("x = 1\n", "f" * 64, []) is False
    assert not started


def test_a_stuck_process_is_stopped_after_the_patience(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(compile_process, "_PATIENCE", 0.5)
    popen = compile_process.subprocess.Popen
    started = []

    def stuck(args, **kwargs):
        started.append(popen([args[0], "-c", "import time; time.sleep(60)"], **kwargs))
        return started[-1]
    monkeypatch.setattr(compile_process.subprocess, "Popen", stuck)
    source = "x = 1\n"
    assert compile_process.compiled(source, cache.key(source), []) is False
    (process,) = started
    assert process.returncode is not None  # stopped, not left behind
    assert not compile_process._running


def test_the_process_gives_way_to_the_calls_it_runs_beside(monkeypatch):
    asked = []
    monkeypatch.setattr(compile_process.os, "nice", asked.append)
    compile_process._lower_priority()
    assert asked == [compile_process.NICENESS] and compile_process.NICENESS > 0

    def refused(increment):
        raise OSError("not permitted")
    monkeypatch.setattr(compile_process.os, "nice", refused)
    compile_process._lower_priority()  # runs as it is


def test_the_process_status_says_what_went_wrong(tmp_path):
    # It ends by os._exit (no teardown): the status must still be the outcome.
    import subprocess
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path))
    command = [sys.executable, "-m", compile_process.__name__]
    missing = subprocess.run(command + ["1" * 64, "[]"], env=env, capture_output=True)
    assert missing.returncode == 2  # no such module
    source = "x = 1\n"
    digest = cache.key(source)
    cache.write(source, digest, str(tmp_path))
    failed = subprocess.run(command + [digest, "not a signature"], env=env,
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "JSONDecodeError" in failed.stderr


def test_one_process_serves_the_compiles_that_follow(in_processes, tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    popen = compile_process.subprocess.Popen
    started = []

    def spy(args, **kwargs):
        started.append(popen(args, **kwargs))
        return started[-1]
    monkeypatch.setattr(compile_process.subprocess, "Popen", spy)

    def waits(fn, x):
        concrete = tf.function(fn).get_concrete_function(x)
        assert concrete.wait_compiled()
        return concrete

    x = tf.constant(np.linspace(-1.0, 1.0, 6).astype(np.float32))
    waits(lambda x: tf.reduce_sum(tf.sinh(x) * 2.0), x)
    waits(lambda x: tf.reduce_max(tf.cosh(x) - x), x)
    assert [succeeded for _, succeeded, _ in in_processes] == [True, True]
    assert len(started) == 1 and started[0].poll() is None  # serving still
    # One idle for half the time it waits is not sent another: it may be ending.
    compile_process._worker.last_used -= compile_process.IDLE_SECONDS / 2
    waits(lambda x: tf.reduce_min(tf.tanh(x) + x), x)
    assert len(started) == 2 and started[0].returncode is not None
    assert compile_process._running == {started[1]}


def test_a_serving_process_answers_each_compile_and_ends_when_idle(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    monkeypatch.setattr(compile_process, "IDLE_SECONDS", 0.2)
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    with os.fdopen(read_in, "r") as stdin, os.fdopen(write_out, "w") as stdout:
        monkeypatch.setattr(compile_process.sys, "stdin", stdin)
        monkeypatch.setattr(compile_process.sys, "stdout", stdout)
        os.write(write_in, b'["--helper-names"]\n')
        os.write(write_in, b'["' + b"1" * 64 + b'", "[]"]\n')  # no such module
        assert compile_process._serve() == 2  # ends after a failure
        assert os.read(read_out, 100) == b"0\n2\n"
        assert compile_process._serve() == 0  # nothing sent: ends after IDLE_SECONDS
        os.write(write_in, b'"not a list"\n')
        assert compile_process._serve() == 1
    os.close(write_in)
    os.close(read_out)


def test_a_process_whose_compile_failed_is_not_sent_another(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path))
    folder = cache_store.directory()
    assert compile_process._ran(folder, compile_process._HELPER_NAMES)
    worker = compile_process._worker
    assert worker is not None and worker.process.poll() is None
    assert not compile_process._ran(folder, "1" * 64, "[]")  # no such module
    assert compile_process._worker is None and worker.process.returncode is not None
    assert worker.process not in compile_process._running


def test_a_large_graphs_process_starts_before_its_source_is_generated(
        in_processes, tmp_path, monkeypatch):
    from tapeflow.backends.numba_cpu import generated_cache, generator
    monkeypatch.setattr(settings, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(generated_cache, "MIN_NODES", 1)  # every graph keeps its generation
    assert compile_process.helper_names_kept()
    events = []
    start, generate = compile_process._Worker.start, generator.generate

    def starting(folder):
        events.append("started")
        return start(folder)

    def generating(*args, **kwargs):
        events.append("generated")
        return generate(*args, **kwargs)
    monkeypatch.setattr(compile_process._Worker, "start", starting)
    monkeypatch.setattr(generator, "generate", generating)
    compile_process._worker.last_used -= compile_process.IDLE_SECONDS  # one not to use

    def f(x):
        return tf.reduce_sum(tf.atan(x) * tf.cos(x) + 0.5 * x)

    x = tf.constant(np.linspace(-1.0, 2.0, 6).astype(np.float32))
    assert tf.function(f).get_concrete_function(x).wait_compiled()
    assert events == ["started", "generated"]
    # Traced again: its generation is kept, and the process serving still is used.
    assert tf.function(f).get_concrete_function(x).wait_compiled()
    assert events == ["started", "generated"]
    xs = x.numpy()
    np.testing.assert_allclose(tf.function(f)(x).numpy(),
                               np.sum(np.arctan(xs) * np.cos(xs) + 0.5 * xs), rtol=1e-5)
