"""A trace's compiled tier: the background compile worker, its care across fork(), and
what a failed compile tells the user (the NumPy interpreter answers meanwhile)."""

import contextlib
import math
import os
import queue
import sys
import threading
import time
import weakref

from .. import backend_registry
from ..config import settings
from .trace import warn


class _CompileWorker:
    """One daemon thread that runs the background compiles, in order. Starting a thread
    per trace cost the call that started it about 0.15 ms (a thread's start waits for the
    thread to run); queueing a job costs microseconds. Numba compiles one function at a
    time anyway (its compiler lock). A daemon, so that exiting never waits for a compile."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pid = None  # the process whose thread it is: a forked child starts its own

    def submit(self, job):
        self._jobs.put(job)
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    threading.Thread(target=self._run, daemon=True,
                                     name="tapeflow-compile").start()
                    self._pid = os.getpid()

    def _run(self):
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # noqa: BLE001, S112 - compile() records its failures;
                continue  # nothing else may stop the compiles queued after this one


_compile_worker = _CompileWorker()
# Compilations queued or running. A forked child has no worker thread and none of the
# parent's other threads, so it starts these again itself.
_unfinished = weakref.WeakSet()


def _numba_compiler_lock():
    module = sys.modules.get("numba.core.compiler_lock")  # None until a compile started
    return None if module is None else module.global_compiler_lock


def _before_fork():
    """Waits for a Numba compile in progress: a child made while another thread holds
    Numba's compiler lock could never compile (nor load a cached kernel)."""
    lock = _numba_compiler_lock()
    if lock is not None:
        lock.acquire()


def _after_fork_in_parent():
    lock = _numba_compiler_lock()
    if lock is not None:
        lock.release()


def _after_fork_in_child():
    _after_fork_in_parent()
    _compile_worker.__init__()
    for compilation in list(_unfinished):
        compilation.restart_after_fork()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


# The interpreted time after which a trace is compiled, as a rental is turned into a
# purchase once the rent paid equals the price: the price is what a background compile
# costs the calls running beside it, the interpreter lock its thread holds to generate
# the source and load the machine code (a compile process does the rest on another CPU).
# For a kernel the cache held, that was 0.16 s of a 2-core machine's time alone (the
# first in a process imports llvmlite), and the kernel arrived 0.2-0.4 s after the
# start beside a small training loop: a loop whose interpreted calls take less in all
# (200 steps of a small Dense + Adam step) only ran slower for having started it. A
# loop that runs longer loses at most this much before its compile starts.
WORTH_COMPILING = 0.15


# The interpreter's switch interval while a background compile runs. Its thread gives
# the lock up at each of its thousands of foreign calls (file reads, LLVM's), and with
# the default 5 ms waits up to that long each time for the calls running beside it to
# hand it back: on a 2-core machine, generating a small training step's source and
# loading its compiled kernel took 0.13 s and 0.48 s beside the calls, against 0.04 s
# and 0.06 s with 0.5 ms; loading a cached kernel, imports included, took 0.34-0.37 s
# with 0.5 ms and 0.19-0.21 s with 0.1 ms. While the thread waits for its compile
# process it wants no lock, so the calls are not interrupted more often then.
_SWITCH_INTERVAL = 0.0001


