"""Value-preserving graph passes: verify, inline calls, constant folding, CSE, DCE, and the
fusion plan (which elementwise chains and reductions run as one loop).

Every pass returns a new Graph and leaves its argument untouched: function.py keeps the
traced graph for the interpreter and for gradients. Nodes are shared between the old and
the new graph only when nothing about them changed; Symbolic values are identities, so the
new graph keeps the old graph's inputs, outputs and variables.
"""

import math

import numpy as np

from ..ops.shape import RANK, SHAPE, SIZE
from ..ops.structural import ASSIGN_VARIABLE, READ_VARIABLE, STORED_VALUE, of_kind
from ..tensor import is_symbolic, wrap
from .ir import Graph

# A fused loop holds at most this many nodes: LLVM stops inlining the scalar helpers into
# much bigger functions, and the loop would then call libm-like helpers per element.
MAX_FUSED = 80

# Constant folding runs the eager kernel only while the result stays this small: a
# folded constant becomes an argument of the compiled kernel.
MAX_FOLDED_ELEMENTS = 1 << 16


class VerifyError(AssertionError):
    """The graph breaks an IR invariant (a pass bug, or a malformed trace)."""


def _copy(graph, nodes, outputs=None):
    new = Graph(graph.name)
    new.inputs = list(graph.inputs)
    new.nodes = list(nodes)
    new.outputs = list(graph.outputs if outputs is None else outputs)
    new.variables = list(graph.variables)
    new._variable_index = dict(graph._variable_index)
    new._names = dict(graph._names)
    for attr in ("captures",):
        if hasattr(graph, attr):
            setattr(new, attr, getattr(graph, attr))
    return new


def _node(old, inputs=None, outputs=None, attrs=None):
    from .ir import Node
    return Node(old.op, tuple(old.inputs if inputs is None else inputs),
                old.attrs if attrs is None else attrs,
                list(old.outputs if outputs is None else outputs), old.source)


# -- verifier ----------------------------------------------------------------------------

def verify(graph, check_infer=True):
    """Checks the IR invariants; raises VerifyError naming the node that breaks one.

    - every Symbolic input of a node is a graph input or an earlier node's output of this
      graph (SSA, program order); every value is defined once;
    - node arities agree with the op table, outputs have the avals `infer` gives;
    - variable indices are in range; graph outputs are defined.
    """
    defined = set()
    for x in graph.inputs:
        if not is_symbolic(x):
            raise VerifyError(f"graph input {x!r} is not symbolic")
        if id(x) in defined:
            raise VerifyError(f"graph input %{x.name} is listed twice")
        defined.add(id(x))
    for i, node in enumerate(graph.nodes):
        where = f"node {i} ({node.op.name}, {node.where()})"
        for x in node.inputs:
            if is_symbolic(x):
                if id(x) not in defined:  # also catches a value of another graph
                    raise VerifyError(f"{where} uses %{x.name} before it is defined")
            elif getattr(x, "_value", None) is None:
                raise VerifyError(f"{where} has an input that is neither symbolic nor "
                                  f"a constant: {x!r}")
        access = _variable_access(node.op)
        if access is not None:
            index = node.attrs.get("index")
            if not isinstance(index, int) or not 0 <= index < len(graph.variables):
                raise VerifyError(f"{where}: variable index {index!r} out of range")
            if access == "read" and (node.inputs or len(node.outputs) != 1):
                raise VerifyError(f"{where}: {node.op.name} takes no input, gives one value")
            if access == "assign" and (len(node.inputs) != 1 or node.outputs):
                raise VerifyError(f"{where}: {node.op.name} takes one input, gives none")
        elif not node.op.structural:
            if node.op.n_out is not None and len(node.outputs) != node.op.n_out:
                raise VerifyError(f"{where}: {len(node.outputs)} outputs, the op has "
                                  f"{node.op.n_out}")
            if len(node.op.args) == 1 or len(node.inputs) == len(node.op.args) or \
                    _variadic(node.op):
                pass
            else:
                raise VerifyError(f"{where}: {len(node.inputs)} inputs for args "
                                  f"{node.op.args}")
            if check_infer:
                _check_avals(node, where)
        for y in node.outputs:
            if not is_symbolic(y):
                raise VerifyError(f"{where}: output {y!r} is not symbolic")
            if id(y) in defined:
                raise VerifyError(f"{where}: %{y.name} is defined twice")
            defined.add(id(y))
    for x in graph.outputs:
        if is_symbolic(x) and id(x) not in defined:
            raise VerifyError(f"graph output %{x.name} is not defined")
        if not is_symbolic(x) and getattr(x, "_value", None) is None:
            raise VerifyError(f"graph output {x!r} is neither symbolic nor a constant")
    return graph


