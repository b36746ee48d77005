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


def _identity_slice(node):
    from .indexing import STRIDED_SLICE
    return node.op is STRIDED_SLICE and all(key == (None, None, None)
                                            for key in node.attrs["key"])


def _row_gather(node):
    from .indexing import GATHER
    return (node.op is GATHER and node.attrs["axis"] == 0 and node.attrs["batch_dims"] == 0
            and node.inputs[1]._shape == () and None not in node.outputs[0]._shape)


def row_reads(body_graph, first, wanted):
    """{j: [GatherV2 nodes]} for each captured value j of `wanted` (body input first + j)
    whose gradient flows only through gathers of one row on axis 0 of it (or of its
    identity slice, `xs[t]`), at the body's top level, each of a known row shape."""
    live = body_graph.live_nodes()
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


def empty_lists(gathers):
    """The reverse loop's lists of row gradients and of indices, before its first step."""
    from .creation import zeros
    return ([zeros((0,) + tuple(node.outputs[0]._shape), dtype=node.outputs[0].dtype)
             for node in gathers], [zeros((0,), dtype=dtypes.int32) for _ in gathers])


def pushed(row_lists, index_lists, read):
    """The lists with a step's (index, row gradient) of each gather pushed."""
    from .elementwise import cast
    from .lists import list_push_back
    return ([list_push_back(rows, g) for rows, (_, g) in zip(row_lists, read)],
            [list_push_back(kept, cast(i, dtypes.int32))
             for kept, (i, _) in zip(index_lists, read)])


def scattered(row_lists, index_lists, length):
    """The gradient of a tensor of `length` rows (an int, or an int32 scalar where
    tracing did not know it): the rows' gradients added at their indices. The tape's
    walk adds the rows it kept so too (autodiff/backprop.py)."""
    from .dynamic import segment_summed
    from .shape import concat
    rows = row_lists[0] if len(row_lists) == 1 else concat(row_lists, 0)
    indices = index_lists[0] if len(index_lists) == 1 else concat(index_lists, 0)
    return segment_summed(rows, indices, length)


def rows_of(tensor):
    """Its number of rows, as scattered takes it."""
    from .shape import shape
    return shape(tensor)[0] if tensor._shape[0] is None else tensor._shape[0]


__all__ = ["empty_lists", "pushed", "row_reads", "rows_of", "scattered"]
