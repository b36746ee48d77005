"""The structural entries of the op table: node kinds that their own code builds and runs
(a branch, a loop, a variable read or assignment, a call, a print, a custom gradient),
never bind(). Each says, as data on the entry, what passes, the NumPy interpreter,
saving and the backends ask of it, so that none of them compares op names."""

from dataclasses import dataclass, field, replace
from typing import Callable

from .. import context
from ..source import user_source
from ..tensor import Symbolic
from .registry import OpDef, never_bound, record

# Structural entries by TensorFlow's op name (a saved graph names its nodes' ops).
STRUCTURAL_OPS = {}


@dataclass(frozen=True)
class StructuralOp(OpDef):
    """A node kind built by its own code. A node may hold a specialised copy of its entry
    (`specialized`: its own args, saves and output count); `entry` is the registered one.

    subgraphs:       the attrs holding the sub-graphs the node runs (a branch's "then"
                     and "else"), which passes walk into.
    leading_inputs:  how many of the node's first inputs are its own (If's predicate)
                     rather than its sub-graphs' inputs.
    effect:          running the node changes state itself (assigns a variable, prints),
                     whatever its sub-graphs hold: it is never dropped nor merged.
    variable_access: "read" or "assign": attrs["index"] names one of the graph's
                     variables.
    inlined:         the node calls its "graph" attr, which inlining splices in.
    savable:         a saved function may hold such nodes (graph/serialize.py writes
                     their args, saves and output count).
    replay:          replay(node, args) -> outputs: the node run again on tensors (by
                     the NumPy interpreter, or traced into an enclosing graph).
    drawn_outputs:   drawn_outputs(node) -> the outputs that hold what the random ops
                     inside it drew (ops/draws.py), for nodes whose sub-graphs draw.
    replay_drawn:    replay_drawn(node, args, values): replay, drawing nothing: `values`
                     are its drawn_outputs from the run being replayed.
    """

    structural = True
    subgraphs: tuple = ()
    leading_inputs: int = 0
    effect: bool = False
    variable_access: str | None = None
    inlined: bool = False
    savable: bool = False
    replay: Callable | None = None
    drawn_outputs: Callable | None = None
    replay_drawn: Callable | None = None
    entry: OpDef | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        super().__post_init__()
        if self.entry is None:
            object.__setattr__(self, "entry", self)

    def specialized(self, **changes):
        """A copy for one node (args, saves, n_out, grad), still of this entry."""
        return replace(self, **changes)

    def holds_draws(self, node):
        """Whether running `node` draws random numbers inside its sub-graphs."""
        return self.drawn_outputs is not None and bool(node.attrs.get("draws"))


def of_kind(op, entry):
    """Whether `op` (any node's op) is the structural `entry` or a copy made of it."""
    return op.structural and op.entry is entry


def subgraphs_of(node):
    """The sub-graphs `node` runs: the attrs its entry names in `subgraphs` (none for an
    op of the table that is not structural)."""
    return [node.attrs[key] for key in node.op.subgraphs] if node.op.structural else []


def bind_structural(op, inputs, attrs, avals):
    """Adds a node of structural `op` (its outputs' (shape, dtype) are `avals`) to the
    graph being traced; tapes record it like any op."""
    graph = context.current_graph.get()
    inputs = [graph.capture(x) if isinstance(x, Symbolic) and x.graph is not graph else x
              for x in inputs]
    outputs = graph.add_node(op, inputs, attrs, avals, user_source())
    tapes = context.recording_tapes.get()
    if tapes:
        record(op, attrs, inputs, outputs, tapes)
    return outputs


def register_structural(op):
    """Adds a structural entry to the table; one entry per TensorFlow op name."""
    if op.name in STRUCTURAL_OPS:
        raise KeyError(f"structural op {op.name!r} is registered twice")
    STRUCTURAL_OPS[op.name] = op
    return op


