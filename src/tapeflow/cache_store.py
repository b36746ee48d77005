"""The compile cache's directory: private to the user, its files signed, its size capped.

Whoever can write into the cache directory could otherwise run code as its user: tapeflow
executes the kernel modules it finds there and Numba unpickles its index and data files.
So the directory must be owned by the user and writable by nobody else (as ssh and pip
require of theirs); one that is not is refused, with a warning, and a private temporary
directory serves the process instead. Every file tapeflow writes there is 0600 and
replaced atomically; Numba's files carry an HMAC-SHA256 under a per-user key kept in the
directory (`sign`, `verified`), so a damaged or planted file is a cache miss that is
rebuilt, never unpickled. docs/security.md describes what this protects against.

Kernel files are named `tapeflow_kernel_<sha256>...`: all the files of one kernel share
that prefix, which is how eviction (least recently used first, when a new kernel is
written and the cache is over `settings.cache_max_bytes`) and `clear` find them.
"""

import hashlib
import hmac
import os
import re
import stat
import tempfile
import threading
import time

PREFIX = "tapeflow_kernel"
NUMBA_SUBDIR = "__pycache__"
_KEY_NAME = ".tapeflow-key"
_KEY_BYTES = 32
_SIGNED_MAGIC = b"tapeflow-signed-1\n"
_KERNEL_FILE = re.compile(PREFIX + r"_([0-9a-f]{64})[.]")
_TEMPORARY = ".tmp_"
_STALE_TEMPORARY_SECONDS = 3600  # a writer that left its temporary file behind crashed

_lock = threading.Lock()
_usable = {}   # wanted directory -> the directory this process uses for it
_keys = {}     # directory -> its signing key
_fallback = None
_damage_reported = False


def directory():
    """The directory this process caches kernels in: `settings.cache_dir` when it is (or
    can be made) private to the user, otherwise a private temporary one."""
    from .config import settings
    return _memoized(_usable, settings.cache_dir, _checked)


def _memoized(table, key, make):
    value = table.get(key)
    if value is None:
        with _lock:
            value = table.get(key)
            if value is None:
                value = table[key] = make(key)
    return value


def _checked(wanted):
    try:
        make_private_dir(wanted)
    except OSError as e:
        return fallback(wanted, f"it cannot be created: {e}")
    problem = _not_private(wanted)
    if problem:
        return fallback(wanted, f"{problem}, so anyone who can write there could run code "
                                f"as you")
    return wanted


def make_private_dir(path):
    """Creates `path` with mode 0700 (its missing parents as `mkdir -p` does)."""
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass


def _not_private(path):
    """Why `path` may not hold the cache, or None."""
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if info.st_uid != os.geteuid():
        return f"it is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by group or others (mode {stat.filemode(info.st_mode)})"
    return None


def fallback(wanted, reason):
    """A private temporary directory for this process, with a warning (once) saying why
    `wanted` is not used."""
    global _fallback
    if _fallback is None:
        from .source import warn
        _fallback = tempfile.mkdtemp(prefix="tapeflow_cache_")
        warn(f"tapeflow does not use {wanted} for its compile cache: {reason}. Compiled "
             f"kernels are cached in {_fallback} for this process only; make the directory "
             f"private to you (chmod 700) or set TAPEFLOW_CACHE_DIR to one that is.")
    return _fallback


def write_private(path, data):
    """Replaces `path` atomically by a file holding `data` (bytes), mode 0600."""
    fd, temporary = tempfile.mkstemp(prefix=_TEMPORARY, dir=os.path.dirname(path))  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        remove(temporary)
        raise


def report_damage(path, why):
    """Warns (once per process) that a cache file was damaged and is being rebuilt."""
    global _damage_reported
    if _damage_reported:
        return
    _damage_reported = True
    from .source import warn
    warn(f"tapeflow's compile cache held a damaged or unverifiable file ({path}: {why}); "
         f"it is ignored and rebuilt.")


# -- signatures -----------------------------------------------------------------------

def _read_or_create_key(folder):
    path = os.path.join(folder, _KEY_NAME)
    for _ in range(3):  # another process may replace a bad key file at the same time
        key = _private_key(path)
        if key is not None:
            return key
        remove(path)
        fd, temporary = tempfile.mkstemp(prefix=_TEMPORARY, dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(_KEY_BYTES))
            os.link(temporary, path)  # appears whole, and only if no process made one
        except FileExistsError:
            pass
        finally:
            remove(temporary)
    raise OSError(f"cannot make a private key file {path}")


