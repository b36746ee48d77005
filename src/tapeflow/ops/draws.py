"""Random draws inside branches and loops (the If and While nodes of ops/control.py).

A gradient differentiates a branch or a loop step by running its graph again under a
tape. The random draws in it must not run again (they would draw new numbers): each
branch returns its draws as extra outputs, and a loop carries each step's draws in extra
loop variables (whose history keeps them), so that the replay substitutes the values the
forward run drew (graph/execute.py: run_graph's `substitute`, which calls
replay_with_draws).
"""


def draws(node):
    """Whether running `node` draws random numbers: a random op, or a branch or loop
    holding one."""
    if node.op.structural:
        return node.op.holds_draws(node)
    return node.op.draw is not None


def _draw_nodes(graph):
    return [node for node in graph.nodes if draws(node)]


def drawn_outputs(node):
    """The outputs of a drawing node that running it again needs, to draw the same
    numbers (see replay_with_draws): a random op's value; the draws a branch returns;
    the histories of the variables that carry a loop's draws (one row per step)."""
    if node.op.structural:
        return node.op.drawn_outputs(node)
    return list(node.outputs)


def if_drawn_outputs(node):
    return [node.outputs[k] for _, _, positions in node.attrs["draws"] for k in positions]


def while_drawn_outputs(node):
    n = node.attrs["n_vars"]
    return [node.outputs[n + i] for _, indices in node.attrs["draws"] for i in indices]


def saved_draws(drawn):
    """The `saves` names an If adds for its `draws` attr: the outputs its gradient replays
    the branch with."""
    return tuple(f"out{k}" for _, _, positions in drawn for k in positions)


def replay_with_draws(node, args, values):
    """Runs drawing `node` on `args` again (traced or recorded like any op), drawing
    nothing: `values` are its drawn_outputs from the run being replayed."""
    if node.op.structural:
        return node.op.replay_drawn(node, args, values)
    return list(values)  # a random op: not differentiable, so nothing to record


def replay_if_drawn(node, args, values):
    from .control import _run, cond
    pred, captured = args[0], list(args[1:])
    values = iter(values)
    substitutes = ({}, {})
    for branch, inner, positions in node.attrs["draws"]:
        substitutes[branch][id(inner)] = [next(values) for _ in positions]
    return cond(pred, lambda: _run(node.attrs["then"], captured, substitutes[0]),
                lambda: _run(node.attrs["else"], captured, substitutes[1]))


def replay_while_drawn(node, args, values):
    from ..tensor import convert_to_tensor
    from .control import (_in_graph, _run, _run_while_eagerly, _symbolic_while,
                          history_by_length)
    from .indexing import gather
    n = node.attrs["n_vars"]
    cond_graph, body_graph = node.attrs["cond"], node.attrs["body"]
    initial, captured = list(args[:n]), list(args[n:])
    values = iter(values)
    rows = [(inner, [next(values) for _ in indices]) for inner, indices in node.attrs["draws"]]

    def at(step):
        return {id(inner): [gather(h, step) for h in hs] for inner, hs in rows}

    if all(not _in_graph(a) for a in args):
        return _run_while_eagerly(cond_graph, body_graph, initial, captured,
                                  history_by_length(node.attrs), draw_variables(node.attrs),
                                  substitute_at=at)
    # A loop of the same body with a step counter (variable 0) that picks each step's
    # draws; its outputs, less the counter's, are the node's.
    outputs = _symbolic_while(
        lambda step, *xs: _run(cond_graph, list(xs) + captured)[0],
        lambda step, *xs: [step + 1] + _run(body_graph, list(xs) + captured, at(step)),
        [convert_to_tensor(0)] + initial, raw=True)
    return outputs[1:n + 1] + outputs[n + 2:2 * n + 2] + [outputs[2 * n + 2]]


def _fill_shape(shape):
    return tuple(0 if d is None else d for d in shape)


def export_branch_draws(branches):
    """Appends the outputs of each branch's drawing nodes to the outputs of every branch
    (a branch that does not run a node returns zeros in its place). Returns
    ((branch, node, output positions), ...) and the (shape, dtype) of the new outputs."""
    from ..graph.trace import tracing
    from .control import _merged_shape, _own
    from .creation import zeros
    n_out = len(branches[0].outputs)
    extra = [[] for _ in branches]
    drawn, avals = [], []
    for b, graph in enumerate(branches):
        for node in _draw_nodes(graph):
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


def export_loop_draws(cond_graph, body_graph, n):
    """Adds a loop variable per output of the body's drawing nodes, after the `n` loop
    variables there are: the body returns the step's draws in it. Returns
    ((node, variable indices), ...) and the variables' initial values (zeros)."""
    from .creation import zeros
    drawn, initial = [], []
    for node in _draw_nodes(body_graph):
        indices = []
        for y in drawn_outputs(node):
            indices.append(n + len(initial))
            initial.append(zeros(_fill_shape(y._shape), y.dtype))
            for graph in (cond_graph, body_graph):
                graph.inputs.append(graph._symbolic(y._shape, y.dtype, "draw"))
            body_graph.outputs.append(y)
        drawn.append((node, tuple(indices)))
    return tuple(drawn), initial


def draw_variables(attrs):
    """The loop variables (of a While node's attrs) that carry each step's random draws
    out; their history holds their value after each step, not before (the value before
    the first step is a placeholder, of a shape the draws may not have)."""
    return {i for _, indices in attrs.get("draws", ()) for i in indices}
