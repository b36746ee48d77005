"""Graph -> the text of one Python module whose `kernel` function numba compiles.

Fused groups (elementwise chains and the reductions that consume them) become one loop
nest each (backends/fused.py); every other node becomes a call of NumPy (as Numba implements it) or of a
helper in backends/kernels.py; conds, loops and lists lower to native `if` / `while`
(backends/control_flow.py).

The source depends on the graph's structure, dtypes, ranks and on which dimensions are
size-1 broadcasts, never on other shape values or constant values: shapes are read from
the arrays at run time, and values that a trace bakes in (scalar constants, array
constants, shape-like attrs such as Reshape's `shape`) are arguments of the kernel. A graph
retraced for a new shape therefore generates the same source and reuses the compiled code.
"""

import itertools
import math

import numpy as np

from .. import dtypes
from ..graph import passes
from ..tensor import Symbolic
from . import numpy_blas


class Unsupported(Exception):
    """The compiled backend has no lowering for a node (the message names the op and the
    user's line); the graph must run another way (the interpreter)."""


# -- dtypes -------------------------------------------------------------------------------

SUPPORTED_DTYPES = frozenset({"float32", "float64", "int8", "int16", "int32", "int64",
                              "uint8", "bool"})
_NP = {"float32": "np.float32", "float64": "np.float64", "int8": "np.int8",
       "int16": "np.int16", "int32": "np.int32", "int64": "np.int64", "uint8": "np.uint8",
       "bool": "np.bool_"}
_SUFFIX = {"float32": "f32", "float64": "f64"}


def np_name(dtype):
    return _NP[dtype.name]


def literal(value, dtype):
    """A typed constant expression: `np.float32(0.5)` (a bare 0.5 would make float32
    arithmetic float64 in Numba)."""
    if dtype.is_bool:
        return "True" if bool(value) else "False"
    if dtype.is_floating:
        v = float(value)
        if math.isnan(v):
            text = "np.nan"
        elif math.isinf(v):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return f"{np_name(dtype)}({text})"
    return f"{np_name(dtype)}({int(value)})"


def _tuple(items):
    items = list(items)
    if not items:
        return "()"
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def _index(items):
    """The subscript of an index tuple: `[i, j]`, or `[()]` for a 0-d array."""
    items = list(items)
    return "[" + ", ".join(items) + "]" if items else "[()]"


# -- values -------------------------------------------------------------------------------

class Val:
    """A graph value inside the kernel.

    name:   the variable holding the array (None for a scalar);
    scalar: for a scalar, the variable holding it;
    local:  the scalar is computed where it is defined (a 0-d value inside the kernel:
            a loop counter, a condition), not a constant of the prologue; an array of it
            is made where one is needed, since Numba allocates a 0-d array like any other;
    layout: 'C' when the array is known to be C-contiguous, else 'A' (a view);
    owner:  id of the graph value whose fresh buffer this is (set where the kernel
            allocates it), so a fused loop may write over it once that value is dead.
    """

    __slots__ = ("dtype", "layout", "local", "name", "owner", "scalar", "shape")

    def __init__(self, name, dtype, shape, layout="C", scalar=None, owner=None, local=False):
        self.name = name
        self.dtype = dtype
        self.shape = tuple(shape)
        self.layout = layout
        self.scalar = scalar
        self.owner = owner
        self.local = local

    @property
    def rank(self):
        return len(self.shape)


class Param:
    """One argument of the kernel: where the caller gets it on every run.

    kind: "input" (ref: graph input index), "variable" (variable index), "scalars"
    (ref: dtype name; the pack of scalar constants), "array" (ref: index into arrays),
    "ints" (the shape-like attrs), "random" (ref: the stateful node), "permutation"
    (ref: a RandomShuffle node).
    """

    __slots__ = ("dtype", "kind", "name", "ndim", "ref")

    def __init__(self, name, kind, ref, dtype, ndim):
        self.name, self.kind, self.ref, self.dtype, self.ndim = name, kind, ref, dtype, ndim


# -- the generator ---------------------------------------------------------------------------

