"""Variable: a mutable, watchable value; each read is a Tensor snapshot of it."""

import numpy as np

from . import context
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
        self._name = name or "Variable"

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
            t = Tensor.__new__(Tensor)
            t._value = self._value
            t._shape = self._shape
            t.dtype = self.dtype
            t._var = self
            t._id = _next_id()
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
