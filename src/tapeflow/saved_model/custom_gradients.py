"""A traced function's custom gradients as IdentityN nodes, for saving it.

A trace that ran a custom_gradient holds only its forward (the body's results passed
through StopGradient); its backward calls the Python grad_fn again. Saving traces the
function once more under a tape, which records each custom gradient with its grad_fn,
and replaces the StopGradient nodes of each by one IdentityN node (graph/identity_n.py)
whose gradient is grad_fn traced into a graph (or nothing, when custom gradients are not
saved).
"""

from ..autodiff.tape import GradientTape
from ..graph.function_gradients import without_nones
from ..graph.identity_n import identity_n
from ..graph.ir import Graph, Node
from ..graph.trace import tracing
from ..ops.structural import CUSTOM_GRADIENT, of_kind
from ..tensor import Symbolic


def saveable_graph(concrete, save_gradients):
    """The graph of `concrete` to save: its own, or retraced with IdentityN nodes."""
    graph = concrete.graph
    for node in graph.all_nodes():
        for sub in node.attrs.values():
            if isinstance(sub, Graph) and sub.has_custom_gradient:
                raise ValueError(
                    f"tapeflow cannot save {concrete.name}: a custom_gradient inside "
                    f"tf.cond or tf.while_loop (at {node.where()})")
    if not graph.has_custom_gradient or concrete._retrace is None:
        return graph
    traced = Graph(graph.name)
    with tracing(traced):
        xs = [traced.placeholder(p._shape, p.dtype, p.name) for p in graph.inputs]
        with GradientTape() as tape:
            tape._watch_all(xs)
            for var in graph.variables:
                tape._watch_variable(var)
            traced.outputs = list(concrete._retrace(xs))
        for entry in [e for e in tape._entries if of_kind(e.op, CUSTOM_GRADIENT)]:
            _as_identity_n(traced, entry, save_gradients)
    return traced


def _as_identity_n(graph, entry, save_gradients):
    values = {t._id: t for t in graph.inputs}
    values.update((y._id, y) for node in graph.nodes for y in node.outputs)
    results = [values[i] for i in entry.out_ids]
    producers = graph.producers()
    stops = [producers[id(y)][0] for y in results]
    # A constant input needs no gradient, and the tape kept no reference to it.
    recorded = [k for k, i in enumerate(entry.in_ids) if i in values]
    inputs = [values[entry.in_ids[k]] for k in recorded]
    if save_gradients:
        gradient, slots, captured = _traced_gradient(entry, results)
        slots = [slots[k] for k in recorded]
    else:
        gradient, slots, captured = None, [None] * len(inputs), []
    op = identity_n(len(results), slots, len(captured), gradient)
    passed = [stop.inputs[0] for stop in stops] + inputs + captured
    outputs = results + [graph._symbolic(x._shape, x.dtype, "identityn")
                         for x in passed[len(results):]]
    node = Node(op, tuple(passed), {}, outputs, stops[0].source)
    stop_ids = {id(n) for n in stops}
    graph.nodes = [n for n in graph.nodes if id(n) not in stop_ids]
    # After every value it passes (the body's results, the inputs, the variable reads
    # recorded after the body), before the first use of its results.
    defined = {id(y): i for i, n in enumerate(graph.nodes) for y in n.outputs}
    position = 1 + max([defined.get(id(x), -1) for x in passed if isinstance(x, Symbolic)],
                       default=-1)
    graph.nodes.insert(position, node)


def _traced_gradient(entry, results):
    """grad_fn traced into a graph of (dy per result, the forward values it reads)."""
    gradient = Graph("custom_gradient")
    with tracing(gradient):
        dys = gradient.placeholders_like(results, "dy")
        grads = [None if g is None else gradient.capture(g)
                 if isinstance(g, Symbolic) and g.graph is not gradient else g
                 for g in entry.op.grad(entry, *dys)]
    gradient.inputs = dys + [placeholder for placeholder, _ in gradient.captures]
    gradient.outputs, slots = without_nones(grads)
    gradient.closed = True
    return gradient, slots, [outer for _, outer in gradient.captures]