class Codegen:
    def __init__(self, graph):
        self.graph = graph
        self.lines = []
        self.depth = 1
        self._fresh = itertools.count()
        self.vals = {}
        self.params = []
        self.used = set()
        self.scalar_packs = {}   # dtype name -> list of values
        self.scalar_index = {}   # (dtype str, bytes) -> Val
        self.arrays = []         # array constants, in param order
        self.array_index = {}
        self.ints = []           # the shape-like attrs, in order
        self.errors = []         # error code -> (kind, node, detail)
        self.sites = []          # W[0] value -> the node whose code runs then
        self.prologue = []
        self.variables = {}      # variable index -> Val (current value)
        self.assigned = []       # variable indices assigned, in order
        self.consumers = {}
        self.outputs_ids = set()
        self.keep = []
        # id(push) -> (push, row buffer); id(cond or loop) -> (node, {(k, j): row buffer})
        self.list_bases = {}
        self.nesting = 0         # how many branches and loops the code being emitted is in
        self.streams = {}        # random op stream key -> the kernel's Generator argument
        self.ranges = {}         # id(Range output read only by gathers) -> (start, count, step)

    # -- bookkeeping ------------------------------------------------------------------
    def fresh(self, prefix="t"):
        return f"{prefix}{next(self._fresh)}"

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def error(self, kind, node, detail=""):
        self.errors.append((kind, node, detail))
        return len(self.errors) - 1

    def mark(self, node):
        """Writes which node's code runs next into the kernel's W argument (one store),
        so that an error no check of ours raises (a singular matrix, an allocation too
        big) names the node and its line, at no cost on the way that does not fail."""
        if not self.sites:
            self.prologue.insert(0, "W[0] = -1")
        self.sites.append(node)
        self.emit(f"W[0] = {len(self.sites) - 1}")

    def runtime_ints(self, values):
        exprs = []
        for v in values:
            exprs.append(f"I[{len(self.ints)}]")
            self.ints.append(int(v))
        if values is not None:
            self.used.add("I")
        return exprs

    def val(self, x):
        if isinstance(x, Symbolic):
            v = self.vals.get(id(x))
            if v is None:
                raise Unsupported(f"value %{x.name} is used before it is computed")
            if v.name is not None:
                self.used.add(v.name)
            return v
        return self.constant(x)

    def constant(self, t):
        a = np.asarray(t._value)
        dtype = t.dtype
        _check_dtype(dtype, "a constant")
        if a.ndim == 0:
            # Keyed by identity, not value: the source must not depend on values.
            key = id(t)
            v = self.scalar_index.get(key)
            if v is None:
                pack = self.scalar_packs.setdefault(dtype.name, [])
                name = self.fresh("c")
                self.prologue.append(f"{name} = K_{dtype.name}[{len(pack)}]")
                pack.append(a[()])
                v = self.scalar_index[key] = Val(None, dtype, (), "C", scalar=name)
            return v
        key = id(t)
        v = self.array_index.get(key)
        if v is None:
            name = f"A{len(self.arrays)}"
            self.arrays.append(np.ascontiguousarray(a))
            self.params.append(Param(name, "array", len(self.arrays) - 1, a.dtype, a.ndim))
            v = self.array_index[key] = Val(name, dtype, a.shape, "C")
        self.used.add(v.name)
        return v

    def uniform(self, t):
        """A constant for a fused loop: one whose elements are all equal (ones_like and
        broadcast seeds that tracing folded) is read as a scalar, not from memory."""
        a = np.asarray(t._value)
        if a.ndim and a.size > 1:
            first = a.reshape(-1)[0]
            same = (a == first) | (np.isnan(a) & np.isnan(first)) if a.dtype.kind == "f" \
                else a == first
            if same.all():
                key = ("uniform", id(t))
                scalar = self.scalar_index.get(key)
                if scalar is None:
                    from ..tensor import wrap
                    holder = wrap(np.asarray(first))
                    self.keep.append(holder)  # constants are keyed by id: keep it alive
                    scalar = self.constant(holder)
                    self.scalar_index[key] = scalar
                return scalar
        return self.constant(t)

    def define(self, y, v):
        self.vals[id(y)] = v
        return v

    def prologue_lines(self):
        return ["    " + line for line in self.prologue]

    # -- array views of values ---------------------------------------------------------
    def array(self, v):
        """The name of an array holding `v` (a scalar becomes a 0-d array)."""
        if v.local:  # here, not cached: this point may sit in a branch the next use is not
            return _assign(self, f"np.full((), {v.scalar})")
        if v.name is None:
            name = self.fresh()
            # At the top of the kernel: defined on every path, whatever branch needs it.
            self.prologue.append(f"{name} = np.full((), {v.scalar})")
            v.name = name
        return v.name

    def contiguous(self, v):
        name = self.array(v)
        if v.layout == "C":
            return name
        out = self.fresh()
        self.emit(f"{out} = np.ascontiguousarray({name})")
        return out

    def scalar(self, v):
        return v.scalar if v.name is None else f"{v.name}[()]"

    def typed_scalar(self, v):
        """v's scalar as an expression of v's dtype exactly (a loop or branch variable
        must keep one Numba type)."""
        return f"{np_name(v.dtype)}({self.scalar(v)})"

    def dims(self, v):
        if v.rank == 0:
            return []
        name = self.array(v)
        return [f"{name}.shape[{k}]" for k in range(v.rank)]

    def product(self, exprs):
        exprs = list(exprs)
        return " * ".join(exprs) if exprs else "1"

    def write_item(self, target, v):
        """Emits `target = v` for a subscript `target` of an array: the scalar of a 0-d
        v, else a copy of v's elements into the view (backends/kernels.copy_into)."""
        if v.rank == 0:
            self.emit(f"{target} = {self.scalar(v)}")
        else:
            self.emit(f"copy_into({target}, {self.array(v)})")

    def local_scalar(self, y, expr):
        """Defines the 0-d value `y` as a scalar variable holding `expr` (cast to y's
        dtype, so that a loop variable keeps one Numba type)."""
        name = self.fresh("s")
        self.emit(f"{name} = {np_name(y.dtype)}({expr})")
        return self.define(y, Val(None, y.dtype, (), scalar=name, local=True))

    def new_array(self, y, shape_exprs, fill=None):
        name = self.fresh()
        dt = np_name(y.dtype)
        if fill is None:
            self.emit(f"{name} = np.empty({_tuple(shape_exprs)}, {dt})")
        else:
            self.emit(f"{name} = np.full({_tuple(shape_exprs)}, {fill}, {dt})")
        return name

    # -- the whole graph -----------------------------------------------------------------
    def generate(self):
        graph = self.graph
        for x in graph.inputs:
            _check_dtype(x.dtype, "an input")
        for i, x in enumerate(graph.inputs):
            name = f"x{i}"
            self.vals[id(x)] = Val(name, x.dtype, x._shape, "C")
        self.body(graph)
        returns = []
        output_specs = []
        for x in graph.outputs:
            if isinstance(x, Symbolic):
                v = self.val(x)
                name = self.array(v)
                if v.layout != "C":
                    name = f"np.ascontiguousarray({name})"
                output_specs.append(("kernel", len(returns)))
                returns.append(name)
            else:
                output_specs.append(("constant", np.asarray(x._value)))
        assigned = []
        for index in self.assigned:
            v = self.variables[index]
            name = self.array(v)
            if v.layout != "C":
                name = f"np.ascontiguousarray({name})"
            assigned.append((index, len(returns)))
            returns.append(name)
        self.emit(f"return {_tuple(returns)}")
        return output_specs, assigned

    def body(self, graph):
        """Emits the nodes of `graph` (its inputs already bound to Vals)."""
        self.consumers = {}
        for node in graph.nodes:
            for x in node.inputs:
                if isinstance(x, Symbolic):
                    self.consumers.setdefault(id(x), []).append(node)
        self.outputs_ids = {id(x) for x in graph.outputs if isinstance(x, Symbolic)}
        for item in passes.fusion_plan(graph, fusible):
            if isinstance(item, passes.Group):
                self.group(item)
            else:
                self.node(item)

    def subgraph(self, graph, inputs, where, list_bases=None):
        """Emits a branch or loop body inline; returns the Vals of its outputs.

        list_bases: {(output index, input index): buffer name} for the lists a loop body
        or branch appends to; the pushes that grow them, directly or in the branches and
        loops inside, write into the buffer (see _push_back)."""
        sub = passes.optimize(graph)
        for (k, j), base in (list_bases or {}).items():
            chain = list_chain(sub, k, j)
            if chain is None:  # optimizing only removes consumers: it cannot break a chain
                raise Unsupported(f"a list appended to at {where.where()} lost its chain")
            for node, m in chain:  # the node kept: its id stays its own
                if m is None:
                    self.list_bases[id(node)] = (node, base)
                else:
                    self.list_bases.setdefault(id(node), (node, {}))[1][m] = base
        for node in sub.nodes:
            if _effectful_inside(node):
                raise Unsupported(f"{node.op.name} inside a tensor-dependent branch or loop "
                                  f"(at {where.where()}) is not compiled")
        saved = (self.graph, self.consumers, self.outputs_ids)
        self.graph = sub
        self.nesting += 1
        try:
            for ph, v in zip(sub.inputs, inputs):
                self.vals[id(ph)] = v
            self.body(sub)
            self.mark(where)  # the branch or loop's own code runs next
            return [self.val(x) for x in sub.outputs]
        finally:
            self.graph, self.consumers, self.outputs_ids = saved
            self.nesting -= 1

    # -- one node ---------------------------------------------------------------------------
    def node(self, node):
        name = node.op.name
        _check_node_dtypes(node)
        lower = LOWERINGS.get(name)
        if lower is None:
            raise Unsupported(_unsupported_message(node))
        self.emit(f"# {name}")
        self.mark(node)
        lower(self, node)

    # -- fused groups -------------------------------------------------------------------------
    def group(self, group):
        for node in group.nodes + group.reductions:
            _check_node_dtypes(node)
        self.mark(group.nodes[0] if group.nodes else group.reductions[0])
        _FusedLoop(self, group).emit()


def _effectful_inside(node):
    return node.op.name in ("AssignVariableOp", "ReadVariableOp") or (
        node.op.stateful and node.op.name not in ("If", "While") and node.op.draw is None)


def _check_dtype(dtype, what):
    if dtype.name not in SUPPORTED_DTYPES:
        raise Unsupported(f"the compiled backend does not support {dtype.name} ({what})")


def _check_node_dtypes(node):
    for x in list(node.inputs) + list(node.outputs):
        if x.dtype.name not in SUPPORTED_DTYPES:
            raise Unsupported(f"the compiled backend does not support {x.dtype.name}: "
                              f"{node.op.name} at {node.where()}")


def _unsupported_message(node):
    return (f"the compiled backend has no lowering for op {node.op.name} at {node.where()}")


# -- lowerings of the other nodes --------------------------------------------------------------
# Each takes (codegen, node), emits statements and defines the node's outputs.

LOWERINGS = {}


def lowering(*names):
    def register(fn):
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


def _out(cg, node, name, layout="C", k=0):
    y = node.outputs[k]
    return cg.define(y, Val(name, y.dtype, y._shape, layout))


def _assign(cg, expr):
    name = cg.fresh()
    cg.emit(f"{name} = {expr}")
    return name