def _variadic(op):
    return op.variadic


def _variable_access(op):
    """"read" or "assign" for the nodes that name a graph variable by attrs["index"]."""
    return op.variable_access if op.structural else None


def _check_avals(node, where):
    try:
        avals = node.op.infer(*node.inputs, **node.attrs)
    except Exception as e:  # noqa: BLE001 - infer accepted these at trace time
        raise VerifyError(f"{where}: infer fails on the node's inputs: {e}") from None
    if node.op.n_out == 1:
        avals = [avals]
    if len(avals) != len(node.outputs):
        raise VerifyError(f"{where}: infer gives {len(avals)} outputs, node has "
                          f"{len(node.outputs)}")
    for (shape, dtype), y in zip(avals, node.outputs):
        if dtype is not y.dtype or len(shape) != len(y._shape) or any(
                a is not None and b is not None and a != b for a, b in zip(shape, y._shape)):
            raise VerifyError(f"{where}: %{y.name} is {y.dtype.name}{list(y._shape)}, "
                              f"infer says {dtype.name}{list(shape)}")


# -- stored values -----------------------------------------------------------------------

def reuse_stored_values(graph):
    """Makes a graph just traced read the values its StoredValue notes name instead of
    the ones they say are equal (each a node output of this graph, not an input), and
    drops the notes; in place, before anything reads the graph. What computed the
    replaced values is left for dead-code elimination."""
    notes = [node for node in graph.nodes if of_kind(node.op, STORED_VALUE)]
    if not notes:
        return graph
    produced = {id(y) for node in graph.nodes for y in node.outputs}
    stored = {id(node.inputs[0]): node.inputs[1] for node in notes
              if is_symbolic(node.inputs[0]) and id(node.inputs[0]) in produced}
    graph.nodes = [node for node in graph.nodes if not of_kind(node.op, STORED_VALUE)]
    for node in graph.nodes:
        if any(is_symbolic(x) and id(x) in stored for x in node.inputs):
            node.inputs = tuple(stored.get(id(x), x) if is_symbolic(x) else x
                                for x in node.inputs)
    graph.outputs = [stored.get(id(x), x) if is_symbolic(x) else x for x in graph.outputs]
    return graph


# -- inlining ----------------------------------------------------------------------------

def inline_calls(graph):
    """Replaces each call node (an `inlined` structural op) by the nodes of the graph it
    calls (recursively).

    The callee's inputs become the call's arguments, its outputs the call's results, and
    its variable indices are renumbered into the caller's (a variable the caller does not
    list is an error: the caller's graph must list every variable its callees touch).
    """
    if not any(_calls(node.op) for node in graph.nodes):
        return graph
    mapping = {}
    nodes = []
    for node in graph.nodes:
        node = _remap(node, mapping)
        if not _calls(node.op):
            nodes.append(node)
            continue
        callee = inline_calls(node.attrs["graph"])
        inner = {id(ph): arg for ph, arg in zip(callee.inputs, node.inputs)}
        var_index = {}
        for i, var in enumerate(callee.variables):
            outer = graph._variable_index.get(id(var))
            if outer is None:
                outer = next((j for j, v in enumerate(graph.variables) if v is var), None)
            if outer is None:
                raise ValueError(f"the function called at {node.where()} uses variable "
                                 f"{getattr(var, 'name', var)!r}, which the caller's graph "
                                 f"does not list")
            var_index[i] = outer
        for inner_node in callee.nodes:
            inner_node = _remap(inner_node, inner)
            if _variable_access(inner_node.op) is not None:
                attrs = dict(inner_node.attrs)
                attrs["index"] = var_index[attrs["index"]]
                inner_node = _node(inner_node, attrs=attrs)
            nodes.append(inner_node)
        for y, result in zip(node.outputs, callee.outputs):
            mapping[id(y)] = inner.get(id(result), result) if is_symbolic(result) \
                else result
    outputs = [mapping.get(id(x), x) if is_symbolic(x) else x for x in graph.outputs]
    return _copy(graph, nodes, outputs)


