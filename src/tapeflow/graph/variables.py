"""Reading and assigning Variables inside a traced function: nodes of the structural
entries READ_VARIABLE and ASSIGN_VARIABLE (ops/structural.py) that capture the Variable by
reference (an `assign` outside is seen by the next call)."""

from ..ops.structural import ASSIGN_VARIABLE, READ_VARIABLE
from ..tensor import Symbolic
from .trace import user_source

__all__ = ["ASSIGN_VARIABLE", "READ_VARIABLE", "lifted_value", "traced_assign", "traced_read"]


def traced_read(graph, var):
    """The value of `var` inside `graph`: a node output of its own (Variable.read_value
    records it on the tapes that watch the variable)."""
    index = graph.variable_index(var)
    (out,) = graph.add_node(READ_VARIABLE, (), {"index": index}, [(var._shape, var.dtype)],
                            user_source())
    out._var = var
    return out


def traced_assign(graph, var, value):
    """Records `var.assign(value)` as a node that runs at every call of the function."""
    if isinstance(value, Symbolic) and value.graph is not graph:
        value = graph.capture(value)
    graph.add_node(ASSIGN_VARIABLE, (value,), {"index": graph.variable_index(var)}, [],
                   user_source())


def lifted_value(graph, value):
    """`value` (a node output of `graph`) computed now, eagerly: TensorFlow lifts a
    variable's initializer out of the function (init_scope), so `tf.Variable(
    tf.random.normal(shape))` inside tf.function draws once. None when `value` depends on
    the function's inputs."""
    from .execute import run_graph
    from .ir import Graph
    from .trace import init_scope
    producer = {id(out): node for node in graph.nodes for out in node.outputs}
    needed, stack = set(), [value]
    while stack:
        s = stack.pop()
        if not isinstance(s, Symbolic):
            continue
        node = producer.get(id(s))
        if node is None:  # a placeholder: an input, or a capture of an enclosing graph
            return None
        if id(node) not in needed:
            needed.add(id(node))
            stack.extend(node.inputs)
    initializer = Graph("initializer")
    initializer.nodes = [node for node in graph.nodes if id(node) in needed]
    initializer.outputs = [value]
    with init_scope():
        current = [var.read_value() for var in graph.variables]
        (result,), _ = run_graph(initializer, [], current)
    return result
