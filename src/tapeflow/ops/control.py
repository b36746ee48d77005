"""Control flow: cond and while_loop, and the "If" and "While" entries of the op table.

Eagerly cond and while_loop are plain Python (so the tape records what ran); on a
symbolic condition while tracing, the graph being traced builds an If or While node whose
branches and bodies are sub-graphs (graph/control_flow.py: Graph.trace_cond,
trace_while). The entries' rules run those sub-graphs through the Graph objects they
hold (Graph.run, run_differentiated) and are written with cond and while_loop themselves,
so gradients of gradients work. What random ops inside them drew is kept for those
rules: ops/draws.py."""

from .. import context, nest, placement
from ..errors import UnimplementedError
from ..tensor import Symbolic, _Operators, convert_to_tensor
from . import loop_rows
from .batching import Batched, NotBatchable
from .draws import (draw_variables, if_drawn_outputs, replay_if_drawn, replay_while_drawn,
                    while_drawn_outputs)
from .dynamic import shaped_as_input
from .registry import bind, never_bound
from .structural import STORED_VALUE, StructuralOp, bind_structural, of_kind, register_structural


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


# -- cond ---------------------------------------------------------------------------------

def _if_replay(node, args):
    pred, captured = args[0], list(args[1:])
    then_graph, else_graph = node.attrs["then"], node.attrs["else"]
    return cond(pred, lambda: then_graph.run(captured), lambda: else_graph.run(captured))


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
            sources = _distinct(captured)
            substitute = {id(node): [getattr(ctx, f"out{k}") for k in positions]
                          for b, node, positions in drawn if b == branch}
            _, grads = graph.run_differentiated(sources, sources, dys, substitute)
            return grads
        return fn

    if not captured:
        return (None,)
    grads = cond(ctx.x0, branch_grad(then_graph, 0), branch_grad(else_graph, 1))
    return [None] + list(grads)


_IF_ONLY = never_bound("If (tf.cond)")
IF = register_structural(StructuralOp(
    name="If", args=("x0",), infer=_IF_ONLY, eager=_IF_ONLY, grad=_if_grad, saves=(),
    smooth=False, subgraphs=("then", "else"), leading_inputs=1, savable=True,
    replay=_if_replay, drawn_outputs=if_drawn_outputs, replay_drawn=replay_if_drawn))


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
        return context.current_graph.get().trace_cond(pred, true_fn, false_fn)
    return true_fn() if _truth(pred, "pred") else false_fn()


# -- while_loop ----------------------------------------------------------------------------

def _as_loop_value(v):
    if nest.composite_spec(v) is not None:  # a TensorArray: its tensors are loop variables
        return v
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
    graph = context.current_graph.get()
    if graph is not None:
        # One While node even on constant loop variables, as in TensorFlow: running the
        # loop at trace time would copy its body once per iteration into the graph.
        result = _trace_while_learning_shapes(graph, cond, body, values)
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


def _trace_while_learning_shapes(graph, cond, body, values):
    """graph.trace_while, started again each time the body's first write to a
    TensorArray that entered without a known element shape shows that shape."""
    from .tensor_array import ElementShapeLearned
    while True:
        try:
            return graph.trace_while(cond, body, values)
        except ElementShapeLearned as learned:
            started = learned.replace_in(values)
            if started is None:  # an enclosing loop's TensorArray
                raise
            values = started


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
        raise NotBatchable("a traced While node replayed on batched values")
    return bind_while(cond_graph, body_graph, values, captured, node.attrs["structure"],
                      shapes=[y._shape for y in node.outputs[:n]],
                      lists={key: node.attrs[key]
                             for key in ("appended", "popped", "reshaped", "draws")
                             if key in node.attrs})


def _run_while_eagerly(cond_graph, body_graph, values, captured, by_length=(), drawn=(),
                       substitute_at=None):
    """The interpreter's loop; also returns each loop variable's per-iteration history
    and the trip count, which the gradient replays in reverse. The history of a list the
    body appends to (or pops from) is its length at each step (the node's "appended" and
    "popped", graph/control_flow.py); that of
    a variable carrying a step's draws (`drawn`) is its value after the step.
    substitute_at(step): run_graph's `substitute` for each step (a replay)."""
    history = [[] for _ in values]
    count = 0
    while _truth(cond_graph.run(values + captured)[0], "while_loop condition"):
        for i, (h, v) in enumerate(zip(history, values)):
            if i not in drawn:
                h.append(convert_to_tensor(v._shape[0]) if i in by_length else v)
        values = list(body_graph.run(values + captured,
                                     substitute_at(count) if substitute_at else None))
        for i in drawn:
            history[i].append(values[i])
        count += 1
    stacks = [_stacked(h) if h else _empty_history(v, i in by_length)
              for i, (h, v) in enumerate(zip(history, values))]
    return values + stacks + [convert_to_tensor(count)]


