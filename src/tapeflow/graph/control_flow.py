"""tf.cond and tf.while_loop traced: their branches, condition and body, converted by
AutoGraph, become sub-graphs of an If or While node of the graph being built (the op
table's entries, ops/control.py, which reach this module through the Graph's
trace_cond and trace_while). Variables the sub-graphs read or assign are made
functional, Batched values (a vectorized jacobian inside tf.function) run as stacks, and
the random draws of a branch or a loop step are exported for the gradient's replay."""

from .. import context, nest
from ..errors import UnimplementedError
from ..ops.batching import Batched, NotBatchable, stacked
from ..ops.control import IF, bind_while
from ..ops.creation import zeros
from ..ops.draws import draw_nodes, drawn_outputs, saved_draws
from ..ops.structural import ASSIGN_VARIABLE, READ_VARIABLE, bind_structural
from ..tensor import Symbolic, _Operators, convert_to_tensor
from .autograph import convert
from .ir import Graph
from .passes import reuse_stored_values
from .trace import tracing


def _is_batched(x):
    return type(x) is Batched


def _batch_size(values):
    return next(v.batch_size for v in values if _is_batched(v))


def _trace_subgraph(outer, name, fn, inputs_like=()):
    """Traces `fn(*placeholders)` into a new Graph nested in `outer`; returns (graph,
    result structure)."""
    graph = Graph(name)
    watched = set(outer.lift_ids)
    for tape in context.recording_tapes.get():
        watched.update(tape._watched)
    graph.lift_ids = frozenset(watched)
    with tracing(graph):
        placeholders = graph.placeholders_like(inputs_like, "loop_var")
        result = fn(*placeholders)
    reuse_stored_values(graph)
    graph.closed = True
    return graph, result


def _as_output(value, where):
    if isinstance(value, _Operators):
        return value if not hasattr(value, "read_value") else value.read_value()
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"{where} must return tensors (or Python numbers), got {value!r}") \
            from None


def _own(graph, value):
    """A sub-graph output that is a value of an enclosing graph (returned unchanged) is
    captured: it becomes an input of the sub-graph."""
    if isinstance(value, Symbolic) and value.graph is not graph:
        return graph.capture(value)
    return value


def _merged_shape(a, b):
    if len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _normalize_branch(graph, captured_order):
    """Makes the branch graph's inputs exactly the captured values, in node order."""
    placeholders = []
    index = {id(outer): ph for ph, outer in graph.captures}
    for outer in captured_order:
        ph = index.get(id(outer))
        if ph is None:
            ph = graph.capture(outer)
        placeholders.append(ph)
    graph.inputs = placeholders


def _converted(fn):
    """User functions given to tf.cond / tf.while_loop inside tf.function get AutoGraph's
    conversion too, as in TensorFlow."""
    return convert(fn, _strict=False)


# -- cond ---------------------------------------------------------------------------------

def trace_cond(graph, pred, true_fn, false_fn):
    """tf.cond on `pred`, a value of `graph` (the graph being traced): an If node whose
    branches are both traced; one runs per call."""
    if _is_batched(pred):
        raise NotBatchable("tf.cond on a condition that differs between examples")
    if pred._shape:
        raise ValueError(f"pred must be a scalar, got shape {list(pred._shape)}")
    then_graph, then_result = _trace_subgraph(graph, "cond_true", _converted(true_fn))
    else_graph, else_result = _trace_subgraph(graph, "cond_false", _converted(false_fn))
    try:
        nest.assert_same_structure(then_result, else_result, check_types=False)
    except ValueError:
        raise ValueError(f"true_fn and false_fn must return the same structure: "
                         f"{then_result!r} vs {else_result!r}") from None
    then_out = [_own(then_graph, _as_output(v, "true_fn"))
                for v in nest.flatten(then_result, expand_composites=True)]
    else_out = [_own(else_graph, _as_output(v, "false_fn"))
                for v in nest.flatten(else_result, expand_composites=True)]
    batched = [False] * len(then_out)
    if any(_is_batched(v) for v in then_out + else_out):
        (then_out, else_out), batched = _stacked_outputs(
            [(then_graph, then_out), (else_graph, else_out)])
    avals = []
    for a, b in zip(then_out, else_out):
        if a.dtype is not b.dtype or len(a._shape) != len(b._shape):
            raise TypeError(f"true_fn and false_fn return different dtypes or ranks: "
                            f"{a.dtype.name}{list(a._shape)} vs {b.dtype.name}{list(b._shape)}")
        avals.append((_merged_shape(a._shape, b._shape), a.dtype))
    then_graph.outputs, else_graph.outputs = then_out, else_out
    assigned = _branch_assignments((then_graph, else_graph))
    avals += [(var._shape, var.dtype) for var in assigned]
    drawn, draw_avals = _export_branch_draws((then_graph, else_graph))
    avals += draw_avals
    captured = _captured_union((then_graph, else_graph))
    _normalize_branch(then_graph, captured)
    _normalize_branch(else_graph, captured)
    names = tuple(f"x{i}" for i in range(1 + len(captured)))
    op = IF.specialized(args=names, saves=names + saved_draws(drawn), n_out=len(avals))
    attrs = {"then": then_graph, "else": else_graph}
    if drawn:
        attrs["draws"] = drawn
    outputs = bind_structural(op, [pred] + captured, attrs, avals)
    n_user = len(outputs) - len(assigned) - len(draw_avals)
    for var, value in zip(assigned, outputs[n_user:]):
        var.assign(value)
    outputs = [Batched(o) if b else o for o, b in zip(outputs[:n_user], batched)]
    return nest.pack_sequence_as(then_result, outputs, expand_composites=True)


