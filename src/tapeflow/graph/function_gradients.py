"""How a call of a traced function is differentiated: its forward and backward traced
together once, then cut in two.

The nodes that do not depend on the output gradients form the forward kernel: it runs
the call and also returns the values the backward reads (the saves), among them what its
random ops drew. The rest form the backward kernel: saves and output gradients in, input
gradients out. So random numbers are drawn once and the backward recomputes nothing.
Both kernels are ConcreteFunctions, compiled like any trace, and a call of either under
a tape is differentiated the same way: that is how gradients of gradients work.

A higher-order gradient that flows into the saves differentiates the forward kernel
itself, by the same cut of its own joint trace; there its random ops draw nothing (they
get what the call drew) and its prints are left out: that run repeats the call, it is
not one. A graph holding custom gradients is traced by running the Python function again
(its grad_fn closes over the trace it made)."""

from .. import context
from ..ops.draws import drawn_outputs, draws
from ..ops.registry import OpDef, never_bound, record
from ..tensor import Symbolic
from .execute import run_graph
from .ir import Graph
from .trace import tracing

_no_infer = never_bound("tf.function call")


def without_nones(grads):
    """(the gradients that are not None, each gradient's index among them or None): a
    graph's outputs and the slots that put the Nones back."""
    flat, slots = [], []
    for g in grads:
        slots.append(None if g is None else len(flat))
        if g is not None:
            flat.append(g)
    return flat, slots


def call_recorded(concrete, inputs, var_values, tapes):
    """Runs a call that `tapes` watch: the forward kernel, recorded as one tape entry
    whose gradient is the backward kernel. Returns the call's outputs."""
    gradient = _gradient_of_calls(concrete)
    args = list(inputs) + var_values
    token = context.recording_tapes.set(())
    try:
        results = gradient.forward._call_flat(args)
    finally:
        context.recording_tapes.reset(token)
    n_out, n_saves = gradient.n_out, gradient.n_saves
    if gradient.updates_variables:
        concrete._update_variables(var_values, results[n_out:len(results) - n_saves])
    outputs = results[:n_out]
    record(gradient.op, {}, args, outputs + results[len(results) - n_saves:], tapes)
    return outputs


def _gradient_of_calls(concrete):
    gradient = concrete._call_gradient
    if gradient is None:
        gradient = concrete._call_gradient = CallGradient(concrete)
    return gradient


class CallGradient:
    """The cut joint trace of one ConcreteFunction and the tape entry of its calls."""

    def __init__(self, concrete):
        graph = concrete.graph
        joint, sources, dys, outputs, new_vars, grads = _joint_trace(concrete)
        self.n_out = len(outputs)
        self.updates_variables = new_vars is not None
        forward_nodes, backward_nodes, depends = _cut(joint, dys)
        saves = _saves(forward_nodes, backward_nodes, grads, depends)
        self.n_saves = len(saves)
        make = type(concrete)  # ConcreteFunction (graph/concrete.py imports this module)
        fwd = _subgraph(joint, f"{graph.name}_forward", sources, forward_nodes,
                        list(outputs) + list(new_vars or []) + saves)
        self.forward = make(fwd, list(fwd.outputs), list(range(len(fwd.outputs))),
                            f"{concrete.name}_forward")
        # What the forward drew is among the saves: where a gradient replays the
        # forward kernel, its drawing nodes get those values.
        first_save = len(fwd.outputs) - len(saves)
        in_saves = {id(y): k for k, y in enumerate(saves)}
        self.forward._replayed_draws = [
            (n, [first_save + in_saves[id(y)] for y in drawn_outputs(n)])
            for n in forward_nodes if draws(n)]
        grad_outputs, slots = without_nones(grads)
        bwd = _subgraph(joint, f"{graph.name}_backward", saves + dys, backward_nodes,
                        grad_outputs)
        self.backward = make(bwd, list(grads), slots, f"{concrete.name}_backward")
        # Both run where the function was traced (the GPU it was placed on, or the CPU).
        self.forward._compilation.placed = concrete._compilation.placed
        self.backward._compilation.placed = concrete._compilation.placed
        names = tuple(f"x{i}" for i in range(len(sources)))
        self.op = OpDef(
            name=f"__forward_{concrete.name}", args=names, infer=_no_infer, eager=_no_infer,
            emit="call", grad=self._gradient, none_dys=True,
            saves=names + tuple(f"out{self.n_out + i}" for i in range(self.n_saves)),
            n_out=self.n_out + self.n_saves)

    def _gradient(self, ctx, *dys):
        n_out = self.n_out
        args = [getattr(ctx, name) for name in self.op.args]
        saves = [getattr(ctx, f"out{n_out + i}") for i in range(self.n_saves)]
        shapes = ctx.out_shapes or [ctx.shapes[0]]
        dtypes = ctx.out_dtypes or [ctx.dtypes[0]]
        if all(dy is None for dy in dys[n_out:]):
            return _gradients_of(self.backward, saves + _filled(dys[:n_out], shapes, dtypes))
        # A higher-order gradient that flows into the saved values too: the gradient of
        # the forward kernel as a whole, replaying it with what its random ops drew.
        forward = self.forward
        n_var = len(forward.graph.outputs) - n_out - self.n_saves
        var_values = args[len(args) - n_var:]
        filled = _filled(dys, shapes, dtypes)
        dys = (filled[:n_out] + _filled([None] * n_var, [v._shape for v in var_values],
                                        [v.dtype for v in var_values]) + filled[n_out:])
        drawn = [saves[k - n_out - n_var] for _, ks in forward._replayed_draws for k in ks]
        return _vjp(forward, args, drawn, dys)[:len(args)]


