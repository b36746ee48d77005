"""tf.TensorArray and tf.TensorArraySpec, as TensorFlow 2.21 has them.

Eagerly a TensorArray is a Python list of tensors (TensorFlow's _EagerTensorArray:
writes mutate that list, a read clears its element unless clear_after_read=False), so
a tape records the ops that made each element and tf.stack.

Inside tf.function it is TensorFlow's TensorList semantics (a list of `size` elements,
any of them unset; a write replaces an element, a read of an unset one is zeros) held
as three tensors: the written values in write order ([k, *element_shape], grown with
TensorListPushBack, ops/lists.py), the index of each write ([k] int32, grown the same
way) and the list's length. A loop that writes therefore appends to two lists, which
tf.while_loop stores by length and the compiled backend grows in place, and every read,
stack or gather is a gather of the last write to each index: gradients, batching and
compiled code all come from those entries. A TensorArray is a composite value: nest
(expand_composites=True) hands its tensors to tf.while_loop and tf.cond, and a
TensorArray whose element shape is not known before a loop learns it from the loop
body's first write (ElementShapeLearned)."""

import weakref

import numpy as np

from .. import context, dtypes
from ..errors import InvalidArgumentError, OutOfRangeError, UnimplementedError
from ..tensor import Tensor, TensorShape, convert_to_tensor, is_symbolic

# TensorFlow's DataTypeString, which graph-mode TensorList errors print.
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


# -- element shapes, which may be unknown (TensorShape(None)) ------------------------------

class _UnknownShape:
    """TensorShape(None): an element shape of unknown rank."""

    rank = ndims = dims = None

    def __repr__(self):
        return "TensorShape(None)"

    def __str__(self):
        return "<unknown>"

    def __eq__(self, other):
        return isinstance(other, _UnknownShape)

    __hash__ = object.__hash__

    def is_fully_defined(self):
        return False

    def is_compatible_with(self, other):
        return True

    def as_list(self):
        raise ValueError("as_list() is not defined on an unknown TensorShape.")


UNKNOWN_SHAPE = _UnknownShape()


def _as_shape(shape):
    if shape is None or isinstance(shape, _UnknownShape):
        return UNKNOWN_SHAPE
    return TensorShape(shape)


def _merged(a, b):
    if isinstance(a, _UnknownShape):
        return TensorShape(b)
    if isinstance(b, _UnknownShape):
        return a
    return TensorShape(x if x is not None else y for x, y in zip(a, b))


def _debug_string(shape):
    """A shape as TensorFlow's PartialTensorShape prints it in op errors: [?,4]."""
    if isinstance(shape, _UnknownShape):
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _type_name(dtype):
    return _TF_TYPE_NAMES.get(dtype.name, dtype.name)