def _branch_assignments(graphs):
    """Makes each branch's variables functional; the variables any branch assigns become
    extra outputs of every branch (a branch that leaves one alone returns the value it
    had). Returns those variables, in output order."""
    finals = [_hoist_variables(g) if g.variables else {} for g in graphs]
    assigned = {}
    for final in finals:
        for key, (var, _) in final.items():
            assigned.setdefault(key, var)
    if assigned:
        before = {key: var.read_value() for key, var in assigned.items()}
        for graph, final in zip(graphs, finals):
            graph.outputs = list(graph.outputs) + [
                final[key][1] if key in final else graph.capture(before[key])
                for key in assigned]
    return list(assigned.values())


def _stacked_outputs(branches):
    """Branch outputs where some branch returns a Batched value: at those positions every
    branch returns the stacked array (the If node runs on stacks; its outputs are
    re-wrapped). Returns the new output lists and which positions are batched."""
    size = _batch_size([v for _, outs in branches for v in outs])
    positions = [any(_is_batched(outs[i]) for _, outs in branches)
                 for i in range(len(branches[0][1]))]
    result = []
    for graph, outs in branches:
        with tracing(graph):
            result.append([_own(graph, stacked(v, size)) if p else v
                           for v, p in zip(outs, positions)])
    return result, positions


def _captured_union(graphs):
    captured, seen = [], set()
    for g in graphs:
        for _, outer in g.captures:
            if id(outer) not in seen:
                seen.add(id(outer))
                captured.append(outer)
    return captured


def _hoist_variables(graph, initial=None):
    """Variables inside a branch or loop graph, made functional: a read becomes the
    variable's current value (at first the value read outside, or `initial[var]`),
    an assignment replaces that value. Returns {Variable: its value at the end of the
    graph} for the variables the graph assigns, which the caller returns from the node
    and assigns after it."""
    initial = initial or {}
    current, assigned, keep = {}, [], []
    for node in graph.nodes:
        if node.op is READ_VARIABLE or node.op is ASSIGN_VARIABLE:
            var = graph.variables[node.attrs["index"]]
            if id(var) not in current:
                start = initial.get(id(var))
                current[id(var)] = start if start is not None else graph.capture(
                    var.read_value())
            if node.op is READ_VARIABLE:
                _replace_uses(graph, node.outputs[0], current[id(var)])
            else:
                current[id(var)] = _own(graph, node.inputs[0])
                if all(v is not var for v in assigned):  # Variables' == is elementwise
                    assigned.append(var)
        else:
            keep.append(node)
    graph.nodes = keep
    graph.variables = []
    graph._variable_index = {}
    return {id(var): (var, current[id(var)]) for var in assigned}


def _replace_uses(graph, old, new):
    for node in graph.nodes:
        if any(x is old for x in node.inputs):
            node.inputs = tuple(new if x is old else x for x in node.inputs)
    graph.outputs = [new if x is old else x for x in graph.outputs]


# -- while_loop ----------------------------------------------------------------------------

class _Widen(Exception):
    """The body made these unbatched loop variables Batched: trace again with them
    batched from the start."""

    def __init__(self, positions, size):
        self.positions, self.size = positions, size


def trace_while(graph, cond, body, values):
    """tf.while_loop inside `graph` (the graph being traced): one While node, whose body
    is traced once and runs as a native loop, whatever the trip count. `values`: the
    loop variables as tensors, in loop_vars' structure, which the result has."""
    cond, body = _converted(cond), _converted(body)
    flat = nest.flatten(values, expand_composites=True)
    positions = {i for i, v in enumerate(flat) if _is_batched(v)}
    size = _batch_size(flat) if positions else None
    try:
        if not positions:
            return _symbolic_while(graph, cond, body, values)
    except _Widen as widened:
        positions, size = widened.positions, widened.size
    return _batched_while(graph, cond, body, values, positions, size)


