"""Iterating a `tf.data.Dataset` inside tf.function, as TensorFlow does: the graph holds
an iterator over the dataset and a loop that asks it for the next element, so the
function is traced once and reads the dataset anew at every call (a shuffled dataset
gives a new order each time, a `map` runs per element per call).

Two host nodes carry this (TensorFlow's AnonymousIteratorV3 and
IteratorGetNextAsOptional): `AnonymousIteratorV3` makes a Python iterator over the
dataset and returns its handle (an int64 scalar naming it in `_ITERATORS`);
`IteratorGetNextAsOptional` returns whether there was a next element and its tensors
(zeros of the element spec's shape once the iterator is exhausted). Both run Python,
so a function holding them runs on the NumPy interpreter, not compiled: the elements
come from Python generators (map and filter functions, shuffle buffers, files), which a
Numba kernel cannot call into.

A dataset passed as an argument is keyed by its element_spec (another dataset of the
same spec reuses the trace): the trace sees an `ArgumentDataset`, a placeholder for an
int64 handle of the call's dataset (`_ARGUMENTS`), and the iterator node rebuilds the
pipeline the function applied to it (`ds.take(3)`, `ds.enumerate()`) around the dataset
of the call. So does it around the values of traced tensors that a pipeline starts from
(`from_tensor_slices(x)` of an argument `x`): the sources' `_graph_inputs()` are the
node's inputs.

Inside a tensor loop the gradient replays a step's graph: the next-element node is then
marked as drawing (ops/draws.py), so that the replay reads the elements the forward
loop got instead of advancing the iterator.
"""

import collections
import copy
import itertools
import weakref

import numpy as np

from .. import context, dtypes, errors, nest
from ..ops.structural import StructuralOp, bind_structural, register_structural
from ..ops.registry import never_bound
from ..tensor import convert_to_tensor, wrap

# Live iterators by handle. A loop left by `break` leaves its iterator here; the oldest
# are dropped past this many, as no loop nests that deep.
_MAX_LIVE_ITERATORS = 1024
_ITERATORS = collections.OrderedDict()
_HANDLES = itertools.count(1)
# The datasets of the running calls, by the handle their argument placeholder receives.
_ARGUMENTS = weakref.WeakValueDictionary()


def argument_handle(dataset):
    """The int64 scalar a call passes for `dataset` (an argument of a tf.function)."""
    _ARGUMENTS[id(dataset)] = dataset
    return convert_to_tensor(np.int64(id(dataset)))


def call_dataset(handle):
    try:
        return _ARGUMENTS[int(handle.numpy())]
    except KeyError:
        raise errors.FailedPreconditionError(
            "the dataset passed to this tf.function is gone") from None


def _graph_sources(dataset):
    """The datasets of a pipeline that hold tensors of the graph being traced (a dataset
    argument's handle, from_tensor_slices of a traced tensor), in a fixed order."""
    found = []

    def walk(ds):
        if ds._graph_inputs() and all(ds is not f for f in found):
            found.append(ds)
        for inner in _inputs_of(ds):
            walk(inner)

    walk(dataset)
    return found


def _inputs_of(dataset):
    if hasattr(dataset, "_input"):
        return [dataset._input]
    inputs = getattr(dataset, "_datasets", None)
    if inputs is None:
        return []
    return list(inputs.values()) if isinstance(inputs, dict) else list(inputs)


def _rebased(dataset, actual):
    """`dataset` with each ArgumentDataset replaced by the call's dataset (`actual`, by
    id): the transformations on the way are shallow copies, the rest is shared."""
    if not actual:
        return dataset
    if id(dataset) in actual:
        return actual[id(dataset)]
    if hasattr(dataset, "_input"):
        copied = copy.copy(dataset)
        copied._input = _rebased(dataset._input, actual)
        copied._cardinality = copied._count_from(copied._input._cardinality)
        return copied
    inputs = getattr(dataset, "_datasets", None)
    if inputs is None:
        return dataset
    copied = copy.copy(dataset)
    if isinstance(inputs, dict):
        copied._datasets = {k: _rebased(d, actual) for k, d in inputs.items()}
    else:
        copied._datasets = type(inputs)(_rebased(d, actual) for d in inputs)
    copied._cardinality = copied._count_from([d._cardinality for d in _inputs_of(copied)])
    return copied


def _tracing():
    return context.current_graph.get() is not None


# -- the nodes -----------------------------------------------------------------------------

def _pipeline(node, args):
    """The dataset a pipeline node (MakeIterator, DatasetCardinality) reads at this run."""
    actual, values = {}, iter(args)
    for source in node.attrs["sources"]:
        inputs = [next(values) for _ in source._graph_inputs()]
        actual[id(source)] = source._with_graph_inputs(inputs)
    return _rebased(node.attrs["dataset"], actual)


