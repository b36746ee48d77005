"""Running a Graph node by node through bind(): eagerly it is the NumPy interpreter (the
first tier of execution); while tracing it inlines the graph into the graph being built;
under a tape it records every node. One walk, three uses."""

import numpy as np

from .. import context, placement
from ..device_tensor import alias
from ..errors import OpError
from ..ops import registry
from ..ops.registry import bind, run_inferred
from ..tensor import Symbolic, wrap


def _fresh_random_attrs(attrs):
    from ..ops.random import next_counter
    return {**attrs, "counter": next_counter(attrs["seed"], attrs["seed2"])}


def _stream(attrs):
    streams = context.random_streams.get()
    if streams is None:
        return None
    from ..ops.random import stream_key
    return streams.get(stream_key(attrs))


def _assigned(value, before):
    """What reads after an assignment see: the assigned numbers under the variable's own
    identity (`before`'s id), as a ReadVariableOp in TensorFlow: a tape differentiates
    them with respect to the variable, never through what was assigned."""
    if type(value) is Symbolic:  # while tracing: a node, so the value stays symbolic
        from ..ops.elementwise import stop_gradient
        out = stop_gradient(value)
    else:
        out = alias(value)  # a device value stays in device memory
    out._id = before._id
    return out


def located(error, node):
    """`error` (raised by `node` while a graph ran) with the user's line that built the
    node, as TensorFlow's "Detected at node ... defined at" does (itself when it has it,
    or when there is no line)."""
    if node is None or node.source is None or getattr(error, "_tapeflow_located", False):
        return error
    located = type(error)(f"{error}\n  Detected at node {node.op.name} defined at "
                          f"{node.where()}", op=error.op)
    located._tapeflow_located = True
    return located


