"""Where eager ops run, as TensorFlow places them: `tf.device` scopes, `tf.DeviceSpec`,
the physical and visible devices of `tf.config`, soft placement and placement logging.

The CPU is always there. A GPU is the device a registered "GPU" backend
(backends/numba_cuda/) runs ops on; it counts only when numba-cuda sees one (or when
NUMBA_ENABLE_CUDASIM=1 was set before Numba was imported: numba-cuda's simulator, one
GPU). `active` is what the eager hot path reads: False unless a GPU may exist or
placement is logged, so a CPU-only process pays one attribute test per op.
"""

import contextlib
import contextvars
import importlib.util
import os
import sys

from . import backend_registry
from .errors import InvalidArgumentError

LOCAL_PREFIX = "/job:localhost/replica:0/task:0"
HOST = f"{LOCAL_PREFIX}/device:CPU:0"
_VALID_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "EPU", "CUSTOM"})


def simulator_requested():
    """Whether numba-cuda's simulator stands in for a GPU (set before Numba loads)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _numba_cuda_installed():
    try:
        return importlib.util.find_spec("numba_cuda") is not None
    except (ImportError, ValueError):
        return False


def _driver_present():
    """A cheap sign of an NVIDIA driver, checked before loading numba-cuda (which costs
    about a second) to count GPUs."""
    if any(os.path.exists(p) for p in ("/proc/driver/nvidia/version", "/dev/nvidiactl",
                                       "/dev/dxg")):  # Linux, containers, WSL
        return True
    if sys.platform == "win32":
        import ctypes.util
        return ctypes.util.find_library("nvcuda") is not None
    return False


def _gpu_may_exist():
    return _numba_cuda_installed() and (simulator_requested() or _driver_present())


# True while eager ops must ask where they run: a GPU may be visible (confirmed lazily,
# on the first op), placement is logged, or soft placement is off (a scope naming a
# missing device raises). Read by ops/registry.py's bind().
active = _gpu_may_exist()


# -- tf.DeviceSpec ------------------------------------------------------------------------

def _int_or_none(value):
    return None if value is None else int(value)


class DeviceSpec:
    """A (partial) device name, as `tf.DeviceSpec`: job, replica, task, device type and
    index, each None where unspecified. Immutable; `to_string()` is TensorFlow's form."""

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index", "_string")

    def __init__(self, job=None, replica=None, task=None, device_type=None,
                 device_index=None):
        self._job = None if job is None else str(job)
        self._replica = _int_or_none(replica)
        self._task = _int_or_none(task)
        # As TensorFlow, lowercase cpu and gpu are accepted and stored uppercase.
        self._device_type = (device_type.upper() if device_type in ("cpu", "gpu")
                             else None if device_type is None else str(device_type))
        self._device_index = _int_or_none(device_index)
        parts = []
        if self._job is not None:
            parts.append(f"/job:{self._job}")
        if self._replica is not None:
            parts.append(f"/replica:{self._replica}")
        if self._task is not None:
            parts.append(f"/task:{self._task}")
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            parts.append(f"/device:{self._device_type}:{index}")
        self._string = "".join(parts)

    job = property(lambda self: self._job)
    replica = property(lambda self: self._replica)
    task = property(lambda self: self._task)
    device_type = property(lambda self: self._device_type)
    device_index = property(lambda self: self._device_index)

    @classmethod
    def from_string(cls, spec):
        """Parses every form TensorFlow accepts: '/GPU:0', 'gpu:0', '/device:GPU:0',
        '/job:localhost/replica:0/task:0/device:GPU:0', 'GPU', '/device:GPU:*'."""
        job = replica = task = device_type = device_index = None
        for part in (spec or "").split("/"):
            fields = part.split(":")
            n = len(fields)
            if n == 2 and fields[0] == "job":
                job = fields[1]
            elif n == 2 and fields[0] == "replica":
                replica = fields[1]
            elif n == 2 and fields[0] == "task":
                task = fields[1]
            elif n in (1, 2) and fields[0].upper() in _VALID_DEVICE_TYPES:
                if device_type is not None:
                    raise ValueError(f"Multiple device types are not allowed while parsing "
                                     f"the device spec: {spec}.")
                device_type = fields[0].upper()
                if n == 2 and fields[1] != "*":
                    device_index = int(fields[1])
            elif n == 3 and fields[0] == "device":
                if device_type is not None:
                    raise ValueError(f"Multiple device types are not allowed while parsing "
                                     f"the device spec: {spec}.")
                device_type = fields[1]
                if fields[2] != "*":
                    device_index = int(fields[2])
            elif fields[0] != "":
                raise ValueError(f"Unknown attribute '{fields[0]}' is encountered while "
                                 f"parsing the device spec: '{spec}'.")
        return cls(job, replica, task, device_type, device_index)

    def parse_from_string(self, spec):
        return self.from_string(spec)

    def to_string(self):
        return self._string

    def replace(self, **kwargs):
        fields = dict(job=self._job, replica=self._replica, task=self._task,
                      device_type=self._device_type, device_index=self._device_index)
        fields.update(kwargs)
        return type(self)(**fields)

    def make_merged_spec(self, dev):
        """`dev`'s fields where it has them, this spec's elsewhere."""
        def pick(mine, theirs):
            return mine if theirs is None else theirs
        return type(self)(pick(self._job, dev.job), pick(self._replica, dev.replica),
                          pick(self._task, dev.task), pick(self._device_type, dev.device_type),
                          pick(self._device_index, dev.device_index))

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self._string == other._string

    def __hash__(self):
        return hash(self._string)

    def __repr__(self):
        return (f"<DeviceSpec(job={self._job}, replica={self._replica}, task={self._task}, "
                f"device_type={self._device_type}, device_index={self._device_index})>")