def _bind_pipeline(op, dataset):
    """A node of `op` reading `dataset` in the graph being traced: its int64 output."""
    sources = _graph_sources(dataset)
    inputs = [t for source in sources for t in source._graph_inputs()]
    op = op.specialized(args=tuple(f"x{i}" for i in range(len(inputs))))
    output, = bind_structural(op, inputs, {"dataset": dataset, "sources": tuple(sources)},
                              [((), dtypes.int64)])
    return output


def _cardinality_replay(node, args):
    if _tracing():
        return bind_structural(node.op, args, node.attrs, [((), dtypes.int64)])
    return [wrap(np.asarray(_pipeline(node, args)._cardinality, np.int64))]


def _make_iterator_replay(node, args):
    if _tracing():  # inlined into a graph being traced: the node again
        return bind_structural(node.op, args, node.attrs, [((), dtypes.int64)])
    dataset = _pipeline(node, args)
    handle = next(_HANDLES)
    _ITERATORS[handle] = _Reading(iter(dataset))
    while len(_ITERATORS) > _MAX_LIVE_ITERATORS:
        _ITERATORS.popitem(last=False)
    return [wrap(np.asarray(handle, np.int64))]


def _element_avals(element_spec):
    return [(tuple(s.shape), s.dtype) for s in nest.flatten(element_spec)]


def _get_next_replay(node, args):
    avals = [((), dtypes.bool)] + _element_avals(node.attrs["element_spec"])
    if _tracing():
        return bind_structural(node.op, args, node.attrs, avals)
    handle = int(args[0].numpy())
    reading = _ITERATORS.get(handle)
    element = None
    if reading is not None:
        try:
            element = next(reading.iterator)
        except StopIteration:
            del _ITERATORS[handle]
    if element is None:
        # Past the end: zeros shaped as the last element, so that a loop variable keeps
        # one shape across the steps (its history stacks, for a gradient around the loop).
        shapes = reading.shapes if reading is not None and reading.shapes else [
            tuple(0 if d is None else d for d in shape) for shape, _ in avals[1:]]
        return [wrap(np.asarray(False))] + [
            wrap(np.zeros(shape, dtype.as_numpy_dtype))
            for shape, (_, dtype) in zip(shapes, avals[1:])]
    leaves = [convert_to_tensor(t) for t in nest.flatten(element)]
    reading.shapes = [t._shape for t in leaves]
    return [wrap(np.asarray(True))] + leaves


class _Reading:
    """A live iterator, and the shapes of the last element it gave."""

    __slots__ = ("iterator", "shapes")

    def __init__(self, iterator):
        self.iterator, self.shapes = iterator, None


_ITERATOR_ONLY = never_bound("tf.data iterator")
MAKE_ITERATOR = register_structural(StructuralOp(
    name="AnonymousIteratorV3", args=(), infer=_ITERATOR_ONLY, eager=_ITERATOR_ONLY,
    differentiable=False, stateful=True, effect=True, replay=_make_iterator_replay))
GET_NEXT = register_structural(StructuralOp(
    name="IteratorGetNextAsOptional", args=("iterator",), infer=_ITERATOR_ONLY,
    eager=_ITERATOR_ONLY, differentiable=False, stateful=True, effect=True,
    replay=_get_next_replay, drawn_outputs=lambda node: list(node.outputs),
    replay_drawn=lambda node, args, values: list(values)))


CARDINALITY = register_structural(StructuralOp(
    name="DatasetCardinality", args=(), infer=_ITERATOR_ONLY, eager=_ITERATOR_ONLY,
    differentiable=False, stateful=True, replay=_cardinality_replay))


def cardinality_in_graph(dataset):
    """Dataset.cardinality() while tracing, for a pipeline that starts from graph tensors
    (a dataset argument): known only at each call."""
    if not _graph_sources(dataset):
        return None
    return _bind_pipeline(CARDINALITY, dataset)


class GraphIterator:
    """An iterator over `dataset` in the graph being traced."""

    def __init__(self, dataset):
        self.element_spec = dataset.element_spec
        self._handle = _bind_pipeline(MAKE_ITERATOR, dataset)

    def get_next_as_optional(self):
        """(has_value, element): a bool scalar, and the next element (zeros past the
        end), each a graph tensor."""
        outputs = bind_structural(GET_NEXT, [self._handle],
                                  {"element_spec": self.element_spec, "draws": True},
                                  [((), dtypes.bool)] + _element_avals(self.element_spec))
        return outputs[0], nest.pack_sequence_as(self.element_spec, outputs[1:])


def reduce_in_graph(dataset, state, reduce_func):
    """Dataset.reduce while tracing: one while loop over the dataset's iterator."""
    from ..ops.control import while_loop
    iterator = GraphIterator(dataset)
    has_value, element = iterator.get_next_as_optional()

    def more(has_value, element, state):
        return has_value

    def step(has_value, element, state):
        state = nest.map_structure(convert_to_tensor, reduce_func(state, element))
        has_value, element = iterator.get_next_as_optional()
        return has_value, element, state

    return while_loop(more, step, (has_value, element, state))[2]
