"""Control flow: cond and while_loop. Eagerly they are plain Python (so the tape records
what ran); on a symbolic condition while tracing, they build "If" and "While" nodes whose
branches and bodies are sub-graphs, differentiable through rules written with cond and
while_loop themselves (gradients of gradients included). What random ops inside them drew
is kept for those rules: ops/draws.py."""

from .. import context, nest
from ..errors import UnimplementedError
from ..tensor import Symbolic, _Operators, convert_to_tensor
from .draws import (draw_variables, drawn_outputs, export_branch_draws, export_loop_draws,
                    if_drawn_outputs, replay_if_drawn, replay_while_drawn, saved_draws,
                    while_drawn_outputs)
from .batching import Batched
from .registry import bind, never_bound, record
from .structural import STORED_VALUE, StructuralOp, of_kind, register_structural


def _truth(pred, what):
    if isinstance(pred, _Operators):
        if pred._shape:
            raise ValueError(f"{what} must be a scalar, got shape {list(pred._shape)}")
        return bool(pred._value)
    return bool(pred)


def _is_batched(x):
    return type(x) is Batched


def _in_graph(x):
    """Whether `x` is a value of a graph being traced: Symbolic, or a batch of Symbolic
    values (a vectorized jacobian inside tf.function)."""
    return isinstance(x, Symbolic) or (_is_batched(x) and isinstance(x.inner, Symbolic))


def _batch_size(values):
    return next(v.batch_size for v in values if _is_batched(v))


def _not_batchable(what):
    from .batching import NotBatchable
    return NotBatchable(what)


def _trace_subgraph(name, fn, inputs_like=()):
    """Traces `fn(*placeholders)` into a new Graph; returns (graph, result structure)."""
    from ..graph.ir import Graph
    from ..graph.passes import reuse_stored_values
    from ..graph.trace import tracing
    graph = Graph(name)
    outer = context.current_graph.get()
    watched = set(outer.lift_ids) if outer is not None else set()
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


def _bind_structural(op, inputs, attrs, avals):
    """Adds a structural node to the graph being traced; tapes record it like any op."""
    from ..graph.trace import user_source
    graph = context.current_graph.get()
    inputs = [graph.capture(x) if isinstance(x, Symbolic) and x.graph is not graph else x
              for x in inputs]
    outputs = graph.add_node(op, inputs, attrs, avals, user_source())
    tapes = context.recording_tapes.get()
    if tapes:
        record(op, attrs, inputs, outputs, tapes)
    return outputs


def _run(graph, args, substitute=None):
    from ..graph.execute import run_graph
    outputs, _ = run_graph(graph, args, [v.read_value() for v in graph.variables],
                           substitute)
    return outputs


# -- cond ---------------------------------------------------------------------------------

def _if_replay(node, args):
    pred, captured = args[0], list(args[1:])
    then_graph, else_graph = node.attrs["then"], node.attrs["else"]
    return cond(pred, lambda: _run(then_graph, captured), lambda: _run(else_graph, captured))


def _distinct(values):
    """`values` as gradient sources that a tape tells apart. Two reads of one Variable
    share its id (so eager gradients reach the variable); as separate inputs of one node,
    each must get only its own part of the gradient, not the variable's total."""
    from .elementwise import identity
    seen, out = set(), []
    for v in values:
        out.append(identity(v) if v._id in seen else v)
        seen.add(v._id)
    return out


def _if_grad(ctx, *dys):
    then_graph, else_graph = ctx.attrs["then"], ctx.attrs["else"]
    captured = [getattr(ctx, f"x{i}") for i in range(1, len(ctx.shapes))]

    drawn = ctx.attrs.get("draws", ())

    def branch_grad(graph, branch):
        def fn():
            from ..autodiff.tape import GradientTape, UnconnectedGradients
            sources = _distinct(captured)
            substitute = {id(node): [getattr(ctx, f"out{k}") for k in positions]
                          for b, node, positions in drawn if b == branch}
            with GradientTape() as tape:
                tape._watch_all(sources)
                outputs = _run(graph, sources, substitute)
            # A None dy (an output of a shape unknown while tracing that nothing
            # differentiated) is a zero: not a target, whose default dy is ones.
            reached = [(y, dy) for y, dy in zip(outputs, dys) if dy is not None]
            return tape.gradient([y for y, _ in reached], sources,
                                 output_gradients=[dy for _, dy in reached],
                                 unconnected_gradients=UnconnectedGradients.ZERO)
        return fn

    if not captured:
        return (None,)
    grads = cond(ctx.x0, branch_grad(then_graph, 0), branch_grad(else_graph, 1))
    return [None] + list(grads)


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


