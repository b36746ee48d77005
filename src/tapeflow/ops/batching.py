"""Vectorization over a leading batch axis (the effect of JAX's vmap, TensorFlow's pfor).

A `Batched` value stands for a stack of B values of one shape: gradient rules see an
ordinary Tensor of the per-example shape, and every op they bind on it is answered by
the op's batching rule (ops/batch_rules.py), which runs the op once on the stacked
array. The jacobian runs one backward walk over a Batched stack of unit cotangents.
Rules bind ordinary ops on the stacked arrays, so the same walk runs eagerly, is traced
into a graph inside `@function`, and is recorded by outer tapes (Hessians).
"""

import contextlib

from ..errors import InvalidArgumentError
from ..tensor import ValuelessTensor, _next_id
from . import registry


class NotBatchable(Exception):
    """An op (or a Python use of a value) that has no vectorized form: the caller falls
    back to one backward pass per row, as TensorFlow's pfor falls back to a while loop."""


class Batched(ValuelessTensor):
    """B values of shape `_shape`, stacked in `inner` (shape (B,) + `_shape`).

    `diagonal`, when known, is a value v of the per-example shape such that, viewing
    one example's elements in flat order as a matrix (M, B), example b is zero except
    for column b, which equals v's column b: with M = 1, the stack is diag(v). A
    jacobian's seeds start so (the identity; for batch_jacobian, the identity repeated
    for every example), elementwise scaling and reshapes keep it, and a matrix product
    with such a stack is an outer product or a row scaling, not a matrix product.
    """

    __slots__ = ("inner", "diagonal")

    def __init__(self, inner, diagonal=None):
        self.inner = inner
        self.diagonal = diagonal
        self._value = None
        self._shape = tuple(inner._shape[1:])
        self.dtype = inner.dtype
        self._id = _next_id()
        self._var = None

    @property
    def batch_size(self):
        return self.inner._shape[0]

    def _no_value(self, what):
        raise NotBatchable(f"{what} of a value that stands for a batch of cotangents")

    def __repr__(self):
        return (f"<Batched: {self.batch_size} x shape={list(self._shape)}, "
                f"dtype={self.dtype.name}>")

    __str__ = __repr__


def batches(*ops):
    """Attaches the decorated rule(op, inputs, attrs, batch_size) -> outputs to `ops`
    (OpDefs) as their batching rule."""
    def attach(rule):
        for op in ops:
            if op.batch is not None:
                raise KeyError(f"op {op.name!r} has two batching rules")
            # The table's entries are frozen; their rules, written with the ops they
            # define, are attached once, as ops/batch_rules.py loads.
            object.__setattr__(op, "batch", rule)
        return rule
    return attach


class NoVectorizedForm:
    """The batching rule of an op that has none (`reason` says why): the walk raises
    NotBatchable, and the jacobian runs its per-row loop instead."""

    def __init__(self, reason):
        self.reason = reason

    def __call__(self, op, inputs, attrs, batch):
        raise NotBatchable(f"{op.name} has no vectorized form: {self.reason}")


def batch_bind(op, inputs, attrs):
    """bind() for an op with at least one Batched input."""
    batch = None
    for x in inputs:
        if type(x) is Batched:
            if batch is None:
                batch = x.batch_size
            elif x.batch_size != batch:
                raise InvalidArgumentError(
                    f"{op.name}: batched inputs of sizes {batch} and {x.batch_size} "
                    f"[Op:{op.name}]", op=op.name)
    op.infer(*inputs, **attrs)  # the per-example checks, with the user's shapes
    rule = op.batch or _rule_by_flags(op)
    return rule(op, inputs, attrs, batch)


def _rule_by_flags(op):
    from .batch_rules import elementwise_rule, reduction_rule
    if op.elementwise:
        return elementwise_rule
    if op.reduction is not None:
        return reduction_rule
    raise NotBatchable(f"{op.name} has no batching rule")


class BatchingInterpreter(registry.Interpreter):
    """Runs an op with a Batched input by its batching rule, once on the stacks; the
    rule binds ordinary ops on them, which go to the interpreter below (eager, or a
    graph builder: a jacobian inside tf.function), as do ops on no Batched input."""

    def process(self, op, inputs, attrs):
        for x in inputs:
            if type(x) is Batched:
                return batch_bind(op, inputs, attrs)
        return self.parent.process(op, inputs, attrs)


@contextlib.contextmanager
def vectorized():
    """Ops bound in the block that take a Batched input run their batching rule."""
    from . import batch_rules  # noqa: F401  (attaches the rules to the table's entries)
    with registry.interpreting(BatchingInterpreter()):
        yield


def stacked(x, batch):
    """The (B,) + shape array behind `x`, broadcasting an unbatched value."""
    if type(x) is Batched:
        return x.inner
    from .shape import broadcast_to, expand_dims
    if None not in x._shape:
        return broadcast_to(expand_dims(x, 0), (batch,) + tuple(x._shape))
    # A size known only at run time (a loop's history): broadcast by adding zeros.
    import numpy as np

    from ..tensor import wrap
    from .elementwise import add, logical_or
    zeros = wrap(np.zeros((batch,) + (1,) * len(x._shape), dtype=x.dtype._np))
    return (logical_or if x.dtype.is_bool else add)(expand_dims(x, 0), zeros)
