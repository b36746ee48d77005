"""Dead code inside branches and loops: the outputs of a cond, and the variables of a
loop, that nothing needs, with the captured values only they used.

A gradient replays a loop body in its reverse loop, for the values the backward needs.
The replay also rebuilds what the backward does not need (the lists the body appends to,
say, which only their lengths matter for): without this pass, every reverse step would
copy such a list, a cost quadratic in the trip count."""

from ..tensor import Symbolic
from .ir import Node


def pruned(node, live):
    """`node` (an If or a While without effects) without the outputs that no id in `live`
    names."""
    from ..ops.control import IF
    from ..ops.structural import of_kind
    if of_kind(node.op, IF):
        return _pruned_if(node, live)
    return _pruned_while(node, live)


def _pruned_if(node, live):
    from ..ops.draws import saved_draws
    from .passes import _copy, dce
    keep = [k for k, y in enumerate(node.outputs) if id(y) in live]
    branches = []
    for key in ("then", "else"):
        g = node.attrs[key]
        branches.append(dce(_copy(g, g.nodes, [g.outputs[k] for k in keep])))
    used = set().union(*(_used(g) for g in branches))
    captured = [j for j in range(len(node.inputs) - 1)
                if any(id(g.inputs[j]) in used for g in branches)]
    if len(keep) == len(node.outputs) and len(captured) == len(node.inputs) - 1:
        return node
    for g in branches:
        g.inputs = [g.inputs[j] for j in captured]
    names = tuple(f"x{i}" for i in range(1 + len(captured)))
    position = {k: i for i, k in enumerate(keep)}
    drawn = tuple((b, draw, tuple(position[k] for k in positions))
                  for b, draw, positions in node.attrs.get("draws", ())
                  if all(k in position for k in positions))
    op = node.op.specialized(args=names, saves=names + saved_draws(drawn), n_out=len(keep))
    inputs = (node.inputs[0],) + tuple(node.inputs[1 + j] for j in captured)
    attrs = {**node.attrs, "then": branches[0], "else": branches[1], "draws": drawn}
    return Node(op, inputs, attrs, [node.outputs[k] for k in keep], node.source)


def _pruned_while(node, live):
    from .passes import _copy, dce
    n = node.attrs["n_vars"]
    outs = node.outputs
    cond, body = dce(node.attrs["cond"]), dce(node.attrs["body"])
    # A variable can go when neither its final value nor its history is used, and no
    # variable that stays (nor the condition) reads it.
    dead = {k for k in range(n) if id(outs[k]) not in live and id(outs[n + k]) not in live}
    while dead:
        needed = _needed(body, [body.outputs[k] for k in range(n) if k not in dead]) | \
            _needed(cond, cond.outputs)
        still = {k for k in dead if id(body.inputs[k]) not in needed
                 and id(cond.inputs[k]) not in needed}
        if still == dead:
            break
        dead = still
    kept = [k for k in range(n) if k not in dead]
    body = dce(_copy(body, body.nodes, [body.outputs[k] for k in kept]))
    used = _used(body) | _used(cond)
    n_captured = len(node.inputs) - n
    captured = [j for j in range(n_captured)
                if id(body.inputs[n + j]) in used or id(cond.inputs[n + j]) in used]
    if not dead and len(captured) == n_captured:
        return node
    cond = _copy(cond, cond.nodes)
    for g in (body, cond):
        g.inputs = [g.inputs[k] for k in kept] + [g.inputs[n + j] for j in captured]
    index = {k: i for i, k in enumerate(kept)}
    attrs = {**node.attrs, "cond": cond, "body": body, "n_vars": len(kept)}
    for key in ("appended", "popped", "reshaped"):
        if key in attrs:
            attrs[key] = tuple(index[k] for k in attrs[key] if k in index)
    attrs["draws"] = tuple((draw, tuple(index[k] for k in indices))
                           for draw, indices in attrs.get("draws", ())
                           if all(k in index for k in indices))
    inputs = tuple(node.inputs[k] for k in kept) + tuple(node.inputs[n + j] for j in captured)
    outputs = [outs[k] for k in kept] + [outs[n + k] for k in kept] + [outs[2 * n]]
    names = tuple(f"x{i}" for i in range(len(inputs)))
    op = node.op.specialized(args=names, n_out=len(outputs),
                             saves=names + tuple(f"out{i}" for i in range(len(outputs))))
    return Node(op, inputs, attrs, outputs, node.source)


def _used(graph):
    """ids of the values the nodes and outputs of `graph` read."""
    ids = {id(x) for x in graph.outputs if isinstance(x, Symbolic)}
    for node in graph.nodes:
        ids.update(id(x) for x in node.inputs if isinstance(x, Symbolic))
    return ids


def _needed(graph, roots):
    """ids of the values `roots` depend on, in a graph that dead-code elimination has
    already pruned (its effectful nodes are needed by definition, so kept there)."""
    from .passes import _effectful
    live = {id(x) for x in roots if isinstance(x, Symbolic)}
    for node in reversed(graph.nodes):
        if _effectful(node) or any(id(y) in live for y in node.outputs):
            live.update(id(x) for x in node.inputs if isinstance(x, Symbolic))
    return live
