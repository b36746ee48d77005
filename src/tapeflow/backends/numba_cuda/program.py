"""A tf.function graph compiled for a GPU: the shared passes and fusion plan
(backends/compiler.py), each fused group as its kernels (fused.py), and every other node
run as an eager op placed on that GPU (its GPU lowering: views, matrix products, random
draws) or, when the GPU backend has none, on the CPU with the copies made (soft
placement, noted once per op and dtypes, as eagerly). If and While nodes run their
sub-graphs as programs of their own (control_flow.py). Values stay in device memory
between kernels and between calls: inputs on the GPU are read where they are, variables
are read and replaced as device arrays, outputs are device tensors.

    program = Program(graph, index, scope, backend)
    outputs, new_variable_values = program(input_tensors, variable_tensors, streams)
    outputs = program.run(input_tensors)  # a branch, condition or loop body
"""

from ... import context, placement
from ...device_tensor import alias
from ...errors import OpError
from ...graph.execute import located, run_graph, run_node
from ...ops.control import IF, WHILE
from ...ops.structural import of_kind
from ...tensor import is_symbolic
from .. import compiler
from . import device, kernels
from .control_flow import (HostStep, IfStep, SubgraphPrograms, WhileStep, host_scalar_node,
                           node_inputs, store)
from .elementwise import SUPPORTED, Map
from .fused import FusedGroup
from .reduce import Reduction


def _static(values):
    return all(None not in x._shape for x in values)


def _broadcasts_to(shape, out):
    return len(shape) <= len(out) and all(
        d in (1, o) for d, o in zip(shape[::-1], out[::-1]))


def fusible(backend, node):
    """What the fusion plan may do with `node` on the GPU: "elementwise" (a Map lowering
    whose element the device can compute), "reduction", or None (it runs on its own)."""
    if node.op.n_out != 1 or not _static(node.inputs) or not _static(node.outputs):
        return None
    lowering = backend.lowering(node.op)
    out = node.outputs[0]
    if isinstance(lowering, Map):
        dtypes = tuple(x.dtype for x in node.inputs)
        used = lowering.used(node.op, len(dtypes))
        if out.dtype.name not in SUPPORTED or any(
                dtypes[i].name not in SUPPORTED or not _broadcasts_to(
                    node.inputs[i]._shape, out._shape) for i in used):
            return None
        expression, _ = lowering.expression(node.op, dtypes, out.dtype,
                                            [f"x{i}" for i in range(len(dtypes))],
                                            tuple(sorted(node.attrs)))
        return None if expression is None else "elementwise"
    if isinstance(lowering, Reduction) and node.inputs[0].dtype.name in SUPPORTED:
        return "reduction"
    return None


class _NodeStep:
    """A node run as an eager op under the trace's placement."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def run(self, env, state, variable_values):
        outs = run_node(self.node, node_inputs(env, self.node), state, variable_values)
        if outs is not None:
            store(env, self.node.outputs, outs)
        return True


class _GroupStep:
    __slots__ = ("fused", "index", "constants")

    def __init__(self, fused, index):
        self.fused = fused
        self.index = index
        self.constants = {}  # id(constant) -> its device array, uploaded at the first call

    @property
    def node(self):
        return None

    def run(self, env, state, variable_values):
        return self.fused.run(env, self.index, self.constants)


class Program:
    """A graph compiled for GPU `index`; called as the CPU backend's kernels are, but on
    tensors (device tensors stay where they are). `nested`: a branch, condition or loop
    body, whose integer and boolean scalars are computed on the host."""

    def __init__(self, graph, index, scope, backend, nested=False):
        self.graph = graph
        self.index = index
        self.scope = scope
        self.optimized = compiler.optimize(graph)
        on_host = host_scalar_node if nested else lambda node: False
        items = compiler.plan(self.optimized,
                              lambda node: None if on_host(node) else fusible(backend, node))
        # Group members are read by their groups only: index them by output id.
        member_of = {}
        for item in items:
            if isinstance(item, compiler.Group):
                for node in item.nodes:
                    member_of[id(node.outputs[0])] = item
        live = _live(items, self.optimized, member_of)
        read = {id(x) for node in self.optimized.nodes for x in node.inputs} | {
            id(x) for x in self.optimized.outputs}

        def compile_subgraph(subgraph):
            return _SUBGRAPHS.get(subgraph, index, lambda g: Program(g, index, scope,
                                                                     backend, nested=True))

        def step(item):
            if isinstance(item, compiler.Group):
                return _GroupStep(FusedGroup(item, live, backend), index)
            if of_kind(item.op, IF):
                return IfStep(item, compile_subgraph)
            if of_kind(item.op, WHILE):
                return WhileStep(item, compile_subgraph, index, read)
            return HostStep(item) if on_host(item) else _NodeStep(item)

        self.steps = [step(item) for item in items]
        self.kernel_keys = [key for step in self.steps if isinstance(step, _GroupStep)
                            for key in step.fused.kernel_keys()]
        with device.selected(index):
            for key in self.kernel_keys:  # compiled now, not at the first call
                kernels.kernel(key)

    @property
    def source(self):
        """The generated kernels' text, in the order they run (a branch's or loop's
        after those of the graph around it)."""
        nested = [program.source for step in self.steps if hasattr(step, "programs")
                  for program in step.programs()]
        return "\n\n".join([key[1] for key in self.kernel_keys] + [s for s in nested if s])

    def __call__(self, inputs, variable_values, streams=None):
        """The outputs and the variables' new values. `streams` (the CPU's Generators for
        the random ops of branches and loops) is not used: on the GPU every run of a
        random op draws on the device, from a fresh counter of its seed pair."""
        state = list(variable_values)
        token = context.random_streams.set(None)
        try:
            with placement.restored_scope(self.scope), device.selected(self.index):
                outputs = self._run(inputs, state, variable_values)
        finally:
            context.random_streams.reset(token)
        return [alias(x) for x in outputs], state

    def run(self, inputs):
        """A branch's, condition's or loop body's outputs on `inputs` (no variables:
        tracing made them loop variables and branch outputs)."""
        return self._run(inputs, [], [])

    def _run(self, inputs, state, variable_values):
        graph = self.optimized
        env = {id(p): x for p, x in zip(graph.inputs, inputs)}
        step = None
        try:
            for step in self.steps:
                if not step.run(env, state, variable_values):
                    # An element failed its check (an integer division by zero):
                    # op by op, the op raises its error naming the user's line.
                    outputs, state[:] = run_graph(self.graph, inputs, variable_values)
                    return outputs
        except OpError as e:
            error = located(e, step.node if step is not None else None)
            if error is e:
                raise
            raise error from None
        return [env[id(x)] if is_symbolic(x) else x for x in graph.outputs]


_SUBGRAPHS = SubgraphPrograms()


def _live(items, graph, member_of):
    """{id(member output)} of the group members read after their group: by a node
    outside it, or as a graph output."""
    live = {id(x) for x in graph.outputs if is_symbolic(x)}
    in_group = {}
    for item in items:
        if isinstance(item, compiler.Group):
            for node in item.nodes + item.reductions:
                in_group[id(node)] = item
    for node in graph.nodes:
        reader = in_group.get(id(node))
        for x in node.inputs:
            if is_symbolic(x) and id(x) in member_of and member_of[id(x)] is not reader:
                live.add(id(x))
    return live
