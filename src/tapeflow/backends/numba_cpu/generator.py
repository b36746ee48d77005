"""The generator: a planned graph -> the statements of one Python function that Numba
compiles. It holds the kernel's values (Val), its parameters (Param), naming and
emission; it knows no op: each node's lowering is found through its op-table entry
(`op.lowerings["numba_cpu"]`, attached by the lowering modules of this package with
`@lowers(OPDEF)`), elementwise entries fuse by their `emit` template, and fused groups
are emitted by the loop-nest generator passed in (loops.py).

The source depends on the graph's structure, dtypes, ranks and on which dimensions are
size-1 broadcasts, never on other shape values or constant values: shapes are read from
the arrays at run time, and values that a trace bakes in (scalar constants, array
constants, shape-like attrs such as Reshape's `shape`) are arguments of the kernel. A graph
retraced for a new shape therefore generates the same source and reuses the compiled code.
"""

import collections
import itertools
import re

import numpy as np

from ...graph.variables import ASSIGN_VARIABLE, READ_VARIABLE
from ...ops.control import IF, WHILE
from ...tensor import Symbolic
from .. import compiler
from . import names, site_marks
from .text import (
    SUPPORTED_DTYPES,
    Unsupported,
    cast,
    check_dtype,
    np_name,
    shape_tuple,
    tuple_expr,
)