def trace_while_node(graph, cond, body, values):
    """A While node of tapeflow's own `cond` and `body` over the flat `values`: its
    outputs, as the node has them (values, then histories and trip count)."""
    return _symbolic_while(graph, cond, body, values, raw=True)


def _batched_while(graph, cond, body, values, positions, size):
    """A loop over Batched loop variables: a While node over their stacks, its cond and
    body seeing Batched values again."""
    structure, flat = values, nest.flatten(values)
    kind = Batched
    while True:
        def unstacked(xs, positions=positions):
            return nest.pack_sequence_as(structure, [kind(x) if i in positions else x
                                                     for i, x in enumerate(xs)])

        def stacked_cond(*xs, unstacked=unstacked):
            result = cond(*unstacked(xs))
            if _is_batched(result):
                raise NotBatchable("a while_loop condition that differs between examples")
            return result

        def stacked_body(*xs, unstacked=unstacked, positions=positions):
            out = _body_outputs(body, structure, [kind(x) if i in positions else x
                                                  for i, x in enumerate(xs)])
            widened = {i for i, o in enumerate(out) if _is_batched(o) and i not in positions}
            if widened:
                raise _Widen(positions | widened, size)
            return [stacked(o, size) if i in positions else o for i, o in enumerate(out)]

        try:
            init = [stacked(v, size) if i in positions else v for i, v in enumerate(flat)]
            result = _symbolic_while(graph, stacked_cond, stacked_body, init)
        except _Widen as widened:
            positions = widened.positions
            continue
        return nest.pack_sequence_as(structure, [kind(r) if i in positions else r
                                                 for i, r in enumerate(result)])


def _symbolic_while(graph, cond, body, values, variables=(), raw=False):
    """A While node. Variables the body assigns become extra loop variables (`variables`,
    found by a first trace): the body's reads see the value the last iteration assigned,
    and the final values are assigned after the loop. raw: return the node's outputs
    (values flat, then histories and trip count), not the loop variables' structure."""
    structure = values
    n_user = len(nest.flatten(values, expand_composites=True))
    flat = nest.flatten(values, expand_composites=True) + [var.read_value()
                                                           for var in variables]
    like = list(flat)
    holders = {}

    def user_values(xs, graph_name):
        """The loop's own variables (flat); the variables' values are kept aside."""
        holders[graph_name] = list(xs[n_user:])
        return list(xs[:n_user])

    for _ in range(2):
        cond_graph, cond_result = _trace_subgraph(
            graph, "while_cond", lambda *xs: cond(*nest.pack_sequence_as(
                structure, user_values(xs, "cond"), expand_composites=True)), like)
        body_graph, body_result = _trace_subgraph(
            graph, "while_body", lambda *xs: _body_outputs(
                body, structure, user_values(xs, "body")) + holders["body"], like)
        widened = {i for i, v in enumerate(body_result) if _is_batched(v)}
        if widened:
            raise _Widen(widened, _batch_size(body_result))
        outs = [_own(body_graph, _as_output(v, "while_loop body")) for v in body_result]
        for a, b in zip(like, outs):
            if a.dtype is not b.dtype:
                raise TypeError(f"while_loop body changed a loop variable's dtype from "
                                f"{a.dtype.name} to {b.dtype.name}")
        relaxed = [_merged_shape(a._shape, b._shape) for a, b in zip(like, outs)]
        if all(r == a._shape for r, a in zip(relaxed, like)):
            break
        # A loop variable changes shape: retrace once with the differing dims unknown.
        like = [_Like(r if r is not None else a._shape, a.dtype) for r, a in zip(relaxed, like)]
    if not variables:
        assigned = _assigned_variables(body_graph)
        if assigned:
            return _symbolic_while(graph, cond, body, values, assigned, raw)
    if _assigned_variables(cond_graph):
        raise UnimplementedError("a tf.while_loop condition cannot assign a Variable",
                                 op="AssignVariableOp")
    cond_graph.outputs = [_own(cond_graph, _as_output(cond_result, "while_loop cond"))]
    body_graph.outputs = outs
    if cond_graph.variables:  # reads only
        _hoist_variables(cond_graph, {id(v): h for v, h in zip(variables, holders["cond"])})
    if body_graph.variables:
        finals = _hoist_variables(body_graph,
                                  {id(v): h for v, h in zip(variables, holders["body"])})
        outs = body_graph.outputs  # reads among the outputs are now values
        body_graph.outputs = outs[:n_user] + [
            finals[id(var)][1] if id(var) in finals else unchanged
            for var, unchanged in zip(variables, outs[n_user:])]
    n_flat = len(flat)
    drawn, initial = _export_loop_draws(cond_graph, body_graph, n_flat)
    flat += initial
    like = list(like) + [_Like(y._shape, y.dtype) for node, _ in drawn
                         for y in drawn_outputs(node)]
    captured = _captured_union((cond_graph, body_graph))
    for g in (cond_graph, body_graph):
        loop_inputs = g.inputs[:len(flat)]
        _normalize_branch(g, captured)
        g.inputs = loop_inputs + g.inputs
    appended, popped = _list_vars(body_graph, len(flat))
    reshaped = tuple(i for i, (a, v) in enumerate(zip(like, flat))
                     if a._shape != v._shape and i not in appended + popped and i < n_flat)
    lists = {"appended": appended, "popped": popped, "reshaped": reshaped}
    if drawn:
        lists["draws"] = drawn
    outputs = bind_while(cond_graph, body_graph, flat, captured, structure,
                         shapes=[a._shape for a in like], lists=lists)
    for var, value in zip(variables, outputs[n_user:n_flat]):
        var.assign(value)
    if raw:
        return outputs
    return nest.pack_sequence_as(structure, outputs[:n_user], expand_composites=True)


