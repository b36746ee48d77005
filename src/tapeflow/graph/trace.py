"""The graph-building context fed by bind(): symbolic outputs, user source lines."""

import contextlib
import contextvars
import os
import sys

from .. import context
from ..errors import InvalidArgumentError, OpError
from ..ops.registry import Interpreter, interpreting, record
from ..tensor import Symbolic

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frame():
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and not filename.startswith("<frozen"):
            return frame
        frame = frame.f_back
    return None


def user_source():
    """(filename, lineno) of the innermost caller outside tapeflow, or None."""
    frame = _user_frame()
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def user_location():
    frame = _user_frame()
    if frame is None:
        return "<unknown>"
    import linecache
    text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    return f"{where} ({text})" if text else where


def warn(message, category=RuntimeWarning):
    """A warning attributed to the user's innermost line: tapeflow's own modules are
    filtered out of RuntimeWarnings (NumPy's inf/nan warnings, registry.py)."""
    import warnings
    filename, lineno = user_source() or ("<tapeflow>", 0)
    warnings.warn_explicit(message, category, filename, lineno)


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


# True while tracing a function for the shapes of one call, under a trace whose shapes
# have unknown dimensions (input_signature, reduce_retracing): there TensorFlow checks
# such shapes when the graph runs, so a shape error stays an InvalidArgumentError.
_shapes_known_at_run_time = contextvars.ContextVar("shapes_known_at_run_time", default=False)


@contextlib.contextmanager
def tracing_for_call_shapes(active=True):
    token = _shapes_known_at_run_time.set(active)
    try:
        yield
    finally:
        _shapes_known_at_run_time.reset(token)


def _with_location(error, location):
    message = f"{error}\n  raised while tracing tf.function, at {location}"
    if type(error) is InvalidArgumentError and (
            getattr(error, "about_dtype", False) or not _shapes_known_at_run_time.get()):
        # Building a graph, TensorFlow raises these as TypeError (a dtype) or ValueError
        # (a shape, an attribute); InvalidArgumentError is for values when it runs.
        return (TypeError if getattr(error, "about_dtype", False) else ValueError)(message)
    if isinstance(error, OpError):
        return type(error)(message, op=error.op)
    try:
        return type(error)(message)
    except TypeError:
        return InvalidArgumentError(message)


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
        raise _with_location(e, user_location()) from None


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
    return outputs[0] if op.n_out == 1 else list(outputs)