BACKEND = "numba_cpu"

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
    (ref: a RandomShuffle node), "stream" (ref: a random op's stream key: its Generator
    for this call), "seeded" (ref: a constant seed's values: a Generator of them alone,
    made afresh per call).
    """

    __slots__ = ("dtype", "kind", "name", "ndim", "ref")

    def __init__(self, name, kind, ref, dtype, ndim):
        self.name, self.kind, self.ref, self.dtype, self.ndim = name, kind, ref, dtype, ndim


# -- the generator ---------------------------------------------------------------------------

class Codegen:
    """The kernel being generated: its lines, values and parameters.

    emit_group(codegen, group) emits a fused group (loops.py): passed in, since the
    loop-nest generator builds on this module.
    """

    def __init__(self, graph, emit_group):
        self.graph = graph
        self.emit_group = emit_group
        self.lines = []
        self.quiet_names = None  # site_marks.quiet_names(), once a store is overwritable
        self.depth = 1
        self._fresh = itertools.count()
        # generated name -> the name it is shown by (names.shown_lines makes them unique)
        self.readable = {}
        self.shown_source = None  # the user's line the comment above the code names
        self.vals = {}
        # scalar variable -> the dtype Numba types it as, exactly: no cast needed to it
        self.exact = {}
        self.params = []
        self.used = set()
        self.scalar_packs = {}   # dtype name -> list of values
        self.scalar_index = {}   # (dtype str, bytes) -> Val
        self.arrays = []         # array constants, in param order
        self.array_index = {}
        self.ints = []           # the shape-like attrs, in order
        self.errors = []         # error code -> (kind, node, detail)
        self.sites = []          # W[0] value -> the node whose code runs then
        self.mark_line = None    # where in lines the last W[0] store is
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
    def fresh(self, prefix="t", shown=None):
        """A new variable name; `shown`, when given, is the name it is shown by."""
        name = f"{prefix}{next(self._fresh)}"
        if shown is not None:
            self.readable[name] = (shown if isinstance(shown, names.Derived)
                                   else names.identifier(shown))
        return name

    def shown_after(self, v, suffix):
        """The name to show a variable derived from Val `v` by: v's own and `suffix`."""
        return self.shown_after_name(v.name if v.name is not None else v.scalar, suffix)

    def shown_after_name(self, name, suffix):
        """How to show a variable derived from variable `name`: as the name `name` is
        shown by, and `suffix` (names.Derived); None where `name` has none."""
        return names.Derived(name, suffix) if name in self.readable else None

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def emit_source(self, nodes):
        """Comments naming the user's lines that `nodes` come from, once for consecutive
        nodes of one line."""
        wheres = list(dict.fromkeys(node.where() for node in nodes))
        if wheres[0] == self.shown_source:
            wheres = wheres[1:]
        for where in wheres:
            self.lines.append("    " * self.depth + names.SOURCE_COMMENT + where)
            self.shown_source = where

    def error(self, kind, node, detail=""):
        self.errors.append((kind, node, detail))
        return len(self.errors) - 1

    def mark(self, node):
        """Writes which node's code runs next into the kernel's W argument (one store),
        so that an error no check of ours raises (a singular matrix, an allocation too
        big) names the node and its line, at no cost on the way that does not fail."""
        if not self.sites:
            self.prologue.insert(0, "W[0] = -1")
        if self._overwritable_mark():
            # Nothing since the last store can fail without naming its node (site_marks.py):
            # that store is dead, this node takes its place.
            del self.lines[self.mark_line]
            self.sites[-1] = node
        else:
            self.sites.append(node)
        self.mark_line = len(self.lines)
        self.emit(f"W[0] = {len(self.sites) - 1}")

    def _overwritable_mark(self):
        if self.mark_line is None or self.mark_line >= len(self.lines):
            return False
        if self.quiet_names is None:
            self.quiet_names = site_marks.quiet_names()
        quiet = self.quiet_names
        return (self.lines[self.mark_line].lstrip() == f"W[0] = {len(self.sites) - 1}"
                and not any(site_marks.may_fail(line, quiet)
                            for line in self.lines[self.mark_line + 1:]))

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
        check_dtype(dtype, "a constant")
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
                    from ...tensor import wrap
                    holder = wrap(np.asarray(first))
                    self.keep.append(holder)  # constants are keyed by id: keep it alive
                    scalar = self.constant(holder)
                    self.scalar_index[key] = scalar
                return scalar
        return self.constant(t)

    def define(self, y, v):
        if v.name is not None:
            self.readable.setdefault(v.name, names.identifier(y.name))
        elif v.local:
            self.readable.setdefault(v.scalar, names.identifier(y.name))
        self.vals[id(y)] = v
        return v

    def prologue_lines(self):
        return ["    " + line for line in self.prologue]

    # -- array views of values ---------------------------------------------------------
    def array(self, v):
        """The name of an array holding `v` (a scalar becomes a 0-d array)."""
        if v.local:  # here, not cached: this point may sit in a branch the next use is not
            return self.assign(f"scalar_array({v.scalar})", self.shown_after(v, "_array"))
        if v.name is None:
            name = self.fresh("t", self.shown_after(v, "_array"))
            # At the top of the kernel: defined on every path, whatever branch needs it.
            self.prologue.append(f"{name} = scalar_array({v.scalar})")
            v.name = name
        return v.name

    def contiguous(self, v):
        name = self.array(v)
        if v.layout == "C":
            return name
        out = self.fresh()
        self.emit(f"{out} = contiguous({name})")
        return out

    def scalar(self, v):
        return v.scalar if v.name is None else f"{v.name}[()]"

    def typed_scalar(self, v):
        """v's scalar as an expression of v's dtype exactly (a loop or branch variable
        must keep one Numba type)."""
        return self.exactly(self.scalar(v), v.dtype)

    def exactly(self, expr, dtype):
        """`expr` cast to `dtype`, unless it is a variable of exactly that type already
        (each cast is a call Numba types and lowers)."""
        return expr if self.exact.get(expr) is dtype else cast(expr, dtype)

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
        self.emit(f"{name} = {self.exactly(expr, y.dtype)}")
        self.exact[name] = y.dtype
        return self.define(y, Val(None, y.dtype, (), scalar=name, local=True))

    def assign(self, expr, shown=None):
        """A new variable holding `expr` (shown as `shown`); its name."""
        name = self.fresh("t", shown)
        self.emit(f"{name} = {expr}")
        return name

    def output(self, node, name, layout="C", k=0):
        """Defines `node`'s output k as the array variable `name`."""
        y = node.outputs[k]
        return self.define(y, Val(name, y.dtype, y._shape, layout))

    def view3(self, v, axis):
        """v as a C-contiguous (outer, axis, inner) array, and its dims."""
        dims = self.dims(v)
        outer, inner = self.product(dims[:axis]), self.product(dims[axis + 1:])
        view = self.assign(f"reshaped({self.contiguous(v)}, ({outer}, {dims[axis]}, {inner}))")
        return view, dims

    def batched(self, v, k=2):
        """v as a C-contiguous (batch, last k dims...) array, and its dims."""
        dims = self.dims(v)
        if v.rank == k + 1:  # that already: no view to make (Numba compiles each)
            return self.contiguous(v), dims
        b = self.product(dims[:-k])
        return self.assign(f"reshaped({self.contiguous(v)}, ({b}, {', '.join(dims[-k:])}))"), dims

    def shaped(self, name, rank, dims):
        """The array variable `name`, of rank `rank`, as one of the sizes `dims`, which
        are its own where it has as many (a helper's result with its argument's sizes):
        itself then, else a view."""
        if rank == len(dims):
            return name
        return self.assign(f"reshaped({name}, {tuple_expr(dims)})")

    def runtime_dims(self, shape, rank):
        """Expressions for the entries of an int shape vector computed by the graph."""
        name = self.array(self.val(shape))
        return [f"np.int64({name}[{i}])" for i in range(rank)]

    def new_array(self, y, shape_exprs, fill=None):
        name = self.fresh()
        dt = np_name(y.dtype)
        if fill is None:
            self.emit(f"{name} = empty_array({shape_tuple(shape_exprs)}, {dt})")
        else:
            self.emit(f"{name} = full_array({shape_tuple(shape_exprs)}, {fill}, {dt})")
        return name

    # -- the whole graph -----------------------------------------------------------------
    def generate(self):
        graph = self.graph
        for x in graph.inputs:
            check_dtype(x.dtype, "an input")
        for i, x in enumerate(graph.inputs):
            self.define(x, Val(f"x{i}", x.dtype, x._shape, "C"))
        self.body(graph)
        returns = []
        output_specs = []
        for x in graph.outputs:
            if isinstance(x, Symbolic):
                v = self.val(x)
                name = self.array(v)
                if v.layout != "C":
                    name = f"contiguous({name})"
                output_specs.append(("kernel", len(returns)))
                returns.append(name)
            else:
                output_specs.append(("constant", np.asarray(x._value)))
        assigned = []
        for index in self.assigned:
            v = self.variables[index]
            name = self.array(v)
            if v.layout != "C":
                name = f"contiguous({name})"
            assigned.append((index, len(returns)))
            returns.append(name)
        self.emit(f"return {tuple_expr(returns)}")
        return output_specs, assigned

    def body(self, graph):
        """Emits the nodes of `graph` (its inputs already bound to Vals)."""
        self.consumers = {}
        for node in graph.nodes:
            for x in node.inputs:
                if isinstance(x, Symbolic):
                    self.consumers.setdefault(id(x), []).append(node)
        self.outputs_ids = {id(x) for x in graph.outputs if isinstance(x, Symbolic)}
        for item in compiler.plan(graph, fusible):
            if isinstance(item, compiler.Group):
                self.group(item)
            else:
                self.node(item)

    def subgraph(self, graph, inputs, where, prepare=None):
        """Emits a branch or loop body inline; returns the Vals of its outputs.

        prepare(optimized sub-graph), when given, runs before its nodes are emitted (the
        lists a body appends to share their caller's row buffer: lists.share_rows)."""
        sub = compiler.optimize(graph)
        if prepare is not None:
            prepare(sub)
        for node in sub.nodes:
            if _effectful_inside(node):
                raise Unsupported(f"{node.op.name} inside a tensor-dependent branch or loop "
                                  f"(at {where.where()}) is not compiled")
        saved = (self.graph, self.consumers, self.outputs_ids)
        self.graph = sub
        self.nesting += 1
        self.shown_source = None
        try:
            for ph, v in zip(sub.inputs, inputs):
                self.vals[id(ph)] = v
            self.body(sub)
            self.mark(where)  # the branch or loop's own code runs next
            return [self.val(x) for x in sub.outputs]
        finally:
            self.graph, self.consumers, self.outputs_ids = saved
            self.nesting -= 1
            self.shown_source = None  # the code after a body is its node's again

    # -- one node ---------------------------------------------------------------------------
    def node(self, node):
        _check_node_dtypes(node)
        lower = lowering_of(node.op)
        if not callable(lower):
            raise Unsupported(f"the compiled backend has no lowering for op {node.op.name} "
                              f"at {node.where()}")
        self.emit_source([node])
        self.emit(f"# {node.op.name}")
        self.mark(node)
        lower(self, node)

    # -- fused groups -------------------------------------------------------------------------
    def group(self, group):
        for node in group.nodes + group.reductions:
            _check_node_dtypes(node)
        self.emit_source(group.nodes + group.reductions)
        self.mark(group.nodes[0] if group.nodes else group.reductions[0])
        self.emit_group(self, group)