def _static_int(x):
    """x as a Python int when it is known while tracing, else None."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, Tensor) and not is_symbolic(x) and not x._shape:
        return int(x._value)
    return None


def _ops():
    import importlib
    from . import control, creation, elementwise, indexing, lists, reduce
    shape = importlib.import_module("tapeflow.ops.shape")  # `ops.shape` is also a function
    return control, creation, elementwise, indexing, lists, reduce, shape


# -- eager ----------------------------------------------------------------------------------

class _EagerTensorArray:
    """TensorFlow's eager TensorArray: a Python list of tensors, None where unset."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if handle is not None:
            raise ValueError("TensorArray handles are not supported when eager "
                             "execution is enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager "
                             "execution is enabled.")
        self._handle = None
        self._flow = convert_to_tensor(0)
        self._infer_shape = infer_shape
        self._element_shape = _as_shape(element_shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size or False
        self._clear_after_read = True if clear_after_read is None else clear_after_read
        self._previously_read_indices = []
        self._tensor_array = [None for _ in range(int(np.asarray(_value_of(size))))]

    @property
    def handle(self):
        return self._handle

    @property
    def element_shape(self):
        return self._element_shape

    def identity(self):
        return self.parent()

    def read(self, index, name=None):
        index = int(np.asarray(_value_of(index)))
        if index < 0:
            raise OutOfRangeError(f"Reading from negative indices (index {index}) is not "
                                  f"allowed.")
        if index >= len(self._tensor_array):
            raise OutOfRangeError(f"Tried to read from index {index} but array size is: "
                                  f"{len(self._tensor_array)} ")
        tensor = self._tensor_array[index]
        if tensor is None:
            if index in self._previously_read_indices:
                raise InvalidArgumentError(
                    f"Could not read index {index} twice because it was cleared after a "
                    f"previous read (perhaps try setting clear_after_read = false?)")
            tensor = self._maybe_zero(index)
        if self._clear_after_read:
            self._tensor_array[index] = None
            self._previously_read_indices.append(index)
        return tensor

    def _write(self, index, value):
        index = int(np.asarray(_value_of(index)))
        if index < 0:
            raise OutOfRangeError(f"Writing to negative indices (index {index}) is not "
                                  f"allowed.")
        size = len(self._tensor_array)
        if index >= size:
            if not self._dynamic_size:
                raise OutOfRangeError(f"Tried to write to index {index} but array is not "
                                      f"resizeable and size is: {size} ")
            self._tensor_array.extend(None for _ in range(index - size + 1))
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value, dtype_hint=self._dtype)
        if self._dtype != value.dtype:
            raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is "
                                       f"trying to write dtype {value.dtype.name} ")
        shape = TensorShape(value._shape)
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError(f"Incompatible shape for value ({shape}), expected "
                             f"({self._element_shape})")
        if self._infer_shape:
            self._element_shape = _merged(self._element_shape, shape)
        self._tensor_array[index] = value

    def write(self, index, value, name=None):
        self._write(index, value)
        return self.parent()

    def _maybe_zero(self, ix):
        val = self._tensor_array[ix]
        if val is None:
            if not self._element_shape.is_fully_defined():
                raise ValueError(f"Cannot convert a partially known TensorShape "
                                 f"{self._element_shape} to a Tensor.")
            from .creation import zeros
            val = self._tensor_array[ix] = zeros(tuple(self._element_shape), self._dtype)
        return val

    def stack(self, name=None):
        from .shape import stack
        for ix in range(len(self._tensor_array)):
            self._maybe_zero(ix)
        if not self._tensor_array:
            if self._element_shape.is_fully_defined():
                return convert_to_tensor(np.zeros([0] + list(self._element_shape),
                                                  self._dtype.as_numpy_dtype))
            return convert_to_tensor(np.zeros([0], self._dtype.as_numpy_dtype))
        return stack(self._tensor_array)

    def gather(self, indices, name=None):
        from .shape import stack
        return stack([self._maybe_zero(int(i)) for i in np.asarray(_value_of(indices))])

    def concat(self, name=None):
        from .shape import concat
        parts = [self._maybe_zero(ix) for ix in range(len(self._tensor_array))]
        for ix, t in enumerate(parts):
            if not t._shape:
                raise InvalidArgumentError(f"Concat saw a scalar shape at index {ix} but "
                                           f"requires at least vectors.")
        return concat(parts, 0)

    def unstack(self, value, name=None):
        from .shape import unstack
        tensors = unstack(convert_to_tensor(value, dtype_hint=self._dtype))
        if len(tensors) > len(self._tensor_array) and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {len(tensors)} tensors into a TensorArray of "
                             f"static size {len(self._tensor_array)} ")
        self._tensor_array = list(tensors)
        return self.parent()

    def scatter(self, indices, value, name=None):
        from .shape import unstack
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        for index, val in zip(np.asarray(_value_of(indices)), unstack(value)):
            self._write(int(index), val)
        return self.parent()

    def split(self, value, lengths, name=None):
        from .shape import split
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        lengths = convert_to_tensor(lengths)
        total = int(np.sum(lengths._value))
        if len(lengths._shape) != 1:
            raise InvalidArgumentError(f"Expected lengths to be a vector, received shape: "
                                       f"{list(lengths._shape)} ")
        if not value._shape:
            raise InvalidArgumentError(f"Expected value to be at least a vector, but "
                                       f"received shape: {list(value._shape)} ")
        if total != value._shape[0]:
            raise InvalidArgumentError(f"Expected sum of lengths to be equal to "
                                       f"values.shape[0], but sum of lengths is {total} and "
                                       f"value's shape is: {list(value._shape)} ")
        if not self._dynamic_size and lengths._shape[0] != len(self._tensor_array):
            raise InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths "
                f"({len(self._tensor_array)} vs. {lengths._shape[0]}), and the TensorArray "
                f"is not marked as dynamically resizeable.")
        self._tensor_array = list(split(value, [int(n) for n in lengths._value], 0))
        return self.parent()

    def size(self, name=None):
        return convert_to_tensor(len(self._tensor_array))

    def close(self, name=None):
        del self._tensor_array[:]


