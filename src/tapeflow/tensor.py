"""Tensor and TensorShape: immutable NumPy-backed values with TensorFlow's operators."""

import itertools
import types

import numpy as np

from . import dtypes, placement
from .source import user_location

_next_id = itertools.count(1).__next__


class TensorShape(tuple):
    """The shape of a Tensor: a tuple of ints that prints like TensorFlow's.

    >>> TensorShape([2, 3])
    TensorShape([2, 3])
    >>> TensorShape([2, 3]) == [2, 3]
    True
    """

    __slots__ = ()

    def __new__(cls, dims=()):
        if dims is None:
            raise ValueError("tapeflow shapes always have a known rank")
        if isinstance(dims, int):
            dims = (dims,)
        return super().__new__(cls, (None if d is None else int(d) for d in dims))

    def __repr__(self):
        return f"TensorShape({list(self)})"

    def __str__(self):
        if len(self) == 1:
            return f"({self[0]},)"
        return "(" + ", ".join(str(d) for d in self) + ")"

    def __eq__(self, other):
        try:
            return tuple(self) == tuple(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __getitem__(self, key):
        item = super().__getitem__(key)
        return TensorShape(item) if isinstance(key, slice) else item

    @property
    def rank(self):
        return len(self)

    ndims = rank

    @property
    def dims(self):
        return list(self)

    def as_list(self):
        return list(self)

    def num_elements(self):
        if any(d is None for d in self):
            return None
        return int(np.prod(self, dtype=np.int64))

    def is_fully_defined(self):
        return all(d is not None for d in self)

    def is_compatible_with(self, other):
        other = TensorShape(other)
        return len(self) == len(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other)
        )

    def concatenate(self, other):
        return TensorShape(tuple(self) + tuple(TensorShape(other)))


def _numpy_text(value, is_repr):
    if value.ndim == 0:
        text = str(value[()]) if isinstance(value, np.ndarray) else str(value)
    else:
        text = repr(value) if is_repr else str(value)
    return "\n" + text if "\n" in text else text


# -- TensorFlow's NumPy behaviour ----------------------------------------------------------
# tf.experimental.numpy.experimental_enable_numpy_behavior() turns it on for the whole
# process, as in TensorFlow (which has no way back). While it is off both hooks are None,
# and an operator pays one global read for it.
_numpy_promote = None  # (x, y) -> (x, y) of one dtype, NumPy's promotion for operators
_numpy_methods = None  # name -> function(tensor, ...): the methods TF then adds to Tensor


def set_numpy_behavior(promote, methods):
    """Installs TensorFlow's NumPy behaviour (or, with None and None, removes it: tests
    do). Called by tapeflow.experimental.numpy, which holds the promotion and methods."""
    global _numpy_promote, _numpy_methods
    _numpy_promote, _numpy_methods = promote, methods


class _NumpyMethod:
    """A Tensor method (or property, as `.T`) that TensorFlow adds to tf.Tensor once NumPy
    behaviour is enabled: before that it does not exist (AttributeError), as in
    TensorFlow. Variables never get it."""

    __slots__ = ("is_property", "name")

    def __init__(self, is_property=False):
        self.is_property = is_property

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if _numpy_methods is None:
            raise AttributeError(
                f"{type(obj).__name__} object has no attribute '{self.name}'. If you are "
                f"looking for numpy-related methods, please run the following: "
                f"tf.experimental.numpy.experimental_enable_numpy_behavior()")
        fn = _numpy_methods[self.name]
        return fn(obj) if self.is_property else types.MethodType(fn, obj)