def _live_nodes(graph):
    """The nodes of `graph` that its outputs need, and the effectful ones (assignments,
    prints, random draws), in order: a dead node does not run, as in the compiled tier
    (a `tf.range(1, n)` a tensor loop iterates by counting must not raise for n < 1).
    Cached on the graph, for its node and output lists as they are now."""
    key = (id(graph.nodes), len(graph.nodes), id(graph.outputs), len(graph.outputs))
    cached = getattr(graph, "_live_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    from .passes import _effectful
    live = {id(x) for x in graph.outputs if type(x) is Symbolic}
    keep = []
    for node in reversed(graph.nodes):
        if _effectful(node) or any(id(y) in live for y in node.outputs):
            keep.append(node)
            live.update(id(x) for x in node.inputs if type(x) is Symbolic)
    keep.reverse()
    checked = {id(node) for node in keep if _checked_when_traced(node)}
    graph._live_cache = (key, keep, checked)
    return keep, checked


def _checked_when_traced(node):
    """Whether running `node` needs no checks: a plain kernel whose inputs had known
    shapes when it was traced, so they have those shapes whenever its graph runs."""
    op = node.op
    return (not op.structural and op.draw is None
            and all(x._shape is not None and None not in x._shape for x in node.inputs))


def run_node(node, args, state, variable_values, substitute=None):
    """The outputs of `node` on `args` (Tensors), or None for an assignment, which sets
    `state` (the variables' values as the run goes; `variable_values` as it started)."""
    op = node.op
    if op.structural and op.variable_access == "read":
        return [state[node.attrs["index"]]]
    if op.structural and op.variable_access == "assign":
        index = node.attrs["index"]
        state[index] = _assigned(args[0], variable_values[index])
        return None
    if substitute and id(node) in substitute:
        given = substitute[id(node)]
        if callable(given):
            return given(args)
        from ..ops.draws import replay_with_draws
        return replay_with_draws(node, args, given)
    if op.structural and op.replay is not None:
        return op.replay(node, args)
    attrs = node.attrs
    stream = _stream(attrs) if op.draw is not None else None
    # Inside a branch or loop: the call's stream, on the CPU; a GPU draws on the device,
    # from a fresh counter at each run, as the compiled GPU program does.
    if stream is not None and not placement.placed_on_gpu_kernel(op):
        return [wrap(np.asarray(op.draw(stream, [a._value for a in args], attrs)))]
    if op.draw is not None:  # a draw of its own, from a fresh counter
        attrs = _fresh_random_attrs(attrs)
    outs = bind(op, args, attrs)
    return [outs] if op.n_out == 1 else outs


def run_graph(graph, inputs, variable_values, substitute=None):
    """Runs `graph` on `inputs` (Tensors for graph.inputs) with `variable_values` (Tensors
    for graph.variables). Functional: assignments update the returned variable values,
    never the Variables themselves.

    substitute: {id(node): values} for the nodes that must not draw again: a gradient
    replaying a branch or a loop step gives each random op (and each branch or loop
    that draws) what it drew in the run being replayed (ops/draws.py,
    replay_with_draws). A function of the node's args instead of values runs in its
    place (a loop's gradient reading rows: ops/loop_rows.py).

    Returns (outputs, variable_values_after).
    """
    env = {}
    for placeholder, value in zip(graph.inputs, inputs):
        env[id(placeholder)] = value
    state = list(variable_values)
    node = None
    nodes, checked = _live_nodes(graph)
    # The first tier: nothing to tell (no tape, trace or check_numerics) and nothing to
    # place, so the nodes that tracing checked call their kernels directly.
    if (substitute is not None or context.interpreter.get() is not None or placement.active
            or context.recording_tapes.get() or registry.eager_numerics_check is not None):
        checked = ()
    try:
        for node in nodes:
            args = [env[id(x)] if type(x) is Symbolic else x for x in node.inputs]
            if id(node) in checked:
                out, outs = run_inferred(node.op, args, node.attrs)
                if node.op.n_out == 1:
                    env[id(node.outputs[0])] = out
                    continue
            else:
                outs = run_node(node, args, state, variable_values, substitute)
            if outs is not None:
                for symbolic, value in zip(node.outputs, outs):
                    env[id(symbolic)] = value
    except OpError as e:
        error = located(e, node)
        if error is e:
            raise
        raise error from None
    outputs = [env[id(t)] if type(t) is Symbolic else t for t in graph.outputs]
    return outputs, state


def run_differentiated(graph, args, wrt, output_gradients, substitute=None, row_reads=()):
    """Runs `graph` on `args` (with its variables' current values) under a tape watching
    `wrt`, some of the args, and differentiates: returns (outputs, the gradients with
    respect to `wrt` of the outputs weighted by `output_gradients`, zeros where none
    reaches). The If and While gradients differentiate a branch or a loop step so.

    row_reads: nodes of `graph` that read a row of a tensor not in `wrt` (gathers): each
    row read is a source of its own, and (its index, its gradient) follows the
    gradients with respect to `wrt` (ops/loop_rows.py)."""
    from ..autodiff.tape import GradientTape, UnconnectedGradients
    read = {}
    with GradientTape() as tape:
        tape._watch_all(wrt)
        if row_reads:
            substitute = {**(substitute or {}),
                          **{id(node): _watched_read(node, tape, read) for node in row_reads}}
        outputs = graph.run(args, substitute)
    rows = [read[id(node)] for node in row_reads]
    # A None output gradient (an output of a shape unknown while tracing that nothing
    # differentiated) is a zero: not a target, whose default output gradient is ones.
    reached = [(y, dy) for y, dy in zip(outputs, output_gradients) if dy is not None]
    grads = tape.gradient([y for y, _ in reached], list(wrt) + [row for _, row in rows],
                          output_gradients=[dy for _, dy in reached],
                          unconnected_gradients=UnconnectedGradients.ZERO)
    return outputs, grads[:len(wrt)] + [(index, g) for (index, _), g in
                                        zip(rows, grads[len(wrt):])]


def _watched_read(node, tape, read):
    def run(args):
        (row,) = outs = run_node(node, args, [], [])
        tape.watch(row)
        read[id(node)] = (args[1], row)
        return outs
    return run
