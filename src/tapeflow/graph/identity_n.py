"""IdentityN: a custom gradient as a graph node, the form it takes in a saved function.

While tracing, a custom_gradient's grad_fn is Python code that the function's backward
calls again (autodiff/custom.py). A saved function keeps no Python code, so, as
TensorFlow does, saving turns each custom gradient into one IdentityN node: it passes
through the body's results, the custom function's inputs and the values its gradient
reads, and its gradient runs the grad_fn traced into a graph of its own (or, saved
without custom gradients, is missing: LookupError, as in TensorFlow).
"""

from dataclasses import dataclass

from .ir import Graph
from ..ops.registry import OpDef


def _infer(*inputs, **attrs):
    return [(x._shape, x.dtype) for x in inputs]


def _eager(*arrays, **attrs):
    return list(arrays)


def _no_gradient(ctx, *dys):
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


def _traced_gradient(ctx, *dys):
    from ..ops.creation import zeros_like
    from .execute import run_graph
    op = ctx.op
    n_results, n_inputs = op.n_results, len(op.gradient_slots)
    results = [getattr(ctx, f"x{k}") for k in range(n_results)]
    captured = [getattr(ctx, f"x{k}") for k in range(n_results + n_inputs, len(op.args))]
    seeds = [zeros_like(y) if dy is None else dy for y, dy in zip(results, dys)]
    grads, _ = run_graph(op.gradient, seeds + captured,
                         [v.read_value() for v in op.gradient.variables])
    return ([None] * n_results
            + [None if slot is None else grads[slot] for slot in op.gradient_slots]
            + [None] * len(captured))


@dataclass(frozen=True)
class CustomGradientIdentity(OpDef):
    """IdentityN of (the body's results, the custom function's inputs, captured values).

    gradient:       graph(dy of each result, captured values) -> the input gradients that
                    are not None, or None when the gradient was not saved.
    gradient_slots: per custom-function input, its gradient's index among the gradient
                    graph's outputs (None: no gradient).
    n_results:      how many inputs are the body's results (they get no gradient).
    """

    gradient: Graph | None = None
    gradient_slots: tuple = ()
    n_results: int = 0


def identity_n(n_results, gradient_slots, n_captured, gradient):
    """The IdentityN op of one custom gradient (its own OpDef: the gradient is its own)."""
    n = n_results + len(gradient_slots) + n_captured
    args = tuple(f"x{k}" for k in range(n))
    saves = args[:n_results] + args[n_results + len(gradient_slots):]
    return CustomGradientIdentity(
        name="IdentityN", args=args, infer=_infer, eager=_eager, emit="identity_n",
        grad=_no_gradient if gradient is None else _traced_gradient, saves=saves, n_out=n,
        none_dys=True, smooth=False, gradient=gradient, gradient_slots=tuple(gradient_slots),
        n_results=n_results, lowerings=_LOWERINGS)


# Every custom gradient's IdentityN compiles alike: their entries share the backends'
# lowerings, which a backend attaches to this one (`@lowers(IDENTITY_N)`).
_LOWERINGS = {}
IDENTITY_N = identity_n(0, (), 0, None)