class _Operators:
    """Python operators shared by Tensor and Variable; each calls a public op.

    With TensorFlow's NumPy behaviour on (`_numpy_promote` set, see below), a binary
    operator first brings its operands to one dtype, as TensorFlow's operators then do;
    the tf.* functions themselves never promote.
    """

    __slots__ = ()
    __array_priority__ = 100

    # The binary operators (__add__, __radd__, ...) are made once the ops have loaded:
    # see use_ops.

    def __matmul__(self, other):
        if _numpy_promote:  # NumPy's matmul (tnp.matmul): vectors too, promoted dtypes
            return _numpy_methods["__matmul__"](self, other)
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        if _numpy_promote:
            return _numpy_methods["__matmul__"](other, self)
        return _ops.matmul(other, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __invert__(self):
        return _ops.invert_operator(self)

    def __getitem__(self, key):
        return _ops.strided_slice(self, key)

    def __hash__(self):
        raise TypeError(
            "Tensor is unhashable. Instead, use tensor.ref() as the key."
        )


class Tensor(_Operators):
    """An immutable multidimensional array, as `tf.Tensor`.

    >>> Tensor  # doctest: +SKIP
    >>> import tapeflow as tf
    >>> tf.constant([[1.0, 2.0]]) * 2
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 4.]], dtype=float32)>
    """

    __slots__ = ("_value", "_id", "dtype", "_shape", "_var", "__weakref__")

    def __init__(self, value, dtype=None):
        # Public construction goes through constant()/convert_to_tensor(); this keeps
        # `Tensor(np_array)` working for the curious.
        arr = np.asarray(value, dtype=None if dtype is None else dtypes.as_dtype(dtype)._np)
        self._value = arr
        self._shape = arr.shape
        self.dtype = dtypes.from_numpy(arr.dtype)
        self._id = _next_id()
        self._var = None

    # -- NumPy access ---------------------------------------------------------------
    def numpy(self):
        value = self._value
        if isinstance(value, np.ndarray):
            return value[()] if value.ndim == 0 else value.copy()
        return value

    def __array__(self, dtype=None, copy=None):
        arr = np.asarray(self._value)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    @property
    def shape(self):
        return TensorShape(self._shape)

    def get_shape(self):
        return self.shape

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def ref(self):
        return _Reference(self)

    def experimental_ref(self):
        return self.ref()

    @property
    def assign(self):
        # TensorFlow gives `variable[key]` (and no other tensor) an `assign`. The read
        # cannot be of a subclass (graph execution tells node outputs by `type(x) is
        # Symbolic`), so variable.py marks it through `_var` instead: see Variable.__getitem__.
        assign = getattr(getattr(self, "_var", None), "assign_slice", None)
        if assign is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'assign'")
        return assign

    # -- NumPy methods: only with NumPy behaviour on (tapeflow.experimental.numpy) -------
    T = _NumpyMethod(is_property=True)
    size = _NumpyMethod(is_property=True)
    data = _NumpyMethod(is_property=True)
    tolist = _NumpyMethod()
    reshape = _NumpyMethod()
    ravel = _NumpyMethod()
    flatten = _NumpyMethod()
    transpose = _NumpyMethod()
    astype = _NumpyMethod()
    clip = _NumpyMethod()
    max = _NumpyMethod()
    min = _NumpyMethod()
    mean = _NumpyMethod()

    def __round__(self, ndigits=None):
        if _numpy_methods is None:
            raise TypeError(f"type {type(self).__name__} doesn't define __round__ method")
        return _numpy_methods["__round__"](self, ndigits)

    # -- Python protocol ------------------------------------------------------------
    def __repr__(self):
        return (
            f"<tf.Tensor: shape={TensorShape(self._shape)}, dtype={self.dtype.name}, "
            f"numpy={_numpy_text(self._value, True)}>"
        )

    def __str__(self):
        return (
            f"tf.Tensor({_numpy_text(self._value, False)}, "
            f"shape={TensorShape(self._shape)}, dtype={self.dtype.name})"
        )

    def __format__(self, spec):
        # As TensorFlow: the NumPy value's format (f"{t}" prints [[1. 2.]]).
        return format(self.numpy(), spec)

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        if not self.dtype.is_integer or self._shape:
            raise TypeError("Only integer scalar tensors can be used as an index")
        return int(self._value)

    def __len__(self):
        if not self._shape:
            raise TypeError("Scalar tensor has no `len()`")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        if self._shape[0] is None:
            raise TypeError(
                f"Iterating over a symbolic tf.Tensor of unknown length is not allowed in "
                f"code AutoGraph did not convert (at {user_location()}): loop with "
                f"`for i in tf.range(tf.shape(x)[0])` in a converted function, or use "
                f"tf.while_loop")
        return (self[i] for i in range(self._shape[0]))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return constant, (self.numpy(),)


class ValuelessTensor(Tensor):
    """A Tensor with a shape and dtype but no array (a traced value, a batch of
    cotangents): every way of asking for its value calls `_no_value(what)`, which
    raises the subclass's error."""

    __slots__ = ()

    def _no_value(self, what):
        raise TypeError(f"{what} of a tensor that has no value")

    def numpy(self):
        self._no_value("numpy()")

    def __array__(self, dtype=None, copy=None):
        self._no_value("Converting to a NumPy array")

    def __bool__(self):
        self._no_value("Using as a Python bool")

    def __float__(self):
        self._no_value("float()")

    def __int__(self):
        self._no_value("int()")

    def __index__(self):
        self._no_value("Using as an index")


_LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort"})


class Symbolic(ValuelessTensor):
    """A Tensor inside a function being traced: it has a shape and dtype, not yet a value.

    Asking for its value (`.numpy()`, `bool()`, `float()`) is an error that names the
    user's line: inside `@tf.function`, values exist only when the function runs.
    """

    __slots__ = ("graph", "name")

    def __init__(self, shape, dtype, graph, name):
        self._value = None
        self._shape = tuple(shape)
        self.dtype = dtype
        self._id = _next_id()
        self._var = None
        self.graph = graph
        self.name = name

    def _no_value(self, what):
        raise TypeError(
            f"{what} of a symbolic Tensor ({self.name}: {self.dtype.name}"
            f"{list(self._shape)}) inside a traced tf.function at {user_location()}: "
            f"its value exists only when the function runs. Use tensor ops (tf.cond, "
            f"tf.where) instead, or call the function eagerly "
            f"(tf.config.run_functions_eagerly(True)).")

    def _not_allowed_in_graph(self, what, advice):
        """TensorFlow's OperatorNotAllowedInGraphError (a TypeError), naming the user's
        line. `what` names this tensor where it says {tensor}."""
        from .errors import OperatorNotAllowedInGraphError
        tensor = f"({self.name}: {self.dtype.name}{list(self._shape)})"
        raise OperatorNotAllowedInGraphError(
            f"{what.format(tensor=tensor)} is not allowed inside a traced tf.function, at "
            f"{user_location()}: {advice}")

    def __bool__(self):
        self._not_allowed_in_graph(
            "Using a symbolic Tensor {tensor} as a Python bool",
            "its value exists only when the function runs. In a function AutoGraph "
            "converts, `if`, `while`, `and`, `or`, `not` and `a if c else b` on a tensor "
            "become graph ops; otherwise use tf.cond, tf.where or tf.logical_and, or call "
            "the function eagerly (tf.config.run_functions_eagerly(True)).")

    def __iter__(self):
        if not self._shape or self._shape[0] is None:
            # Nothing to unroll over. A known leading dimension unrolls (`a, b = x`), as
            # eagerly, where TensorFlow raises this error too.
            what = "a scalar" if not self._shape else "a symbolic Tensor of unknown length"
            self._not_allowed_in_graph(
                f"Iterating over {what} {{tensor}}",
                "loop with `for i in tf.range(tf.shape(x)[0])` in a function AutoGraph "
                "converts, or use tf.while_loop or tf.unstack")
        return super().__iter__()

    def __format__(self, spec):
        return format(str(self), spec)

    def __getattr__(self, name):
        if name in _LIST_METHODS:  # a list a tensor loop appended to is a Tensor after it
            raise AttributeError(
                f"a symbolic Tensor ({self.name}: {self.dtype.name}{list(self._shape)}) has "
                f"no .{name}() (at {user_location()}). A Python list that a tensor loop "
                f"appends to is stacked into one Tensor when the loop ends: append inside "
                f"the loop, or extend the Tensor with tf.concat.")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __len__(self):
        if not self._shape or self._shape[0] is None:
            self._no_value("len()")
        return self._shape[0]

    def __repr__(self):
        return (f"<tf.Tensor '{self.name}:0' shape={TensorShape(self._shape)} "
                f"dtype={self.dtype.name}>")

    def __str__(self):  # what print() shows while tracing, as TensorFlow's graph tensors
        return f'Tensor("{self.name}:0", shape={TensorShape(self._shape)}, dtype={self.dtype.name})'


    def __reduce__(self):
        self._no_value("Pickling")


class _Reference:
    """A hashable handle on a Tensor or Variable (`tensor.ref()`)."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._obj is self._obj


def wrap(array):
    """A new Tensor around an array the caller will never mutate (the op kernels' output).

    0-d values are kept as NumPy scalars: arithmetic on them skips the ufunc machinery
    (30 ns instead of 450 ns), which is most of the eager cost of scalar code."""
    if not array.shape and type(array) is np.ndarray:
        array = array[()]
    t = Tensor.__new__(Tensor)
    t._value = array
    t._shape = array.shape
    t.dtype = dtypes._BY_NUMPY[array.dtype]
    t._id = _next_id()
    t._var = None
    return t


def is_tensor(x):
    return isinstance(x, (Tensor, _Operators))


def is_symbolic(x):
    """Whether `x` is a tensor of a graph being traced (it has no value yet)."""
    return isinstance(x, Symbolic)


# -- conversion -------------------------------------------------------------------------

_INT32_MIN, _INT32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
_OUT_OF_RANGE = "o"  # element kind of a Python int beyond int64's range


def _out_of_range():
    return ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")


def _unsupported(leaf):
    return ValueError(f"Attempt to convert a value ({leaf!r}) with an unsupported type "
                      f"({type(leaf)}) to a Tensor.")


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _leaf_kind(leaf):
    """NumPy's kind letter for one Python element, or None for one no tensor can hold."""
    if isinstance(leaf, (bool, np.bool_)):
        return "b"
    if isinstance(leaf, (int, np.integer)):
        return "i" if -_INT64_MAX - 1 <= leaf <= _INT64_MAX else _OUT_OF_RANGE
    if isinstance(leaf, (float, np.floating)):
        return "f"
    if isinstance(leaf, (complex, np.complexfloating)):
        return "c"
    if isinstance(leaf, (str, bytes)):
        return "U"
    return None


def _sequence_kind(value):
    """The element kind of a Python value that NumPy typed as neither bool nor number,
    found as TensorFlow's converter does: ValueError for None or another object, or a
    sequence mixing such objects or strings with numbers."""
    kinds = set()
    unsupported = []  # (a list: the object may be None itself)
    for leaf in _leaves(value):
        kind = _leaf_kind(leaf)
        if kind is None and not unsupported:
            unsupported.append(leaf)
        kinds.add(kind)
    if kinds == {None}:
        raise _unsupported(unsupported[0])
    if None in kinds or "U" in kinds and len(kinds) > 1:
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    for kind in "Ucf":  # the widest kind present decides
        if kind in kinds:
            return kind
    return _OUT_OF_RANGE if _OUT_OF_RANGE in kinds else "i"


def _natural_dtype(value, kind, array):
    """TensorFlow's default dtype for a Python value of element kind `kind`."""
    if kind == "b":
        return dtypes.bool
    if kind == "i":
        if array.size and (array.max() > _INT32_MAX or array.min() < _INT32_MIN):
            return dtypes.int64
        return dtypes.int32
    if kind == "f":
        return dtypes.float32
    if kind == "c":
        return dtypes.complex128
    if kind == _OUT_OF_RANGE:
        raise _out_of_range()
    raise TypeError(f"Cannot convert {value!r} to a Tensor: tapeflow has no string dtype")


def _holds(dtype, kind):
    """Whether TensorFlow converts Python elements of `kind` to `dtype`: bools anywhere,
    ints to numbers, floats to floats and complex numbers, complex numbers to complex
    dtypes only."""
    if dtype.is_bool:
        return kind == "b"
    if dtype.is_integer:
        return kind in "bi" or kind == _OUT_OF_RANGE  # out of range: the ValueError
    if dtype.is_complex:
        return kind in "bifc" or kind == _OUT_OF_RANGE
    return kind in "bif" or kind == _OUT_OF_RANGE


def _from_python(value, dtype, dtype_hint):
    """A Tensor from a Python scalar or nested sequence, as TensorFlow converts one: a
    Python int wraps into a narrower integer dtype (300 is 44 as uint8), as TensorFlow's
    converter does; a value `dtype` cannot hold is a TypeError naming TensorFlow's dtype."""
    try:
        array = np.asarray(value)
    except ValueError:  # NumPy's "inhomogeneous shape"
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    kind = array.dtype.kind
    if kind == "u":  # a Python int NumPy could only hold as uint64
        kind = "i" if array.max() <= _INT64_MAX else _OUT_OF_RANGE
    elif kind not in "bifc":
        kind = _sequence_kind(value)
    if dtype is None and dtype_hint is not None:
        hint = dtypes.as_dtype(dtype_hint)
        dtype = hint if _holds(hint, kind) else None
    if dtype is None:
        dtype = _natural_dtype(value, kind, array)
    elif not _holds(dtype, kind):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype "
                        f"{dtypes.kernel_name(dtype)}")
    elif kind == _OUT_OF_RANGE and not (dtype.is_floating or dtype.is_complex):
        raise _out_of_range()
    return wrap(array.astype(dtype._np))


def _from_numpy(value, dtype):
    kind = value.dtype.kind
    if kind == "O":
        first = type(value.flat[0]).__name__ if value.size else "object"
        raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported object "
                         f"type {first}).")
    if kind in "Mm":
        what = "NPY_DATETIME" if kind == "M" else "NPY_TIMEDELTA"
        raise ValueError(f"Failed to convert a NumPy array to a Tensor (Unsupported numpy "
                         f"type: {what}).")
    if kind in "USV":
        raise TypeError(f"Cannot convert a NumPy array of {value.dtype} to a Tensor")
    target = dtype or dtypes.from_numpy(value.dtype)
    return wrap(np.array(value, dtype=target._np))


