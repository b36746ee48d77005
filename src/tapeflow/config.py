"""The one place that reads tapeflow's environment variables and holds run-time settings."""

import os
from pathlib import Path

# tf.config's devices and placement settings live in placement.py, where the eager hot
# path reads them.
from .placement import (LogicalDevice, PhysicalDevice, get_soft_device_placement,  # noqa: F401
                        get_visible_devices, list_logical_devices, list_physical_devices,
                        set_soft_device_placement, set_visible_devices)


def _default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return os.path.join(base, "tapeflow")


DEFAULT_CACHE_MAX_BYTES = 512 * 2**20


def _cache_max_bytes():
    text = os.environ.get("TAPEFLOW_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_CACHE_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"TAPEFLOW_CACHE_MAX_BYTES must be a number of bytes, got {text!r}")
    return value


class _Settings:
    """Process-wide settings; each starts from its environment variable."""

    def __init__(self):
        self.cache_dir = os.environ.get("TAPEFLOW_CACHE_DIR") or _default_cache_dir()
        # The compile cache's size cap: when a new kernel is written and the cache is
        # larger, the least recently used kernels are removed. None: no cap.
        self.cache_max_bytes = _cache_max_bytes()
        self.compile_mode = os.environ.get("TAPEFLOW_COMPILE", "tiered")  # or "sync"
        # Whether tiered mode's background compiles run in a process of their own (where
        # there is a second CPU): a thread loses the interpreter lock to the calls.
        self.compile_processes = os.environ.get("TAPEFLOW_COMPILE_PROCESSES", "1") != "0"
        self.run_functions_eagerly = False


settings = _Settings()


def clear_cache():
    """Removes tapeflow's compiled kernels from the cache directory (other files there are
    left alone). Safe while other processes use the cache: they compile again what they
    miss. Kernels already loaded in this process keep running."""
    from . import backend_registry
    backend_registry.clear_caches()


# -- tf.config ------------------------------------------------------------------------

class experimental:  # noqa: N801 - TensorFlow's namespace name
    """`tf.config.experimental`."""

    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)


def run_functions_eagerly(run_eagerly):
    """Makes every tf.function call its Python function directly (for debugging)."""
    settings.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    return settings.run_functions_eagerly
