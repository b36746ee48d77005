"""Variable: a mutable, watchable value; each read is a Tensor snapshot of it."""

import numpy as np

from . import context, device_variable, placement
from . import ops as _ops
from .errors import InvalidArgumentError
from .ops.rules import kernel_dims
from .tensor import Tensor, TensorShape, _Operators, _next_id, _numpy_text, convert_to_tensor


class Variable(_Operators):
    """A mutable tensor-like value, as `tf.Variable`; trainable ones are watched by tapes.

    >>> import tapeflow as tf
    >>> v = tf.Variable(1.0)
    >>> v.assign_add(2.0)
    <tf.Variable 'UnreadVariable' shape=() dtype=float32, numpy=3.0>
    >>> v
    <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>
    """

    __slots__ = ("_value", "_id", "dtype", "_shape", "trainable", "_name", "__weakref__")

    def __new__(cls, *args, **kwargs):
        if placement.active and cls is not _UnreadVariable:  # on a GPU: its device variant
            cls = device_variable.placed_class(cls)
        return super().__new__(cls)

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None,
                 **kwargs):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = context.current_graph.get()
        if graph is not None:
            if graph.forbid_variables:
                from .graph.trace import user_location
                raise ValueError(
                    f"tf.function only supports singleton tf.Variables created on the first "
                    f"call. Make sure the tf.Variable is only created once or created "
                    f"outside tf.function (at {user_location()}).")
            graph.created_variables += 1
        if callable(initial_value):
            from .graph.trace import init_scope
            with init_scope():
                initial_value = initial_value()
        t = convert_to_tensor(initial_value, dtype=dtype)
        if t._value is None:
            from .graph.variables import lifted_value
            lifted = lifted_value(graph, t)
            t = t if lifted is None else lifted
        if t._value is None:
            from .graph.trace import user_location
            raise ValueError(
                f"A Variable created inside tf.function needs an initial value that does not "
                f"depend on the function's inputs (pass a callable or a constant), at "
                f"{user_location()}")
        self._value = t._value
        self._shape = t._shape
        self.dtype = t.dtype
        self._id = _next_id()  # one id for every read: gradients flow to the variable
        self.trainable = bool(trainable)
        # As TensorFlow 2, eagerly too: the enclosing tf.name_scope prefixes the name.
        self._name = context.name_scope.get() + (name or "Variable")

    @property
    def name(self):
        return f"{self._name}:0"

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

    def read_value(self):
        """The current value as a Tensor; tapes that watch accessed variables see the read."""
        tapes = context.recording_tapes.get()
        watchers = context.variable_watchers.get()
        if self.trainable:
            for tape in tapes:
                if tape._watch_accessed_variables:
                    tape._watch_variable(self)
            for watcher in watchers:
                watcher.append(self)
        # A read is recorded by the tapes that watch the variable now, as TensorFlow's
        # ReadVariableOp: gradients flow from it to the variable. To every other tape it
        # is a constant: a snapshot taken before a tape starts is not the variable.
        watching = [tape for tape in tapes if self._id in tape._watched]
        graph = context.current_graph.get()
        if graph is not None:
            from .graph.variables import traced_read
            t = traced_read(graph, self)
        else:
            t = self._snapshot()
        if watchers:  # custom_gradient's body: its reads are the variable itself
            t._id = self._id
        elif watching:
            # Its own id, so that a gradient with respect to this read (or a tape
            # watching it) concerns this read alone, not every use of the variable.
            from .ops.elementwise import IDENTITY
            from .ops.registry import record
            record(IDENTITY, {}, (self,), (t,), watching)
        return t

    value = read_value

    def _snapshot(self):
        """An eager read: a Tensor sharing the stored value (values are replaced, never
        written in place)."""
        t = Tensor.__new__(Tensor)
        t._value = self._value
        t._shape = self._shape
        t.dtype = self.dtype
        t._var = self
        t._id = _next_id()
        return t

    def _read_as_itself(self):
        """A read that is the variable to every tape: a gradient's target, say."""
        t = self.read_value()
        t._id = self._id
        return t

    def numpy(self):
        value = self._value
        return value[()] if value.ndim == 0 else value.copy()

    def __array__(self, dtype=None, copy=None):
        # A copy, as TensorFlow's: the stored array is shared with every read of the
        # variable, so writing into it would change them all.
        return np.array(self._value, dtype=dtype, copy=True)

    # -- in-place updates: the Variable object stays, its value is replaced -------------
    def _new_value(self, value, op_name):
        t = convert_to_tensor(value, dtype=self.dtype)
        if t._shape != self._shape and None not in t._shape:
            raise ValueError(
                f"Cannot {op_name} to variable {self.name} of shape {list(self._shape)} "
                f"a value of shape {list(t._shape)}")
        return t

    def _set(self, value):
        graph = context.current_graph.get()
        if graph is not None:  # inside tf.function: a node that assigns at every call
            from .graph.variables import traced_assign
            traced_assign(graph, self, value)
        else:
            self._value = _as_value(value._value)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        self._set(self._new_value(value, "assign"))
        return _UnreadVariable(self) if read_value else None

    def _update(self, delta, op, op_name):
        delta = self._new_value(delta, op_name)
        if context.current_graph.get() is None:  # eager: an update, not a recorded read
            self._value = _as_value(op(self._value, delta._value))
        else:
            self._set(op(self.read_value(), delta))

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        self._update(delta, _add, "assign_add")
        return _UnreadVariable(self) if read_value else None

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        self._update(delta, _subtract, "assign_sub")
        return _UnreadVariable(self) if read_value else None

    def __getitem__(self, key):
        t = _ops.strided_slice(self, key)  # a read like any other: gradients flow through it
        # As in TensorFlow this read alone gets `assign` (Tensor.assign looks here).
        t._var = _Slice(self, key)
        return t

    # -- Python protocol ----------------------------------------------------------------
    def _repr_name(self):
        return self.name

    def __repr__(self):
        return (f"<tf.Variable '{self._repr_name()}' shape={TensorShape(self._shape)} "
                f"dtype={self.dtype.name}, numpy={_numpy_text(self._value, True)}>")

    def __str__(self):
        return self.__repr__()

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __index__(self):
        return self.read_value().__index__()

    def __len__(self):
        return len(self.read_value())

    def __iter__(self):
        return iter(self.read_value())

    def ref(self):
        from .tensor import _Reference
        return _Reference(self)

    def experimental_ref(self):
        return self.ref()