def _contains_tensor(value):
    if isinstance(value, _Operators):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


_scalar_cache = {}


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """Converts a Tensor, Variable, NumPy array, Python scalar or nested list to a Tensor.

    NumPy arrays keep their dtype; Python floats become float32 and ints int32, as in
    TensorFlow. `dtype` forces a dtype (a Python float cannot become an integer: TypeError).

    >>> import tapeflow as tf
    >>> tf.convert_to_tensor([1, 2]).dtype
    tf.int32
    """
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) is not value.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                f"for Tensor with dtype {value.dtype.name}: {value!r}"
            )
        return value
    if isinstance(value, _Operators):  # a Variable
        return convert_to_tensor(value.read_value(), dtype=dtype)
    if dtype is not None and type(dtype) is not dtypes.DType:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        return _placed(_from_numpy(value, dtype))
    if _contains_tensor(value):
        return _ops.stack([convert_to_tensor(v, dtype, dtype_hint) for v in value])
    return _placed(_from_python(value, dtype, dtype_hint))


def _placed(t):
    """A new tensor from host data, copied to the device it is placed on (placement.py)."""
    return placement.place_new(t) if placement.active else t


def scalar_operand(value, dtype):
    """A Python int/float as the other operand of a Tensor operator (`x * 2.0`).

    Cached: no user code can hold such a Tensor, so sharing it is invisible. (A Tensor the
    user creates is always new: two `tf.constant(0.0)` are two tapes' sources.)
    """
    key = (value, type(value), dtype)
    t = _scalar_cache.get(key)
    if t is None:
        t = convert_to_tensor(value, dtype=dtype)
        # -0.0 == 0.0 as a dict key: keep negative zero out of the cache.
        if len(_scalar_cache) < 4096 and (value or str(value)[0] != "-"):
            _scalar_cache[key] = t
    return t


