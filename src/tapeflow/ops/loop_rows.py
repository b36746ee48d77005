"""A loop's gradient with respect to a tensor its body reads a row of at each step
(`xs[t]` of a sequence the loop walks): the rows' gradients, not dense ones.

The reverse loop of a While's gradient (control.py) adds each step's gradient of what the
body captured into one accumulator of its shape. For a tensor the body reads by a row,
a step's gradient is that row's, scattered into zeros of the whole tensor: T steps over
a [T, ...] sequence then cost T times its size, and the loop's gradient grew with the
square of its length (an RNN's gradient with respect to its inputs, 1,000 steps: 0.4 s
compiled, against 8 ms for its weights). Here the reverse loop keeps each step's row
gradients and their indices in lists instead, as TensorFlow's loops gather IndexedSlices,
and adds them into the tensor's gradient once, after it.
"""

from .. import dtypes
from ..tensor import is_symbolic
from .registry import bind


def _identity_slice(node):
    return node.op.name == "StridedSlice" and all(
        key == (None, None, None) for key in node.attrs.get("key", ((0,),)))


def _row_gather(node):
    return (node.op.name == "GatherV2" and node.attrs.get("axis") == 0
            and node.attrs.get("batch_dims", 0) == 0 and node.inputs[1]._shape == ()
            and node.outputs[0]._shape is not None and None not in node.outputs[0]._shape)


def row_reads(body_graph, first, wanted):
    """{j: [GatherV2 nodes]} for each captured value j of `wanted` (body input first + j)
    whose gradient flows only through gathers of one row on axis 0 of it (or of its
    identity slice, `xs[t]`), at the body's top level, each of a known row shape."""
    from ..graph.execute import _live_nodes
    live, _ = _live_nodes(body_graph)
    consumers = {}
    for node in live:
        for k, x in enumerate(node.inputs):
            if is_symbolic(x):
                consumers.setdefault(id(x), []).append((node, k))
    returned = {id(y) for y in body_graph.outputs if is_symbolic(y)}
    found = {}
    for j in wanted:
        gathers, pending, ok = [], [body_graph.inputs[first + j]], True
        while pending and ok:
            value = pending.pop()
            ok = id(value) not in returned
            for node, k in consumers.get(id(value), ()):
                if not any(y.dtype.is_differentiable for y in node.outputs):
                    continue  # its shape, or an index checked against it
                if k == 0 and _identity_slice(node):
                    pending.append(node.outputs[0])
                elif k == 0 and _row_gather(node):
                    gathers.append(node)
                else:
                    ok = False
                    break
        if ok and gathers:
            found[j] = gathers
    return found


def differentiated_step(body_graph, sources, wrt, output_gradients, substitute, gathers):
    """execute.run_differentiated of one step, whose `gathers` read rows that are
    sources of their own (their tensor is not in `wrt`): (outputs, the gradients with
    respect to `wrt` and then to each gather's row, the gathers' indices)."""
    from ..autodiff.tape import GradientTape, UnconnectedGradients
    read = {}
    with GradientTape() as tape:
        tape._watch_all(wrt)

        def reader(node):
            def read_row(args):
                row = bind(node.op, args, node.attrs)
                tape.watch(row)
                read[id(node)] = (args[1], row)
                return [row]
            return read_row

        outputs = body_graph.run(sources, {**substitute,
                                           **{id(node): reader(node) for node in gathers}})
    rows = [read[id(node)] for node in gathers]
    reached = [(y, dy) for y, dy in zip(outputs, output_gradients) if dy is not None]
    grads = tape.gradient([y for y, _ in reached], list(wrt) + [row for _, row in rows],
                          output_gradients=[dy for _, dy in reached],
                          unconnected_gradients=UnconnectedGradients.ZERO)
    return outputs, grads, [index for index, _ in rows]


def empty_lists(gathers):
    """The reverse loop's lists of row gradients and of indices, before its first step."""
    from .creation import zeros
    return ([zeros((0,) + tuple(node.outputs[0]._shape), dtype=node.outputs[0].dtype)
             for node in gathers], [zeros((0,), dtype=dtypes.int32) for _ in gathers])


def pushed(row_lists, index_lists, row_grads, indices):
    from .elementwise import cast
    from .lists import list_push_back
    return ([list_push_back(rows, g) for rows, g in zip(row_lists, row_grads)],
            [list_push_back(kept, cast(i, dtypes.int32)) for kept, i in zip(index_lists, indices)])


def scattered(captured, row_lists, index_lists):
    """The captured tensor's gradient: the rows' gradients added at their indices."""
    from .dynamic import segment_summed
    from .shape import concat, shape
    rows = row_lists[0] if len(row_lists) == 1 else concat(row_lists, 0)
    indices = index_lists[0] if len(index_lists) == 1 else concat(index_lists, 0)
    length = captured._shape[0]
    return segment_summed(rows, indices, shape(captured)[0] if length is None else length)


__all__ = ["differentiated_step", "empty_lists", "pushed", "row_reads", "scattered"]