class _UnreadVariable(Variable):
    """What `assign` returns: the same variable, printed as TensorFlow prints it."""

    __slots__ = ("_target",)

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        return getattr(self._target, name)

    def _repr_name(self):
        return "UnreadVariable"

    def read_value(self):
        # The target's read: inside tf.function it must see the target's assignments.
        return self._target.read_value()

    value = read_value

    def _set(self, value):
        self._target._set(value)


for _attr in ("_value", "_id", "dtype", "_shape", "trainable", "_name"):
    # Reads go to the target so an UnreadVariable behaves exactly as the variable.
    setattr(_UnreadVariable, _attr, property(
        lambda self, a=_attr: getattr(self._target, a),
        lambda self, v, a=_attr: setattr(self._target, a, v)))
del _attr


def _as_value(value):
    """Stored values are NumPy arrays, or NumPy scalars for 0-d (see tensor.py)."""
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value


def _add(a, b):
    return a + b


def _subtract(a, b):
    return a - b


class _Slice:
    """`variable[key]` as the target of `assign`: the `_var` of that read.

    TensorFlow's slice has `assign(val, name=None)` only (no read_value, no assign_add),
    returning the UnreadVariable. It broadcasts the value by its own rule (_leading_ones).
    """

    __slots__ = ("key", "variable")

    def __init__(self, variable, key):
        while isinstance(variable, _UnreadVariable):  # graphs index the variable itself
            variable = variable._target
        self.variable = variable
        self.key = key

    def assign_slice(self, val, name=None):
        var = self.variable
        value = convert_to_tensor(val, dtype=var.dtype)
        # The variable's flat positions that the key selects, by the read's own rules
        # (and errors); with tensors in the key, known only when a traced function runs.
        positions = _ops.strided_slice(_positions(var._shape), self.key)
        if positions._value is not None and positions._value.size == 0:
            return _UnreadVariable(var)  # TensorFlow then checks nothing, changes nothing
        drop = _leading_ones(value._shape, positions._shape)
        graph = context.current_graph.get()
        if graph is None:
            update = np.reshape(value._value, value._shape[drop:])
            new = np.array(var._value, copy=True)
            np.put(new, positions._value, np.broadcast_to(update, positions._shape))
            var._value = _as_value(new)
        else:
            if drop:
                value = _ops.squeeze(value, axis=list(range(drop)))
            shape = positions._shape
            value = _ops.broadcast_to(value, _ops.shape(positions) if None in shape else shape)
            var._set(_traced_update(graph, var, positions, value))
        return _UnreadVariable(var)


def _positions(shape):
    size = int(np.prod(shape, dtype=np.int64))
    dtype = np.int32 if size < 2 ** 31 else np.int64
    return convert_to_tensor(np.arange(size, dtype=dtype).reshape(shape))


def _leading_ones(have, shape):
    """How many leading dimensions (all 1) of a value of shape `have` to drop before it
    broadcasts to the slice's `shape`, by TensorFlow's StridedSliceAssign rule: then each
    dimension must equal the slice's or be 1 (not NumPy's rule: a value may have more
    dimensions than the slice). Dimensions known only when a traced function runs are
    left to broadcast_to."""
    drop = max(len(have) - len(shape), 0)
    aligned = (1,) * (len(shape) - len(have)) + have[drop:]
    if any(d != 1 for d in have[:drop]) or any(
            a != b and a != 1 and a is not None and b is not None
            for a, b in zip(aligned, shape)):
        raise InvalidArgumentError(
            f"Cannot broadcast input shape {kernel_dims(have)} into final shape "
            f"{kernel_dims(shape)} [Op:ResourceStridedSliceAssign]",
            op="ResourceStridedSliceAssign")
    return drop




def _traced_update(graph, var, positions, value):
    """The variable's new value inside a traced function. Each element is picked (one
    gather) from the current value or from `value`, never computed from them: NaN and Inf
    outside the slice stay as they are."""
    from .graph.variables import traced_read
    flat = _ops.reshape(positions, [-1])
    total = int(np.prod(var._shape, dtype=np.int64))
    # picks[i]: i where the slice leaves element i, else total + j for positions[j] == i
    # (the j-th element of the update, after the current value in `both`).
    count = flat._shape[0]
    if count is None:  # a slice with tensor bounds
        count = _ops.size(flat, out_type=flat.dtype)
    moved = _ops.range(count, dtype=flat.dtype) + total - flat
    picks = _ops.range(total, dtype=flat.dtype) + _ops.scatter_nd(
        _ops.reshape(flat, [-1, 1]), moved, [total])
    both = _ops.concat([_ops.reshape(traced_read(graph, var), [-1]),
                        _ops.reshape(value, [-1])], 0)
    return _ops.reshape(_ops.gather(both, picks), var._shape)
