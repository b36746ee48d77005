"""The text listing of a Graph (`print(graph)`), laid out as a jaxpr: one node per line,
sub-graphs (branches, loop bodies, called graphs) indented under their node."""

import numpy as np

from ..dtypes import DType
from ..tensor import Symbolic, Tensor, TensorShape
from .ir import graphs_in

# Lines are filled up to this many columns; a longer line holds one piece that cannot be
# broken (a long attribute, or a comment naming a long path).
WIDTH = 100
# Nested lines (a wrapped node's continuation, a sub-graph) indent by this much more.
STEP = "  "
CONTINUATION = STEP * 2
# An attribute value is cut to about this many characters (the loop structure of a
# backward While repeats every loop variable; an array attribute may be a million floats).
ATTR_WIDTH = 60
# An array attribute shows its values up to this many elements, else its dtype and shape.
ARRAY_VALUES = 8


def format_graph(graph):
    """The listing of `graph` and, under the nodes that hold them, its sub-graphs."""
    return "\n".join(_graph_lines(graph, ""))


def _graph_lines(graph, indent, label=""):
    params = [f"%{t.name}: {_aval(t)}" for t in graph.inputs]
    lines = _fill(_call_pieces(f"{label}graph {graph.name}", params), indent)
    body = indent + STEP
    if graph.variables:
        variables = f"# variables: {', '.join(v.name for v in graph.variables)}"
        if len(lines) == 1 and len(lines[0]) + 2 + len(variables) <= WIDTH:
            lines[0] += "  " + variables
        else:
            lines.append(body + variables)
    shown = None  # the source comment the lines above fall under
    for node in graph.nodes:
        where = f"# {node.where()}"
        if where != shown:
            lines.append(body + where)
        lines += _node_lines(node, body)
        shown = None if any(graphs_in(v) for v in node.attrs.values()) else where
    lines += _fill(_listed("return", [_operand(t) for t in graph.outputs]), body)
    return lines


def _node_lines(node, indent):
    outs = [f"%{t.name}: {_aval(t)}" for t in node.outputs] or ["()"]
    subgraphs = {k: v for k, v in node.attrs.items() if graphs_in(v)}
    args = [_operand(t) for t in node.inputs] + [
        f"{k}={_attr(v)}" for k, v in node.attrs.items() if k not in subgraphs]
    outs = _commas(outs[:-1]) + [f"{outs[-1]} ="]
    call = _call_pieces(node.op.name, args)
    lines = _fill(outs + call, indent)
    if len(lines) > 1 and len(_fill(outs, indent)) > 1:
        # Many outputs (a While's): the op starts its own line, so it can be found.
        lines = _fill(outs, indent)
        lines[-1] = lines[-1][:-2]
        lines += _fill([f"= {call[0]}"] + call[1:], indent + CONTINUATION)
    for key, value in subgraphs.items():
        graphs = graphs_in(value)
        for i, sub in enumerate(graphs):
            label = f"{key}:" if len(graphs) == 1 and value is sub else f"{key}[{i}]:"
            lines += _graph_lines(sub, indent + STEP, label + " ")
    return lines


# -- laying out pieces ---------------------------------------------------------------------

def _commas(items):
    return [f"{item}," for item in items]


def _call_pieces(head, args):
    """`head(a, b, c)` as pieces that may go on separate lines, each ending its argument."""
    if not args:
        return [f"{head}()"]
    pieces = _commas(args[:-1]) + [f"{args[-1]})"]
    pieces[0] = f"{head}({pieces[0]}"
    return pieces


def _listed(head, items):
    return [head] + _commas(items[:-1]) + items[-1:]


def _fill(pieces, indent):
    """Lines holding the pieces in order, separated by spaces, each line as full as WIDTH
    allows; lines after the first are indented by CONTINUATION more."""
    lines = [indent + pieces[0]]
    for piece in pieces[1:]:
        if len(lines[-1]) + 1 + len(piece) <= WIDTH:
            lines[-1] += " " + piece
        else:
            lines.append(indent + CONTINUATION + piece)
    return lines


# -- values ----------------------------------------------------------------------------------

def _aval(t):
    return f"{t.dtype.name}{list(TensorShape(t._shape))}"


def _operand(t):
    if isinstance(t, Symbolic):
        return f"%{t.name}"
    if isinstance(t, Tensor):
        return f"const({_array_text(np.asarray(t._value), t.dtype.name)})"
    return _attr(t)


def _array_text(arr, dtype_name):
    if arr.ndim == 0:
        return str(arr)
    return f"{dtype_name}{list(arr.shape)}"


def _attr(value, budget=ATTR_WIDTH):
    """A short text for an attribute value: containers cut after `budget` characters,
    arrays by their dtype and shape once they have more than ARRAY_VALUES elements."""
    if isinstance(value, (Symbolic, Tensor)):
        return _operand(value)
    if isinstance(value, DType):
        return value.name
    if isinstance(value, np.ndarray):
        if value.size <= ARRAY_VALUES:
            return np.array2string(value, separator=", ")
        return _array_text(value, value.dtype.name)
    if isinstance(value, dict):
        return _items_text("{", "}", [(f"{k!r}: ", v) for k, v in value.items()], budget)
    if isinstance(value, list):
        return _items_text("[", "]", [("", v) for v in value], budget)
    if isinstance(value, tuple):
        text = _items_text("(", ")", [("", v) for v in value], budget)
        return text[:-1] + ",)" if len(value) == 1 else text
    text = repr(value)
    return text if len(text) <= budget else text[:max(budget - 3, 1)] + "..."


def _items_text(opening, closing, items, budget):
    """The container's items while they fit in `budget`, then how many were left out."""
    parts = []
    used = len(opening) + len(closing)
    for i, (prefix, item) in enumerate(items):
        text = prefix + _attr(item, max(budget - used, 8))
        if parts and used + len(text) > budget:
            parts.append(f"... {len(items) - i} more")
            break
        parts.append(text)
        used += len(text) + 2
    return opening + ", ".join(parts) + closing