def _full_name(spec):
    """The spec with the local job, replica and task filled in (TensorFlow's messages)."""
    return DeviceSpec("localhost", 0, 0).make_merged_spec(spec).to_string()


# -- tf.device ------------------------------------------------------------------------------

# The merged DeviceSpec of the enclosing tf.device scopes, or None (default placement).
_scope = contextvars.ContextVar("tapeflow_device_scope", default=None)


@contextlib.contextmanager
def _placed(spec):
    token = _scope.set(spec)
    try:
        yield
    finally:
        _scope.reset(token)


def current_scope():
    """The merged DeviceSpec of the enclosing tf.device scopes (None: default placement)."""
    return _scope.get()


def restored_scope(spec):
    """A context placing ops as under the scope `current_scope()` returned."""
    return _placed(spec)


def trace_placement():
    """(logical GPU, scope) for a function traced here under a GPU placement, else None
    (its graph compiles for the CPU)."""
    if not active:
        return None
    index = requested_gpu()
    return None if index is None else (index, _scope.get())


def device(device_name):
    """`tf.device`: ops and tensors created in the block are placed on `device_name` (a
    string in any of TensorFlow's forms, or a DeviceSpec); scopes nest, the inner one's
    fields winning; None clears the scope."""
    if callable(device_name):
        raise RuntimeError("tf.device does not support functions.")
    if device_name is None:
        return _placed(None)
    if isinstance(device_name, DeviceSpec):
        spec = device_name
    elif isinstance(device_name, str):
        spec = DeviceSpec.from_string(device_name)
    else:
        raise ValueError(f"Expecting a string device name. Got "
                         f"{type(device_name)}({device_name})")
    outer = _scope.get()
    return _placed(spec if outer is None else outer.make_merged_spec(spec))


# -- tf.config's devices --------------------------------------------------------------------

class PhysicalDevice:
    """A device tapeflow can run on, printed as TensorFlow prints it."""

    __slots__ = ("name", "device_type")

    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type

    def __repr__(self):
        return f"{type(self).__name__}(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other):
        return type(other) is type(self) and (self.name, self.device_type) == (
            other.name, other.device_type)

    def __hash__(self):
        return hash((self.name, self.device_type))