def _private_key(path):
    """The key in `path` when it is a regular file of ours, 0600, of the right size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid()
                or info.st_mode & 0o077 or info.st_size != _KEY_BYTES):
            return None
        key = f.read()
    return key if len(key) == _KEY_BYTES else None


def _mac(folder, name, body):
    # The file's name is signed too: a valid file of one kernel is not valid for another.
    key = _memoized(_keys, folder, _read_or_create_key)
    return hmac.new(key, name.encode() + b"\0" + body, hashlib.sha256).digest()


def sign(path, body):
    """The content to write to `path` (in the cache) for `body`: body and its signature."""
    folder, name = _owner_and_name(path)
    return _SIGNED_MAGIC + _mac(folder, name, body) + body


def verified(path, content):
    """The body of a signed file's `content`, or None if it is not tapeflow's own."""
    head = len(_SIGNED_MAGIC)
    if not content.startswith(_SIGNED_MAGIC) or len(content) < head + 32:
        return None
    folder, name = _owner_and_name(path)
    mac, body = content[head:head + 32], content[head + 32:]
    return body if hmac.compare_digest(mac, _mac(folder, name, body)) else None


def read_signed(path):
    """The verified body of the signed file `path`, or None: missing, or not tapeflow's
    own (reported, once per process)."""
    try:
        with open(path, "rb") as f:
            content = f.read()
    except FileNotFoundError:
        return None
    body = verified(path, content)
    if body is None:
        report_damage(path, "its signature does not match")
    return body


def write_signed(path, body):
    write_private(path, sign(path, body))


def _owner_and_name(path):
    """The cache directory (whose key signs) and the name of a file in it or in Numba's
    subdirectory."""
    folder, name = os.path.split(path)
    if os.path.basename(folder) == NUMBA_SUBDIR:
        folder = os.path.dirname(folder)
    return folder, name


# -- size and clearing ------------------------------------------------------------------

def touch(path):
    """Marks a kernel file as just used: eviction goes by modification time."""
    try:
        os.utime(path)
    except OSError:
        pass


def _kernel_files(folder):
    """{kernel hash: [(path, size, mtime)]} for every kernel file in the cache, and the
    temporary files that writers left behind long ago."""
    kernels, stale = {}, []
    now = time.time()
    for where in (folder, os.path.join(folder, NUMBA_SUBDIR)):
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            match = _KERNEL_FILE.match(entry.name)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if match:
                kernels.setdefault(match.group(1), []).append(
                    (entry.path, info.st_size, info.st_mtime))
            elif entry.name.startswith(_TEMPORARY) and (
                    now - info.st_mtime > _STALE_TEMPORARY_SECONDS):
                stale.append(entry.path)
    return kernels, stale


def evict(folder, max_bytes):
    """Removes the least recently used kernels (all their files) until the cache holds at
    most `max_bytes`; returns how many kernels went."""
    kernels, stale = _kernel_files(folder)
    for path in stale:
        remove(path)
    sizes = {k: sum(size for _, size, _ in files) for k, files in kernels.items()}
    total = sum(sizes.values())
    if total <= max_bytes:
        return 0
    oldest_first = sorted(kernels, key=lambda k: max(mtime for _, _, mtime in kernels[k]))
    removed = 0
    for k in oldest_first:
        if total <= max_bytes:
            break
        for path, _, _ in kernels[k]:
            remove(path)
        total -= sizes[k]
        removed += 1
    return removed


def clear(folder):
    """Removes every kernel file (and stale temporary file) from the cache; other files
    are left alone. Safe while other processes use the cache: they rebuild what they
    miss, and files are only ever replaced whole."""
    kernels, stale = _kernel_files(folder)
    for path in stale + [path for files in kernels.values() for path, _, _ in files]:
        remove(path)


def _after_fork_in_child():  # the thread that held the lock is not in the child
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def remove(path):
    """Removes a cache file if it is there (another process may have removed it)."""
    try:
        os.unlink(path)
    except OSError:
        pass
