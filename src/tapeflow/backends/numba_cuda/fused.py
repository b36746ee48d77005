"""A group of the fusion plan (backends/compiler.py) as @cuda.jit kernels: its elementwise
chain is one kernel (a grid-stride loop over its iteration shape) that reads the chain's
inputs and writes only the values used after it; the reductions ending it accumulate in
the same kernel, one kernel per set of reduced axes (a second set recomputes the chain,
which costs less than a round trip through memory). Each member's element is the one
its eager kernel computes (elementwise.py: the entry's `emit` template), held in a local
of the member's dtype, so float32 chains round as TensorFlow's do.

Kernels are "fused" keys of kernels.py: (kind, text, argument types), the text generated
here. One-element constants are written into the text as literals of their dtype.
"""

import math
import re

import numpy as np

from ...device_tensor import on_device
from ...tensor import Tensor, is_symbolic
from . import device, kernels, reduce, templates
from .elementwise import _mode

_ACC = re.compile(r"\bacc\b")
_VALUE = re.compile(r"\bv\b")


def literal(value, dtype):
    """`value` as device code of tapeflow dtype `dtype`."""
    if dtype.is_bool:
        return "True" if value else "False"
    if dtype.is_floating:
        v = float(value)
        text = "np.nan" if v != v else ("np.inf" if v > 0 else "-np.inf") if math.isinf(v) \
            else repr(v)
        return f"np.{dtype.name}({text})"
    return f"np.{dtype.name}({int(value)})"


def _numeric(attrs, names):
    return {name: attrs[name] for name in names}


def _ints(rank):
    return f"ints{rank}"


class Chain:
    """The text of a group's elementwise members over the element at flat index `i`:
    which external values it reads (and how), which locals hold member outputs."""

    def __init__(self, group, backend, rank):
        self.rank = rank
        self.group_shape = tuple(group.shape)
        self.externals = []  # (value, mode, strides): read from a kernel argument each
        self._external_names = {}  # id(value) -> expression reading it
        self.locals = {}  # id(member output) -> local name
        self.lines = []
        self.checks = []  # the nodes whose element can fail (integer division by zero)
        for node in group.nodes:
            self._member(node, backend)

    def read(self, x):
        """The expression of value `x` at element i: a local, a literal or a read."""
        if is_symbolic(x) and id(x) in self.locals:
            return self.locals[id(x)]
        found = self._external_names.get(id(x))
        if found is not None:
            return found
        if type(x) is Tensor and math.prod(x._shape) == 1:  # a host constant
            found = literal(np.asarray(x._value).reshape(-1)[0], x.dtype)
        else:
            k = len(self.externals)
            mode, strides = _mode(x._shape, self.group_shape)
            self.externals.append((x, mode, strides))
            at = {"same": "i", "one": "0"}.get(mode) or " + ".join(
                f"c{d} * s{k}[{d}]" for d in range(self.rank)) or "0"
            found = f"a{k}[{at}]"
        self._external_names[id(x)] = found
        return found

    def _member(self, node, backend):
        lowering = backend.lowering(node.op)
        dtypes = tuple(x.dtype for x in node.inputs)
        out_dtype = node.outputs[0].dtype
        used = lowering.used(node.op, len(dtypes))
        operands = [f"({self.read(x)})" if i in used else None
                    for i, x in enumerate(node.inputs)]
        attr_names = templates.numeric_attrs(node.attrs)
        expression, check = lowering.expression(node.op, dtypes, out_dtype, operands,
                                                attr_names)
        compute = templates.compute_dtype([dtypes[i] for i in used], out_dtype)
        for name in attr_names:
            expression = expression.replace(f"attr_{name}",
                                            literal(node.attrs[name], compute))
        name = f"v{len(self.locals)}"
        self.locals[id(node.outputs[0])] = name
        value = expression if out_dtype.is_bool else f"np.{out_dtype.name}({expression})"
        if check is None:
            self.lines.append(f"{name} = {value}")
            return
        # The simulator runs the element as Python, where x // 0 raises: not computed.
        self.lines.append(f"if {check}:")
        self.lines.append(f"    flag[{len(self.checks)}] = 1")
        self.lines.append(f"{name} = {literal(0, out_dtype)} if {check} else {value}")
        self.checks.append(node)

    @property
    def strided(self):
        return any(mode == "strided" for _, mode, _ in self.externals)

    def params(self):
        """(names, types) of the arguments that carry the external values."""
        names, types = [], []
        for k, (x, mode, _) in enumerate(self.externals):
            names.append(f"a{k}")
            types.append(f"array:{x.dtype.name}")
            if mode == "strided":
                names.append(f"s{k}")
                types.append(_ints(self.rank))
        if self.checks:
            names.append("flag")
            types.append("array:int32")
        return names, types

    def body(self, indent, writes):
        """The lines computing element i (at `indent`), then the `writes`."""
        lines = []
        if self.strided:
            kernels._unravel(lines, "i", self.rank, "shape", "c")
            lines = [line[8:] for line in lines]
        return [" " * indent + line for line in lines + self.lines + writes]