@lowering("ReadVariableOp")
def _read_variable(cg, node):
    index = node.attrs["index"]
    v = cg.variables.get(index)
    if v is None:
        var = cg.graph.variables[index]
        _check_dtype(var.dtype, "a variable")
        name = f"v{index}"
        if not any(p.name == name for p in cg.params):
            cg.params.append(Param(name, "variable", index, var.dtype._np, len(var._shape)))
        v = Val(name, var.dtype, var._shape, "C")
        cg.variables[index] = v
    cg.used.add(v.name)
    cg.define(node.outputs[0], v)


@lowering("IdentityN")
def _identity_n(cg, node):
    # A custom gradient in a loaded function (graph/identity_n.py): its outputs are its
    # inputs; only its gradient differs.
    for x, y in zip(node.inputs, node.outputs):
        cg.define(y, cg.val(x))


@lowering("AssignVariableOp")
def _assign_variable(cg, node):
    index = node.attrs["index"]
    v = cg.val(node.inputs[0])
    var = cg.graph.variables[index]
    if v.dtype is not var.dtype:
        raise Unsupported(f"assigning {v.dtype.name} to a {var.dtype.name} variable at "
                          f"{node.where()}")
    cg.variables[index] = Val(cg.array(v), v.dtype, v.shape, v.layout)
    if index not in cg.assigned:
        cg.assigned.append(index)


def _stream(cg, node):
    """The kernel's Generator argument for a random op inside a branch or loop."""
    from ..ops.random import stream_key
    key = stream_key(node.attrs)
    name = cg.streams.get(key)
    if name is None:
        name = cg.streams[key] = cg.fresh("G")
        cg.params.append(Param(name, "stream", key, None, 0))
        cg.used.add(name)
    return name


@lowering("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt")
def _random(cg, node):
    y = node.outputs[0]
    if cg.nesting:  # runs a number of times known at run time: draws in the kernel
        attrs = node.attrs
        shape = attrs["shape"]
        if node.op.name == "RandomUniformInt" and math.prod(shape) == 0:
            expr = f"np.zeros({_tuple(shape)}, {np_name(y.dtype)})"
        else:
            expr = node.op.emit.format(  # the op's draw from the Generator argument
                g=_stream(cg, node), shape=_tuple(shape), dtype=np_name(y.dtype),
                minval=attrs.get("minval"), maxval=attrs.get("maxval"))
        _out(cg, node, _assign(cg, expr))
        return
    # Drawn by the caller with NumPy's Generator (a fresh counter per run), passed in.
    name = cg.fresh("R")
    cg.params.append(Param(name, "random", node, y.dtype._np, len(y._shape)))
    cg.used.add(name)
    _out(cg, node, name)


@lowering("RandomShuffle")
def _shuffle(cg, node):
    x = cg.val(node.inputs[0])
    if x.rank == 0 or (x.shape[0] is not None and x.shape[0] <= 1):
        cg.define(node.outputs[0], x)
        return
    if cg.nesting:  # Fisher-Yates over n <= 1 rows draws nothing, as the NumPy kernel
        rows = f"{cg.array(x)}[{_stream(cg, node)}.permutation({cg.array(x)}.shape[0])]"
        _out(cg, node, _assign(cg, rows))
        return
    if x.shape[0] is None:
        raise Unsupported(f"RandomShuffle of a leading dimension unknown at trace time at "
                          f"{node.where()}")
    perm = cg.fresh("P")
    cg.params.append(Param(perm, "permutation", node, np.dtype(np.int64), 1))
    cg.used.add(perm)
    _out(cg, node, _assign(cg, f"{cg.array(x)}[{perm}]"))


@lowering("Reshape")
def _reshape(cg, node):
    x = cg.val(node.inputs[0])
    shape = cg.runtime_ints(node.attrs["shape"])
    src = cg.contiguous(x)
    if None in x.shape and not shape:  # a scalar holds one element (Numba cannot loop ())
        _check_reshape_size(cg, node, src, [])
    elif None in x.shape:  # infer could not count the elements: count them now
        cg.emit(f"check_reshape_size({src}.size, {_tuple(shape)}, {cg.error('reshape', node)}, "
                f"{cg.error('reshape_multiple', node)})")
    _out(cg, node, _assign(cg, f"{src}.reshape({_tuple(shape)})"))


def _runtime_dims(cg, shape, rank):
    """Expressions for the entries of an int shape vector computed by the graph."""
    name = cg.array(cg.val(shape))
    return [f"np.int64({name}[{i}])" for i in range(rank)]