class LogicalDevice(PhysicalDevice):
    """A device ops are placed on (`tf.config.list_logical_devices`)."""

    __slots__ = ()


class _Devices:
    """The GPUs found (counted once, when first needed), which are visible, and the
    settings of tf.config and tf.debugging."""

    def __init__(self):
        self.gpu_count = None
        self.visible = None  # {device type: [physical indices]}; None: all of them
        self.initialized = False  # a tensor or op was placed: visibility is fixed
        self.soft_placement = True
        self.log_placement = False
        self.noted_ops = set()  # (op, dtypes) already reported as run on the CPU instead


_devices = _Devices()


def _gpu_backend():
    return backend_registry.compiling_for("GPU")


def _count_gpus():
    if _devices.gpu_count is None:
        backend = _gpu_backend() if _gpu_may_exist() else None
        _devices.gpu_count = backend.device_count() if backend is not None else 0
        _update_active()
    return _devices.gpu_count


def list_physical_devices(device_type=None):
    """The CPU, then each NVIDIA GPU numba-cuda can use (`tf.config.list_physical_devices`;
    the device type is compared as given, as TensorFlow does)."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    devices += [PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(_count_gpus())]
    return devices if device_type is None else [d for d in devices
                                                if d.device_type == device_type]


def _visible_indices(device_type):
    if _devices.visible is None or device_type not in _devices.visible:
        return range(1 if device_type == "CPU" else _count_gpus())
    return _devices.visible[device_type]


def get_visible_devices(device_type=None):
    """`tf.config.get_visible_devices`: the physical devices ops may be placed on."""
    return [d for d in list_physical_devices(device_type)
            if int(d.name.rsplit(":", 1)[1]) in _visible_indices(d.device_type)]


def set_visible_devices(devices, device_type=None):
    """`tf.config.set_visible_devices`: only `devices` (of `device_type`, or of every type
    when None) may be placed on; `set_visible_devices([], 'GPU')` runs everything on the
    CPU. Once a tensor or op was placed, a change is TensorFlow's RuntimeError."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    known = list_physical_devices()
    for d in devices:
        if d not in known:
            raise ValueError(f"Unrecognized device: {d!r}")
    types = {d.device_type for d in known} if device_type is None else {device_type}
    wanted = {t: [int(d.name.rsplit(":", 1)[1]) for d in devices if d.device_type == t]
              for t in types}
    if all(wanted[t] == list(_visible_indices(t)) for t in types):
        return
    if _devices.initialized:
        raise RuntimeError("Visible devices cannot be modified after being initialized")
    _devices.visible = {**(_devices.visible or {}), **wanted}
    _update_active()


def list_logical_devices(device_type=None):
    """`tf.config.list_logical_devices`: the visible devices, numbered as ops name them."""
    _devices.initialized = True
    devices = [LogicalDevice(f"/device:{t}:{i}", t)
               for t in ("CPU", "GPU") for i in range(len(_visible_indices(t)))]
    return devices if device_type is None else [d for d in devices
                                                if d.device_type == device_type]


def gpus_visible():
    return len(_visible_indices("GPU"))


def physical_gpu(index):
    """The physical GPU that logical GPU `index` (as ops and `.device` name it) is."""
    return _visible_indices("GPU")[index]


def set_soft_device_placement(enabled):
    """`tf.config.set_soft_device_placement`: whether an op that cannot run where it was
    placed (no GPU kernel, no such device) runs on another device instead of raising."""
    _devices.soft_placement = bool(enabled)
    _update_active()


def get_soft_device_placement():
    return _devices.soft_placement


def set_log_device_placement(enabled):
    """`tf.debugging.set_log_device_placement`: each eager op prints the device it runs
    on, as TensorFlow's 'Executing op AddV2 in device ...' lines (to stderr)."""
    _devices.log_placement = bool(enabled)
    _update_active()


