"""Lowerings of the random ops: draws passed in by the caller at top level, drawn in the
kernel from a Generator argument inside branches and loops (ops/random.py, streams)."""

import math

import numpy as np

from ...ops.random import (
    RANDOM_SHUFFLE,
    RANDOM_STANDARD_NORMAL,
    RANDOM_UNIFORM,
    RANDOM_UNIFORM_INT,
    TRUNCATED_NORMAL,
)
from .generator import Param, lowers
from .text import Unsupported, np_name, tuple_expr


def stream(cg, node):
    """The kernel's Generator argument for a random op inside a branch or loop (or one
    that draws in the kernel at top level: the caller makes it per call).

    At top level each node has a Generator of its own, made in node order, as eager
    calls take the next counter of their seed pair one after another: two nodes with
    equal attrs (one traced call applied twice) draw as two eager calls do, not one
    stream. Inside branches and loops the key names the stream every run draws from."""
    from ...ops.random import stream_key
    key = stream_key(node.attrs)
    name = cg.streams.get(key) if cg.nesting else None
    if name is None:
        name = cg.fresh("G")
        if cg.nesting:
            cg.streams[key] = name
        cg.params.append(Param(name, "stream", key, None, 0))
        cg.used.add(name)
    return name


@lowers(RANDOM_STANDARD_NORMAL, RANDOM_UNIFORM, TRUNCATED_NORMAL, RANDOM_UNIFORM_INT)
def _random(cg, node):
    y = node.outputs[0]
    if cg.nesting:  # runs a number of times known at run time: draws in the kernel
        attrs = node.attrs
        shape = attrs["shape"]
        if node.op is RANDOM_UNIFORM_INT and math.prod(shape) == 0:
            expr = f"zeros_array({tuple_expr(shape)}, {np_name(y.dtype)})"
        else:
            expr = node.op.emit.format(  # the op's draw from the Generator argument
                g=stream(cg, node), shape=tuple_expr(shape), dtype=np_name(y.dtype),
                minval=attrs.get("minval"), maxval=attrs.get("maxval"))
        cg.output(node, cg.assign(expr))
        return
    caller_draws(cg, node)


def caller_draws(cg, node):
    """A top-level draw that needs no tensor input: drawn by the caller with NumPy's
    Generator (a fresh counter per run), passed in."""
    y = node.outputs[0]
    name = cg.fresh("R")
    cg.params.append(Param(name, "random", node, y.dtype._np, len(y._shape)))
    cg.used.add(name)
    cg.output(node, name)


@lowers(RANDOM_SHUFFLE)
def _shuffle(cg, node):
    x = cg.val(node.inputs[0])
    if x.rank == 0 or (x.shape[0] is not None and x.shape[0] <= 1):
        cg.define(node.outputs[0], x)
        return
    if cg.nesting:  # Fisher-Yates over n <= 1 rows draws nothing, as the NumPy kernel
        rows = f"{cg.array(x)}[{stream(cg, node)}.permutation({cg.array(x)}.shape[0])]"
        cg.output(node, cg.assign(rows))
        return
    if x.shape[0] is None:
        raise Unsupported(f"RandomShuffle of a leading dimension unknown at trace time at "
                          f"{node.where()}")
    perm = cg.fresh("P")
    cg.params.append(Param(perm, "permutation", node, np.dtype(np.int64), 1))
    cg.used.add(perm)
    cg.output(node, cg.assign(f"{cg.array(x)}[{perm}]"))
