"""The graph builder: the interpreter that turns the ops bind() hands it into graph nodes."""

import contextlib

from .. import context
from ..errors import OpError
from ..ops import registry
from ..ops.registry import Interpreter, interpreting, record
from ..source import raised_while_tracing, user_location, user_source, warn  # noqa: F401
from ..tensor import Symbolic


class GraphBuilder(Interpreter):
    """The interpreter that traces: an op on a value of `graph` (or of a graph it is
    nested in), and a stateful op, becomes a node of `graph`; an op on constants alone
    is folded, run at once by the interpreter below, unless its result is large."""

    def __init__(self, graph):
        self.graph = graph

    def process(self, op, inputs, attrs):
        graph = self.graph
        for x in inputs:
            if x._value is None and not isinstance(x, Symbolic):
                # A value of an interpreter below (a Batched stack: a vectorized walk
                # passing through a branch traced here): its rule binds ops on the
                # stack, which come back here.
                return self.parent.process(op, inputs, attrs)
        if (op.stateful or any([x._value is None or x._id in graph.lift_ids for x in inputs])
                or _too_big_to_fold(op, inputs, attrs)):
            return bind_symbolic(graph, op, inputs, attrs)
        return self.parent.process(op, inputs, attrs)


_FOLD_LIMIT = 1 << 16  # elements


def _too_big_to_fold(op, inputs, attrs):
    """A graph should not carry (and pass on every call) a 16 MB array of ones that a
    broadcast node makes in the kernel for free. Checks the inputs (infer) as a traced
    op's: TensorFlow would build the op into the graph."""
    avals = infer_traced(op, inputs, attrs)
    for shape, _ in ([avals] if op.n_out == 1 else avals):
        size = 1
        for d in shape:
            size *= d if d is not None else _FOLD_LIMIT
        if size > _FOLD_LIMIT:
            return True
    return False


@contextlib.contextmanager
def tracing(graph):
    """Ops bound inside build nodes of `graph`; tapes from outside do not see them."""
    graph_token = context.current_graph.set(graph)
    tapes_token = context.recording_tapes.set(())
    try:
        with interpreting(GraphBuilder(graph)):
            yield graph
    finally:
        context.recording_tapes.reset(tapes_token)
        context.current_graph.reset(graph_token)


@contextlib.contextmanager
def init_scope():
    """Runs eagerly even while tracing (TensorFlow's init_scope): variable initializers
    run once, when the variable is created, not at every call of the function."""
    graph_token = context.current_graph.set(None)
    tapes_token = context.recording_tapes.set(())
    interpreter_token = context.interpreter.set(None)
    try:
        yield
    finally:
        context.interpreter.reset(interpreter_token)
        context.recording_tapes.reset(tapes_token)
        context.current_graph.reset(graph_token)


@contextlib.contextmanager
def tracing_for_call_shapes(active=True):
    """Traces for the shapes of one call under a trace whose shapes have unknown
    dimensions (input_signature, reduce_retracing): there TensorFlow checks such shapes
    when the graph runs, so a shape error stays an InvalidArgumentError."""
    token = context.shapes_known_at_run_time.set(active)
    try:
        yield
    finally:
        context.shapes_known_at_run_time.reset(token)


def _leaked(x):
    where = user_location()
    return ValueError(
        f"a tensor computed inside a tf.cond branch or tf.while_loop body ({x!r}) is used "
        f"outside of it, at {where}: return it from the branch or body instead (a loop "
        f"can carry a list as a loop variable)")


def infer_traced(op, inputs, attrs):
    """infer() of an op met while tracing, a graph node or folded at once (its inputs all
    constants): TensorFlow builds either into the graph, so its errors are those of
    building one (TypeError, ValueError), with the user's line."""
    try:
        return op.infer(*inputs, **attrs)
    except (OpError, ValueError, TypeError) as e:
        raise raised_while_tracing(e) from None


def bind_symbolic(graph, op, inputs, attrs):
    """bind() while tracing: infer the outputs, append a Node, let tapes record it."""
    for x in inputs:
        if isinstance(x, Symbolic) and x.graph is not graph and x.graph.closed:
            raise _leaked(x)
    inputs = [graph.capture(x) if (x.graph is not graph if isinstance(x, Symbolic)
                                   else x._id in graph.lift_ids) else x for x in inputs]
    avals = infer_traced(op, inputs, attrs)
    if op.n_out == 1:
        avals = [avals]
    outputs = graph.add_node(op, inputs, attrs, avals, user_source())
    if op.differentiable:
        tapes = context.recording_tapes.get()
        if tapes:
            record(op, attrs, inputs, outputs, tapes)
    outputs = outputs[0] if op.n_out == 1 else list(outputs)
    if registry.traced_numerics_check is not None:
        return registry.traced_numerics_check(op, inputs, outputs)
    return outputs
