"""What every compiled backend shares: the graph passes (inlining, folding, CSE, DCE),
the fusion plan, and how a backend attaches its lowerings to op-table entries.

A backend is an object with a `name` (the key of its lowerings on each OpDef) and
`compile(graph)`; it decides what it can fuse through `fusible(node)` and lowers the
planned graph its own way (numba_cpu/: one Python module Numba compiles). Its package
registers it as it loads (`backend_registry.register`), which is how tf.function finds
it.
"""

import abc

from .. import backend_registry
from ..graph import passes

Group = passes.Group
Unsupported = backend_registry.Unsupported


def optimize(graph):
    """The graph a backend lowers: calls inlined, constants folded, CSE, DCE."""
    return passes.optimize(graph)


def plan(graph, fusible):
    """The order in which to emit `graph`'s nodes: nodes and fusion Groups, as
    `fusible(node)` ("elementwise", "reduction" or None) allows."""
    return passes.fusion_plan(graph, fusible)


def lowering_registrar(backend):
    """The decorator a backend's lowering modules use: `@lowers(SLICE, ...)` stores the
    function on each entry under the backend's name."""
    def lowers(*ops):
        def attach(fn):
            for op in ops:
                if backend in op.lowerings:
                    raise KeyError(f"{op.name} has two {backend} lowerings")
                op.lowerings[backend] = fn
            return fn
        return attach
    return lowers


class Backend(abc.ABC):
    """A compiled backend: lowers a traced graph to something callable as
    `compiled(input_arrays, variable_arrays) -> (outputs, new variable values)`."""

    name = None
    device_type = None  # "CPU" or "GPU": tf.function compiles with the one for its device

    @abc.abstractmethod
    def compile(self, graph):
        """The compiled graph; raises Unsupported (or a subclass) for a node it cannot
        lower (the graph then runs on the NumPy interpreter)."""

    @abc.abstractmethod
    def clear_cache(self):
        """Removes this backend's compiled kernels from its on-disk cache
        (tf.config.clear_cache)."""

    def compile_elsewhere(self, graph):
        """Does the heavy part of compiling `graph` outside this process, where the
        backend can, so that `compile` afterwards is quick (the background compile calls
        it first, graph/compile_worker.py). Returns whether it did; by default nothing."""
        return False

    def lowering(self, op):
        """How this backend lowers `op`, or None."""
        return op.lowerings.get(self.name)
