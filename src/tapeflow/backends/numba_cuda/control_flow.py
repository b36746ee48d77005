"""If and While nodes of a graph compiled for a GPU, as TensorFlow runs them there: each
branch, condition and body is itself a compiled GPU program (program.py: the same fusion
plan and fused kernels, recursively; one per sub-graph and GPU, kept while the sub-graph
lives), and the control decisions are made on the host. A predicate computed on the
device is read back once per decision (one small copy); the integer and boolean scalars
a loop counts with live on the host, as TensorFlow's HostMemory arguments do, and the
nodes computing only such scalars run there (host_scalar_node). Loop-carried tensors stay
in device memory from one iteration to the next.

A While node also returns each loop variable's history, which its gradient reads: kept
only when something reads it, as one device array of the stacked iterations (copied
device to device), or on the host for the host scalars and the lengths of lists."""

import math
import weakref

import numpy as np

from ...device_tensor import on_device
from ...ops.control import history_by_length
from ...ops.draws import draw_variables
from ...ops.registry import run_on_host
from ...tensor import is_symbolic, wrap
from . import device


def host_scalar(x):
    """Whether value `x` (a tensor or a traced value) is an integer or boolean scalar:
    what TensorFlow keeps in host memory on a GPU."""
    return x._shape == () and (x.dtype.is_integer or x.dtype.is_bool)


def host_scalar_node(node):
    """Whether `node` only computes host scalars from host scalars (a loop counter's
    increment, its comparison with the trip count): it runs on the host."""
    op = node.op
    return (not op.structural and op.draw is None and not op.stateful and node.inputs
            and all(host_scalar(x) for x in node.inputs)
            and all(host_scalar(y) for y in node.outputs))


def node_inputs(env, node):
    """The values of `node`'s inputs in a program's environment."""
    return [env[id(x)] if is_symbolic(x) else x for x in node.inputs]


def store(env, symbols, values):
    for y, value in zip(symbols, values):
        env[id(y)] = value


class HostStep:
    """A host_scalar_node, run by its NumPy kernel (a device input is read once: a
    tensor's host copy is kept)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def run(self, env, state, variable_values):
        node = self.node
        outs = run_on_host(node.op, node_inputs(env, node), node.attrs)
        store(env, node.outputs, (outs,) if node.op.n_out == 1 else outs)
        return True


def _truth(value):
    """A predicate's value on the host (the one read a device predicate costs)."""
    return bool(np.asarray(value._value))


class IfStep:
    """An If node: the branch the predicate picks runs as its compiled program."""

    __slots__ = ("node", "branches")

    def __init__(self, node, compile_subgraph):
        self.node = node
        self.branches = [compile_subgraph(node.attrs[key]) for key in ("then", "else")]

    def programs(self):
        return self.branches

    def run(self, env, state, variable_values):
        args = node_inputs(env, self.node)
        branch = self.branches[0 if _truth(args[0]) else 1]
        store(env, self.node.outputs, branch.run(args[1:]))
        return True


class WhileStep:
    """A While node: the condition's and the body's compiled programs, alternating until
    the condition is false. `read` holds the ids of the values something reads after the
    node (its histories are stacked only when read)."""

    __slots__ = ("node", "cond", "body", "index", "kept", "by_length", "after_step")

    def __init__(self, node, compile_subgraph, index, read):
        self.node = node
        self.index = index
        self.cond = compile_subgraph(node.attrs["cond"])
        self.body = compile_subgraph(node.attrs["body"])
        n = node.attrs["n_vars"]
        self.kept = [i for i, h in enumerate(node.outputs[n:2 * n]) if id(h) in read]
        self.by_length = history_by_length(node.attrs)
        # A variable carrying a step's draws: its history is its value after the step.
        self.after_step = draw_variables(node.attrs)

    def programs(self):
        return [self.cond, self.body]

    def run(self, env, state, variable_values):
        node = self.node
        n = node.attrs["n_vars"]
        args = node_inputs(env, node)
        values, captured = args[:n], args[n:]
        history = {i: [] for i in self.kept}
        count = 0
        while _truth(self.cond.run(values + captured)[0]):
            for i, rows in history.items():
                if i not in self.after_step:
                    rows.append(wrap(np.int32(values[i]._shape[0])) if i in self.by_length
                                else values[i])
            values = self.body.run(values + captured)
            for i, rows in history.items():
                if i in self.after_step:
                    rows.append(values[i])
            count += 1
        outs = node.outputs
        store(env, outs, values)
        for i, rows in history.items():
            y = outs[n + i]
            env[id(y)] = self._stacked(rows, y)
        env[id(outs[2 * n])] = wrap(np.int32(count))
        return True

    def _stacked(self, rows, y):
        """The per-iteration values `rows` as one tensor like history `y`: on the device,
        each row copied there device to device; on the host for host scalars and list
        lengths. A loop variable that changed shape has no history (its gradient is
        refused, as on the CPU)."""
        row_shape = y._shape[1:]
        if rows and any(r._shape != rows[0]._shape for r in rows):
            rows = []
        if rows:
            row_shape = rows[0]._shape
        shape = (len(rows),) + tuple(row_shape)
        if not row_shape and (y.dtype.is_integer or y.dtype.is_bool):
            return wrap(np.array([np.asarray(r._value) for r in rows], y.dtype._np)
                        .reshape(shape))
        size = math.prod(row_shape)
        out = device.empty(len(rows) * size, y.dtype)
        for k, row in enumerate(rows):
            if size:
                out[k * size:(k + 1) * size].copy_to_device(
                    device.device_array_of(row, self.index), stream=device.stream())
        return on_device(out, shape, y.dtype, self.index)


class SubgraphPrograms:
    """The compiled program of each sub-graph, per GPU: built once, while the sub-graph
    lives (a function's forward and backward graphs share the If and While bodies they
    both hold)."""

    def __init__(self):
        self._programs = weakref.WeakKeyDictionary()

    def get(self, graph, index, make):
        by_index = self._programs.get(graph)
        if by_index is None:
            by_index = self._programs[graph] = {}
        found = by_index.get(index)
        if found is None:
            found = by_index[index] = make(graph)
        return found