def _calls(op):
    return op.structural and op.inlined


def _remap(node, mapping):
    if mapping and any(is_symbolic(x) and id(x) in mapping for x in node.inputs):
        return _node(node, inputs=[mapping.get(id(x), x) if is_symbolic(x) else x
                                   for x in node.inputs])
    return node


# -- constant folding ------------------------------------------------------------------------

def _foldable(node):
    if node.op.structural or _effectful(node):
        return False
    return all(not is_symbolic(x) for x in node.inputs)


def _static_query(node):
    """Shape/Size/Rank of a value whose shape is known at trace time: a constant."""
    op = node.op
    # (by identity: OpDef's generated __eq__ compares every field, for every node)
    if (op is not SHAPE and op is not SIZE and op is not RANK) or not node.inputs:
        return None
    shape = node.inputs[0]._shape
    if op is RANK:
        return np.array(len(shape), dtype=node.attrs["out_type"]._np)
    if any(d is None for d in shape):
        return None
    if op is SHAPE:
        return np.array(shape, dtype=node.attrs["out_type"]._np)
    return np.array(math.prod(shape), dtype=node.attrs["out_type"]._np)


def fold_constants(graph):
    """Runs nodes whose inputs are all constants through their eager kernels, and turns
    Shape/Size/Rank of statically known shapes into constants. Stateful (random) and
    structural nodes are never folded; results above MAX_FOLDED_ELEMENTS are not folded."""
    mapping = {}
    nodes = []
    for node in graph.nodes:
        node = _remap(node, mapping)
        value = _static_query(node)
        if value is None and _foldable(node):
            with np.errstate(all="ignore"):
                try:
                    result = node.op.eager(*[x._value for x in node.inputs], **node.attrs)
                except Exception:  # noqa: BLE001 - the failure belongs to run time
                    result = None
            if result is not None:
                results = [result] if node.op.n_out == 1 else list(result)
                arrays = [np.asarray(r) for r in results]
                if all(a.size <= MAX_FOLDED_ELEMENTS for a in arrays):
                    for y, a in zip(node.outputs, arrays):
                        mapping[id(y)] = wrap(a)
                    continue
        elif value is not None:
            mapping[id(node.outputs[0])] = wrap(value)
            continue
        nodes.append(node)
    outputs = [mapping.get(id(x), x) if is_symbolic(x) else x for x in graph.outputs]
    return _copy(graph, nodes, outputs)


# -- common subexpressions ---------------------------------------------------------------------

def _const_key(t):
    a = np.asarray(t._value)
    if a.size > 64:
        return ("const-id", id(t))
    return ("const", a.dtype.str, a.shape, a.tobytes())