def _axes(node, rank):
    return tuple(sorted(a % rank for a in node.attrs["axis"])) if rank else ()


class FusedGroup:
    """One group of the plan, run as its kernels. `live` holds the ids of the member
    outputs read after the group (by later nodes or as graph outputs)."""

    def __init__(self, group, live, backend):
        self.shape = tuple(group.shape)
        self.n = math.prod(self.shape)
        rank = len(self.shape)
        self.chain = Chain(group, backend, rank)
        self.live = [node.outputs[0] for node in group.nodes
                     if id(node.outputs[0]) in live]
        for node in group.reductions:  # their inputs are locals or external reads
            self.chain.read(node.inputs[0])
        self.by_axes = {}
        for node in group.reductions:
            self.by_axes.setdefault(_axes(node, rank), []).append(node)
        self.checks = self.chain.checks
        self._keys = {}
        self._flag = None

    # -- text ------------------------------------------------------------------------
    def _map_key(self):
        chain = self.chain
        names, types = ["n"], ["int64"]
        if chain.strided:
            names.append("shape")
            types.append(_ints(chain.rank))
        for k, y in enumerate(self.live):
            names.append(f"out{k}")
            types.append(f"array:{y.dtype.name}")
        more, more_types = chain.params()
        writes = [f"out{k}[i] = {chain.read(y)}" for k, y in enumerate(self.live)]
        lines = [f"def kernel({', '.join(names + more)}):",
                 "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):"]
        lines += chain.body(8, writes)
        return ("fused", "\n".join(lines) + "\n", tuple(types + more_types))

    def _reduce_key(self, axes, with_live, last):
        chain = self.chain
        nodes = self.by_axes[axes]
        kshape, kstride, rshape, _ = reduce._blocks(self.shape, axes)
        kept, reduced = len(kshape), len(rshape)
        names = ["m", "parts", "k", "kshape", "kstride", "rshape", "rstride", "count"]
        types = ["int64", "int64", "int64", _ints(kept), _ints(kept), _ints(reduced),
                 _ints(reduced), "int64"]
        if chain.strided:
            names.append("shape")
            types.append(_ints(chain.rank))
        for r, node in enumerate(nodes):
            names.append(f"red{r}")
            types.append(f"array:{self._level_dtype(node, last)}")
        live = self.live if with_live else []
        for k, y in enumerate(live):
            names.append(f"out{k}")
            types.append(f"array:{y.dtype.name}")
        more, more_types = chain.params()
        lines = [f"def kernel({', '.join(names + more)}):",
                 "    for t in range(cuda.grid(1), m * parts, cuda.gridsize(1)):"]
        lines += kernels.thread_lines(kstride[-1] == 1)
        kernels._unravel(lines, "j", kept, "kshape", "q")
        lines.append(f"        base = {kernels._offset(kept, 'q', 'kstride')}")
        for r, node in enumerate(nodes):
            lines.append(f"        acc{r} = {kernels._initial(node.op.reduction, self._acc(node))}")
        lines.append("        for r in range(c, k, parts):")
        inner = []
        kernels._unravel(inner, "r", reduced, "rshape", "p")
        lines += ["    " + line for line in inner]
        lines.append(f"            i = base + {kernels._offset(reduced, 'p', 'rstride')}")
        accumulate = []
        for r, node in enumerate(nodes):
            combine = _VALUE.sub(chain.read(node.inputs[0]), kernels._COMBINE[node.op.reduction])
            accumulate.append(f"acc{r} = {_ACC.sub(f'acc{r}', combine)}")
        writes = [f"out{k}[i] = {chain.read(y)}" for k, y in enumerate(live)]
        lines += chain.body(12, writes + accumulate)
        for r, node in enumerate(nodes):
            kind, out_dtype = node.op.reduction, node.outputs[0].dtype.name
            finish = kernels._finish(kind, out_dtype) if last else "acc"
            lines.append(f"        red{r}[at] = {_ACC.sub(f'acc{r}', finish)}")
        return ("fused", "\n".join(lines) + "\n", tuple(types + more_types))

    @staticmethod
    def _acc(node):
        return reduce._accumulator(node.op.reduction, node.inputs[0].dtype)

    def _level_dtype(self, node, last):
        return node.outputs[0].dtype.name if last else self._acc(node)

    def key(self, *which):
        """The kernel key of the map kernel (no arguments) or of one reduction kernel
        (axes, writes the live values, last level)."""
        found = self._keys.get(which)
        if found is None:
            found = self._keys[which] = (self._reduce_key(*which) if which
                                         else self._map_key())
        return found

    def kernel_keys(self):
        """The keys of the kernels a call launches first (compiled ahead of the call)."""
        if not self.by_axes:
            return [self.key()]
        keys = []
        for number, axes in enumerate(self.by_axes):
            kshape, _, rshape, _ = reduce._blocks(self.shape, axes)
            last = reduce._parts(math.prod(kshape), math.prod(rshape)) == 1
            keys.append(self.key(axes, number == 0 and bool(self.live), last))
        return keys

    # -- running ---------------------------------------------------------------------
    def _argument_arrays(self, env, index, constants):
        args = []
        for x, mode, strides in self.chain.externals:
            if is_symbolic(x):
                args.append(device.device_array_of(env[id(x)], index))
            else:
                found = constants.get(id(x))
                if found is None:
                    found = constants[id(x)] = device.device_array_of(x, index)
                args.append(found)
            if mode == "strided":
                args.append(strides)
        if self.checks:
            if self._flag is None:
                self._flag = device.to_device(np.zeros(len(self.checks), np.int32))
            args.append(self._flag)
        return args

    def run(self, env, index, constants):
        """Launches the group's kernels on the values in `env` and puts its live values
        and reductions there. Returns False when an element failed its check (the call
        then runs op by op, and the op raises its error)."""
        args = self._argument_arrays(env, index, constants)
        shape_arg = [self.shape] if self.chain.strided else []
        live = [device.empty(self.n, y.dtype) for y in self.live]
        if not self.by_axes:
            if self.n:
                device.launch(kernels.kernel(self.key()), self.n, self.n, *shape_arg,
                              *live, *args)
        for number, (axes, nodes) in enumerate(self.by_axes.items()):
            kshape, kstride, rshape, rstride = reduce._blocks(self.shape, axes)
            m, k = math.prod(kshape), math.prod(rshape)
            outs = [device.empty(m, node.outputs[0].dtype) for node in nodes]
            writes = live if number == 0 else []

            def first_level(targets, parts, last, axes=axes, writes=writes, k=k, m=m,
                            blocks=(kshape, kstride, rshape, rstride)):
                key = self.key(axes, bool(writes), last)
                device.launch(kernels.kernel(key), m * parts, m, parts, k, *blocks, k,
                              *shape_arg, *targets, *writes, *args)

            reduce.reduce_levels(first_level, m, k, [
                (node.op.reduction, self._acc(node), out, node.outputs[0].dtype)
                for node, out in zip(nodes, outs)])
            for node, out in zip(nodes, outs):
                y = node.outputs[0]
                env[id(y)] = on_device(out, y._shape, y.dtype, index)
        for y, array in zip(self.live, live):
            env[id(y)] = on_device(array, y._shape, y.dtype, index)
        if self.checks and self._flag.copy_to_host().any():
            self._flag = None
            return False
        return True