def _stacked(history):
    """Per-iteration values as one tensor; a loop variable that changes shape has none
    (the traced loop's "reshaped" variables, whose gradient is refused)."""
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
    if any(ctx.dtypes[i].is_differentiable for i in ctx.attrs.get("reshaped", ())):
        raise UnimplementedError(
            "tapeflow cannot yet differentiate a loop whose variable changes shape between "
            "iterations, other than a list the loop appends to (tf.concat or slicing of a "
            "loop variable, say): build the values in a list with .append and tf.stack "
            "it", op="While")
    from .creation import range as _range
    from .creation import zeros_like
    from .indexing import gather
    finals = [getattr(ctx, f"out{i}") for i in range(n)]
    drawn = ctx.attrs.get("draws", ())
    draw_vars = draw_variables(ctx.attrs)
    # The variables that carry draws take no gradient: their initial values are
    # placeholders, and the body never reads them.
    float_vars = [f.dtype.is_differentiable and i not in draw_vars for i, f in enumerate(finals)]
    # Accumulate gradients only for the captured values someone differentiates with
    # respect to: a loop reading xs[t] of an input the tape does not watch must not carry
    # (and add into) a dense copy of xs at every step.
    wanted = [j for j, c in enumerate(captured)
              if c.dtype.is_differentiable and ctx.needs[n + j]]
    # Those the body reads a row of at each step (xs[t]) take their rows' gradients;
    # not in a jacobian's vectorized walk, whose rules batch the dense ones, nor on a GPU,
    # which has no kernels for the lists that keep the rows.
    by_rows = {} if any(_is_batched(dy) for dy in dys) or placement.trace_placement() \
        else loop_rows.row_reads(body_graph, n, wanted)
    gathers = [node for j in sorted(by_rows) for node in by_rows[j]]
    wanted = [j for j in wanted if j not in by_rows]
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

    def reverse_cond(i, d_vals, d_caps, after, row_lists, index_lists):
        return i > 0

    def reverse_body(i, d_vals, d_caps, after, row_lists, index_lists):
        step = i - 1
        xs = [stored(i, step) for i in range(n)]
        sources = _distinct(xs + captured)
        wrt = sources[:n] + [sources[n + j] for j in wanted]
        # The step's draws: what its variables' histories hold (see draw_variables).
        outs, grads = body_graph.run_differentiated(
            sources, wrt, list(d_vals), {id(node): [xs[i] for i in indices]
                                         for node, indices in drawn}, gathers)
        row_lists, index_lists = loop_rows.pushed(row_lists, index_lists, grads[len(wrt):])
        grads = grads[:len(wrt)]
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
                                              for i, (a, x) in enumerate(zip(after, xs))], \
            row_lists, index_lists

    # The loop variables' values after the step being reversed: the final values, then
    # each step's own inputs (carried to the step before it).
    _, d_values, d_captured, _, row_lists, index_lists = while_loop(
        reverse_cond, reverse_body,
        [count, d_values, d_captured, finals, *loop_rows.empty_lists(gathers)])
    # The loop relaxed the shapes it carries; an initial value's gradient has its shape.
    grads = [shaped_as_input(d, ctx, i) if f else None
             for i, (d, f) in enumerate(zip(d_values, float_vars))]
    cap_grads = [None] * len(captured)
    for j, d in zip(wanted, d_captured):
        cap_grads[j] = d
    start = 0
    for j in sorted(by_rows):
        end = start + len(by_rows[j])
        cap_grads[j] = loop_rows.scattered(row_lists[start:end], index_lists[start:end],
                                           loop_rows.rows_of(captured[j]))
        start = end
    return grads + cap_grads


def _note_stored_values(outs, after, sources):
    """The body's outputs, recomputed from the stored inputs of the step, are the loop
    variables' stored values after it: a StoredValue note says so, and the traced reverse
    body reads the stored ones instead (graph/passes.py's reuse_stored_values), so the
    recomputation (a matrix product feeding a tanh, say) is dead code the backend drops,
    as JAX's scan saves its residuals."""
    inputs = {id(x) for x in sources}
    for out, stored in zip(outs, after):
        if (stored is not None and id(out) not in inputs and out.dtype.is_differentiable
                and out._shape == stored._shape):
            bind(STORED_VALUE, [out, stored])


_WHILE_ONLY = never_bound("While (tf.while_loop)")
WHILE = register_structural(StructuralOp(
    name="While", args=("x0",), infer=_WHILE_ONLY, eager=_WHILE_ONLY, grad=_while_grad,
    saves=(), smooth=False, subgraphs=("cond", "body"), savable=True, replay=_while_replay,
    drawn_outputs=while_drawn_outputs, replay_drawn=replay_while_drawn))


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


def bind_while(cond_graph, body_graph, values, captured, structure, shapes=None,
               lists=None):
    """A While node running the traced `cond_graph` and `body_graph` on loop variables
    `values` (of loop_vars' `structure`, flat; `shapes`: what tracing knew of them) and
    the values the sub-graphs capture. lists: the node's "appended", "popped",
    "reshaped" and "draws" attrs. Returns the node's outputs: the final values, each
    variable's history and the trip count."""
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
    return bind_structural(op, list(values) + list(captured), attrs, avals)


__all__ = ["cond", "while_loop"]