def _list_vars(body_graph, n):
    """(appended, popped): the loop variables the body only appends rows to (a list built
    in the loop), and those it only pops rows from (such a list's gradient, in the
    reverse loop). Each value such a variable takes is a prefix of its final (appended)
    or initial (popped) value, so the loop stores only its lengths."""
    from ..ops.control import row_chain
    appended, popped = [], []
    for i in range(n):
        root, kinds, _ = row_chain(body_graph, body_graph.outputs[i])
        if root is body_graph.inputs[i] and kinds == {"push"}:
            appended.append(i)
        elif root is body_graph.inputs[i] and kinds == {"pop"}:
            popped.append(i)
    return tuple(appended), tuple(popped)


def _assigned_variables(graph):
    found = {}
    for node in graph.nodes:
        if node.op is ASSIGN_VARIABLE:
            var = graph.variables[node.attrs["index"]]
            found.setdefault(id(var), var)
    return list(found.values())


class _Like:
    """A shape and dtype to make loop placeholders from."""

    def __init__(self, shape, dtype):
        self._shape, self.dtype = tuple(shape), dtype


def _body_outputs(body, structure, xs):
    result = body(*nest.pack_sequence_as(structure, list(xs), expand_composites=True))
    if not isinstance(result, (list, tuple)):
        result = [result]
    try:
        nest.assert_same_structure(list(structure), list(result), check_types=False)
    except ValueError:
        raise ValueError(f"while_loop body returned {result!r}, which does not have the "
                         f"structure of loop_vars") from None
    flat = nest.flatten(result, expand_composites=True)
    if len(flat) != len(nest.flatten(structure, expand_composites=True)):
        raise ValueError(f"while_loop body returned {result!r}, whose TensorArrays do not "
                         f"hold what loop_vars' held")
    return flat


# -- random draws inside branches and loops (ops/draws.py) ---------------------------------

def _fill_shape(shape):
    return tuple(0 if d is None else d for d in shape)


def _export_branch_draws(branches):
    """Appends the outputs of each branch's drawing nodes to the outputs of every branch
    (a branch that does not run a node returns zeros in its place). Returns
    ((branch, node, output positions), ...) and the (shape, dtype) of the new outputs."""
    n_out = len(branches[0].outputs)
    extra = [[] for _ in branches]
    drawn, avals = [], []
    for b, graph in enumerate(branches):
        for node in draw_nodes(graph):
            positions = []
            for y in drawn_outputs(node):
                positions.append(n_out + len(avals))
                zero_shape = _fill_shape(y._shape)
                for c, other in enumerate(branches):
                    if c == b:
                        extra[c].append(y)
                    else:
                        with tracing(other):
                            extra[c].append(_own(other, zeros(zero_shape, y.dtype)))
                avals.append((_merged_shape(y._shape, zero_shape), y.dtype))
            drawn.append((b, node, tuple(positions)))
    for graph, outputs in zip(branches, extra):
        graph.outputs = list(graph.outputs) + outputs
    return tuple(drawn), avals


def _export_loop_draws(cond_graph, body_graph, n):
    """Adds a loop variable per output of the body's drawing nodes, after the `n` loop
    variables there are: the body returns the step's draws in it. Returns
    ((node, variable indices), ...) and the variables' initial values (zeros)."""
    drawn, initial = [], []
    for node in draw_nodes(body_graph):
        indices = []
        for y in drawn_outputs(node):
            indices.append(n + len(initial))
            initial.append(zeros(_fill_shape(y._shape), y.dtype))
            for graph in (cond_graph, body_graph):
                graph.inputs.append(graph._symbolic(y._shape, y.dtype, "draw"))
            body_graph.outputs.append(y)
        drawn.append((node, tuple(indices)))
    return tuple(drawn), initial
