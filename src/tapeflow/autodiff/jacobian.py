"""Jacobians from a tape: one vectorized backward walk over a stack of unit cotangents.

The walk carries a Batched stack of seeds (rows of the identity) through the gradient
rules, whose ops run on whole stacks (ops/batching.py), so a Jacobian costs one backward
pass of matrix ops instead of one pass per output element. `parallel_iterations` bounds
the rows per pass (memory); `experimental_use_pfor=False`, or an op without a vectorized
form, runs the per-row loop instead, as TensorFlow falls back from pfor to a while loop.
Inside tf.function that loop is a tensor loop whose body is one backward pass, as in
TensorFlow's graph: a Python loop there would trace a backward pass per row, and the
kernel would grow with the number of rows (a 256-row Jacobian took 86 s to compile).
"""

import numpy as np

from .. import nest
from ..errors import UnimplementedError
from ..ops.batching import Batched, NotBatchable, stacked, vectorized
from ..tensor import Tensor, _Operators, wrap
from .tape import UnconnectedGradients, _source_id


def _as_target(target):
    if isinstance(target, Tensor):
        return target
    if isinstance(target, _Operators):
        return target._read_as_itself()
    raise ValueError(f"jacobian target must be a Tensor, got {type(target).__name__}")


def _chunks(n, parallel_iterations):
    size = n if not parallel_iterations else max(1, min(n, int(parallel_iterations)))
    return [(start, min(n, start + size)) for start in range(0, n, size)]


def _identity_rows(n, start, stop, dtype):
    """Rows start..stop of the n x n identity, made by ops (inside a function the
    identity is built by the kernel, not carried as a constant)."""
    from ..ops.registry import OPS, bind
    eye = bind(OPS["Eye"], [], {"num_rows": n, "num_columns": n, "dtype": dtype})
    if (start, stop) != (0, n):
        eye = eye[start:stop]
    return eye


def _backward_stack(tape, target, seed_stack, ids, diagonal=None):
    """One vectorized backward pass: for each source id, the stack (rows,) + source
    shape of gradients, or None where the source is unconnected."""
    rows = seed_stack._shape[0]
    with vectorized():
        grads = tape._run_backprop([target], [Batched(seed_stack, diagonal)], ids)
    out = []
    for sid in ids:
        g = grads.get(sid)
        out.append(None if g is None else g.inner if type(g) is Batched else stacked(g, rows))
    return out


def _vectorized_jacobian(tape, target, ids, parallel_iterations):
    from ..ops.shape import concat, reshape
    t_shape = tuple(target._shape)
    n = int(np.prod(t_shape, dtype=np.int64))
    parts = [[] for _ in ids]
    for start, stop in _chunks(n, parallel_iterations):
        seeds = reshape(_identity_rows(n, start, stop, target.dtype), (stop - start,) + t_shape)
        diagonal = None
        if (start, stop) == (0, n):  # the whole identity: diag(ones)
            from ..ops.creation import ones
            diagonal = ones(t_shape, dtype=target.dtype)
        for part, g in zip(parts, _backward_stack(tape, target, seeds, ids, diagonal)):
            part.append(g)
    return [None if part[0] is None else part[0] if len(part) == 1 else concat(part, 0)
            for part in parts]


def _finish(stack, source, lead_shape, mode):
    from ..ops.creation import zeros
    from ..ops.shape import reshape
    shape = tuple(lead_shape) + tuple(source.shape)
    if stack is None:
        return zeros(shape, dtype=source.dtype) if mode is UnconnectedGradients.ZERO else None
    return reshape(stack, shape)


def _known_shape(what, x):
    shape = tuple(x.shape)
    if None in shape:
        raise UnimplementedError(
            f"tapeflow computes a jacobian inside tf.function only when its {what} has a "
            f"shape known while tracing, not {list(shape)} (a list built in a tensor loop, say). "
            f"Use a GradientTape outside the function instead: its jacobian is computed "
            f"on the values the call returns", op="Jacobian")


