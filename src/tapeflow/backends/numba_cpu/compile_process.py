"""A background compile's work, in a process of its own.

A compile in a thread shares the interpreter lock with the calls that run meanwhile,
and loses it: Numba's lowering and LLVM make thousands of foreign calls, and each gives
the lock up and must wait for the calling thread to hand it back (up to the interpreter's
switch interval, 5 ms). Beside a small training loop, a compile of about 4 s alone had
not finished after 12 s, and the loop ran 12-15% slower all that time. So tiered mode's
background compile runs `python -m tapeflow.backends.numba_cpu.compile_process` on the
kernel module it wrote to the cache directory: the process compiles it (and the one-time
kernels it needs) into the cache, on another core, and the thread then only loads the
machine code.

The process serves the compiles that follow too, one at a time (the thread sends each
as a line and reads its status back), so that each does not import tapeflow and Numba
and set Numba up again, about a second of the other core; it ends once it has waited
IDLE_SECONDS for the next, or when this process ends.

The process runs in that private cache directory (its working directory, first on its
sys.path) and compiles what it finds there with the cache's checks: the module file must
hash to its name (cache.py), Numba's files are signed (numba_cache.py). It imports
tapeflow from where this process did.
"""

import atexit
import glob
import json
import os
import subprocess
import sys
import threading
import time

from ... import cache_store
from . import cache, machine

# Seconds a compile process may take (the largest kernels compile in minutes).
_PATIENCE = 1800
# Seconds a compile process waits for the next compile before it ends.
IDLE_SECONDS = 60.0
# The argument that asks a process for the helpers' names only.
_HELPER_NAMES = "--helper-names"
# The argument that makes a process serve compiles read from stdin (_Worker).
_SERVE = "--serve"
# Compile processes running, so that exiting stops them instead of leaving them behind.
_running = set()
_lock = threading.Lock()
# The _Worker serving this process's compiles, once started; its lock orders the compiles.
_worker = None
_worker_lock = threading.Lock()


def in_cache(digest):
    """Whether Numba's index of the kernel module `digest` is in the cache directory (a
    later load may still find it stale: it compiles then)."""
    pattern = os.path.join(cache_store.directory(), cache_store.NUMBA_SUBDIR,
                           f"{cache.module_name(digest)}.*.nbi")
    return bool(glob.glob(pattern))


def compiled(source, digest, params):
    """Compiles the kernel of `source` (its parameters `params`) into the cache directory
    in the compile process, unless the cache has it. Returns whether the process
    succeeded (or there was nothing to do); a failure is left to the in-process compile
    to report."""
    if in_cache(digest):
        return True
    if not _can_start():
        return False
    folder = os.path.dirname(cache.write(source, digest))
    return _ran(folder, digest, machine.signature(params))


def helper_names_kept():
    """Makes sure the cache directory keeps the helpers' names (cache.helper_names)
    before a background thread generates a kernel's source. Finding them imports
    kernels/ and Numba, once per cache directory; in the thread, beside the calls it
    must not slow, each of the import's thousands of file reads gives the interpreter
    lock up and waits for it (up to its 5 ms switch interval): on a 2-core machine, 11 s
    before a small training loop's compile could start, instead of 0.3 s here, in the
    compile process (which then serves the compile too). Returns whether the names are
    kept now."""
    if cache.kept_helper_names() is not None:
        return True
    if not _can_start():
        return False
    folder = cache_store.directory()
    try:
        cache_store.make_private_dir(folder)
    except OSError:
        return False
    return _ran(folder, _HELPER_NAMES) and cache.kept_helper_names() is not None


def warm_up():
    """Starts the compile process for the cache directory, unless one serves it, without
    waiting for it: generating a large graph's source (an unrolled loop) takes seconds in
    the thread, and the process imports tapeflow and Numba and sets Numba up meanwhile."""
    if not _can_start():
        return
    with _worker_lock:
        _serving(cache_store.directory())


def _can_start():
    # no interpreter to start (a frozen application would start itself)
    return not getattr(sys, "frozen", False) and bool(sys.executable)


def _ran(folder, *arguments):
    """Runs `arguments` (a kernel's digest and signature, or _HELPER_NAMES) in the
    compile process that serves the cache directory `folder`, started if need be;
    whether it succeeded. A process that failed or was stuck is not used again."""
    global _worker
    with _worker_lock:
        worker = _serving(folder)
        if worker is None:
            return False
        succeeded = worker.run(arguments)
        if not succeeded:
            worker.stop()
            _worker = None
        return succeeded


def _serving(folder):
    """The _Worker that serves `folder`, started if none can (None if it cannot start);
    under _worker_lock."""
    global _worker
    if _worker is not None and not _worker.usable(folder):
        _worker.stop()
        _worker = None
    if _worker is None:
        _worker = _Worker.start(folder)
    return _worker


