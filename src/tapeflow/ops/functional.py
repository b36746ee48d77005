"""Higher-order functions over the leading axis: tf.map_fn, tf.scan, tf.foldl, tf.foldr
(built on tf.while_loop, whose iterations push each result onto a list buffer: eagerly
a Python loop, inside tf.function one While node, gradients through it), and
tf.vectorized_map (the function run once on whole stacks, by the batching rules)."""

from .. import nest
from . import rules
from .batching import Batched, NotBatchable, stacked, vectorized
from .control import while_loop
from .lists import list_push_back
from .shape import expand_dims, reverse, shape


def _leaves(elems, what="elems"):
    leaves = [rules.as_tensor(x) for x in nest.flatten(elems)]
    if not leaves:
        raise ValueError(f"{what} must be a Tensor or (possibly nested) sequence of Tensors.")
    for x in leaves:
        if not x._shape:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    return leaves


def _length(leaves):
    n = leaves[0]._shape[0]
    return shape(leaves[0])[0] if n is None else n


def _at(leaves, elems, i):
    return nest.pack_sequence_as(elems, [x[i] for x in leaves])


def _collect(first, step, n, reverse_order):
    """Runs `step(i, state) -> (outputs, state)` for i = 1 .. n - 1 after `first` (the
    outputs and state of i = 0), in a while_loop whose lists gather every output; the
    stacked outputs, in the order of the elements."""
    outputs, state = first
    flat = [expand_dims(rules.as_tensor(o), 0) for o in nest.flatten(outputs)]

    def body(i, buffers, state):
        new_outputs, new_state = step(i, state)
        return (i + 1, [list_push_back(b, rules.as_tensor(o))
                        for b, o in zip(buffers, nest.flatten(new_outputs))], new_state)

    _, buffers, _ = while_loop(lambda i, buffers, state: i < n, body, [1, flat, state])
    if reverse_order:
        buffers = [reverse(b, [0]) for b in buffers]
    return nest.pack_sequence_as(outputs, buffers)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """fn applied to each element of `elems` along its first axis, the results stacked
    (tf.map_fn); `elems` and fn's result may be nested structures.

    >>> import tapeflow as tf
    >>> tf.map_fn(lambda x: x * 2, tf.constant([1.0, 2.0, 3.0])).numpy()
    array([2., 4., 6.], dtype=float32)
    """
    leaves = _leaves(elems)
    n = _length(leaves)
    first = fn(_at(leaves, elems, 0))
    return _collect((first, ()), lambda i, state: (fn(_at(leaves, elems, i)), state), n,
                    reverse_order=False)


def _order(leaves, reverse_order):
    return [reverse(x, [0]) for x in leaves] if reverse_order else leaves


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The running results of a = fn(a, x) over the elements (tf.scan): a starts as
    `initializer`, or as the first element (which is then also the first result).

    >>> import tapeflow as tf
    >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4])).numpy()
    array([ 1,  3,  6, 10], dtype=int32)
    """
    leaves = _order(_leaves(elems), reverse)
    n = _length(leaves)
    x0 = _at(leaves, elems, 0)
    a = x0 if initializer is None else fn(nest.map_structure(rules.as_tensor, initializer), x0)

    def step(i, state):
        a = fn(state, _at(leaves, elems, i))
        return a, a

    return _collect((a, a), step, n, reverse_order=reverse)


def _fold(fn, elems, initializer, reverse_order):
    leaves = _order(_leaves(elems), reverse_order)
    n = _length(leaves)
    if initializer is None:
        a, start = _at(leaves, elems, 0), 1
    else:
        a, start = nest.map_structure(rules.as_tensor, initializer), 0

    def body(i, a):
        return i + 1, fn(a, _at(leaves, elems, i))

    return while_loop(lambda i, a: i < n, body, [start, a])[1]


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn folded over the elements from the first: fn(fn(a, x0), x1) ... (tf.foldl)."""
    return _fold(fn, elems, initializer, reverse_order=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn folded over the elements from the last (tf.foldr)."""
    return _fold(fn, elems, initializer, reverse_order=True)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """fn applied to every element of `elems` at once: fn runs one time on the whole
    stacks, each op by its batching rule (tf.vectorized_map). An op without one falls
    back to map_fn's loop (or raises, with fallback_to_while_loop=False).

    >>> import tapeflow as tf
    >>> tf.vectorized_map(lambda x: tf.reduce_sum(x * x), tf.constant([[1., 2.], [3., 4.]])).numpy()
    array([ 5., 25.], dtype=float32)
    """
    leaves = _leaves(elems)
    n = _length(leaves)
    try:
        with vectorized():
            outputs = fn(nest.pack_sequence_as(elems, [Batched(x) for x in leaves]))
            flat = [o.inner if type(o) is Batched else stacked(rules.as_tensor(o), n)
                    for o in nest.flatten(outputs)]
    except NotBatchable:
        if not fallback_to_while_loop:
            raise
        return map_fn(fn, elems)
    return nest.pack_sequence_as(outputs, flat)


__all__ = ["map_fn", "scan", "foldl", "foldr", "vectorized_map"]