_IF_ONLY = never_bound("If (tf.cond)")
IF = register_structural(StructuralOp(
    name="If", args=("x0",), infer=_IF_ONLY, eager=_IF_ONLY, grad=_if_grad, saves=(),
    smooth=False, subgraphs=("then", "else"), leading_inputs=1, savable=True,
    replay=_if_replay, drawn_outputs=if_drawn_outputs, replay_drawn=replay_if_drawn))


def _converted(fn):
    """User functions given to tf.cond / tf.while_loop inside tf.function get AutoGraph's
    conversion too, as in TensorFlow."""
    from ..graph.autograph import convert
    return convert(fn, _strict=False)


def _graph_cond(pred, true_fn, false_fn):
    then_graph, then_result = _trace_subgraph("cond_true", _converted(true_fn))
    else_graph, else_result = _trace_subgraph("cond_false", _converted(false_fn))
    try:
        nest.assert_same_structure(then_result, else_result, check_types=False)
    except ValueError:
        raise ValueError(f"true_fn and false_fn must return the same structure: "
                         f"{then_result!r} vs {else_result!r}") from None
    then_out = [_own(then_graph, _as_output(v, "true_fn")) for v in nest.flatten(then_result)]
    else_out = [_own(else_graph, _as_output(v, "false_fn")) for v in nest.flatten(else_result)]
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
    drawn, draw_avals = export_branch_draws((then_graph, else_graph))
    avals += draw_avals
    captured = _captured_union((then_graph, else_graph))
    _normalize_branch(then_graph, captured)
    _normalize_branch(else_graph, captured)
    names = tuple(f"x{i}" for i in range(1 + len(captured)))
    op = IF.specialized(args=names, saves=names + saved_draws(drawn), n_out=len(avals))
    attrs = {"then": then_graph, "else": else_graph}
    if drawn:
        attrs["draws"] = drawn
    outputs = _bind_structural(op, [pred] + captured, attrs, avals)
    n_user = len(outputs) - len(assigned) - len(draw_avals)
    for var, value in zip(assigned, outputs[n_user:]):
        var.assign(value)
    outputs = [Batched(o) if b else o for o, b in zip(outputs[:n_user], batched)]
    return nest.pack_sequence_as(then_result, outputs)


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
    from ..graph.trace import tracing
    from .batching import stacked
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
    from .structural import ASSIGN_VARIABLE, READ_VARIABLE
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


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Returns `true_fn()` if `pred` is true, else `false_fn()` (`tf.cond`).

    Inside a traced tf.function a tensor `pred` builds an If node: both branches are
    traced, one runs per call.

    >>> import tapeflow as tf
    >>> tf.cond(tf.constant(2.0) > 1.0, lambda: tf.constant(1), lambda: tf.constant(0))
    <tf.Tensor: shape=(), dtype=int32, numpy=1>
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    if _in_graph(pred):
        if _is_batched(pred):
            raise _not_batchable("tf.cond on a condition that differs between examples")
        if pred._shape:
            raise ValueError(f"pred must be a scalar, got shape {list(pred._shape)}")
        return _graph_cond(pred, true_fn, false_fn)
    return true_fn() if _truth(pred, "pred") else false_fn()


# -- while_loop ----------------------------------------------------------------------------