@contextlib.contextmanager
def _quick_lock_handovers():
    before = sys.getswitchinterval()
    if before <= _SWITCH_INTERVAL:
        yield
        return
    sys.setswitchinterval(_SWITCH_INTERVAL)
    try:
        yield
    finally:
        # unless the program set an interval of its own meanwhile
        if math.isclose(sys.getswitchinterval(), _SWITCH_INTERVAL):
            sys.setswitchinterval(before)


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Compilation:
    """The compiled kernel of one graph: None until compiled (`kernel`), or the reason it
    never will be (`error`). settings.compile_mode picks when: "sync" at the first call,
    "tiered" in the background once interpreted calls have taken long enough, "off"
    never."""

    def __init__(self, graph, name, placed=None):
        self.graph = graph
        self.name = name
        # (logical GPU, tf.device scope) when traced under a GPU placement: compiled by
        # the GPU backend for that GPU. None: by the CPU backend.
        self.placed = placed
        self.kernel = None
        self.error = None
        self._done = None  # a threading.Event, once a background compile is queued
        self._interpreted = 0.0  # seconds this trace's interpreted calls took
        self._lock = threading.Lock()          # starting the background compile
        self._compile_lock = threading.Lock()  # the compile itself: calls never wait on it

    def for_this_call(self):
        """The kernel a call runs: compiled now in "sync" mode, else whatever is ready."""
        if self.kernel is None and self.error is None and settings.compile_mode == "sync":
            self.compile()
        return self.kernel

    def interpreted_for(self, seconds):
        """Notes an interpreted call's time; in "tiered" mode, starts the background
        compile once this trace's calls have taken WORTH_COMPILING seconds in all."""
        self._interpreted += seconds
        if self._interpreted >= WORTH_COMPILING:
            self.start_in_background()

    def start_in_background(self):
        if settings.compile_mode in ("off", "sync") or self.error is not None:
            return
        with self._lock:
            if self._done is None and self.kernel is None:
                self._done = threading.Event()
                _unfinished.add(self)
                _compile_worker.submit(self._compile_in_background)

    def _compile_in_background(self):
        try:
            # Hand the interpreter lock back first: the call that queued this compile
            # returns its answer now instead of after this thread's first time slice.
            time.sleep(0.001)
            with _quick_lock_handovers():
                self._compile_elsewhere()
                self.compile()
        finally:
            self._done.set()
            _unfinished.discard(self)

    def _compile_elsewhere(self):
        """The compile's heavy part in a separate process, where the backend can and a
        second CPU can run it (backends/numba_cpu/compile_process.py): `compile` then
        loads the machine code. Any failure is the in-process compile's to report."""
        if self.placed is not None or not settings.compile_processes or _cpus() < 2:
            return
        backend = backend_registry.compiling_for("CPU")
        if backend is None:
            return
        try:
            backend.compile_elsewhere(self.graph)
        except Exception:  # noqa: BLE001, S110 - compile() runs it again and reports it
            pass

    def restart_after_fork(self):
        """In a forked child: the threads that held these locks or ran the compile are
        gone. The next call (or wait) queues the compile again here."""
        self._lock = threading.Lock()
        self._compile_lock = threading.Lock()
        if self.kernel is None and self.error is None:
            self._done = None
        else:
            self._done = threading.Event()
            self._done.set()
            _unfinished.discard(self)

    def compile(self):
        _unfinished.add(self)
        try:
            with self._compile_lock:
                self._compile_now()
        finally:
            _unfinished.discard(self)

    def _compile_now(self):
        if self.kernel is not None or self.error is not None:
            return
        device_type = "CPU" if self.placed is None else "GPU"
        backend = backend_registry.compiling_for(device_type)
        if backend is None:
            self.error = backend_registry.Unsupported(f"no compiled backend is registered "
                                                      f"for the {device_type}")
            return
        try:
            if self.placed is None:
                self.kernel = backend.compile(self.graph)
            else:
                self.kernel = backend.compile(self.graph, *self.placed)
        except backend_registry.Unsupported as e:
            self.error = e
            from ..ops.structural import of_kind
            from ..printing import PRINT
            if any(of_kind(node.op, PRINT) for node in self.graph.all_nodes()):
                return  # documented: printing functions run on NumPy
            warn(f"tf.function {self.name} runs with NumPy kernels, not compiled: {e}")
        except Exception as e:  # noqa: BLE001 - kept and shown: the NumPy kernels answer
            self.error = e
            warn(f"tf.function {self.name} runs with NumPy kernels: compiling it failed "
                 f"with {type(e).__name__}: {e}")

    def wait(self, timeout=None):
        """Blocks until the background compile (if any) finished; True if compiled."""
        self.start_in_background()
        done = self._done
        if done is not None and self.kernel is None and self.error is None:
            done.wait(timeout)
        return self.kernel is not None

    @property
    def source(self):
        if self.kernel is None and self.error is None:
            self.compile()
        if self.kernel is None:
            raise ValueError(f"{self.name} is not compiled: {self.error}")
        return self.kernel.source