@lowering("DynamicReshape")
def _dynamic_reshape(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    src = cg.contiguous(x)
    shape = cg.array(cg.val(node.inputs[1]))
    dims = []
    cg.emit(f"check_reshape_target({shape}, {cg.error('reshape_unknowns', node)}, "
            f"{cg.error('reshape_negative', node)})")
    for i in range(len(y._shape)):
        dims.append(_assign(cg, f"reshape_dim({shape}, {src}.size, {i})"))
    _check_reshape_size(cg, node, src, dims)
    _out(cg, node, _assign(cg, f"{src}.reshape({_tuple(dims)})"))


def _check_reshape_size(cg, node, src, dims):
    code = cg.error("reshape", node)
    product = _assign(cg, cg.product(dims))
    cg.emit(f"if {product} != {src}.size: raise ValueError({code}, {src}.size, {product})")


@lowering("DynamicBroadcastTo")
def _dynamic_broadcast_to(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    dims = [_assign(cg, d) for d in _runtime_dims(cg, node.inputs[1], len(y._shape))]
    _check_dims_not_negative(cg, node, dims)
    code = cg.error("shape", node)
    for k, d in enumerate(cg.dims(x)):
        target = dims[len(dims) - x.rank + k]
        cg.emit(f"if {d} != 1 and {d} != {target}: raise ValueError({code})")
    out = cg.new_array(y, dims)
    value = cg.array(x) if x.rank else cg.scalar(x)
    cg.emit(f"{out}[...] = {value}")
    _out(cg, node, out)


def _check_dims_not_negative(cg, node, dims):
    """A shape computed when the graph runs (tf.zeros([n])) must have no negative entry:
    np.empty would raise without naming the node or the value."""
    code = cg.error("dimension", node)
    for d in dims:
        cg.emit(f"if {d} < 0: raise ValueError({code}, {d})")


@lowering("Transpose")
def _transpose(cg, node):
    x = cg.val(node.inputs[0])
    perm = tuple(node.attrs["perm"])
    if perm == tuple(range(len(perm))):
        cg.define(node.outputs[0], x)
        return
    _out(cg, node, _assign(cg, f"{cg.array(x)}.transpose({_tuple(map(str, perm))})"), "A")


@lowering("ExpandDims", "Squeeze")
def _expand_squeeze(cg, node):
    x = cg.val(node.inputs[0])
    dims = cg.dims(x)
    y = node.outputs[0]
    if node.op.name == "ExpandDims":
        axis = node.attrs["axis"] % (x.rank + 1)
        shape = dims[:axis] + ["1"] + dims[axis:]
    else:
        from ..ops.shape import _squeeze_dims
        drop = _squeeze_dims(x.shape, node.attrs["axis"])
        shape = [d for i, d in enumerate(dims) if i not in drop]
        for i in drop:
            if x.shape[i] is None:
                raise Unsupported(f"Squeeze of a dimension unknown at trace time at "
                                  f"{node.where()}")
    if len(shape) != len(y._shape):
        raise Unsupported(f"{node.op.name}: unexpected rank at {node.where()}")
    _out(cg, node, _assign(cg, f"{cg.contiguous(x)}.reshape({_tuple(shape)})"))


def _colons(n):
    return [":"] * n


@lowering("Pack")
def _pack(cg, node):
    values = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    axis = node.attrs["axis"] % (values[0].rank + 1)
    first = values[0]
    dims = cg.dims(first) if first.name is not None or first.rank else []
    shape = dims[:axis] + [str(len(values))] + dims[axis:]
    out = cg.new_array(y, shape)
    for k, v in enumerate(values):
        cg.write_item(f"{out}{_index(_colons(axis) + [str(k)] + _colons(first.rank - axis))}",
                      v)
    _out(cg, node, out)


@lowering("Unpack")
def _unpack(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    name = cg.array(x)
    if x.shape[axis] is None:  # as many rows as outputs, when the kernel runs
        code = cg.error("unpack", node, (axis, len(node.outputs)))
        cg.emit(f"if {name}.shape[{axis}] != {len(node.outputs)}: "
                f"raise ValueError({code}, {', '.join(cg.dims(x))})")
    for k, y in enumerate(node.outputs):
        idx = _colons(axis) + [str(k)] + _colons(x.rank - axis - 1)
        if x.rank == 1:
            _out(cg, node, _assign(cg, f"np.full((), {name}[{k}])"), "C", k)
        else:
            _out(cg, node, _assign(cg, f"{name}{_index(idx)}"), "A", k)


@lowering("ConcatV2")
def _concat(cg, node):
    values = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    rank = len(y._shape)
    axis = node.attrs["axis"] % rank
    names = [cg.array(v) for v in values]
    dims = [f"{names[0]}.shape[{d}]" for d in range(rank)]
    dims[axis] = " + ".join(f"{n}.shape[{axis}]" for n in names)
    out = cg.new_array(y, dims)
    offset = cg.fresh("o")
    cg.emit(f"{offset} = 0")
    for n in names:
        idx = _colons(axis) + [f"{offset}:{offset} + {n}.shape[{axis}]"] + \
            _colons(rank - axis - 1)
        cg.emit(f"copy_into({out}{_index(idx)}, {n})")
        cg.emit(f"{offset} += {n}.shape[{axis}]")
    _out(cg, node, out)


@lowering("SplitV")
def _split(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    sizes = node.attrs["size_splits"]
    name = cg.array(x)
    exprs = cg.runtime_ints([0 if s == -1 else s for s in sizes])
    if x.shape[axis] is None:  # the sizes must fit the dimension when the kernel runs
        known = _assign(cg, " + ".join(e for e, s in zip(exprs, sizes) if s != -1) or "0")
        code = cg.error("split", node)
        fits = "<=" if -1 in sizes else "=="
        cg.emit(f"if not {known} {fits} {name}.shape[{axis}]: raise ValueError({code}, {known})")
    if -1 in sizes:
        i = sizes.index(-1)
        known = [e for j, e in enumerate(exprs) if j != i]
        exprs[i] = f"({name}.shape[{axis}] - {' - '.join(known) if known else '0'})" \
            if known else f"{name}.shape[{axis}]"
    offset = cg.fresh("o")
    cg.emit(f"{offset} = 0")
    for k, size in enumerate(exprs):
        idx = _colons(axis) + [f"{offset}:{offset} + {size}"] + _colons(x.rank - axis - 1)
        _out(cg, node, _assign(cg, f"{name}{_index(idx)}"), "A", k)
        cg.emit(f"{offset} += {size}")


@lowering("Tile")
def _tile(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        _out(cg, node, _assign(cg, f"np.full((), {cg.scalar(x)})"))
        return
    name = cg.array(x)
    mult = cg.runtime_ints(node.attrs["multiples"])
    dims = cg.dims(x)
    out = cg.new_array(y, [f"{d} * {m}" for d, m in zip(dims, mult)])
    ts = [cg.fresh("k") for _ in dims]
    for t, m in zip(ts, mult):
        cg.emit(f"for {t} in range({m}):")
        cg.depth += 1
    idx = [f"{t} * {d}:({t} + 1) * {d}" for t, d in zip(ts, dims)]
    cg.emit(f"copy_into({out}{_index(idx)}, {name})")
    cg.depth -= len(ts)
    _out(cg, node, out)


@lowering("PadV2")
def _pad(cg, node):
    x, c = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    if x.rank == 0:
        _out(cg, node, _assign(cg, f"np.full((), {cg.scalar(x)})"))
        return
    flat = [p for pair in node.attrs["paddings"] for p in pair]
    pads = cg.runtime_ints(flat)
    dims = cg.dims(x)
    shape = [f"{d} + {pads[2 * i]} + {pads[2 * i + 1]}" for i, d in enumerate(dims)]
    out = cg.new_array(y, shape, fill=cg.scalar(c))
    idx = [f"{pads[2 * i]}:{pads[2 * i]} + {d}" for i, d in enumerate(dims)]
    cg.emit(f"copy_into({out}{_index(idx)}, {cg.array(x)})")
    _out(cg, node, out)


@lowering("MirrorPad", "MirrorPadGrad")
def _mirror_pad(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        _out(cg, node, _assign(cg, f"np.full((), {cg.scalar(x)})"))
        return
    shift = 0 if node.attrs["mode"] == "REFLECT" else 1
    flat = [p for pair in node.attrs["paddings"] for p in pair]
    pads = cg.runtime_ints(flat)
    dims = cg.dims(x)
    grad = node.op.name == "MirrorPadGrad"
    name = cg.array(x)
    if grad:
        small = [f"{d} - {pads[2 * i]} - {pads[2 * i + 1]}" for i, d in enumerate(dims)]
        out = cg.new_array(y, small, fill=literal(0, y.dtype))
        sizes = small
    else:
        _check_mirror_paddings(cg, node, x, dims, pads, shift)
        out = cg.new_array(y, [f"{d} + {pads[2 * i]} + {pads[2 * i + 1]}"
                               for i, d in enumerate(dims)])
        sizes = dims
    maps = []
    for i, n in enumerate(sizes):
        m = cg.fresh("m")
        cg.emit(f"{m} = mirror_index({n}, {pads[2 * i]}, {pads[2 * i + 1]}, {shift})")
        maps.append(m)
    ks = [cg.fresh("k") for _ in maps]
    for k, m in zip(ks, maps):
        cg.emit(f"for {k} in range({m}.shape[0]):")
        cg.depth += 1
    src = [f"{m}[{k}]" for k, m in zip(ks, maps)]
    if grad:
        cg.emit(f"{out}{_index(src)} += {name}{_index(ks)}")
    else:
        cg.emit(f"{out}{_index(ks)} = {name}{_index(src)}")
    cg.depth -= len(ks)
    _out(cg, node, out)


def _check_mirror_paddings(cg, node, x, dims, pads, shift):
    """A dimension unknown while tracing must be longer than its REFLECT paddings (at
    least as long as SYMMETRIC ones) when the kernel runs: mirror_index would read
    outside the input."""
    code = cg.error("mirror_reflect" if shift == 0 else "mirror_symmetric", node)
    for i, d in enumerate(dims):
        if x.shape[i] is None:
            lo, hi = pads[2 * i], pads[2 * i + 1]
            cg.emit(f"if {lo} > {d} - {1 - shift} or {hi} > {d} - {1 - shift}: "
                    f"raise ValueError({code}, {lo}, {hi}, {d})")


def _key_index(cg, node, key, rank, check_value=None):
    """The subscript for a StridedSlice key, with bounds read at run time."""
    consumed = sum(k is not None and k is not Ellipsis for k in key)
    items = []
    ints = []
    dim = 0
    for k in key:
        if k is None:
            items.append("None")
        elif k is Ellipsis:
            items.extend([":"] * (rank - consumed))
            dim += rank - consumed
        elif isinstance(k, tuple):
            parts = []
            for b in k[:2] if len(k) == 3 and k[2] is None else k:  # a:b, not a:b:
                parts.append("" if b is None else cg.runtime_ints([b])[0])
            items.append(":".join(parts))
            dim += 1
        else:
            e = cg.runtime_ints([k])[0]
            items.append(e)
            ints.append((dim, e))
            dim += 1
    items.extend([":"] * (rank - dim))
    return items, ints


@lowering("StridedSlice")
def _strided_slice(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    name = cg.array(x)
    items, ints = _key_index(cg, node, node.attrs["key"], x.rank)
    for dim, e in ints:
        code = cg.error("index", node, dim)
        cg.emit(f"if not -{name}.shape[{dim}] <= {e} < {name}.shape[{dim}]: "
                f"raise IndexError({code}, {e})")
    while items and items[-1] == ":":  # the same view, which Numba types more precisely
        items.pop()
    if len(y._shape) == 0:
        cg.local_scalar(y, f"{name}{_index(items)}")
        return
    if not items:
        _out(cg, node, name, x.layout)
        return
    # Numba keeps C-contiguity for integers then at most one step-less slice.
    steps = [item for item in items if ":" in item]
    contiguous = x.layout == "C" and "None" not in items and (
        not steps or (steps == [items[-1]] and items[-1].count(":") == 1))
    _out(cg, node, _assign(cg, f"{name}{_index(items)}"), "C" if contiguous else "A")


@lowering("StridedSliceGrad", "DynamicStridedSliceGrad")
def _strided_slice_grad(cg, node):
    dy = cg.val(node.inputs[0])
    y = node.outputs[0]
    if node.op.name == "StridedSliceGrad":
        shape = cg.runtime_ints(node.attrs["shape"])
    else:
        shape = _runtime_dims(cg, node.inputs[1], len(y._shape))
    out = cg.new_array(y, shape, fill=literal(0, y.dtype))
    key = node.attrs["key"]
    rank = len(y._shape)
    items, _ = _key_index(cg, node, key, rank)
    # dy has a size-1 axis for each None of the key: drop them to assign.
    kept = [i for i, item in enumerate(items) if item != "None"]
    value_dims = []
    pos = 0
    for item in items:
        if item == "None":
            pos += 1  # an axis of size 1 in dy
            continue
        if ":" in item:
            value_dims.append(pos)
            pos += 1
    region = f"{out}{_index([items[i] for i in kept])}"
    if dy.rank == 0:
        cg.emit(f"{region} = {cg.scalar(dy)}")
        _out(cg, node, out)
        return
    if not value_dims:  # a single element, under size-1 axes
        cg.emit(f"{region} = {cg.contiguous(dy)}.reshape(1)[0]")
        _out(cg, node, out)
        return
    if len(value_dims) != dy.rank:
        src = cg.contiguous(dy)
        value = _assign(cg, f"{src}.reshape({_tuple(f'{src}.shape[{d}]' for d in value_dims)})")
    else:
        value = cg.array(dy)
    cg.emit(f"copy_into({region}, {value})")
    _out(cg, node, out)


@lowering("Slice")
def _slice(cg, node):
    x = cg.val(node.inputs[0])
    begin, size = (cg.array(cg.val(t)) for t in node.inputs[1:])
    name = cg.array(x)
    codes = [cg.error(kind, node) for kind in (
        "slice_rank", "slice_empty", "slice_begin", "slice_size")]
    if x.rank == 0:
        cg.emit(f"if {begin}.shape[0] != 0 or {size}.shape[0] != 0: "
                f"raise ValueError({codes[0]}, {begin}.shape[0], {size}.shape[0], 0)")
        cg.define(node.outputs[0], x)
        return
    # Checked before the view is taken: Numba clamps a slice past the end silently.
    sizes = _assign(cg, f"slice_sizes({name}.shape, {begin}, {size}, "
                        f"{', '.join(map(str, codes))})")
    items = []
    for i in range(x.rank):
        start = _assign(cg, f"np.int64({begin}[{i}])")
        items.append(f"{start}:{start} + {sizes}[{i}]")
    _out(cg, node, _assign(cg, f"{name}{_index(items)}"), "A")


@lowering("Pad")
def _pad_with_tensor(cg, node):
    x, y = cg.val(node.inputs[0]), node.outputs[0]
    paddings = cg.array(cg.val(node.inputs[1]))
    dims = cg.dims(x)
    code = cg.error("pad_rank", node)
    cg.emit(f"if {paddings}.shape[0] != {x.rank} or {paddings}.shape[1] != 2: "
            f"raise ValueError({code}, {paddings}.shape[0], {paddings}.shape[1]"
            f"{''.join(', ' + d for d in dims)})")
    cg.emit(f"check_paddings({paddings}, {x.rank}, {cg.error('pad_negative', node)})")
    if x.rank == 0:
        _out(cg, node, _assign(cg, f"np.full((), {cg.scalar(x)})"))
        return
    lo = [_assign(cg, f"np.int64({paddings}[{i}, 0])") for i in range(x.rank)]
    hi = [_assign(cg, f"np.int64({paddings}[{i}, 1])") for i in range(x.rank)]
    out = cg.new_array(y, [f"{d} + {a} + {b}" for d, a, b in zip(dims, lo, hi)],
                       fill=literal(0, y.dtype))
    cg.emit(f"copy_into({out}{_index(f'{a}:{a} + {d}' for a, d in zip(lo, dims))}, "
            f"{cg.array(x)})")
    _out(cg, node, out)


@lowering("ReverseV2")
def _reverse(cg, node):
    x = cg.val(node.inputs[0])
    axes = {a % x.rank for a in node.attrs["axis"]} if x.rank else set()
    if not axes:
        cg.define(node.outputs[0], x)
        return
    idx = ["::-1" if d in axes else ":" for d in range(x.rank)]
    _out(cg, node, _assign(cg, f"{cg.array(x)}{_index(idx)}"), "A")


@lowering("GatherV2")
def _gather(cg, node):
    p = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % p.rank
    if id(node.inputs[1]) in cg.ranges:
        _gather_range(cg, node, p, axis, *cg.ranges[id(node.inputs[1])])
        return
    i = cg.val(node.inputs[1])
    y = node.outputs[0]
    b = node.attrs["batch_dims"]
    b = b + i.rank if b < 0 else b
    if i.rank == 0:  # one index (a loop reading its history): index in place
        _gather_one(cg, node, p, i, axis)
        return
    pd, id_ = cg.dims(p), cg.dims(i)
    batch = cg.product(pd[:b])
    outer = cg.product(pd[b:axis])
    inner = cg.product(pd[axis + 1:])
    m = cg.product(id_[b:])
    p4 = _assign(cg, f"{cg.contiguous(p)}.reshape(({batch}, {outer}, {pd[axis]}, {inner}))")
    i2 = _assign(cg, f"{cg.contiguous(i)}.reshape(({batch}, {m}))")
    o4 = _assign(cg, f"np.empty(({batch}, {outer}, {m}, {inner}), {np_name(y.dtype)})")
    code = cg.error("gather", node, i.shape)
    cg.emit(f"gather4({p4}, {i2}, {o4}, {code})")
    shape = pd[:axis] + id_[b:] + pd[axis + 1:]
    _out(cg, node, _assign(cg, f"{o4}.reshape({_tuple(shape)})"))


def _check_gather_index(cg, node, p, axis, k, when=""):
    """Raises (as gather4 does) unless 0 <= k < p's size along `axis`."""
    code = cg.error("gather", node, ())
    n = f"{cg.array(p)}.shape[{axis}]"
    cg.emit(f"if {when}({k} < 0 or {k} >= {n}): raise IndexError({code}, {k}, {n}, 0)")


def _gather_range(cg, node, p, axis, start, count, step):
    """Rows start, start + step, ... (count of them) along `axis`: a view."""
    params = cg.array(p)
    last = _assign(cg, f"{start} + ({count} - 1) * {1 if step is None else step}")
    for k in (start, last):  # the range is monotonic: its ends bound it
        _check_gather_index(cg, node, p, axis, k, when=f"{count} > 0 and ")
    before = [":"] * axis
    view = cg.fresh()
    if step is None:  # a unit step: Numba keeps leading rows C-contiguous
        cg.emit(f"{view} = {params}{_index(before + [f'{start}:{start} + {count}'])}")
        _out(cg, node, view, p.layout if axis == 0 else "A")
        return
    cg.emit(f"if {count} == 0:")
    cg.emit(f"    {view} = {params}{_index(before + ['0:0:1'])}")
    cg.emit(f"elif {step} > 0:")
    cg.emit(f"    {view} = {params}{_index(before + [f'{start}:{last} + 1:{step}'])}")
    cg.emit("else:")
    cg.emit(f"    {view} = {params}{_index(before + [f'{last}:{start} + 1:-{step}'])}"
            f"{_index([':'] * axis + ['::-1'])}")
    _out(cg, node, view, "A")


def _gather_one(cg, node, p, i, axis):
    k = _assign(cg, cg.scalar(i))
    params = cg.array(p)
    _check_gather_index(cg, node, p, axis, k)
    if p.rank == 1:
        cg.local_scalar(node.outputs[0], f"{params}[{k}]")
        return
    # A view: nothing writes into a value that has consumers left (see dead_inputs).
    view = _assign(cg, f"{params}{_index([':'] * axis + [k])}")
    _out(cg, node, view, p.layout if axis == 0 else "A")


@lowering("UnsortedSegmentSum")
def _segment_sum(cg, node):
    data, ids = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    dd = cg.dims(data)
    k = ids.rank
    n = cg.runtime_ints([node.attrs["num_segments"]])[0]
    m, inner = cg.product(dd[:k]), cg.product(dd[k:])
    d2 = _assign(cg, f"{cg.contiguous(data)}.reshape(({m}, {inner}))")
    i1 = _assign(cg, f"{cg.contiguous(ids)}.reshape({m})")
    o2 = _assign(cg, f"np.zeros(({n}, {inner}), {np_name(y.dtype)})")
    code = cg.error("segment", node, ids.shape)
    cg.emit(f"segment_sum({d2}, {i1}, {o2}, {code})")
    _out(cg, node, _assign(cg, f"{o2}.reshape({_tuple([n] + dd[k:])})"))


def _index_rows(cg, node, i):
    """(depth, rows, name of a (rows, depth) view) of an nd index tensor: the coordinates
    GatherNd, ScatterNd and TensorScatterAdd read row by row."""
    depth = i.shape[-1]
    if depth is None or depth == 0:
        raise Unsupported(f"{node.op.name} with index depth {depth} at {node.where()}")
    m = cg.product(cg.dims(i)[:-1])
    return depth, m, _assign(cg, f"{cg.contiguous(i)}.reshape(({m}, {depth}))")


def _check_index_rows(cg, node, i, rows, depth, shape):
    """Raises, naming the bad row, its position and `shape` (dims expressions), unless
    every row of the (rows, depth) view `rows` of index tensor `i` lies inside shape."""
    last = node.op.name == "GatherNd"  # as TensorFlow's kernels report it
    bad = _assign(cg, f"nd_bad_row({rows}, {_tuple(shape[:depth])}, {last})")
    code = cg.error("nd_index", node, {"rows": tuple(i.shape[:-1]), "depth": depth})
    row = ", ".join(f"{rows}[{bad}, {d}]" for d in range(depth))
    cg.emit(f"if {bad} >= 0: raise IndexError({code}, {bad}, {row}, {', '.join(shape)})")


@lowering("StridedSliceIndex")
def _slice_index(cg, node):
    dim = node.attrs["dim"]
    n = f"{cg.array(cg.val(node.inputs[0]))}.shape[{dim}]"
    k = _assign(cg, cg.scalar(cg.val(node.inputs[1])))
    code = cg.error("index", node, dim)
    cg.emit(f"if not -{n} <= {k} < {n}: raise IndexError({code}, {k})")
    cg.local_scalar(node.outputs[0], f"{k} + {n} if {k} < 0 else {k}")


@lowering("GatherNd")
def _gather_nd(cg, node):
    p, i = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    depth, m, i2 = _index_rows(cg, node, i)
    pd = cg.dims(p)
    inner = cg.product(pd[depth:])
    p2 = _assign(cg, f"{cg.contiguous(p)}.reshape(({cg.product(pd[:depth])}, {inner}))")
    o2 = _assign(cg, f"np.empty(({m}, {inner}), {np_name(y.dtype)})")
    _check_index_rows(cg, node, i, i2, depth, pd)
    cg.emit(f"gather_nd2({p2}, {i2}, {_tuple(pd[:depth])}, {o2})")
    _out(cg, node, _assign(cg, f"{o2}.reshape({_tuple(cg.dims(i)[:-1] + pd[depth:])})"))


def _scatter_rows(cg, node, i, u, shape, start):
    """Adds the rows of `u` at the coordinates in `i` into a (rows, inner) view of a new
    array of `shape` made by `start(rows, inner)`: ScatterNd and TensorScatterAdd."""
    depth, m, i2 = _index_rows(cg, node, i)
    inner = cg.product(shape[depth:])
    o2 = _assign(cg, start(cg.product(shape[:depth]), inner))
    u2 = _assign(cg, f"{cg.contiguous(u)}.reshape(({m}, {inner}))")
    _check_index_rows(cg, node, i, i2, depth, shape)
    cg.emit(f"scatter_nd2({i2}, {u2}, {_tuple(shape[:depth])}, {o2})")
    _out(cg, node, _assign(cg, f"{o2}.reshape({_tuple(shape)})"))


@lowering("ScatterNd")
def _scatter_nd(cg, node):
    i, u = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    dtype = np_name(node.outputs[0].dtype)
    _scatter_rows(cg, node, i, u, cg.runtime_ints(node.attrs["shape"]),
                  lambda rows, inner: f"np.zeros(({rows}, {inner}), {dtype})")


@lowering("TensorScatterAdd")
def _tensor_scatter_add(cg, node):
    t, i, u = (cg.val(x) for x in node.inputs)
    _scatter_rows(cg, node, i, u, cg.dims(t),
                  lambda rows, inner: f"{cg.contiguous(t)}.reshape(({rows}, {inner})).copy()")


@lowering("Where")
def _where(cg, node):
    c = cg.val(node.inputs[0])
    if c.rank == 0:
        _out(cg, node, _assign(cg, f"np.zeros((1 if {cg.scalar(c)} else 0, 0), np.int64)"))
        return
    flat = _assign(cg, f"{cg.contiguous(c)}.reshape({cg.product(cg.dims(c))})")
    _out(cg, node, _assign(cg, f"argwhere_flat({flat}, {_tuple(cg.dims(c))})"))


@lowering("Shape", "Size", "Rank")
def _shape(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    dims = cg.dims(x)
    dt = np_name(y.dtype)
    if node.op.name == "Shape":
        out = cg.new_array(y, [str(len(dims))])
        for k, d in enumerate(dims):
            cg.emit(f"{out}[{k}] = {d}")
    else:
        value = cg.product(dims) if node.op.name == "Size" else str(len(dims))
        out = _assign(cg, f"np.full((), {dt}({value}))")
    _out(cg, node, out)


@lowering("OneHot")
def _one_hot(cg, node):
    i = cg.val(node.inputs[0])
    y = node.outputs[0]
    a = node.attrs
    axis = i.rank if a["axis"] == -1 else a["axis"]
    depth = cg.runtime_ints([a["depth"]])[0]
    dims = cg.dims(i)
    outer, inner = cg.product(dims[:axis]), cg.product(dims[axis:])
    i2 = _assign(cg, f"{cg.contiguous(i)}.reshape(({outer}, {inner}))")
    o3 = _assign(cg, f"np.empty(({outer}, {depth}, {inner}), {np_name(y.dtype)})")
    cg.emit(f"one_hot3({i2}, {o3}, {literal(a['on_value'], y.dtype)}, "
            f"{literal(a['off_value'], y.dtype)})")
    _out(cg, node, _assign(cg, f"{o3}.reshape({_tuple(dims[:axis] + [depth] + dims[axis:])})"))


def _view3(cg, v, axis):
    """v as a C-contiguous (outer, axis, inner) array, and its dims."""
    dims = cg.dims(v)
    outer, inner = cg.product(dims[:axis]), cg.product(dims[axis + 1:])
    return _assign(cg, f"{cg.contiguous(v)}.reshape(({outer}, {dims[axis]}, {inner}))"), dims


@lowering("ArgMax", "ArgMin")
def _argmax(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    axis = node.attrs["axis"] % x.rank
    x3, dims = _view3(cg, x, axis)
    fn = "argmax3" if node.op.name == "ArgMax" else "argmin3"
    out = _assign(cg, f"{fn}({x3}).astype({np_name(y.dtype)})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims[:axis] + dims[axis + 1:])})"))


@lowering("Cumsum", "Cumprod")
def _scan(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        cg.define(y, x)
        return
    a = node.attrs
    axis = a["axis"] % x.rank
    x3, dims = _view3(cg, x, axis)
    prod = node.op.name == "Cumprod"
    out = _assign(cg, f"scan3({x3}, {prod}, {bool(a['exclusive'])}, {bool(a['reverse'])})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims)})"))


def _microgemm_may_pay(node):
    """Whether a product may go to microgemm at run time: float32, and a size that is
    unknown or large enough. The others call OpenBLAS only, so their kernels neither
    wait for microgemm's compile nor link to it."""
    from . import microgemm
    y = node.outputs[0]
    if y.dtype._np != np.float32 or not microgemm.ENABLED:
        return False
    a = node.inputs[0]
    depth = a._shape[-2] if node.attrs["transpose_a"] else a._shape[-1]
    m, n = y._shape
    if None in (m, n, depth):
        return True
    from .kernels import microgemm_pays
    return microgemm_pays.py_func(m, n, depth)


@lowering("MatMul")
def _matmul(cg, node):
    a, b = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    an, bn = cg.contiguous(a), cg.contiguous(b)
    _check_inner_dims(cg, node, a, b, node.attrs["transpose_a"], node.attrs["transpose_b"])
    if numpy_blas.LIBRARY and y.dtype._np in numpy_blas.SYMBOLS:
        ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])
        helper = "gemm" if _microgemm_may_pay(node) else "blas_gemm"
        name = _assign(cg, f"{helper}({an}, {bn}, {ta}, {tb})")
        cg.define(y, Val(name, y.dtype, y._shape, "C", owner=id(y)))
        return
    an = f"{an}.T" if node.attrs["transpose_a"] else an
    bn = f"{bn}.T" if node.attrs["transpose_b"] else bn
    if y.dtype.is_floating:
        _out(cg, node, _assign(cg, f"np.dot({an}, {bn})"))
    else:
        _out(cg, node, _assign(cg, f"matmul_loops({an}, {bn})"))


@lowering("BatchMatMulV2")
def _batch_matmul(cg, node):
    x, y_in = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    _check_batch_dims(cg, node, x, y_in)
    _check_inner_dims(cg, node, x, y_in, node.attrs["adj_x"], node.attrs["adj_y"])
    batch = len(y._shape) - 2
    names = []
    batch_dims = [None] * batch
    for v in (x, y_in):
        dims = cg.dims(v)
        vb = v.rank - 2
        for j in range(vb):
            d = batch - vb + j
            if not (v.shape[j] == 1 and y._shape[d] != 1) and batch_dims[d] is None:
                batch_dims[d] = dims[j]
    batch_dims = [d if d is not None else "1" for d in batch_dims]
    for v in (x, y_in):
        dims = cg.dims(v)
        vb = v.rank - 2
        full = vb == batch and all(not (v.shape[j] == 1 and y._shape[j] != 1)
                                   for j in range(vb))
        name = cg.array(v)
        if not full:
            name = _assign(cg, f"np.ascontiguousarray(np.broadcast_to({name}, "
                               f"{_tuple(batch_dims + dims[-2:])}))")
        else:
            name = cg.contiguous(v)
        names.append(_assign(cg, f"{name}.reshape(({cg.product(batch_dims)}, "
                                 f"{dims[-2]}, {dims[-1]}))"))
    out = _assign(cg, f"bmm3({names[0]}, {names[1]}, {node.attrs['adj_x']}, "
                      f"{node.attrs['adj_y']})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(batch_dims + [f'{out}.shape[1]', f'{out}.shape[2]'])})"))


def _check_inner_dims(cg, node, a, b, adj_a, adj_b):
    """Matrix products whose inner dimensions were unknown while tracing compare them
    before multiplying: BLAS and the loops would read past the shorter operand."""
    ka = a.shape[-2] if adj_a else a.shape[-1]
    kb = b.shape[-1] if adj_b else b.shape[-2]
    if ka is not None and kb is not None:
        return
    dims_a, dims_b = cg.dims(a), cg.dims(b)
    flags = f" {int(adj_a)} {int(adj_b)}" if node.op.name == "BatchMatMulV2" else ""
    code = cg.error("matmul_size", node, {"split": a.rank, "flags": flags})
    inner_a = dims_a[-2] if adj_a else dims_a[-1]
    inner_b = dims_b[-1] if adj_b else dims_b[-2]
    cg.emit(f"if {inner_a} != {inner_b}: raise ValueError({code}, "
            f"{', '.join(dims_a + dims_b)})")


def _check_batch_dims(cg, node, x, y):
    """Batch dimensions unknown while tracing must broadcast when the kernel runs."""
    dims_x, dims_y = cg.dims(x), cg.dims(y)
    code = cg.error("batch_dims", node, {"split": x.rank})
    for k in range(1, min(x.rank, y.rank) - 1):
        a, b = x.shape[-2 - k], y.shape[-2 - k]
        if a is None or b is None:
            da, db = dims_x[-2 - k], dims_y[-2 - k]
            cg.emit(f"if {da} != {db} and {da} != 1 and {db} != 1: "
                    f"raise ValueError({code}, {', '.join(dims_x + dims_y)})")


def _batched(cg, v, k=2):
    dims = cg.dims(v)
    b = cg.product(dims[:-k])
    return _assign(cg, f"{cg.contiguous(v)}.reshape(({b}, {', '.join(dims[-k:])}))"), dims


@lowering("MatrixInverse")
def _inverse(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = _batched(cg, x)
    out = _assign(cg, f"inv3({x3}, {node.attrs['adjoint']})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims)})"))


@lowering("MatrixDeterminant")
def _det(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = _batched(cg, x)
    out = _assign(cg, f"det3({x3})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims[:-2])})"))


@lowering("MatrixSolve")
def _solve(cg, node):
    a, b = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    a3, _ = _batched(cg, a)
    b3, dims = _batched(cg, b)
    out = _assign(cg, f"solve3({a3}, {b3}, {node.attrs['adjoint']})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims)})"))


@lowering("MatrixDiagV3")
def _diag(cg, node):
    d = cg.val(node.inputs[0])
    y = node.outputs[0]
    a = node.attrs
    d2, dims = _batched(cg, d, 1)
    rows, cols = cg.runtime_ints([a["num_rows"], a["num_cols"]])
    k = cg.runtime_ints([a["k"]])[0]
    out = _assign(cg, f"diag3({d2}, {k}, {rows}, {cols}, "
                      f"{literal(a['padding_value'], y.dtype)})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims[:-1] + [f'{out}.shape[1]', f'{out}.shape[2]'])})"))


@lowering("MatrixDiagPartV3")
def _diag_part(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = _batched(cg, x)
    k = cg.runtime_ints([node.attrs["k"]])[0]
    out = _assign(cg, f"diag_part3({x3}, {k})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims[:-2] + [f'{out}.shape[1]'])})"))


@lowering("Softmax", "LogSoftmax")
def _softmax(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    x3, dims = _view3(cg, x, axis)
    out = _assign(cg, f"softmax3({x3}, {node.op.name == 'LogSoftmax'})")
    _out(cg, node, _assign(cg, f"{out}.reshape({_tuple(dims)})"))


@lowering("SoftmaxCrossEntropyWithLogits")
def _xent(cg, node):
    f, lab = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    axis = node.attrs["axis"] % f.rank
    f3, dims = _view3(cg, f, axis)
    l3, _ = _view3(cg, lab, axis)
    loss, back = cg.fresh(), cg.fresh()
    cg.emit(f"{loss}, {back} = xent3({f3}, {l3})")
    _out(cg, node, _assign(cg, f"{loss}.reshape({_tuple(dims[:axis] + dims[axis + 1:])})"),
         "C", 0)
    _out(cg, node, _assign(cg, f"{back}.reshape({_tuple(dims)})"), "C", 1)


@lowering("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent(cg, node):
    f, lab = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    f2, dims = _batched(cg, f, 1)
    l1 = _assign(cg, f"{cg.contiguous(lab)}.reshape({cg.product(dims[:-1])})")
    loss, back = cg.fresh(), cg.fresh()
    code = cg.error("label", node)
    cg.emit(f"{loss}, {back} = sparse_xent2({f2}, {l1}, {code})")
    _out(cg, node, _assign(cg, f"{loss}.reshape({_tuple(dims[:-1])})"), "C", 0)
    _out(cg, node, _assign(cg, f"{back}.reshape({_tuple(dims)})"), "C", 1)


@lowering("L2Loss")
def _l2_loss(cg, node):
    t = cg.val(node.inputs[0])
    y = node.outputs[0]
    flat = _assign(cg, f"{cg.contiguous(t)}.reshape({cg.product(cg.dims(t))})")
    _out(cg, node, _assign(cg, f"np.full((), {np_name(y.dtype)}(l2_loss1({flat})))"))


@lowering("Fill")
def _fill(cg, node):
    v = cg.val(node.inputs[0])
    y = node.outputs[0]
    shape = cg.runtime_ints(node.attrs["shape"])
    _out(cg, node, cg.new_array(y, shape, fill=cg.scalar(v)))


@lowering("ConstFill")
def _const_fill(cg, node):
    y = node.outputs[0]
    shape = cg.runtime_ints(node.attrs["shape"])
    _out(cg, node, cg.new_array(y, shape, fill=literal(node.attrs["value"], y.dtype)))


@lowering("Eye")
def _eye(cg, node):
    y = node.outputs[0]
    rows, cols = cg.runtime_ints([node.attrs["num_rows"], node.attrs["num_columns"]])
    _out(cg, node, _assign(cg, f"np.eye({rows}, {cols}, 0, {np_name(y.dtype)})"))


@lowering("Range")
def _range(cg, node):
    s, l, d = (cg.scalar(cg.val(x)) for x in node.inputs)
    y = node.outputs[0]
    code = cg.error("range", node)
    cg.emit(f"if {d} == 0 or ({d} > 0 and {s} > {l}) or ({d} < 0 and {s} < {l}): "
            f"raise ValueError({code})")
    readers = cg.consumers.get(id(y), [])
    if readers and id(y) not in cg.outputs_ids and all(
            r.op.name == "GatherV2" and r.inputs[1] is y and r.inputs[0] is not y and
            r.attrs["batch_dims"] == 0 for r in readers):
        # Only gathers read it (a slice with tensor bounds, a list's first rows): they
        # take a strided view, so the indices are never written out.
        start, count, step = _assign(cg, s), cg.fresh("n"), _assign(cg, d)
        cg.emit(f"{count} = ({l} - {start} + {step} - 1) // {step} if {step} > 0 else "
                f"({start} - {l} - {step} - 1) // -{step}")
        unit = not isinstance(node.inputs[2], Symbolic) and _scalar_value(node.inputs[2]) == 1
        cg.ranges[id(y)] = (start, count, None if unit else step)
        return
    _out(cg, node, _assign(cg, f"np.arange({s}, {l}, {d}).astype({np_name(y.dtype)})"))


@lowering("LinSpace")
def _linspace(cg, node):
    s, e, n = (cg.scalar(cg.val(x)) for x in node.inputs)
    y = node.outputs[0]
    _out(cg, node, _assign(cg, f"np.linspace(np.float64({s}), np.float64({e}), int({n}))"
                               f".astype({np_name(y.dtype)})"))


# -- einsum: nested loops over every label -------------------------------------------------------

@lowering("Einsum", "UnaryEinsum")
def _einsum(cg, node):
    from ..ops.linalg import _split
    operands = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    ins, out_labels = _split(node.attrs["equation"])
    broadcast = set(node.attrs["broadcast"])
    names = [cg.array(v) for v in operands]
    size = {}
    stride = {}  # (operand, axis) -> 0/1 multiplier for broadcast labels
    unknown = {label for v, labels in zip(operands, ins)
               for label, d in zip(labels, v.shape) if d is None}
    for k, (labels, name) in enumerate(zip(ins, names)):
        for axis, label in enumerate(labels):
            dim = f"{name}.shape[{axis}]"
            if label in broadcast:
                m = cg.fresh("s")
                cg.emit(f"{m} = 0 if {dim} == 1 else 1")
                stride[(k, axis)] = m
                size[label] = dim if label not in size else f"max({size[label]}, {dim})"
            elif label not in size:
                size[label] = dim
            elif label in unknown:
                # Unknown while tracing: the loops below would index past the shorter.
                code = cg.error("einsum_dim", node, axis)
                cg.emit(f"if {dim} != {size[label]}: raise ValueError({code}, {size[label]}, "
                        f"{dim}, {', '.join(cg.dims(operands[k]))})")
    sizes = {}
    for label, expr in size.items():
        sizes[label] = cg.fresh("n")
        cg.emit(f"{sizes[label]} = {expr}")
    acc_dt = dtypes.float64 if y.dtype.is_floating else (
        dtypes.int64 if y.dtype.is_integer else y.dtype)
    out = cg.new_array(y, [sizes[label] for label in out_labels])
    index = {label: cg.fresh("i") for label in size}
    for label in out_labels:
        cg.emit(f"for {index[label]} in range({sizes[label]}):")
        cg.depth += 1
    acc = cg.fresh("p")
    cg.emit(f"{acc} = {literal(0, acc_dt)}")
    summed = [label for label in size if label not in out_labels]
    for label in summed:
        cg.emit(f"for {index[label]} in range({sizes[label]}):")
        cg.depth += 1
    factors = []
    for k, (labels, name) in enumerate(zip(ins, names)):
        idx = [index[label] if (k, axis) not in stride else
               f"{index[label]} * {stride[(k, axis)]}" for axis, label in enumerate(labels)]
        factors.append(f"{np_name(acc_dt)}({name}{_index(idx)})")
    cg.emit(f"{acc} += {' * '.join(factors)}")
    cg.depth -= len(summed)
    cg.emit(f"{out}{_index([index[label] for label in out_labels])} = "
            f"{np_name(y.dtype)}({acc})")
    cg.depth -= len(out_labels)
    _out(cg, node, out)


# Fused loops, and the lowerings of lists, conds and loops, live in their own modules
# (each imports the names above).
from .control_flow import list_chain  # registers them
from .fused import _LOOP_MEMBERS, ELEMENTWISE_OK, _FusedLoop, _scalar_value, fusible

def lowered_ops():
    """Names of the op-table entries that have a lowering (fused or not)."""
    from ..ops.registry import OPS
    return sorted(name for name, op in OPS.items()
                  if name in LOWERINGS or op.reduction is not None
                  or name in _LOOP_MEMBERS or (op.elementwise and name in ELEMENTWISE_OK))


def generate(graph):
    """(source body lines, Codegen) for an optimized graph."""
    cg = Codegen(graph)
    output_specs, assigned = cg.generate()
    return cg, output_specs, assigned