def _as_loop_value(v):
    if isinstance(v, _Operators):
        return v if not hasattr(v, "read_value") else v.read_value()
    return convert_to_tensor(v)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (`tf.while_loop`).

    Returns loop_vars' final values with loop_vars' structure. Inside a traced
    tf.function, a tensor condition builds one While node: the body is traced once and
    runs as a native loop, whatever the trip count.

    >>> import tapeflow as tf
    >>> tf.while_loop(lambda i: i < 10, lambda i: (i + 1,), [0])
    (<tf.Tensor: shape=(), dtype=int32, numpy=10>,)
    """
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    values = nest.map_structure(_as_loop_value, [loop_vars] if single else loop_vars)
    if maximum_iterations is not None:
        from .elementwise import logical_and
        limit = convert_to_tensor(maximum_iterations, dtype=None)
        counted = _counted_loop(cond, body, values, limit, logical_and)
        result = while_loop(*counted)
        result = result[1] if isinstance(result, (list, tuple)) else result
        return result[0] if single else result
    if context.current_graph.get() is not None:
        # One While node even on constant loop variables, as in TensorFlow: running the
        # loop at trace time would copy its body once per iteration into the graph.
        result = _graph_while(cond, body, values)
        return result[0] if single else result
    iterations = 0
    while _truth(cond(*values), "while_loop condition"):
        result = body(*values)
        if not isinstance(result, (list, tuple)):
            if len(values) != 1:
                raise ValueError(f"body returned {result!r}, but loop_vars has "
                                 f"{len(values)} elements")
            result = type(values)([result])
        try:
            nest.assert_same_structure(list(values), list(result), check_types=False)
        except ValueError:
            raise ValueError(f"body returned {result!r}, which does not have the structure "
                             f"of loop_vars {loop_vars!r}") from None
        # As in TensorFlow's eager loop, the result keeps the container body returned.
        values = nest.map_structure(_as_loop_value, result)
        iterations += 1
    return values[0] if single else values


def _counted_loop(cond, body, values, limit, logical_and):
    """(cond, body, loop_vars) of a loop that also stops after `limit` iterations."""
    def counted_cond(i, vals):
        return logical_and(i < limit, cond(*vals))

    def counted_body(i, vals):
        out = body(*vals)
        if not isinstance(out, (list, tuple)):
            out = [out]
        return i + 1, type(vals)(out)

    return counted_cond, counted_body, (convert_to_tensor(0, dtype=limit.dtype), values)


def _while_replay(node, args):
    n = node.attrs["n_vars"]
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    values, captured = list(args[:n]), list(args[n:])
    if all(not _in_graph(a) for a in args):
        return _run_while_eagerly(cond_graph, body_graph, values, captured,
                                  history_by_length(node.attrs), draw_variables(node.attrs))
    if any(_is_batched(a) for a in args):
        raise _not_batchable("a traced While node replayed on batched values")
    return _bind_while(cond_graph, body_graph, values, captured, node.attrs["structure"],
                       shapes=[y._shape for y in node.outputs[:n]],
                       lists={key: node.attrs[key]
                              for key in ("appended", "popped", "reshaped", "draws")
                              if key in node.attrs})


def _run_while_eagerly(cond_graph, body_graph, values, captured, by_length=(), drawn=(),
                       substitute_at=None):
    """The interpreter's loop; also returns each loop variable's per-iteration history
    and the trip count, which the gradient replays in reverse. The history of a list the
    body appends to (or pops from) is its length at each step (see _list_vars); that of
    a variable carrying a step's draws (`drawn`) is its value after the step.
    substitute_at(step): run_graph's `substitute` for each step (a replay)."""
    history = [[] for _ in values]
    count = 0
    while _truth(_run(cond_graph, values + captured)[0], "while_loop condition"):
        for i, (h, v) in enumerate(zip(history, values)):
            if i not in drawn:
                h.append(convert_to_tensor(v._shape[0]) if i in by_length else v)
        values = list(_run(body_graph, values + captured,
                           substitute_at(count) if substitute_at else None))
        for i in drawn:
            history[i].append(values[i])
        count += 1
    stacks = [_stacked(h) if h else _empty_history(v, i in by_length)
              for i, (h, v) in enumerate(zip(history, values))]
    return values + stacks + [convert_to_tensor(count)]


def _stacked(history):
    """Per-iteration values as one tensor; a loop variable that changes shape (a list the
    body appends to) has none, and the loop's gradient says so if it is asked for."""
    from .shape import stack
    first = history[0]._shape
    if any(h._shape != first for h in history):
        return _empty_history(history[0])
    return stack(history)


def _empty_history(v, by_length=False):
    from .. import dtypes
    from .creation import zeros
    if by_length:
        return zeros((0,), dtype=dtypes.int32)
    return zeros((0,) + tuple(v._shape), dtype=v.dtype)