_VARIABLE_ONLY = never_bound("Variable read/assign")
READ_VARIABLE = register_structural(StructuralOp(
    name="ReadVariableOp", args=(), infer=_VARIABLE_ONLY, eager=_VARIABLE_ONLY,
    differentiable=False, stateful=True, variable_access="read", savable=True))
ASSIGN_VARIABLE = register_structural(StructuralOp(
    name="AssignVariableOp", args=("value",), infer=_VARIABLE_ONLY, eager=_VARIABLE_ONLY,
    differentiable=False, stateful=True, effect=True, variable_access="assign",
    savable=True))

_CALL_ONLY = never_bound("Call")
CALL = register_structural(StructuralOp(
    name="Call", args=("x0",), infer=_CALL_ONLY, eager=_CALL_ONLY, differentiable=False,
    subgraphs=("graph",), inlined=True))

def _nothing(*args, **attrs):
    return []


# A note, bound by the While gradient's reverse body: `computed` (the body's output,
# recomputed from the step's stored inputs) equals `stored` (the loop variable's value
# after the step, kept by the forward loop). graph/passes.py's reuse_stored_values makes
# the graph read `stored` instead and drops the note; run, it does nothing.
STORED_VALUE = register_structural(StructuralOp(
    name="StoredValue", args=("computed", "stored"), infer=_nothing, eager=_nothing,
    n_out=0, differentiable=False, batch=lambda op, inputs, attrs, batch: []))

_CUSTOM_GRADIENT_ONLY = never_bound("custom_gradient")
# What a tape records for a custom_gradient's call: each use is a copy whose gradient is
# the user's grad_fn (autodiff/custom.py).
CUSTOM_GRADIENT = register_structural(StructuralOp(
    name="CustomGradient", args=("x0",), infer=_CUSTOM_GRADIENT_ONLY,
    eager=_CUSTOM_GRADIENT_ONLY, grad=_CUSTOM_GRADIENT_ONLY))


@dataclass(frozen=True)
class CustomGradientIdentity(StructuralOp):
    """IdentityN: a custom gradient in a saved function, as TensorFlow saves one (the
    nodes are made by graph/identity_n.py). Each node holds a copy of IDENTITY_N with
    its own gradient, which a saved graph writes instead of args, saves and n_out:

    gradient:       graph(dy of each result, captured values) -> the input gradients that
                    are not None, or None when the gradient was not saved.
    gradient_slots: per custom-function input, its gradient's index among the gradient
                    graph's outputs (None: no gradient).
    n_results:      how many inputs are the body's results (they get no gradient).
    """

    gradient: object = None  # a graph.ir.Graph
    gradient_slots: tuple = ()
    n_results: int = 0


def _pass_through_avals(*inputs, **attrs):
    return [(x._shape, x.dtype) for x in inputs]


def _pass_through(*arrays, **attrs):
    return list(arrays)


def _gradient_not_saved(ctx, *dys):
    # TensorFlow's words (its missing space included): the loaded function has no gradient
    # for the node, and the Python grad_fn is not in the file.
    raise LookupError(
        "No gradient defined for operation'IdentityN' (op type: IdentityN). In general every "
        "operation must have an associated `@tf.RegisterGradient` for correct autodiff, "
        "which this op is lacking. If you want to pretend this operation is a constant in "
        "your program, you may insert `tf.stop_gradient`. This can be useful to silence the "
        "error in cases where you know gradients are not needed, e.g. the forward pass of "
        "tf.custom_gradient. Please see more details in "
        "https://www.tensorflow.org/api_docs/python/tf/custom_gradient.")


# Passes through (the body's results, the custom function's inputs, captured values);
# only its gradient differs from an identity. A node whose gradient was saved runs it
# (graph/identity_n.py).
IDENTITY_N = register_structural(CustomGradientIdentity(
    name="IdentityN", args=(), infer=_pass_through_avals, eager=_pass_through,
    grad=_gradient_not_saved, n_out=0, none_dys=True, smooth=False, savable=True))
