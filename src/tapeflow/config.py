"""The one place that reads tapeflow's environment variables and holds run-time settings."""

import os
from pathlib import Path


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
        self.run_functions_eagerly = False


settings = _Settings()


def clear_cache():
    """Removes tapeflow's compiled kernels from the cache directory (other files there are
    left alone). Safe while other processes use the cache: they compile again what they
    miss. Kernels already loaded in this process keep running."""
    from . import backend_registry
    backend_registry.clear_caches()


# -- tf.config ------------------------------------------------------------------------

class PhysicalDevice:
    """A device tapeflow can run on, printed as TensorFlow prints it."""

    __slots__ = ("name", "device_type")

    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type

    def __repr__(self):
        return f"PhysicalDevice(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other):
        return isinstance(other, PhysicalDevice) and (self.name, self.device_type) == (
            other.name, other.device_type)

    def __hash__(self):
        return hash((self.name, self.device_type))


def _cuda_gpu_count():
    """How many CUDA GPUs numba-cuda sees; 0 without numba-cuda or a driver."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return 0
    try:
        from numba import cuda
    except Exception:
        return 0
    try:
        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception:
        return 0


def list_physical_devices(device_type=None):
    """The CPU, plus each NVIDIA GPU that numba-cuda can use."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU")
                for i in range(_cuda_gpu_count())]
    if device_type is None:
        return devices
    return [d for d in devices if d.device_type == str(device_type).upper()]


class experimental:  # noqa: N801 - TensorFlow's namespace name
    """`tf.config.experimental`."""

    list_physical_devices = staticmethod(list_physical_devices)


def run_functions_eagerly(run_eagerly):
    """Makes every tf.function call its Python function directly (for debugging)."""
    settings.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    return settings.run_functions_eagerly