def _update_active():
    global active
    if _devices.gpu_count is None:  # not counted yet: counted at the first op
        gpu = _gpu_may_exist()
    else:
        gpu = _gpu_backend() is not None and gpus_visible() > 0
    # Without soft placement a scope naming a missing device must raise, GPU or not.
    active = _devices.log_placement or not _devices.soft_placement or gpu


# -- placing ops and tensors ----------------------------------------------------------------

def gpu_name(index):
    return f"{LOCAL_PREFIX}/device:GPU:{index}"


def _unsatisfiable(spec, supported):
    available = [gpu_name(i) for i in range(gpus_visible())] + [HOST]
    return InvalidArgumentError(
        f"Could not satisfy device specification '{_full_name(spec)}'. "
        f"enable_soft_placement=0. Supported device types [{', '.join(supported)}]. "
        f"All available devices [{', '.join(available)}].")


def requested_gpu():
    """The GPU (its logical index) that ops and new tensors are placed on here, or None
    for the CPU: the tf.device scope's device, else GPU:0 when a GPU is visible. A device
    that does not exist is TensorFlow's InvalidArgumentError unless soft placement is on
    (then the first device of its type, else the default)."""
    _devices.initialized = True
    n = gpus_visible()
    spec = _scope.get()
    kind = None if spec is None else spec.device_type
    if kind is None:
        return 0 if n else None
    index = spec.device_index or 0
    if kind == "GPU" and index < n:
        return index
    if kind == "CPU" and index == 0:
        return None
    if not _devices.soft_placement:
        raise _unsatisfiable(spec, ["GPU", "CPU"] if n else ["CPU"])
    if kind == "CPU":
        return None
    return 0 if n else None


def _explicitly_on_gpu():
    spec = _scope.get()
    return spec is not None and spec.device_type == "GPU"


def _log(op, device_name):
    if _devices.log_placement:
        sys.stderr.write(f"Executing op {op.name} in device {device_name}\n")


def run_placed(op, inputs, attrs, run_on_host):
    """Runs an eager op where it is placed: on the GPU backend when the op is placed on a
    GPU and the backend has a kernel for it, else by `run_on_host` (NumPy; GPU inputs
    are copied to the host for it). An op placed on the GPU without a GPU kernel runs on
    the CPU once soft placement allows it, with a one-time note naming the op."""
    index = requested_gpu()
    if index is not None:
        out = _gpu_backend().run(op, inputs, attrs, index)
        if out is not None:
            _log(op, gpu_name(index))
            return out
        if _explicitly_on_gpu() and not _devices.soft_placement:
            raise _unsatisfiable(_scope.get(), ["CPU"])
        dtypes = ", ".join(x.dtype.name for x in inputs)
        if (op.name, dtypes) not in _devices.noted_ops:
            _devices.noted_ops.add((op.name, dtypes))
            sys.stderr.write(f"tapeflow: {op.name} has no GPU kernel for ({dtypes}) yet; it "
                             f"runs on the CPU (inputs copied to the host, outputs on the "
                             f"CPU)\n")
    _log(op, HOST)
    return run_on_host(op, inputs, attrs)


def placed_on_gpu_kernel(op):
    """Whether `op`, run here now, goes to a GPU kernel: a GPU is requested and the GPU
    backend lowers the op (it may still hand back dtypes it has no kernel for)."""
    if not active:
        return False
    return requested_gpu() is not None and _gpu_backend().lowering(op) is not None


def to_gpu(tensor, index):
    """`tensor` in the memory of GPU `index` (itself when it is there)."""
    return _gpu_backend().upload(tensor, index)


def place_new(tensor):
    """A tensor just created from host data (tf.constant, a converted value), moved to
    the GPU when it is placed there; itself otherwise."""
    index = requested_gpu()
    if index is None:
        return tensor
    return to_gpu(tensor, index)