def full_jacobian(tape, target, sources, mode, parallel_iterations, use_pfor):
    target = _as_target(target)
    _known_shape("target", target)
    flat_sources = nest.flatten(sources)
    ids = [_source_id(s) for s in flat_sources]
    if use_pfor and target.dtype.is_differentiable and all(target._shape):
        try:
            stacks = _vectorized_jacobian(tape, target, ids, parallel_iterations)
        except NotBatchable:
            pass
        else:
            result = [_finish(st, s, target._shape, mode) for st, s in zip(stacks, flat_sources)]
            return nest.pack_sequence_as(sources, result)
    return nest.pack_sequence_as(sources, _sequential_jacobian(tape, target, flat_sources,
                                                               ids, mode))


def _check_rank_at_least_2(shape):
    if len(shape) < 2:
        raise ValueError(f"Shape {tuple(shape)} must have rank at least 2")


def batch_jacobian(tape, target, source, mode, parallel_iterations, use_pfor):
    target = _as_target(target)
    t_shape, s_shape = tuple(target._shape), tuple(source.shape)
    # TensorFlow's order and wording (with_rank_at_least(2) on both, then the batch
    # dimensions). For a scalar target TensorFlow fails earlier with an IndexError, an
    # accident of its implementation; this raises the ValueError it means.
    _check_rank_at_least_2(t_shape)
    _check_rank_at_least_2(s_shape)
    _known_shape("target", target)
    _known_shape("source", source)
    if t_shape[0] != s_shape[0]:
        raise ValueError(
            f"Need first dimension of target shape ({t_shape}) and source shape "
            f"({s_shape}) to match.")
    if use_pfor and target.dtype.is_differentiable and all(t_shape) and all(s_shape):
        try:
            return _vectorized_batch_jacobian(tape, target, source, mode, parallel_iterations)
        except NotBatchable:
            pass
    return _sequential_batch_jacobian(tape, target, source, mode)


def _vectorized_batch_jacobian(tape, target, source, mode, parallel_iterations):
    # Examples are independent, so seed row j (a 1 at position j of every example)
    # yields row j of every example's Jacobian at once.
    from ..ops.shape import broadcast_to, concat, reshape, transpose
    t_shape, s_shape = tuple(target._shape), tuple(source.shape)
    per_example = int(np.prod(t_shape[1:], dtype=np.int64))
    sid = _source_id(source)
    parts = []
    for start, stop in _chunks(per_example, parallel_iterations):
        rows = stop - start
        eye = reshape(_identity_rows(per_example, start, stop, target.dtype),
                      (rows, 1) + t_shape[1:])
        seeds = broadcast_to(eye, (rows,) + t_shape)
        diagonal = None
        if rows == per_example:  # the identity for every example
            from ..ops.creation import ones
            diagonal = ones(t_shape, dtype=target.dtype)
        (g,) = _backward_stack(tape, target, seeds, [sid], diagonal)
        if g is None:
            return _unconnected(t_shape, s_shape, target, source, mode)
        parts.append(g)
    stack = parts[0] if len(parts) == 1 else concat(parts, 0)  # (rows, batch, *s_rest)
    rank = len(stack._shape)
    stack = transpose(stack, [1, 0] + list(range(2, rank)))
    return reshape(stack, t_shape + s_shape[1:])


def _unconnected(t_shape, s_shape, target, source, mode):
    """An unconnected source's batch Jacobian: zeros, never None, whatever `mode` says
    (TensorFlow keeps its older behaviour here). Their dtype is the target's, except with
    UnconnectedGradients.ZERO, where TensorFlow stacks zero gradients: the source's."""
    from ..ops.creation import zeros
    dtype = source.dtype if mode is UnconnectedGradients.ZERO else target.dtype
    return zeros(t_shape + s_shape[1:], dtype=dtype)


# -- the per-row loop -----------------------------------------------------------------------

def _unit_seed(shape, dtype, flat_index, n):
    seed = np.zeros(n, dtype=dtype._np)
    seed[flat_index] = 1
    return wrap(seed.reshape(shape))


def _assemble(rows, source, lead_shape, mode, stack_axis=0):
    """Stacks per-output gradient rows into lead_shape + source.shape (None if unconnected)."""
    from ..ops.creation import zeros, zeros_like
    from ..ops.shape import reshape, stack
    src_shape = tuple(source.shape)
    if all(r is None for r in rows):
        if mode is UnconnectedGradients.ZERO:
            return zeros(tuple(lead_shape) + src_shape, dtype=source.dtype)
        return None
    rows = [zeros_like(source) if r is None else r for r in rows]
    if not rows:
        return zeros(tuple(lead_shape) + src_shape, dtype=source.dtype)
    return reshape(stack(rows, axis=stack_axis), tuple(lead_shape) + src_shape)