def _while_grad(ctx, *dys):
    n = ctx.attrs["n_vars"]
    body_graph = ctx.attrs["body"]
    appended, popped = ctx.attrs.get("appended", ()), ctx.attrs.get("popped", ())
    by_length = history_by_length(ctx.attrs)
    n_in = len(ctx.shapes)
    captured = [getattr(ctx, f"x{i}") for i in range(n, n_in)]
    histories = [getattr(ctx, f"out{n + i}") for i in range(n)]
    count = getattr(ctx, f"out{2 * n}")
    reshaped = [i for i in ctx.attrs.get("reshaped", ()) if ctx.dtypes[i].is_floating]
    if reshaped or any(h._value is not None and count._value is not None
                       and h._shape[0] != int(count._value) for h in histories):
        raise UnimplementedError(
            "tapeflow cannot yet differentiate a loop whose variable changes shape between "
            "iterations, other than a list the loop appends to (tf.concat or slicing of a "
            "loop variable, say): build the values in a list with .append and tf.stack "
            "it", op="While")
    from ..autodiff.tape import GradientTape, UnconnectedGradients
    from .creation import range as _range
    from .creation import zeros_like
    from .indexing import gather
    from .shape import reshape
    finals = [getattr(ctx, f"out{i}") for i in range(n)]
    drawn = ctx.attrs.get("draws", ())
    draw_vars = draw_variables(ctx.attrs)
    # The variables that carry draws take no gradient: their initial values are
    # placeholders, and the body never reads them.
    float_vars = [f.dtype.is_floating and i not in draw_vars for i, f in enumerate(finals)]
    # Accumulate gradients only for the captured values someone differentiates with
    # respect to: a loop reading xs[t] of an input the tape does not watch must not carry
    # (and add into) a dense copy of xs at every step.
    wanted = [j for j, c in enumerate(captured)
              if c.dtype.is_floating and ctx.needs[n + j]]
    d_values = [dy if dy is not None else zeros_like(final)
                for dy, final in zip(dys[:n], finals)]
    d_histories = list(dys[n:2 * n]) + [None] * (n - len(dys[n:2 * n]))
    d_captured = [zeros_like(captured[j]) for j in wanted]

    def stored(i, step):
        if i in appended:  # the list as it was: the first rows of its final value
            return gather(finals[i], _range(gather(histories[i], step)))
        if i in popped:  # the first rows of its initial value
            return gather(getattr(ctx, f"x{i}"), _range(gather(histories[i], step)))
        return gather(histories[i], step)

    def reverse_cond(i, d_vals, d_caps, after):
        return i > 0

    def reverse_body(i, d_vals, d_caps, after):
        step = i - 1
        xs = [stored(i, step) for i in range(n)]
        sources = _distinct(xs + captured)
        wrt = sources[:n] + [sources[n + j] for j in wanted]
        with GradientTape() as tape:
            tape._watch_all(wrt)
            # The step's draws: what its variables' histories hold (see draw_variables).
            outs = _run(body_graph, sources, {id(node): [xs[i] for i in indices]
                                              for node, indices in drawn})
        grads = tape.gradient(outs, wrt, output_gradients=list(d_vals),
                              unconnected_gradients=UnconnectedGradients.ZERO)
        # A list's value after the step is not carried (it would change shape at every
        # step): nothing needs it, as pushes and pops differentiate without their values.
        _note_stored_values(outs, [None if i in by_length or i in draw_vars else a
                                   for i, a in enumerate(after)], sources)
        new_d_vals = [g if f else d for g, f, d in zip(grads[:n], float_vars, d_vals)]
        # A gradient that reached the loop's stored history (a second derivative) joins
        # the loop variable's gradient at the step it was stored.
        new_d_vals = [d + gather(dh, step) if dh is not None and f and i not in by_length
                      else d for i, (d, dh, f) in enumerate(zip(new_d_vals, d_histories,
                                                                 float_vars))]
        new_d_caps = [d + g for d, g in zip(d_caps, grads[n:])]
        return step, new_d_vals, new_d_caps, [a if i in by_length else x
                                              for i, (a, x) in enumerate(zip(after, xs))]

    # The loop variables' values after the step being reversed: the final values, then
    # each step's own inputs (carried to the step before it).
    _, d_values, d_captured, _ = while_loop(reverse_cond, reverse_body,
                                            [count, d_values, d_captured, finals])
    # The loop relaxed the shapes it carries; an initial value's gradient has its shape.
    initial = [getattr(ctx, f"x{i}") for i in range(n)]
    grads = [None if not f else reshape(d, x._shape)
             if None in d._shape and None not in x._shape else d
             for d, f, x in zip(d_values, float_vars, initial)]
    cap_grads = [None] * len(captured)
    for j, d in zip(wanted, d_captured):
        cap_grads[j] = d
    return grads + cap_grads