def constant(value, dtype=None, shape=None, name="Const"):
    """Creates a constant Tensor, as `tf.constant`.

    >>> import tapeflow as tf
    >>> tf.constant(3.0)
    <tf.Tensor: shape=(), dtype=float32, numpy=3.0>
    >>> tf.constant(0, shape=(2, 2))
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[0, 0],
           [0, 0]], dtype=int32)>
    """
    if isinstance(value, _Operators) and dtype is not None:
        value = value.numpy()
    t = convert_to_tensor(value, dtype=dtype)
    if shape is None:
        return t
    shape = tuple(int(d) for d in shape)
    arr = np.asarray(t._value)
    if arr.size == 1:
        return _placed(wrap(np.full(shape, arr.reshape(()), dtype=arr.dtype)))
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise TypeError(
            f"Eager execution of tf.constant with unsupported shape. Tensor {t!r} "
            f"(converted from {value!r}) has {arr.size} elements, but got `shape` "
            f"{TensorShape(shape)} with {int(np.prod(shape))} elements)."
        )
    return _placed(wrap(arr.reshape(shape)))


# tapeflow.ops, whose public ops the operators call. The ops are a layer above Tensor
# (they take and make Tensors), so they hand themselves over as they load: use_ops.
_ops = None


def use_ops(ops):
    """Makes Tensor's operators call the public ops of `ops` (tapeflow.ops, once all
    of them are defined)."""
    global _ops
    _ops = ops
    _binary_operators()