def _value_of(x):
    if isinstance(x, Tensor):
        return x._value
    return x


# -- inside tf.function -----------------------------------------------------------------------

class ElementShapeLearned(Exception):
    """Raised out of a loop body's trace by the first write to a TensorArray that entered
    the loop without a known element shape: the loop (ops/control.py) starts it again with
    that shape. Not an error."""

    def __init__(self, origin, shape):
        super().__init__("TensorArray element shape learned")
        self.origin, self.shape = origin, shape

    def replace_in(self, loop_vars):
        """loop_vars with the TensorArray that learned its shape started with it, or None
        if it is not one of them (an enclosing loop's TensorArray)."""
        from .. import nest
        flat = nest.flatten(loop_vars)
        if not any(v is self.origin for v in flat):
            return None
        impl = self.origin._implementation
        if impl._learning is not None:  # it entered this loop still learning: the outer one
            raise ElementShapeLearned(impl._learning, self.shape)
        started = impl._with_elements(self.shape)
        return nest.pack_sequence_as(loop_vars, [started if v is self.origin else v
                                                 for v in flat])


class _GraphTensorArray:
    """TensorList semantics over (values, indices, length): see the module docstring."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None,
                 _state=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size or False
        self._infer_shape = infer_shape
        self._learning = None
        self._graph = context.current_graph.get()
        if _state is not None:
            self._size, self._element_shape, (self._values, self._indices,
                                              self._length) = _state
            return
        if flow is not None:
            flow_dtype = getattr(flow, "dtype", None)
            raise TypeError(f"Expected `flow` to be a variant tensor, but received "
                            f"`{getattr(flow_dtype, 'name', flow_dtype)}` instead.")
        if size is None:
            raise ValueError("Argument `size` must be provided if argument `flow` is not "
                             "provided.")
        _, creation, *_ = _ops()
        self._size = size
        self._element_shape = [_as_shape(element_shape)]
        self._length = convert_to_tensor(size, dtype=dtypes.int32)
        self._indices = creation.zeros((0,), dtypes.int32)
        self._values = None
        if not isinstance(self._element_shape[0], _UnknownShape):
            self._values = self._empty_values(self._element_shape[0])

    def _empty_values(self, shape):
        from .creation import zeros
        # Unknown dimensions start as 0: the first write gives the rows their shape.
        return zeros((0,) + tuple(0 if d is None else d for d in shape), self._dtype)

    def _with_elements(self, shape):
        """This TensorArray (unwritten) with element shape `shape` and an empty values
        list of it: how it enters a loop whose body writes it."""
        element = _merged(self.element_shape, shape)
        return _new(self, (self._empty_values(element), self._indices, self._length),
                    element)

    @property
    def handle(self):
        return None

    @property
    def element_shape(self):
        return self._element_shape[0]

    def _check_element_shape(self, shape):
        if not TensorShape(shape).is_compatible_with(self.element_shape) \
                if not isinstance(self.element_shape, _UnknownShape) else False:
            raise ValueError(f"Inconsistent shapes: saw {TensorShape(shape)} but expected "
                             f"{self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = _merged(self.element_shape, TensorShape(shape))

    def _converted(self, value):
        value = convert_to_tensor(value, dtype_hint=self._dtype)
        if value.dtype != self._dtype:
            raise InvalidArgumentError(f"Invalid data types; op elements "
                                       f"{_type_name(value.dtype)} but list elements "
                                       f"{_type_name(self._dtype)}")
        return value

    def _check_index(self, index, what):
        """A write's (or gather's) index against the list's length: at trace time where
        both are known, else by an Assert node."""
        from .checks import assert_at_run_time
        from .elementwise import greater_equal, less, logical_and
        i, n = _static_int(index), _static_int(self._length)
        verb = {"write": "modify", "read": "access", "gather": "gather"}[what]
        if i is not None and n is not None:
            if not 0 <= i < n:
                raise InvalidArgumentError(f"Trying to {verb} element {i} in a list with "
                                           f"{n} elements.")
            return
        if i is not None and i < 0:
            raise InvalidArgumentError(f"Trying to {verb} element {i} in a list with "
                                       f"{'' if n is None else n} elements.")
        elements = "its" if n is None else str(n)
        assert_at_run_time(logical_and(greater_equal(index, 0), less(index, self._length)),
                           f"Trying to {verb} an element past the end of a list with "
                           f"{elements} elements.")

    def identity(self):
        return _new(self, (self._values, self._indices, self._length))

    def write(self, index, value, name=None):
        control, creation, elementwise, indexing, lists, reduce, shape = _ops()
        value = self._converted(value)
        self._check_element_shape(value._shape)
        index = convert_to_tensor(index, dtype=dtypes.int32)
        values = self._values
        if values is None:
            if self._learning is not None:
                raise ElementShapeLearned(self._learning, TensorShape(value._shape))
            values = self._empty_values(value._shape)
        if self._dynamic_size:
            if _static_int(index) is not None and _static_int(index) < 0:
                raise InvalidArgumentError(f"Trying to modify element {_static_int(index)} "
                                           f"in a list with {_static_int(self._length)} "
                                           f"elements.")
            length = elementwise.maximum(self._length, index + 1)
        else:
            self._check_index(index, "write")
            length = self._length
        return _new(self, (lists.list_push_back(values, value),
                           lists.list_push_back(self._indices, index), length))

    def _unset_element(self):
        """zeros of the element shape, for unset elements: the static shape when fully
        known, else the written elements' shape (an error while none is written)."""
        from .checks import assert_at_run_time
        from .creation import zeros
        element = self.element_shape
        if element.is_fully_defined():
            return zeros(tuple(element), self._dtype)
        message = (f"Trying to read an uninitialized tensor but element_shape is not fully "
                   f"defined: {_debug_string(element)} and no list element is set.")
        if self._values is None or self._values._shape[0] == 0:
            raise InvalidArgumentError(message)
        from .shape import shape
        from .elementwise import greater
        rows = shape(self._values)
        if self._values._shape[0] is None:
            assert_at_run_time(greater(rows[0], 0), message)
        return zeros(rows[1:], self._dtype)

    def read(self, index, name=None):
        control, creation, elementwise, indexing, lists, reduce, shape = _ops()
        index = convert_to_tensor(index, dtype=dtypes.int32)
        self._check_index(index, "read")
        if self._values is None:
            return self._unset_element()
        writes = creation.range(shape.shape(self._indices)[0])
        last = reduce.reduce_max(elementwise.where(elementwise.equal(self._indices, index),
                                                   writes, -1))
        values = self._values
        return control.cond(elementwise.greater_equal(last, 0),
                            lambda: indexing.gather(values, last), self._unset_element)

    def _dense(self):
        """[length, *element]: each element's last write, zeros where unset."""
        control, creation, elementwise, indexing, lists, reduce, shape = _ops()
        if self._values is None:
            element = self.element_shape
            if not element.is_fully_defined():
                raise InvalidArgumentError(
                    f"Tried to stack elements of an empty list with non-fully-defined "
                    f"element_shape: {_debug_string(element)}")
            return creation.zeros(shape.concat([[self._length], list(element)], 0)
                                  if is_symbolic(self._length) else
                                  (_static_int(self._length),) + tuple(element), self._dtype)
        k = shape.shape(self._indices)[0]
        last = self._last_writes(k)
        # Row k of `padded` is the zeros that unset elements read.
        padded = lists.list_push_back(self._values, self._unset_element())
        return indexing.gather(padded, elementwise.where(elementwise.greater_equal(last, 0),
                                                         last, k))

    def _last_writes(self, k):
        """[length] int32: the position (in write order) of each element's last write,
        -1 where unset. Where no element is written twice that is a scatter of the
        positions; else the overwritten writes are found by comparing every pair."""
        control, creation, elementwise, indexing, lists, reduce, shape = _ops()
        positions = creation.range(k)
        at = shape.expand_dims(self._indices, 1)
        length = shape.reshape(self._length, [1])
        counts = indexing.tensor_scatter_nd_add(creation.fill(length, 0), at,
                                                creation.ones_like(self._indices))
        indices = self._indices

        def written_once():
            return positions + 1

        def written_again():
            same = elementwise.equal(shape.expand_dims(indices, 1),
                                     shape.expand_dims(indices, 0))
            later = elementwise.greater(shape.expand_dims(positions, 0),
                                        shape.expand_dims(positions, 1))
            overwritten = reduce.reduce_any(elementwise.logical_and(same, later), axis=1)
            return elementwise.where(overwritten, 0, positions + 1)

        most = reduce.reduce_max(shape.concat([counts, creation.fill([1], 0)], 0))
        kept = control.cond(elementwise.less_equal(most, 1), written_once, written_again)
        return indexing.tensor_scatter_nd_add(creation.fill(length, 0), at, kept) - 1

    def _check_stacked_length(self):
        from .checks import assert_at_run_time
        from .elementwise import equal
        size = None if self._dynamic_size else _static_int(self._size)
        if size is None:
            return
        n = _static_int(self._length)
        message = f"Operation expected a list with {size} elements but got a list with "
        if n is not None:
            if n != size:
                raise InvalidArgumentError(f"{message}{n} elements.")
            return
        assert_at_run_time(equal(self._length, size), message + "another number of elements.")

    def stack(self, name=None):
        self._check_stacked_length()
        return self._dense()

    def gather(self, indices, name=None):
        from .indexing import gather
        indices = convert_to_tensor(indices, dtype=dtypes.int32)
        known = None if is_symbolic(indices) else np.asarray(indices._value).ravel()
        n = _static_int(self._length)
        if known is not None and n is not None:
            for i in known:
                if not 0 <= i < n:
                    raise InvalidArgumentError(f"Trying to gather element {i} in a list "
                                               f"with {n} elements.")
        return gather(self._dense(), indices)

    def concat(self, name=None):
        from .shape import reshape
        element = self.element_shape
        if isinstance(element, _UnknownShape) and self._values is not None:
            element = TensorShape(self._values._shape[1:])
        if not isinstance(element, _UnknownShape) and not element:
            raise InvalidArgumentError("Concat saw a scalar shape at index 0 but requires "
                                       "at least vectors.")
        if isinstance(element, _UnknownShape) or None in element[1:]:
            raise InvalidArgumentError(f"Concat needs the trailing dimensions of the "
                                       f"elements known, got {_debug_string(element)}")
        return reshape(self._dense(), [-1] + list(element[1:]))

    def unstack(self, value, name=None):
        from .creation import range as tf_range
        from .shape import shape
        value = self._converted(value)
        if not value._shape:
            raise ValueError("Shape must be at least rank 1 but is rank 0")
        self._check_element_shape(value._shape[1:])
        rows = shape(value)[0] if value._shape[0] is None else value._shape[0]
        return _new(self, (value, tf_range(rows), convert_to_tensor(rows, dtype=dtypes.int32)))

    def scatter(self, indices, value, name=None):
        from .elementwise import maximum
        from .reduce import reduce_max
        from .shape import concat
        value = self._converted(value)
        self._check_element_shape(value._shape[1:])
        indices = convert_to_tensor(indices, dtype=dtypes.int32)
        values = self._values if self._values is not None else self._empty_values(
            value._shape[1:])
        return _new(self, (concat([values, value], 0), concat([self._indices, indices], 0),
                           maximum(self._length, reduce_max(indices) + 1)))

    def split(self, value, lengths, name=None):
        from .shape import reshape
        value = self._converted(value)
        lengths = convert_to_tensor(lengths)
        known = None if is_symbolic(lengths) else [int(n) for n in np.ravel(lengths._value)]
        if not value._shape:
            raise InvalidArgumentError(f"Expected value to be at least a vector, but "
                                       f"received shape: {list(value._shape)} ")
        if known is None or len(set(known)) > 1:
            raise UnimplementedError(
                "inside tf.function a tapeflow TensorArray holds elements of one shape: "
                "split needs equal lengths known while tracing (use tf.split, or a "
                "TensorArray outside tf.function)", op="TensorListSplit")
        if value._shape[0] is not None and sum(known) != value._shape[0]:
            raise InvalidArgumentError(f"Unused values in tensor. Length of tensor: "
                                       f"{value._shape[0]} Values used: {sum(known)}")
        piece = known[0] if known else 0
        return self.unstack(reshape(value, [len(known), piece] + list(value._shape[1:])))

    def size(self, name=None):
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return self._length

    def close(self, name=None):
        return None