lowers = compiler.lowering_registrar(BACKEND)


class FusedMember:
    """The lowering of an op that runs inside a fused loop: a scalar expression per
    element over its inputs read at the same index (broadcast to its output's shape).

    expression(node, operands, constants) -> the expression text (`constants`: each
        operand's value where it is a one-element constant, else None);
    cast(node) -> whether the expression must be cast to the output's dtype (Numba
        widens integer arithmetic, Pow and the floor divisions are typed by their
        operands), or None to decide from the dtypes (loops.py);
    check(codegen, node, operands): emits the run-time checks of one element, or None;
    operand_dims(node, i, rank): which loop dimensions input i spans (None: its last
        ones, as broadcasting aligns them);
    bound(node, d): the loop's size along d where no input spans it, or None.
    """

    __slots__ = ("bound", "cast", "check", "expression", "operand_dims")

    def __init__(self, expression, cast=None, check=None, operand_dims=None, bound=None):
        self.expression = expression
        self.cast = cast
        self.check = check
        self.operand_dims = operand_dims
        self.bound = bound


# The lowering of an elementwise entry without one of its own: its `emit` template,
# expanded by templates.py; set by the package as it loads.
elementwise_default = None


def lowering_of(op):
    """This backend's lowering of `op`: the one its entry holds, else for an elementwise
    entry the fused template (its `emit`), else None."""
    lower = op.lowerings.get(BACKEND)
    if lower is None and op.elementwise:
        return elementwise_default
    return lower