def _binary_operators():
    """Each binary operator method calls its public op; with TensorFlow's NumPy behaviour
    on, after bringing both operands to one dtype, as TensorFlow's operators then do."""
    def method(op, reflected):
        if reflected:
            def operator(self, other):
                if _numpy_promote:
                    return op(*_numpy_promote(other, self))
                return op(other, self)
        else:
            def operator(self, other):
                if _numpy_promote:
                    return op(*_numpy_promote(self, other))
                return op(self, other)
        return operator

    reflected_too = {"add": _ops.add, "sub": _ops.subtract, "mul": _ops.multiply_operator,
                     "truediv": _ops.truediv, "floordiv": _ops.floordiv, "mod": _ops.floormod,
                     "pow": _ops.pow, "and": _ops.and_operator, "or": _ops.or_operator,
                     "xor": _ops.xor_operator}
    one_way = {"lt": _ops.less, "le": _ops.less_equal, "gt": _ops.greater,
               "ge": _ops.greater_equal, "eq": _ops.tensor_equals, "ne": _ops.tensor_not_equals}
    for name, op in reflected_too.items():
        setattr(_Operators, f"__{name}__", method(op, False))
        setattr(_Operators, f"__r{name}__", method(op, True))
    for name, op in one_way.items():
        setattr(_Operators, f"__{name}__", method(op, False))