def _new(old, state, element_shape=None):
    """A TensorArray like `old` over new tensors (TensorFlow's build_ta_with_new_flow:
    the element shape is shared)."""
    impl = _GraphTensorArray(
        old._dtype, dynamic_size=old._dynamic_size, infer_shape=old._infer_shape,
        _state=(old._size, [element_shape] if element_shape is not None
                else old._element_shape, state))
    if state[0] is None:
        impl._learning = old._learning
    return TensorArray._wrap(impl)


# -- the public class -------------------------------------------------------------------------

class TensorArray:
    """A list of tensors of one dtype that tf.while_loop and AutoGraph loops carry
    (`tf.TensorArray`): write element i in a loop, stack them after it.

    >>> import tapeflow as tf
    >>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    >>> ta = ta.write(0, 10)
    >>> ta = ta.write(1, 20)
    >>> ta.read(1)
    <tf.Tensor: shape=(), dtype=float32, numpy=20.0>
    >>> ta.stack()
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([10., 20.], dtype=float32)>
    >>> @tf.function
    ... def squares(n):
    ...     ta = tf.TensorArray(tf.float32, size=n)
    ...     for i in tf.range(n):
    ...         ta = ta.write(i, tf.cast(i * i, tf.float32))
    ...     return ta.stack()
    >>> squares(tf.constant(4))
    <tf.Tensor: shape=(4,), dtype=float32, numpy=array([0., 1., 4., 9.], dtype=float32)>
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        graph = context.current_graph.get()
        implementation = _EagerTensorArray if graph is None else _GraphTensorArray
        self._implementation = implementation(
            dtype, size=size, dynamic_size=dynamic_size, clear_after_read=clear_after_read,
            tensor_array_name=tensor_array_name, handle=handle, flow=flow,
            infer_shape=infer_shape, element_shape=element_shape,
            colocate_with_first_write_call=colocate_with_first_write_call, name=name)
        self._implementation.parent = weakref.ref(self)

    @classmethod
    def _wrap(cls, impl):
        ta = cls.__new__(cls)
        ta._implementation = impl
        impl.parent = weakref.ref(ta)
        return ta

    @property
    def flow(self):
        """The tensor that orders this TensorArray's ops: eagerly a constant 0 (as in
        TensorFlow); inside tf.function, its length."""
        impl = self._implementation
        return impl._flow if isinstance(impl, _EagerTensorArray) else impl._length

    @property
    def dtype(self):
        return self._implementation._dtype

    @property
    def handle(self):
        return self._implementation.handle

    @property
    def element_shape(self):
        return self._implementation.element_shape

    @property
    def dynamic_size(self):
        return self._implementation._dynamic_size

    @property
    def _infer_shape(self):
        return self._implementation._infer_shape

    @property
    def _type_spec(self):
        """The composite's spec (nest.composite_spec): inside tf.function only, where the
        TensorArray's tensors travel through loops and conds."""
        if isinstance(self._implementation, _EagerTensorArray):
            return None
        return TensorArraySpec._of(self)

    def identity(self):
        return self._implementation.identity()

    def grad(self, source, flow=None, name=None):
        raise UnimplementedError("TensorArray.grad belongs to TensorFlow 1's graph "
                                 "gradients; tf.GradientTape differentiates through "
                                 "TensorArray ops directly")

    def read(self, index, name=None):
        return self._implementation.read(index, name=name)

    def write(self, index, value, name=None):
        return self._implementation.write(index, value, name=name)

    def stack(self, name=None):
        return self._implementation.stack(name=name)

    def gather(self, indices, name=None):
        return self._implementation.gather(indices, name=name)

    def concat(self, name=None):
        return self._implementation.concat(name=name)

    def unstack(self, value, name=None):
        return self._implementation.unstack(value, name=name)

    def scatter(self, indices, value, name=None):
        return self._implementation.scatter(indices, value, name=name)

    def split(self, value, lengths, name=None):
        return self._implementation.split(value, lengths, name=name)

    def size(self, name=None):
        return self._implementation.size(name=name)

    def close(self, name=None):
        return self._implementation.close(name=name)

    def mark_used(self):
        """TensorFlow's should_use_result marker: nothing to record here."""