def _attr_key(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _attr_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_attr_key(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    if hasattr(value, "nodes") and hasattr(value, "inputs"):  # a sub-graph
        return ("id", id(value))
    return (type(value).__name__, value)


def cse(graph):
    """Merges nodes that apply the same op to the same inputs with the same attrs.

    Stateful ops, assignments and structural nodes with sub-graphs are never merged;
    two reads of one variable merge only when no assignment to it lies between them, and
    a read after an assignment is the value assigned (what the kernels bind it to): an
    optimizer's update of one variable, which reads back what it just assigned, then
    fuses into one loop."""
    mapping = {}
    seen = {}
    generation = {}  # variable index -> number of assignments so far
    assigned = {}  # variable index -> the value last assigned
    nodes = []
    for node in graph.nodes:
        node = _remap(node, mapping)
        access = _variable_access(node.op)
        if access == "assign":
            index = node.attrs["index"]
            generation[index] = generation.get(index, 0) + 1
            assigned[index] = node.inputs[0]
            nodes.append(node)
            continue
        if access == "read":
            value, (out,) = assigned.get(node.attrs["index"]), node.outputs
            if is_symbolic(value) and value.dtype == out.dtype and \
                    tuple(value._shape) == tuple(out._shape):
                mapping[id(out)] = value
                continue
        if access != "read" and (node.op.stateful or _holds_graphs(node.op)):
            nodes.append(node)
            continue
        inputs = tuple(("sym", id(x)) if is_symbolic(x) else _const_key(x)
                       for x in node.inputs)
        key = (node.op.name, id(node.op), inputs, _attr_key(node.attrs))
        if access == "read":
            key += (generation.get(node.attrs["index"], 0),)
        previous = seen.get(key)
        if previous is not None and len(previous.outputs) == len(node.outputs):
            for old, new in zip(node.outputs, previous.outputs):
                mapping[id(old)] = new
            continue
        seen[key] = node
        nodes.append(node)
    outputs = [mapping.get(id(x), x) if is_symbolic(x) else x for x in graph.outputs]
    return _copy(graph, nodes, outputs)


# -- dead code -------------------------------------------------------------------------------

def _effectful(node):
    """Assignments, prints and random draws, and branches and loops that contain one; a
    variable read is stateful in the table's sense (never folded at trace time) but has
    no effect of its own."""
    op = node.op
    if not op.structural:
        return op.stateful
    return op.effect or any(_effectful(inner) for graph in node.attrs.values()
                            if isinstance(graph, Graph) for inner in graph.all_nodes())


def _holds_graphs(op):
    """Whether nodes of `op` run sub-graphs (branches, loops, calls)."""
    return op.structural and bool(op.subgraphs)


def _only_draws(node):
    """Whether the only effects inside a branch or loop are random draws (which pruning
    keeps: dead-code elimination inside it keeps effectful nodes)."""
    for graph in node.attrs.values():
        if isinstance(graph, Graph):
            for inner in graph.all_nodes():  # nested branches and loops' nodes included
                if (not _holds_graphs(inner.op) and _effectful(inner)
                        and inner.op.draw is None):
                    return False
    return True


def _prunable(op):
    """Branches and loops: nodes whose unneeded outputs graph/prune.py removes."""
    return _holds_graphs(op) and not op.inlined


def dce(graph):
    """Drops nodes none of whose outputs is needed, and the unneeded outputs, loop
    variables and captures of the branches and loops that stay (graph/prune.py).
    Assignments and stateful (random) nodes always stay: a random op draws (advances its
    counter) on every run."""
    from .prune import pruned
    live = {id(x) for x in graph.outputs if is_symbolic(x)}
    keep = []
    for node in reversed(graph.nodes):
        effectful = _effectful(node)
        if effectful or any(id(y) in live for y in node.outputs):
            if _prunable(node.op) and (not effectful or _only_draws(node)):
                node = pruned(node, live)  # outputs, loop variables, captures: the live ones
            keep.append(node)
            for x in node.inputs:
                if is_symbolic(x):
                    live.add(id(x))
    keep.reverse()
    return _copy(graph, keep)


def optimize(graph, check=False):
    """The standard pipeline: inline calls, fold constants, CSE, DCE (verified after each
    pass when `check`)."""
    passes = (inline_calls, fold_constants, cse, dce)
    if check:
        verify(graph)
    for p in passes:
        graph = p(graph)
        if check:
            verify(graph)
    return graph


# -- fusion plan -------------------------------------------------------------------------------

class Group:
    """Elementwise nodes over one iteration shape, run as one loop, optionally ending in
    reductions of values the loop computes.

    nodes:      the elementwise members, in program order (each output has `shape`).
    reductions: reduction nodes whose input is the group's iteration value (a member's
                output or, for a group of one reduction, an external value of `shape`).
    """

    __slots__ = ("nodes", "produced", "reductions", "shape", "start")

    def __init__(self, shape, start):
        self.shape = shape
        self.nodes = []
        self.reductions = []
        self.produced = set()  # ids of member outputs
        self.start = start     # its position in the emission order

    def __len__(self):
        return len(self.nodes) + len(self.reductions)

    def __repr__(self):
        ops = [n.op.name for n in self.nodes] + [f"{n.op.name}*" for n in self.reductions]
        return f"Group({list(self.shape)}: {' '.join(ops)})"


def fusion_plan(graph, fusible):
    """The order in which to emit the graph: a list of nodes and Groups.

    `fusible(node)` says what a backend can fuse: "elementwise" (a scalar template over
    the output's elements; its inputs broadcast to its output shape), "reduction" (a
    reduction a loop can accumulate), or None.

    A group runs where its first node stood; a node joins a group only if each of its
    inputs is produced by the group (and is not a reduction result) or was available
    before the group started, so moving the node earlier never breaks a dependency.

    A read of a variable that nothing assigned before it holds the value the graph
    started with, whenever it runs: it comes first, and what reads it can join a group
    that started earlier (an optimizer's update of one variable reads the variable after
    the assignments of the others, and was cut into one loop per read).
    """
    assigned = set()
    first_reads = []
    for node in graph.nodes:
        if of_kind(node.op, READ_VARIABLE) and node.attrs["index"] not in assigned:
            first_reads.append(node)
        elif of_kind(node.op, ASSIGN_VARIABLE):
            assigned.add(node.attrs["index"])
    items = list(first_reads)
    where = {}  # id(value) -> (position in items, group or None); none: from the start
    groups = []
    hoisted = {id(node) for node in first_reads}
    for node in graph.nodes:
        if id(node) in hoisted:
            continue
        kind = fusible(node) if not node.op.structural else None
        if kind == "elementwise":
            shape = node.outputs[0]._shape
            group = _joinable(node, shape, where, groups)
            if group is None:
                group = Group(shape, len(items))
                items.append(group)
                groups.append(group)
            group.nodes.append(node)
            group.produced.add(id(node.outputs[0]))
            where[id(node.outputs[0])] = (group.start, group)
            continue
        if kind == "reduction":
            x = node.inputs[0]
            shape = x._shape
            group = None
            if is_symbolic(x) and id(x) in where:
                _, candidate = where[id(x)]
                if candidate is not None and id(x) in candidate.produced and \
                        candidate.shape == shape and len(candidate) < MAX_FUSED:
                    group = candidate
            if group is None:
                group = Group(shape, len(items))
                items.append(group)
                groups.append(group)
            group.reductions.append(node)
            where[id(node.outputs[0])] = (group.start, None)
            continue
        position = len(items)
        items.append(node)
        for y in node.outputs:
            where[id(y)] = (position, None)
    return items


def _joinable(node, shape, where, groups):
    """The group `node` can join: one with its shape and room left, that started after
    every input of `node` not produced by the group was available. Groups that produced
    an input come first (a chain), then the most recent others (siblings reading the
    same inputs: one pass over memory instead of two)."""
    candidates = []
    for x in node.inputs:
        if is_symbolic(x) and id(x) in where:
            _, group = where[id(x)]
            if group is not None and id(x) in group.produced and group not in candidates:
                candidates.append(group)
    # Equal static shapes with an unknown dimension may differ when the graph runs: such
    # a node joins only the chain that produced one of its inputs.
    if None not in shape:
        candidates += [g for g in reversed(groups[-8:]) if g not in candidates]
    for group in candidates:
        if group.shape != shape or len(group) >= MAX_FUSED:
            continue
        if all(_available(x, group, where) for x in node.inputs):
            return group
    return None


def _available(x, group, where):
    if not is_symbolic(x) or id(x) not in where:
        return True  # a constant or a graph input
    position, producer = where[id(x)]
    if producer is group:
        return id(x) in group.produced
    return position < group.start