def _in_function():
    from .. import context
    return context.current_graph.get() is not None


def _loopable(target):
    # one_hot makes the seeds: its dtypes
    return target.dtype.is_floating or target.dtype.is_complex


def _looped_rows(tape, target, ids, seed_for, rows):
    """The gradients w.r.t. `ids` of `rows` backward passes, pass k seeded by
    seed_for(k), stacked along a first axis of `rows`, in one tensor loop: pass 0 runs
    before it (as in map_fn), which also finds the sources it reaches (the same for
    every pass). None for a source no pass reaches."""
    from ..ops.functional import _collect

    def grads(k):
        found = tape._run_backprop([target], [seed_for(k)], reached)
        return [found[sid] for sid in reached]

    first = tape._run_backprop([target], [seed_for(0)], ids)
    reached = [sid for sid in ids if first.get(sid) is not None]
    if not reached:
        return [None for _ in ids]
    stacks = iter(_collect(([first[sid] for sid in reached], ()),
                           lambda k, state: (grads(k), state), rows, reverse_order=False))
    return [next(stacks) if sid in reached else None for sid in ids]


def _unit_rows_seed(shape, dtype, n):
    """seed_for(k) of a Jacobian's loop: the one-hot row k of n, in the target's shape."""
    from ..ops.indexing import one_hot
    from ..ops.shape import reshape
    return lambda k: reshape(one_hot(k, n, dtype=dtype), shape)


def _sequential_jacobian(tape, target, flat_sources, ids, mode):
    n = int(np.prod(target._shape, dtype=np.int64))
    if n > 1 and _in_function() and _loopable(target):
        seed_for = _unit_rows_seed(target._shape, target.dtype, n)
        stacks = _looped_rows(tape, target, ids, seed_for, n)
        return [_finish(st, s, target._shape, mode) for st, s in zip(stacks, flat_sources)]
    rows = [[] for _ in flat_sources]
    for k in range(n):
        seed = _unit_seed(target._shape, target.dtype, k, n)
        grads = tape._run_backprop([target], [seed], ids)
        for j, sid in enumerate(ids):
            rows[j].append(grads.get(sid))
    return [_assemble(r, s, target._shape, mode) for r, s in zip(rows, flat_sources)]


def _sequential_batch_jacobian(tape, target, source, mode):
    from ..ops.shape import reshape, stack
    t_shape, s_shape = tuple(target._shape), tuple(source.shape)
    batch = t_shape[0]
    per_example = int(np.prod(t_shape[1:], dtype=np.int64))
    sid = _source_id(source)
    if per_example > 1 and _in_function() and _loopable(target):
        from ..ops.shape import broadcast_to, transpose
        one_row = _unit_rows_seed((1,) + t_shape[1:], target.dtype, per_example)
        (stacked_rows,) = _looped_rows(tape, target, [sid],
                                       lambda j: broadcast_to(one_row(j), t_shape), per_example)
        if stacked_rows is None:
            return _unconnected(t_shape, s_shape, target, source, mode)
        rank = len(stacked_rows._shape)  # (per_example, batch, *source_rest)
        stacked_rows = transpose(stacked_rows, [1, 0] + list(range(2, rank)))
        return reshape(stacked_rows, t_shape + s_shape[1:])
    rows = []
    for j in range(per_example):
        seed = np.zeros((batch, per_example), dtype=target.dtype._np)
        seed[:, j] = 1
        grads = tape._run_backprop([target], [wrap(seed.reshape(t_shape))], [sid])
        rows.append(grads.get(sid))
    if all(r is None for r in rows):  # unconnected, or no rows (an empty example)
        return _unconnected(t_shape, s_shape, target, source, mode)
    from ..ops.creation import zeros_like
    rows = [zeros_like(source) if r is None else r for r in rows]
    stacked_rows = stack(rows, axis=1)  # (batch, per_example, *source_rest)
    return reshape(stacked_rows, t_shape + s_shape[1:])
