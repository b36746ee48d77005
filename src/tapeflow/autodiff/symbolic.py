"""tf.gradients and tf.hessians: gradients of values of the function being traced with
respect to others of it, read off the graph's nodes instead of a tape (TensorFlow 1's
way, which TensorFlow 2 keeps inside tf.function). The nodes already hold every value
a gradient rule may read, so they make the tape entries of the one reverse walk."""

import math

from .. import context, nest
from ..ops.batching import Batched, stacked, vectorized
from ..ops.creation import eye, ones_like, zeros_like
from ..ops.registry import TapeEntry
from ..ops.shape import reshape
from ..tensor import convert_to_tensor
from .backprop import backprop
from .tape import UnconnectedGradients, unconnected_mode


def _graph(what):
    graph = context.current_graph.get()
    if graph is None:
        raise RuntimeError(f"tf.{what} is not supported when eager execution is enabled. "
                           f"Use tf.GradientTape instead.")
    return graph


def _entries(graph, stopped):
    entries = []
    for node in graph.nodes:
        op = node.op
        if not op.differentiable or (stopped and all(y._id in stopped for y in node.outputs)):
            continue  # as a tape, which records no op without a gradient
        saved = tuple(node.inputs[i] if i >= 0 else node.outputs[-1 - i]
                      for i in op.save_index)
        entries.append(TapeEntry(op, node.attrs, list(node.inputs), list(node.outputs), saved))
    return entries


def _source_ids(graph, x):
    """The ids a gradient with respect to `x` collects: a tensor's own, or for a Variable
    those of its reads in the graph (each read is a node output of its own)."""
    if hasattr(x, "read_value") and hasattr(x, "assign"):
        return [y._id for node in graph.nodes for y in node.outputs
                if getattr(y, "_var", None) is x]
    return [x._id]


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """The sum of the gradients of `ys` (weighted by `grad_ys`) with respect to each of
    `xs`, inside a tf.function (tf.gradients); a list, None (or zeros) where unconnected.

    >>> import tapeflow as tf
    >>> @tf.function
    ... def slope(x):
    ...     return tf.gradients(x * x * x, x)[0]
    >>> slope(tf.constant(2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=12.0>
    """
    graph = _graph("gradients")
    ys = [convert_to_tensor(y) for y in nest.flatten(ys)]
    xs = nest.flatten(xs)
    if grad_ys is None:
        seeds = [ones_like(y) for y in ys]
    else:
        seeds = [ones_like(y) if g is None else convert_to_tensor(g, dtype=y.dtype)
                 for y, g in zip(ys, nest.flatten(grad_ys))]
    stopped = {t._id for t in nest.flatten(stop_gradients)} if stop_gradients else set()
    ids = [_source_ids(graph, x) for x in xs]
    found = backprop(_entries(graph, stopped), ys, seeds, [i for group in ids for i in group])
    zeros = unconnected_mode(unconnected_gradients) is UnconnectedGradients.ZERO
    out = []
    for x, group in zip(xs, ids):
        parts = [found[i] for i in group if found.get(i) is not None]
        g = None
        for part in parts:
            g = part if g is None else g + part
        out.append(zeros_like(x) if g is None and zeros else g)
    return out


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """For each of `xs`, the Hessian of sum(ys) with respect to it, of shape
    x.shape + x.shape, inside a tf.function (tf.hessians): the gradient's Jacobian, by
    one vectorized reverse walk over the graph.

    >>> import tapeflow as tf
    >>> @tf.function
    ... def curvature(x):
    ...     return tf.hessians(tf.reduce_sum(x ** 3), x)[0]
    >>> curvature(tf.constant([1.0, 2.0])).numpy()
    array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    graph = _graph("hessians")
    xs = nest.flatten(xs)
    total = ys if not isinstance(ys, (list, tuple)) else nest.flatten(ys)
    out = []
    for x in xs:
        (g,) = gradients(total, [x])
        if g is None:
            out.append(None)
            continue
        if None in x._shape:
            raise ValueError(f"tf.hessians needs the shape of x known when the function is "
                             f"traced, got {list(x._shape)}")
        n = math.prod(x._shape)
        flat = reshape(g, [-1])
        seeds = Batched(eye(n, dtype=g.dtype))
        with vectorized():
            rows = backprop(_entries(graph, set()), [flat], [seeds], [x._id])
        rows = rows.get(x._id)
        if rows is None:  # the gradient does not depend on x: a zero Hessian
            out.append(zeros_like(reshape(g, tuple(x._shape) + (1,) * len(x._shape)))
                       * zeros_like(reshape(x, (1,) * len(x._shape) + tuple(x._shape))))
            continue
        stack = rows.inner if type(rows) is Batched else stacked(rows, n)
        out.append(reshape(stack, tuple(x._shape) + tuple(x._shape)))
    return out


__all__ = ["gradients", "hessians"]
