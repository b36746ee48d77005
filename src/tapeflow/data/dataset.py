"""`tf.data.Dataset`: input pipelines as chains of Python iterators over structures of
Tensors (a tensor, or tuples and dicts of them), with TensorFlow's element specs,
cardinalities and reprs.

A dataset runs eagerly, element by element. Inside a tf.function, a `for x in dataset`
loop (AutoGraph) and `reduce` are one graph loop over an iterator node that reads the
dataset at every call, and a dataset argument is keyed by its element_spec
(data/iteration.py).
"""

import itertools
import os

import numpy as np

from .. import context, dtypes, errors, nest, ops
from . import file_cache, iteration
from ..graph.function import TensorSpec, function
from ..graph.trace import init_scope
from ..tensor import Tensor, _Operators, constant, convert_to_tensor, is_symbolic

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _as_structure(value):
    """An element's structure: tuples and dicts are structure, everything else (lists,
    arrays, numbers) is converted to one Tensor, as tf.data does."""
    if isinstance(value, tuple):
        return type(value)(*(_as_structure(v) for v in value)) if hasattr(
            value, "_fields") else tuple(_as_structure(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_structure(v) for k, v in value.items()}
    return convert_to_tensor(value)


def _spec_of(element):
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), element)


def _call(fn, element):
    """`fn` applied as tf.data applies it: a tuple element's components as arguments."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


class Dataset:
    """A sequence of elements, each a Tensor or a tuple or dict of them.

    >>> import tapeflow as tf
    >>> ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5]).map(lambda x: x * 2)
    >>> list(ds.batch(2).as_numpy_iterator())
    [array([2, 4], dtype=int32), array([6, 8], dtype=int32), array([10], dtype=int32)]
    """

    _repr_name = None

    def __init__(self, element_spec, cardinality):
        self._element_spec = element_spec
        self._cardinality = cardinality

    def _elements(self):
        """A fresh Python iterator over the elements."""
        raise NotImplementedError

    # -- reading it ---------------------------------------------------------------------------
    def _graph_iterator(self):
        """An iterator in the graph being traced (AutoGraph's `for` over a dataset)."""
        return iteration.GraphIterator(self)

    def __iter__(self):
        elements = self._elements()
        while True:
            # Eager even inside a trace: a dataset's elements are inputs, not graph ops.
            with init_scope():
                try:
                    element = next(elements)
                except StopIteration:
                    return
            yield element

    def as_numpy_iterator(self):
        """The elements with NumPy values (same structure)."""
        for element in self:
            yield nest.map_structure(lambda t: t.numpy(), element)

    @property
    def element_spec(self):
        """The structure of TensorSpecs of its elements (None for an unknown dimension)."""
        return self._element_spec

    def cardinality(self):
        """The number of elements as an int64 scalar: -1 (tf.data.INFINITE_CARDINALITY)
        for an infinite dataset, -2 (UNKNOWN_CARDINALITY) where it depends on the values.
        Inside a tf.function, that of each call's dataset argument."""
        if context.current_graph.get() is not None:
            counted = iteration.cardinality_in_graph(self)
            if counted is not None:
                return counted
        return constant(self._cardinality, dtype=dtypes.int64)

    def __len__(self):
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if self._cardinality == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __bool__(self):
        return True  # a dataset is not a container whose len() would decide this

    def __repr__(self):
        return f"<{self._repr_name} element_spec={self._element_spec}>"

    # -- as a tf.function argument (graph/signature.py's handle arguments) ----------------
    def _trace_spec(self):
        return _DatasetKey(self._element_spec)

    def _traced_argument(self, handle):
        return _ArgumentDataset(handle, self._element_spec)

    def _call_argument(self):
        return iteration.argument_handle(self)

    def _graph_inputs(self):
        """The tensors of the graph being traced this source holds (none by default)."""
        return []

    # -- sources ------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per index of the leading dimension of `tensors` (a structure whose
        tensors all have that dimension)."""
        return _TensorSliceDataset(_as_structure(tensors))

    @staticmethod
    def from_tensors(tensors, name=None):
        """One element: `tensors`."""
        return _TensorDataset(_as_structure(tensors))

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        """range(stop), range(start, stop[, step]), as Python's, of int64 scalars."""
        return _RangeDataset(range(*(int(a) for a in args)), dtypes.as_dtype(output_type))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side (a tuple or dict of datasets, or
        several datasets), as long as the shortest."""
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        return _ZipDataset(datasets)

    # -- transformations ----------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """`map_func` on each element (a tuple's components as arguments), traced as a
        tf.function, so that AutoGraph converts it and its Python side effects run when it
        is traced, as in TensorFlow. `num_parallel_calls` changes nothing here."""
        return _MapDataset(self, map_func)

    def filter(self, predicate, name=None):
        """The elements on which `predicate` (a scalar tf.bool) is True."""
        return _FilterDataset(self, predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Consecutive elements stacked in groups of `batch_size` (the last one smaller,
        unless `drop_remainder`)."""
        return _BatchDataset(self, int(batch_size), bool(drop_remainder))

    def unbatch(self, name=None):
        """The rows of each element (the inverse of batch)."""
        return _UnbatchDataset(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """The elements in random order, drawn from a buffer of `buffer_size` (a
        uniform shuffle when it holds the whole dataset); a new order at each iteration
        unless `reshuffle_each_iteration=False`."""
        return _ShuffleDataset(self, int(buffer_size), seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        """The dataset `count` times over (forever when None or -1)."""
        return _RepeatDataset(self, -1 if count is None else int(count))

    def take(self, count, name=None):
        """The first `count` elements (all of them for -1)."""
        return _TakeDataset(self, int(count))

    def skip(self, count, name=None):
        """All but the first `count` elements (none for -1)."""
        return _SkipDataset(self, int(count))

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the int64 index counting from `start`."""
        return _ZipDataset((_RangeDataset(_count_from(int(start)), dtypes.int64), self))

    def prefetch(self, buffer_size, name=None):
        """The same elements. TensorFlow prepares elements ahead on other threads; tapeflow
        produces each when it is asked for, so this is a pass-through."""
        return _PrefetchDataset(self)

    def cache(self, filename="", name=None):
        """The same elements, kept by the first complete iteration and replayed by the
        later ones (`map` functions upstream then run once per element): in memory, or
        with a `filename` in a file that later runs of the program read too
        (data/file_cache.py)."""
        return _CacheDataset(self, filename)

    def reduce(self, initial_state, reduce_func, name=None):
        """`reduce_func(state, element)` folded over the elements from `initial_state`."""
        state = _as_structure(initial_state)
        if context.current_graph.get() is not None:
            return iteration.reduce_in_graph(self, state, reduce_func)
        for element in self:
            state = nest.map_structure(convert_to_tensor, reduce_func(state, element))
        return state

    def apply(self, transformation_func):
        return transformation_func(self)


class _count_from:  # noqa: N801 - stands for range(start, infinity)
    def __init__(self, start):
        self.start = start

    def __iter__(self):
        n = self.start
        while True:
            yield n
            n += 1


class _DatasetKey:
    """What a dataset argument adds to a tf.function's trace key: its element_spec (as
    TensorFlow's DatasetSpec), not its identity."""

    __slots__ = ("flat", "structure")

    def __init__(self, element_spec):
        self.flat = tuple(nest.flatten(element_spec))
        self.structure = nest.map_structure(lambda spec: None, element_spec)

    def __eq__(self, other):
        return (isinstance(other, _DatasetKey) and self.flat == other.flat
                and self.structure == other.structure)

    def __hash__(self):
        return hash(self.flat)

    def describe(self):
        specs = nest.pack_sequence_as(self.structure, list(self.flat))
        return f"a tf.data.Dataset with element_spec {specs}"


# -- sources -------------------------------------------------------------------------------

class _ArgumentDataset(Dataset):
    """A dataset argument inside the trace: the int64 `handle` placeholder names the
    call's dataset, which the graph's iterator nodes read (data/iteration.py)."""

    _repr_name = "DatasetArgument"
    def __init__(self, handle, element_spec):
        self._handle = handle
        super().__init__(element_spec, UNKNOWN_CARDINALITY)

    def _graph_inputs(self):
        return [self._handle]

    def _with_graph_inputs(self, values):
        return iteration.call_dataset(values[0])

    def _elements(self):
        # TensorFlow raises this ValueError after unrolling many get_next() calls.
        raise ValueError("The `for elem in dataset: ...` idiom is used within tf.function "
                         "with AutoGraph disabled. This idiom is only supported when "
                         "AutoGraph is enabled (or use Dataset.reduce).")


class _TensorsHeld:
    """A source of tensors given when it was made: inside a tf.function they may be graph
    tensors, which the graph's iterator node receives at each call."""

    def _graph_inputs(self):
        leaves = nest.flatten(self._tensors)
        return leaves if any(is_symbolic(t) for t in leaves) else []

    def _with_graph_inputs(self, values):
        return type(self)(nest.pack_sequence_as(self._tensors, values))


class _TensorSliceDataset(_TensorsHeld, Dataset):
    _repr_name = "_TensorSliceDataset"

    def __init__(self, tensors):
        leaves = nest.flatten(tensors)
        for t in leaves:
            if not t.shape:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        n = leaves[0].shape[0]
        for t in leaves[1:]:
            if t.shape[0] != n:
                raise ValueError(f"Dimensions {n} and {t.shape[0]} are not compatible")
        self._tensors = tensors
        super().__init__(nest.map_structure(lambda t: TensorSpec(t.shape[1:], t.dtype),
                                            tensors), UNKNOWN_CARDINALITY if n is None else n)

    def _elements(self):
        for i in range(self._cardinality):
            yield nest.map_structure(lambda t: t[i], self._tensors)


class _TensorDataset(_TensorsHeld, Dataset):
    _repr_name = "_TensorDataset"

    def __init__(self, tensors):
        self._tensors = tensors
        super().__init__(_spec_of(tensors), 1)

    def _elements(self):
        yield self._tensors


class _RangeDataset(Dataset):
    _repr_name = "_RangeDataset"

    def __init__(self, numbers, dtype):
        self._numbers, self._dtype = numbers, dtype
        count = len(numbers) if isinstance(numbers, range) else INFINITE_CARDINALITY
        super().__init__(TensorSpec((), dtype), count)

    def _elements(self):
        for n in self._numbers:
            yield constant(n, dtype=self._dtype)


class _ZipDataset(Dataset):
    _repr_name = "_ZipDataset"

    def __init__(self, datasets):
        parts = list(datasets.values()) if isinstance(datasets, dict) else datasets
        if not isinstance(parts, (tuple, list)) or isinstance(datasets, list):
            parts = [datasets]
        for d in parts:
            if not isinstance(d, Dataset):
                raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                                "structures of `tf.data.Dataset` objects. Python `list` is "
                                "not supported and you should use `tuple` instead.")
        self._datasets = datasets
        count = self._count_from([d._cardinality for d in parts])
        spec = ({k: d.element_spec for k, d in datasets.items()} if isinstance(datasets, dict)
                else tuple(d.element_spec for d in datasets))
        super().__init__(spec, count)

    @staticmethod
    def _count_from(counts):
        """The cardinality of a zip of datasets of these cardinalities."""
        finite = [n for n in counts if n >= 0]
        if finite:
            return min(finite)
        if UNKNOWN_CARDINALITY in counts:
            return UNKNOWN_CARDINALITY
        return INFINITE_CARDINALITY

    def _elements(self):
        if isinstance(self._datasets, dict):
            keys = list(self._datasets)
            for values in zip(*(iter(d) for d in self._datasets.values())):
                yield dict(zip(keys, values))
        else:
            yield from zip(*(iter(d) for d in self._datasets))


# -- transformations -------------------------------------------------------------------------

class _Transformed(Dataset):
    """A dataset computed from the elements of `input`."""

    def __init__(self, input, element_spec=None, cardinality=None):  # noqa: A002
        self._input = input
        super().__init__(input.element_spec if element_spec is None else element_spec,
                         input._cardinality if cardinality is None else cardinality)

    def _count_from(self, n):
        """The cardinality for an input of cardinality `n` (the same by default)."""
        return n


def _traced(fn, element_spec):
    """`fn` as a tf.function, and the structure of what it returns on elements of
    `element_spec` (traced once here, as TensorFlow traces a map function)."""
    traced = function(fn)
    args = element_spec if isinstance(element_spec, tuple) else (element_spec,)
    outputs = traced.get_concrete_function(*args).structured_outputs
    return traced, nest.map_structure(
        lambda t: TensorSpec(t.shape, t.dtype) if isinstance(t, (Tensor, _Operators))
        else TensorSpec(convert_to_tensor(t).shape, convert_to_tensor(t).dtype), outputs)


class _MapDataset(_Transformed):
    _repr_name = "_MapDataset"

    def __init__(self, input, map_func):  # noqa: A002
        self._fn, spec = _traced(map_func, input.element_spec)
        super().__init__(input, spec)

    def _elements(self):
        for element in self._input:
            yield _as_structure(_call(self._fn, element))


class _FilterDataset(_Transformed):
    _repr_name = "_FilterDataset"

    def __init__(self, input, predicate):  # noqa: A002
        self._predicate, spec = _traced(predicate, input.element_spec)
        if not (isinstance(spec, TensorSpec) and spec.dtype is dtypes.bool
                and spec.shape == ()):
            raise ValueError(f"Invalid `predicate`. `predicate` must return a `tf.bool` "
                             f"scalar tensor, but its return type is {spec}.")
        super().__init__(input, cardinality=self._count_from(input._cardinality))

    def _count_from(self, n):
        return 0 if n == 0 else UNKNOWN_CARDINALITY

    def _elements(self):
        for element in self._input:
            if bool(_call(self._predicate, element)):
                yield element


def _stack_batch(rows):
    """One batch of `rows` (elements of one structure): each component stacked."""
    flat = [nest.flatten(row) for row in rows]
    stacked = []
    for values in zip(*flat):
        first = values[0].shape
        for v in values[1:]:
            if v.shape != first:
                raise errors.InvalidArgumentError(
                    f"Cannot add tensor to the batch: number of elements does not match. "
                    f"Shapes are: [tensor]: {list(v.shape)}, [batch]: {list(first)}")
        stacked.append(ops.stack(list(values)))
    return nest.pack_sequence_as(rows[0], stacked)


class _BatchDataset(_Transformed):
    _repr_name = "_BatchDataset"

    def __init__(self, input, batch_size, drop_remainder):  # noqa: A002
        if batch_size <= 0:
            raise errors.InvalidArgumentError("Batch size must be greater than zero.")
        self._size, self._drop = batch_size, drop_remainder
        count = self._count_from(input._cardinality)
        lead = batch_size if drop_remainder else None
        spec = nest.map_structure(lambda s: TensorSpec((lead,) + tuple(s.shape), s.dtype),
                                  input.element_spec)
        super().__init__(input, spec, count)

    def _count_from(self, n):
        if n < 0:
            return n
        return n // self._size if self._drop else -(-n // self._size)

    def _elements(self):
        rows = []
        for element in self._input:
            rows.append(element)
            if len(rows) == self._size:
                yield _stack_batch(rows)
                rows = []
        if rows and not self._drop:
            yield _stack_batch(rows)


class _UnbatchDataset(_Transformed):
    _repr_name = "_UnbatchDataset"

    def __init__(self, input):  # noqa: A002
        spec = nest.map_structure(lambda s: TensorSpec(tuple(s.shape)[1:], s.dtype),
                                  input.element_spec)
        super().__init__(input, spec, self._count_from(input._cardinality))

    def _count_from(self, n):
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _elements(self):
        for element in self._input:
            yield from _TensorSliceDataset(element)._elements()


class _ShuffleDataset(_Transformed):
    _repr_name = "_ShuffleDataset"

    def __init__(self, input, buffer_size, seed, reshuffle_each_iteration):  # noqa: A002
        if buffer_size <= 0 and buffer_size != AUTOTUNE:
            raise errors.InvalidArgumentError("buffer_size must be greater than zero.")
        self._buffer_size = buffer_size
        # As TensorFlow: the seeds are fixed when the dataset is made (by the global seed
        # and `seed`); each iteration draws its order from them and the epoch.
        self._seeds = ops.random.get_seed(seed)
        self._reshuffle = reshuffle_each_iteration
        # Shared by the copies a tf.function makes of the pipeline around its dataset
        # argument (data/iteration.py), so that every call gets a new order.
        self._epochs = itertools.count()
        super().__init__(input)

    def _elements(self):
        epoch = next(self._epochs) if self._reshuffle else 0
        rng = np.random.default_rng([s % 2**64 for s in self._seeds] + [epoch])
        buffer = []
        for element in self._input:
            buffer.append(element)
            if len(buffer) == self._buffer_size:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        while buffer:
            i = int(rng.integers(len(buffer)))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()


class _Counted(_Transformed):
    """A transformation by a count (repeat, take, skip): its cardinality follows from the
    input's (n) and the count."""

    def __init__(self, input, count):  # noqa: A002
        self._count = count
        super().__init__(input, cardinality=self._cardinality_of(input._cardinality, count))

    def _count_from(self, n):
        return self._cardinality_of(n, self._count)


class _RepeatDataset(_Counted):
    _repr_name = "_RepeatDataset"

    @staticmethod
    def _cardinality_of(n, count):
        if count < 0:
            return 0 if n == 0 else INFINITE_CARDINALITY
        return n * count if n >= 0 else (0 if count == 0 else n)

    def _elements(self):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            seen = False
            for element in self._input:
                seen = True
                yield element
            if not seen:
                return
            epoch += 1


class _TakeDataset(_Counted):
    _repr_name = "_TakeDataset"

    @staticmethod
    def _cardinality_of(n, count):
        if count < 0 or n == UNKNOWN_CARDINALITY:
            return n
        return count if n == INFINITE_CARDINALITY else min(n, count)

    def _elements(self):
        if self._count == 0:
            return
        for i, element in enumerate(self._input, 1):
            yield element
            if i == self._count:
                return


class _SkipDataset(_Counted):
    _repr_name = "_SkipDataset"

    @staticmethod
    def _cardinality_of(n, count):
        if count < 0:
            return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else 0
        return n if n < 0 else max(n - count, 0)

    def _elements(self):
        if self._count < 0:
            return
        for i, element in enumerate(self._input):
            if i >= self._count:
                yield element


class _PrefetchDataset(_Transformed):
    _repr_name = "_PrefetchDataset"

    def _elements(self):
        return iter(self._input)


class _CacheDataset(_Transformed):
    _repr_name = "CacheDataset"

    def __init__(self, input, filename=""):  # noqa: A002
        self._cached = None
        self._path = file_cache.cache_path(filename) if filename else None
        super().__init__(input)

    def _elements(self):
        if self._cached is None and self._path and os.path.exists(self._path):
            self._cached = file_cache.read(self._path, self.element_spec)
        if self._cached is not None:
            yield from self._cached
            return
        seen = []
        for element in self._input:
            seen.append(element)
            yield element
        self._cached = seen
        if self._path:
            file_cache.write(self._path, seen)
