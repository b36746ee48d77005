"""The compiled backends there are. Each registers itself as its package loads
(`backends/numba_cpu/` does; `import tapeflow` loads it); tf.function asks here which one
compiles a graph and tf.config.clear_cache asks each to empty its cache, so the layers
below backends/ never import one.

A backend is a `backends.compiler.Backend`: a `name`, the `device_type` it compiles for
("CPU", "GPU"), `compile(graph)` and `clear_cache()`.
"""


class Unsupported(Exception):
    """A backend cannot lower a node of the graph (its message names the op and the
    user's line); the graph runs on the NumPy interpreter instead."""


_registered = []


def register(backend):
    """Adds `backend`; the first one registered for a device type compiles for it."""
    if any(other.name == backend.name for other in _registered):
        raise ValueError(f"a compiled backend named {backend.name!r} is already registered")
    _registered.append(backend)
    return backend


def registered():
    """The registered backends, in the order they registered."""
    return tuple(_registered)


def compiling_for(device_type):
    """The backend that compiles graphs placed on `device_type`, or None (they run on the
    NumPy interpreter)."""
    return next((b for b in _registered if b.device_type == device_type), None)


def clear_caches():
    """Each registered backend removes its compiled kernels from its cache."""
    for backend in registered():
        backend.clear_cache()