def fusible(node):
    """What this backend fuses (compiler.plan): members of elementwise loops, and the
    reductions a loop accumulates."""
    if not all(x.dtype.name in SUPPORTED_DTYPES for x in list(node.inputs) + node.outputs):
        return None
    if node.op.reduction is not None:
        return "reduction"
    if isinstance(lowering_of(node.op), FusedMember):
        return "elementwise"
    return None


def of_kind(op, entry):
    """Whether `op` is the table entry `entry` or a copy of it made for one node (each
    If and While node holds its own, with its args and saves): copies share the entry's
    lowerings."""
    return op.lowerings is entry.lowerings


def _effectful_inside(node):
    """Nodes a branch or loop body cannot hold compiled: variable reads and writes, and
    stateful ops other than random draws (ops/random.py streams), checks and nested
    control."""
    op = node.op
    if of_kind(op, ASSIGN_VARIABLE) or of_kind(op, READ_VARIABLE):
        return True
    return (op.stateful and not (of_kind(op, IF) or of_kind(op, WHILE)) and op.draw is None
            and not op.checks)


def _check_node_dtypes(node):
    for x in list(node.inputs) + list(node.outputs):
        if x.dtype.name not in SUPPORTED_DTYPES:
            raise Unsupported(f"the compiled backend does not support {x.dtype.name}: "
                              f"{node.op.name} at {node.where()}")


# A variable that only names memory: a reshaped view or a flat view of another, or a
# contiguous copy of one (no check of ours, nothing that a later line depends on: a
# Reshape node checks its sizes on a line of its own, before its view).
_VIEW = re.compile(r"\s*(\w+) = (?:reshaped\(\w+, .*\)|contiguous\(\w+\)"
                   r"|flat_view\(\w+\))$")


def without_dead_views(lines):
    """`lines` less the views that nothing reads: a lowering makes a view of each output of
    its node, and the code after may read only some of them. A view dropped may leave the
    one it read unread: that goes too."""
    # The names are counted once, over all the lines at once, not once per line (an
    # unrolled loop of 1,000 steps has 80,000; a newline ends an identifier, as the end of
    # a line does); a dropped line's names are counted off it alone.
    uses = collections.Counter(names.IDENTIFIER.findall("\n".join(lines)))
    views = {}  # name -> the line of each view binding it
    for k, line in enumerate(lines):
        if ("reshaped(" in line or "contiguous(" in line or "flat_view(" in line) and (
                view := _VIEW.match(line)):
            views.setdefault(view.group(1), []).append(k)
    dropped = set()
    unread = [name for name in views if uses[name] == 1]
    while unread:
        name = unread.pop()
        k = views[name][0]  # the one line that names it
        dropped.add(k)
        for read in names.IDENTIFIER.findall(lines[k]):
            uses[read] -= 1
            if uses[read] == 1 and read in views and read != name:
                unread.append(read)
    return [line for k, line in enumerate(lines) if k not in dropped]


def generate(graph, emit_group):
    """(Codegen, output specs, assigned variables) for an optimized graph."""
    cg = Codegen(graph, emit_group)
    output_specs, assigned = cg.generate()
    return cg, output_specs, assigned