class TensorArraySpec:
    """The type of a TensorArray (`tf.TensorArraySpec`): element shape, dtype,
    dynamic_size, infer_shape.

    >>> import tapeflow as tf
    >>> tf.TensorArraySpec([2], tf.float32)
    TensorArraySpec(TensorShape([2]), tf.float32, False, True)
    """

    __slots__ = ("_dtype", "_dynamic_size", "_element_shape", "_infer_shape", "_origin")

    def __init__(self, element_shape=None, dtype=dtypes.float32, dynamic_size=False,
                 infer_shape=True):
        self._element_shape = _as_shape(element_shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape
        self._origin = None

    @classmethod
    def _of(cls, ta):
        spec = cls.from_value(ta)
        spec._origin = ta
        return spec

    @staticmethod
    def from_value(value):
        if not isinstance(value, TensorArray):
            raise TypeError(f"Expected value to be a TensorArray, but got: `{type(value)}`")
        return TensorArraySpec(value.element_shape, value.dtype, value.dynamic_size,
                               value._infer_shape)

    @property
    def value_type(self):
        return TensorArray

    def _serialize(self):
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    def __repr__(self):
        return f"TensorArraySpec({self._element_shape!r}, {self._dtype!r}, " \
               f"{self._dynamic_size}, {self._infer_shape})"

    def __eq__(self, other):
        return type(other) is TensorArraySpec and self._serialize() == other._serialize()

    def __hash__(self):
        return hash((str(self._element_shape), self._dtype, self._dynamic_size,
                     self._infer_shape))

    def is_compatible_with(self, other):
        if isinstance(other, TensorArray):
            other = TensorArraySpec.from_value(other)
        return (isinstance(other, TensorArraySpec) and self._dtype == other._dtype
                and self._element_shape.is_compatible_with(other._element_shape)
                if not isinstance(self._element_shape, _UnknownShape) else
                isinstance(other, TensorArraySpec) and self._dtype == other._dtype) and \
            self._dynamic_size == other._dynamic_size

    def is_subtype_of(self, other):
        return (isinstance(other, TensorArraySpec) and self._dtype == other._dtype
                and self._dynamic_size == other._dynamic_size)

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, TensorArraySpec) for o in others):
            return False
        if any(o._dtype != self._dtype or o._dynamic_size != self._dynamic_size
               for o in others):
            return None
        shape = self._element_shape
        for o in others:
            a, b = shape, o._element_shape
            if isinstance(a, _UnknownShape) or isinstance(b, _UnknownShape) or len(a) != len(b):
                shape = UNKNOWN_SHAPE
            else:
                shape = TensorShape(x if x == y else None for x, y in zip(a, b))
        return TensorArraySpec(shape, self._dtype, self._dynamic_size,
                               self._infer_shape and all(o._infer_shape for o in others))

    def _to_components(self, value):
        impl = value._implementation
        parts = [impl._indices, impl._length]
        return parts if impl._values is None else [impl._values] + parts

    def _from_components(self, tensors):
        origin = self._origin._implementation
        values = tensors[0] if len(tensors) == 3 else None
        indices, length = tensors[-2:]
        element = self._element_shape
        if values is not None and self._infer_shape:
            element = _merged(element, TensorShape(values._shape[1:]))
        ta = _new(origin, (values, indices, length), element)
        if values is None:
            # Unwritten in a loop body or branch (another graph than the one it entered
            # from): its first write there tells the loop its element shape.
            same_graph = context.current_graph.get() is origin._graph
            ta._implementation._learning = origin._learning if same_graph else self._origin
        return ta


__all__ = ["TensorArray", "TensorArraySpec"]