class _Worker:
    """A compile process serving one cache directory (`python -m ... --serve`)."""

    def __init__(self, folder, process):
        self.folder = folder
        self.process = process
        self.last_used = time.monotonic()

    @classmethod
    def start(cls, folder):
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=folder, PYTHONPATH=os.pathsep.join(
            [package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                if p]))
        try:
            # In the private cache directory: `-m` puts the working directory first on the
            # process's sys.path, where a module planted in a shared folder would be found.
            process = subprocess.Popen(
                [sys.executable, "-m", __name__, _SERVE], cwd=folder, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            return None
        with _lock:
            _running.add(process)
        return cls(folder, process)

    def usable(self, folder):
        """Whether it serves `folder` and will wait for another compile: it ends after
        IDLE_SECONDS without one, so one idle for half that long is not sent another."""
        return (self.folder == folder and self.process.poll() is None
                and time.monotonic() - self.last_used < IDLE_SECONDS / 2)

    def run(self, arguments):
        # The status is read with a blocking read: the thread sleeps in the kernel
        # meanwhile (waiting with a timeout polled, waking every 50 ms for the interpreter
        # lock, which the calls running meanwhile then waited for: 7% of a small training
        # loop's time). A timer stops a stuck process instead.
        stuck = threading.Event()
        watchdog = threading.Timer(_PATIENCE, _stop_stuck, (self.process, stuck))
        watchdog.daemon = True
        watchdog.start()
        try:
            self.process.stdin.write(json.dumps(list(arguments)).encode() + b"\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except (OSError, ValueError):  # it ended, or was stopped
            return False
        finally:
            watchdog.cancel()
            self.last_used = time.monotonic()
        return answer == b"0\n" and not stuck.is_set()  # else: the thread compiles

    def stop(self):
        process = self.process
        if process.poll() is None:
            process.kill()
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        process.wait()
        with _lock:
            _running.discard(process)


def _stop_stuck(process, stuck):
    stuck.set()
    process.kill()


@atexit.register
def stop_all():
    """Stops the compile processes still running (at exit: their work is only a cache)."""
    with _lock:
        running = list(_running)
    for process in running:
        process.kill()


def _after_fork_in_child():
    # The parent's compile processes are not this process's children: never stop them,
    # nor write to them.
    global _lock, _worker, _worker_lock
    _lock = threading.Lock()
    _worker_lock = threading.Lock()
    _worker = None
    _running.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


# The compile process's niceness: a background compile gives way to the calls it runs
# beside whenever the two want one CPU (the program's other threads, its BLAS's, the
# system's). Beside a small training loop on a 2-core machine, alternated six times with
# the process at the program's priority: the interpreted calls 3% slower than with
# compiling off (median; -10% to 8%) against 10% (3% to 15%), compiled after 4.5 s
# either way.
NICENESS = 10


def _lower_priority():
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # no niceness here (Windows): run as it is
        pass


def _main(arguments):
    if arguments == [_HELPER_NAMES]:
        cache.helper_names()
        return 0
    digest, signature = arguments
    try:
        with open(cache.path_for(digest), encoding="utf-8") as f:
            source = f.read()
    except OSError:
        return 2
    if cache.key(source) != digest:
        return 2
    module = machine.machine_code(source, digest, signature)
    try:  # and its caller (kernel_caller.py), which the waiting process loads with it
        machine.entry_point(module.kernel, signature)
    finally:
        cache.release(module)
    return 0


def _serve():
    """Runs the compiles read from stdin, one JSON list of _main's arguments per line,
    writing each one's status as a line; ends at the end of stdin, after IDLE_SECONDS
    without a compile, or after one that failed (the next starts afresh)."""
    sys.stdout.flush()
    # The statuses go to stdout as it is now; anything printed goes nowhere, so that it
    # can neither fill the pipe nor be read as a status.
    statuses = os.dup(sys.stdout.fileno())
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    try:
        for line in _lines(sys.stdin.fileno()):
            status = _job(line)
            os.write(statuses, b"%d\n" % status)
            if status:
                return status
        return 0
    finally:
        os.close(statuses)


def _lines(descriptor):
    """The lines read from `descriptor` until its end, or until none came for
    IDLE_SECONDS. Read unbuffered: select sees only what is not read yet."""
    import select
    pending = b""
    while True:
        while b"\n" not in pending:
            if os.name == "posix" and not select.select([descriptor], [], [], IDLE_SECONDS)[0]:
                return
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        yield line


def _job(line):
    """The status of the compile that `line` (JSON) asks for, run here."""
    try:
        arguments = json.loads(line)
        if not (isinstance(arguments, list) and all(isinstance(a, str) for a in arguments)
                and _SERVE not in arguments):
            raise ValueError("not a compile's arguments")
        return _main(arguments)
    except Exception:  # noqa: BLE001 - shown, and the status says it failed
        import traceback
        traceback.print_exc()
        return 1


def _exit_now(status):
    """Ends the process without the interpreter's teardown: freeing Numba's and LLVM's
    objects took 0.9-1.7 s after a compile of about 4 s, and the thread that waits for
    the process waited for that too. What the compile wrote is written and closed by then
    (the kernel module, Numba's files, the bundle: each written whole, then renamed into
    place)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    _lower_priority()
    try:
        _exit_now(_serve() if sys.argv[1:] == [_SERVE] else _main(sys.argv[1:]))
    except SystemExit as e:
        _exit_now(e.code if isinstance(e.code, int) else 1)
    except BaseException:  # noqa: BLE001 - shown, then the status says it failed
        import traceback
        traceback.print_exc()
        _exit_now(1)