def _note_stored_values(outs, after, sources):
    """The body's outputs, recomputed from the stored inputs of the step, are the loop
    variables' stored values after it: a StoredValue note says so, and the traced reverse
    body reads the stored ones instead (graph/passes.py's reuse_stored_values), so the
    recomputation (a matrix product feeding a tanh, say) is dead code the backend drops,
    as JAX's scan saves its residuals."""
    inputs = {id(x) for x in sources}
    for out, stored in zip(outs, after):
        if (stored is not None and id(out) not in inputs and out.dtype.is_floating
                and out._shape == stored._shape):
            bind(STORED_VALUE, [out, stored])


_WHILE_ONLY = never_bound("While (tf.while_loop)")
WHILE = register_structural(StructuralOp(
    name="While", args=("x0",), infer=_WHILE_ONLY, eager=_WHILE_ONLY, grad=_while_grad,
    saves=(), smooth=False, subgraphs=("cond", "body"), savable=True, replay=_while_replay,
    drawn_outputs=while_drawn_outputs, replay_drawn=replay_while_drawn))


class _Widen(Exception):
    """The body made these unbatched loop variables Batched: trace again with them
    batched from the start."""

    def __init__(self, positions, size):
        self.positions, self.size = positions, size


def _graph_while(cond, body, values):
    cond, body = _converted(cond), _converted(body)
    flat = nest.flatten(values)
    positions = {i for i, v in enumerate(flat) if _is_batched(v)}
    size = _batch_size(flat) if positions else None
    try:
        if not positions:
            return _symbolic_while(cond, body, values)
    except _Widen as widened:
        positions, size = widened.positions, widened.size
    return _batched_while(cond, body, values, positions, size)


def _batched_while(cond, body, values, positions, size):
    """A loop over Batched loop variables: a While node over their stacks, its cond and
    body seeing Batched values again."""
    from .batching import stacked
    structure, flat = values, nest.flatten(values)
    kind = Batched
    while True:
        def unstacked(xs, positions=positions):
            return nest.pack_sequence_as(structure, [kind(x) if i in positions else x
                                                     for i, x in enumerate(xs)])

        def stacked_cond(*xs, unstacked=unstacked):
            result = cond(*unstacked(xs))
            if _is_batched(result):
                raise _not_batchable("a while_loop condition that differs between examples")
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
            result = _symbolic_while(stacked_cond, stacked_body, init)
        except _Widen as widened:
            positions = widened.positions
            continue
        return nest.pack_sequence_as(structure, [kind(r) if i in positions else r
                                                 for i, r in enumerate(result)])