def _vjp(concrete, inputs, drawn, dys):
    """The gradients of a call `concrete(*inputs)` (whose random ops drew `drawn`) for
    output gradients `dys`, through its cut joint trace: its forward kernel runs again
    (recorded by the tapes that watch, for the next order), then its backward kernel."""
    gradient = _gradient_of_calls(concrete)
    var_values = [v.read_value() for v in concrete.graph.variables]
    results = gradient.forward._call_flat(list(inputs) + var_values + list(drawn))
    saves = results[len(results) - gradient.n_saves:]
    return _gradients_of(gradient.backward, saves + list(dys))


def _gradients_of(backward, inputs):
    """Calls a backward kernel: one gradient per input of the forward, None where there
    is none (the graph's outputs hold only the others)."""
    flat = backward._call_flat(inputs)
    return [None if slot is None else flat[slot] for slot in backward._output_slots]


def _filled(dys, shapes, dtypes):
    from ..ops.creation import zeros
    return [dy if dy is not None else zeros(s, dtype=d)
            for dy, s, d in zip(dys, shapes, dtypes)]


def _joint_trace(concrete):
    """The graph's forward and its backward in one graph, under a tape watching its
    inputs and variables. Returns (joint, its forward inputs, the output-gradient
    placeholders, the outputs, the variables' new values or None, the gradients)."""
    from ..autodiff.tape import GradientTape
    graph = concrete.graph
    joint = Graph(f"{graph.name}_joint")
    replayed = concrete._replayed_draws
    with tracing(joint):
        xs = joint.placeholders_like(graph.inputs, "x")
        vs = joint.placeholders_like(graph.variables, "var")
        drawn = {id(node): joint.placeholders_like([graph.outputs[k] for k in ks], "drawn")
                 for node, ks in replayed or ()}
        with GradientTape() as tape:
            tape._watch_all(xs + vs)
            if graph.has_custom_gradient and concrete._retrace is not None:
                for v, var in zip(vs, graph.variables):
                    v._id = var._id  # the retrace's reads of var are this source
                # Its assignments are nodes of the joint graph, on the variables.
                outputs, new_vars = concrete._retrace(xs), None
            else:
                outputs, new_vars = run_graph(graph, xs, vs, drawn)
        dys = joint.placeholders_like(outputs, "dy")
        grads = tape.gradient(outputs, xs + vs, output_gradients=dys)
    if replayed is not None:
        # A replay of a run that happened: its prints do not print again.
        from ..ops.structural import of_kind
        from ..printing import PRINT
        joint.nodes = [n for n in joint.nodes if not of_kind(n.op, PRINT)]
    sources = xs + vs + [p for ps in drawn.values() for p in ps]
    return joint, sources, dys, outputs, new_vars, grads


def _cut(joint, dys):
    """The nodes that do not depend on `dys` (the forward) and those that do."""
    depends = {id(d) for d in dys}
    forward_nodes, backward_nodes = [], []
    for node in joint.nodes:
        if any(id(x) in depends for x in node.inputs):
            backward_nodes.append(node)
            depends.update(id(o) for o in node.outputs)
        else:
            forward_nodes.append(node)
    return forward_nodes, backward_nodes, depends


def _saves(forward_nodes, backward_nodes, grads, depends):
    """The forward values the backward reads, and what the forward drew (a gradient
    flowing into the saves replays the forward kernel and must see the same numbers)."""
    needed = [x for n in backward_nodes for x in n.inputs] + [
        g for g in grads if g is not None]
    needed += [y for n in forward_nodes if draws(n) for y in drawn_outputs(n)]
    saves, seen = [], set()
    for x in needed:
        if isinstance(x, Symbolic) and id(x) not in depends and id(x) not in seen:
            seen.add(id(x))
            saves.append(x)
    return saves


def _subgraph(joint, name, inputs, nodes, outputs):
    graph = Graph(name)
    graph.inputs, graph.nodes, graph.outputs = list(inputs), nodes, outputs
    # The variables a retraced custom gradient read or assigned, as nodes of the joint
    # graph (a graph replayed by run_graph passes them as inputs instead).
    graph.variables = list(joint.variables)
    graph._variable_index = dict(joint._variable_index)
    return graph
