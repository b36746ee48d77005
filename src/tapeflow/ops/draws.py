"""Random draws inside branches and loops (the If and While nodes of ops/control.py).

A gradient differentiates a branch or a loop step by running its graph again under a
tape. The random draws in it must not run again (they would draw new numbers): each
branch returns its draws as extra outputs, and a loop carries each step's draws in extra
loop variables (whose history keeps them; both are added as the node is traced,
graph/control_flow.py), so that the replay substitutes the values the forward run drew
(graph/execute.py: run_graph's `substitute`, which calls replay_with_draws).
"""


def draws(node):
    """Whether running `node` draws random numbers: a random op, or a branch or loop
    holding one."""
    if node.op.structural:
        return node.op.holds_draws(node)
    return node.op.draw is not None


def draw_nodes(graph):
    """The nodes of `graph` that draw (see draws)."""
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
    from .control import cond
    pred, captured = args[0], list(args[1:])
    values = iter(values)
    substitutes = ({}, {})
    for branch, inner, positions in node.attrs["draws"]:
        substitutes[branch][id(inner)] = [next(values) for _ in positions]
    return cond(pred, lambda: node.attrs["then"].run(captured, substitutes[0]),
                lambda: node.attrs["else"].run(captured, substitutes[1]))


def replay_while_drawn(node, args, values):
    from .. import context
    from ..tensor import convert_to_tensor
    from .control import _in_graph, _run_while_eagerly, history_by_length
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
    outputs = context.current_graph.get().trace_while_node(
        lambda step, *xs: cond_graph.run(list(xs) + captured)[0],
        lambda step, *xs: [step + 1] + body_graph.run(list(xs) + captured, at(step)),
        [convert_to_tensor(0)] + initial)
    return outputs[1:n + 1] + outputs[n + 2:2 * n + 2] + [outputs[2 * n + 2]]


def draw_variables(attrs):
    """The loop variables (of a While node's attrs) that carry each step's random draws
    out; their history holds their value after each step, not before (the value before
    the first step is a placeholder, of a shape the draws may not have)."""
    return {i for _, indices in attrs.get("draws", ()) for i in indices}