def _symbolic_while(cond, body, values, variables=(), raw=False):
    """A While node. Variables the body assigns become extra loop variables (`variables`,
    found by a first trace): the body's reads see the value the last iteration assigned,
    and the final values are assigned after the loop. raw: return the node's outputs
    (values flat, then histories and trip count), not the loop variables' structure."""
    structure = values
    n_user = len(nest.flatten(values))
    flat = nest.flatten(values) + [var.read_value() for var in variables]
    like = list(flat)
    holders = {}

    def user_values(xs, graph_name):
        """The loop's own variables (flat); the variables' values are kept aside."""
        holders[graph_name] = list(xs[n_user:])
        return list(xs[:n_user])

    for _ in range(2):
        cond_graph, cond_result = _trace_subgraph(
            "while_cond", lambda *xs: cond(*nest.pack_sequence_as(
                structure, user_values(xs, "cond"))), like)
        body_graph, body_result = _trace_subgraph(
            "while_body", lambda *xs: _body_outputs(
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
            return _symbolic_while(cond, body, values, assigned, raw)
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
    drawn, initial = export_loop_draws(cond_graph, body_graph, n_flat)
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
    outputs = _bind_while(cond_graph, body_graph, flat, captured, structure,
                          shapes=[a._shape for a in like], lists=lists)
    for var, value in zip(variables, outputs[n_user:n_flat]):
        var.assign(value)
    if raw:
        return outputs
    return nest.pack_sequence_as(structure, outputs[:n_user])


def _list_vars(body_graph, n):
    """(appended, popped): the loop variables the body only appends rows to (a list built
    in the loop), and those it only pops rows from (such a list's gradient, in the
    reverse loop). Each value such a variable takes is a prefix of its final (appended)
    or initial (popped) value, so the loop stores only its lengths."""
    appended, popped = [], []
    for i in range(n):
        root, kinds, _ = row_chain(body_graph, body_graph.outputs[i])
        if root is body_graph.inputs[i] and kinds == {"push"}:
            appended.append(i)
        elif root is body_graph.inputs[i] and kinds == {"pop"}:
            popped.append(i)
    return tuple(appended), tuple(popped)


def row_chain(graph, value):
    """(root, kinds, steps): `value` is `root` with rows pushed and/or popped (kinds says
    which), following TensorListPushBack / PopBack, lists that inner loops grow or shrink,
    and conds whose branches both start from the same input. steps lists the nodes on the
    way, from `value` back: (node, None) for a push or pop, (node, (output, captured
    input)) for a cond, (node, (variable, variable)) for a loop."""
    from .lists import TENSOR_LIST_POP_BACK, TENSOR_LIST_PUSH_BACK
    producers = graph.producers()
    kinds, steps = set(), []
    while id(value) in producers:
        node, k = producers[id(value)]
        if node.op is TENSOR_LIST_PUSH_BACK or (node.op is TENSOR_LIST_POP_BACK and k == 0):
            steps.append((node, None))
            value = node.inputs[0]
            kinds.add("push" if node.op is TENSOR_LIST_PUSH_BACK else "pop")
        elif of_kind(node.op, WHILE) and k in history_by_length(node.attrs):
            steps.append((node, (k, k)))
            value = node.inputs[k]
            kinds.add("push" if k in node.attrs.get("appended", ()) else "pop")
        elif of_kind(node.op, IF) and k < len(node.attrs["then"].outputs):
            branches = (node.attrs["then"], node.attrs["else"])
            chains = [row_chain(g, g.outputs[k]) for g in branches]
            index = [next((j for j, ph in enumerate(g.inputs) if ph is root), None)
                     for g, (root, _, _) in zip(branches, chains)]
            if index[0] is None or index[0] != index[1]:
                break
            steps.append((node, (k, index[0])))
            value = node.inputs[1 + index[0]]
            kinds |= chains[0][1] | chains[1][1]
        else:
            break
    return value, kinds, steps


def history_by_length(attrs):
    """The loop variables (of a While node's attrs) whose history is their length at
    each step: the lists it appends to or pops from."""
    return set(attrs.get("appended", ())) | set(attrs.get("popped", ()))


def _assigned_variables(graph):
    from .structural import ASSIGN_VARIABLE
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
    result = body(*nest.pack_sequence_as(structure, list(xs)))
    if not isinstance(result, (list, tuple)):
        result = [result]
    try:
        nest.assert_same_structure(list(structure), list(result), check_types=False)
    except ValueError:
        raise ValueError(f"while_loop body returned {result!r}, which does not have the "
                         f"structure of loop_vars") from None
    return nest.flatten(result)


def _bind_while(cond_graph, body_graph, values, captured, structure, shapes=None,
                lists=None):
    from .. import dtypes
    n = len(values)
    shapes = shapes or [v._shape for v in values]
    avals = [(s, v.dtype) for s, v in zip(shapes, values)]
    lists = lists or {}
    by_length = history_by_length(lists)
    avals += [((None,), dtypes.int32) if i in by_length else ((None,) + tuple(s), v.dtype)
              for i, (s, v) in enumerate(zip(shapes, values))]  # histories
    avals.append(((), dtypes.int32))  # trip count
    n_in = n + len(captured)
    names = tuple(f"x{i}" for i in range(n_in))
    op = WHILE.specialized(args=names, n_out=len(avals),
                           saves=names + tuple(f"out{i}" for i in range(2 * n + 1)))
    attrs = {"cond": cond_graph, "body": body_graph, "n_vars": n, "structure": structure,
             **lists}
    return _bind_structural(op, list(values) + list(captured), attrs, avals)


__all__ = ["cond", "while_loop"]
