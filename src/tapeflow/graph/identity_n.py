"""IdentityN: a custom gradient as a graph node, the form it takes in a saved function.

While tracing, a custom_gradient's grad_fn is Python code that the function's backward
calls again (autodiff/custom.py). A saved function keeps no Python code, so, as
TensorFlow does, saving turns each custom gradient into one IdentityN node: it passes
through the body's results, the custom function's inputs and the values its gradient
reads, and its gradient runs the grad_fn traced into a graph of its own (or, saved
without custom gradients, is missing: LookupError, as in TensorFlow). Each node holds a
copy of the table's structural entry IDENTITY_N (ops/structural.py) with its gradient.
"""

from ..ops.structural import IDENTITY_N

__all__ = ["IDENTITY_N", "identity_n"]


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


def identity_n(n_results, gradient_slots, n_captured, gradient):
    """The IdentityN op of one custom gradient: IDENTITY_N's copy holding its gradient
    (a graph, or None when it was not saved). Every copy shares the entry's lowerings."""
    n = n_results + len(gradient_slots) + n_captured
    args = tuple(f"x{k}" for k in range(n))
    saves = args[:n_results] + args[n_results + len(gradient_slots):]
    return IDENTITY_N.specialized(
        args=args, saves=saves, n_out=n,
        grad=IDENTITY_N.grad if gradient is None else _traced_gradient, gradient=gradient,
        gradient_slots=tuple(gradient_slots), n_results=n_results)
