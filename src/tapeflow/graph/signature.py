"""What a tf.function call is keyed by: TensorSpec, the trace key of a call's arguments
(tensors by dtype and shape, Python values by value, objects by identity), how a new key
differs from the last one (the retracing warning), relaxing keys to unknown dimensions
(reduce_retracing), and binding a ConcreteFunction's call to the traced parameters."""

import inspect
import weakref

import numpy as np

from .. import dtypes, nest
from ..tensor import Tensor, TensorShape, _Operators, convert_to_tensor


class TensorSpec:
    """Describes a Tensor argument of a tf.function: shape (None for any size) and dtype.

    >>> import tapeflow as tf
    >>> tf.TensorSpec(shape=[None, 3], dtype=tf.float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    """

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        # shape=None: any rank (a trace per rank met; tapeflow's graphs know ranks).
        self.shape = None if shape is None else TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else self.shape
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"

    def _accepts_shape(self, shape):
        return self.shape is None or self.shape.is_compatible_with(shape)

    def _shape_for(self, shape):
        return (None,) * len(shape) if self.shape is None else tuple(self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype) == (
            other.shape, other.dtype)

    def __hash__(self):
        return hash((None if self.shape is None else tuple(self.shape), self.dtype))

    def is_compatible_with(self, value):
        value = convert_to_tensor(value) if not isinstance(value, TensorSpec) else value
        return value.dtype == self.dtype and (
            value.shape is None or self._accepts_shape(value.shape))

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)


# -- signatures -------------------------------------------------------------------------

class TensorArg:
    """A tensor leaf of a call signature: dtype and shape (None dims when relaxed)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, tuple(shape)

    def _key(self):
        return (self.dtype.name, self.shape)

    def __eq__(self, other):
        return isinstance(other, TensorArg) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def accepts(self, other):
        return (isinstance(other, TensorArg) and other.dtype is self.dtype
                and len(other.shape) == len(self.shape)
                and all(a is None or a == b for a, b in zip(self.shape, other.shape)))

    def describe(self):
        return f"{self.dtype.name} tensor of shape {TensorShape(self.shape)}"


class _ObjectArg:
    """Any other Python object: a trace per object, held weakly where possible."""

    __slots__ = ("ident", "ref", "strong")

    def __init__(self, obj):
        self.ident = id(obj)
        try:
            self.ref, self.strong = weakref.ref(obj), None
        except TypeError:
            self.ref, self.strong = None, obj

    def __eq__(self, other):
        return isinstance(other, _ObjectArg) and other.ident == self.ident and (
            self.ref is None or self.ref() is not None)

    def __hash__(self):
        return self.ident

    def describe(self):
        return f"object {self.strong if self.ref is None else self.ref()!r}"


def as_spec(spec):
    return spec if isinstance(spec, TensorSpec) else TensorSpec(spec.shape, spec.dtype)


def is_array(value):
    """A NumPy array or numeric NumPy scalar: a tensor argument, as in TensorFlow (a new
    value of the same dtype and shape reuses the trace)."""
    return isinstance(value, np.ndarray) or (isinstance(value, np.generic)
                                             and value.dtype.kind in "biuf")


def is_handle_argument(value):
    """An object a call hands the trace as an int64 handle (a tf.data.Dataset): keyed by
    `_trace_spec()`, the trace sees `_traced_argument(placeholder)` and a call passes
    `_call_argument()`."""
    return hasattr(type(value), "_traced_argument")


def is_tensor_argument(value):
    """An argument that becomes a placeholder of the trace (not part of its key by value)."""
    return isinstance(value, (Tensor, TensorSpec)) or is_array(value) or is_handle_argument(
        value)


def call_argument(value):
    """The tensor a call passes for a placeholder argument."""
    return value._call_argument() if is_handle_argument(value) else convert_to_tensor(value)


def trace_key_of(value):
    """The part of the trace key one argument contributes (TensorFlow's rules: Tensors by
    dtype and shape, Python values by value, other objects by identity)."""
    if isinstance(value, Tensor):
        return TensorArg(value.dtype, value._shape)
    if isinstance(value, _Operators):  # Variables: captured by reference, per object
        return _ObjectArg(value)
    if is_array(value):
        return TensorArg(dtypes.from_numpy(value.dtype), value.shape)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(trace_key_of(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, trace_key_of(value[k])) for k in sorted(value)))
    if value is None or isinstance(value, (bool, int, float, str, bytes, np.generic)):
        return ("py", type(value).__name__, value)
    if isinstance(value, TensorSpec):
        return TensorArg(value.dtype, value.shape if value.shape is not None else ("any",))
    if is_handle_argument(value):
        return value._trace_spec()
    return _ObjectArg(value)


def _kind(part):
    """'py', 'list', 'tuple' or 'dict' for those trace-key parts, else None."""
    if isinstance(part, tuple) and part and part[0] in ("py", "list", "tuple", "dict"):
        return part[0]
    return None


def _describe_change(path, old, new):
    if isinstance(old, TensorArg) and isinstance(new, TensorArg):
        if old.dtype is not new.dtype:
            return f"argument {path} changed dtype from {old.dtype.name} to {new.dtype.name}"
        return (f"argument {path} changed shape from {TensorShape(old.shape)} to "
                f"{TensorShape(new.shape)}")
    kind = _kind(new)
    if kind is not None and kind == _kind(old):
        if kind == "py":
            return (f"argument {path} is a Python value that changed from {old[2]!r} to "
                    f"{new[2]!r} (every new Python value is a new trace: pass a tf.constant "
                    f"to reuse one)")
        if kind == "dict" and [k for k, _ in old[1]] != [k for k, _ in new[1]]:
            return (f"argument {path} is a dict whose keys changed from "
                    f"{[k for k, _ in old[1]]} to {[k for k, _ in new[1]]}")
        if len(old[1]) != len(new[1]):
            return (f"argument {path} is a {kind} whose length changed from {len(old[1])} "
                    f"to {len(new[1])}")
        for i, (a, b) in enumerate(zip(old[1], new[1])):
            if a != b:
                if kind == "dict":
                    return _describe_change(f"{path}[{a[0]!r}]", a[1], b[1])
                return _describe_change(f"{path}[{i!r}]", a, b)
    return f"argument {path} changed to {_describe_key(new)}"


def _describe_key(part):
    """A trace-key part as the user's value would be described."""
    kind = _kind(part)
    if kind == "py":
        return f"the Python value {part[2]!r}"
    if kind == "dict":
        return "a dict with keys " + ", ".join(repr(k) for k, _ in part[1])
    if kind is not None:
        return f"a {kind} of {len(part[1])}"
    describe = getattr(part, "describe", None)
    return describe() if describe else repr(part)


class CallSignature:
    """A trace's call, bound to the Python function's parameters: which tensors a call
    of the ConcreteFunction passes, by position or keyword, and which Python values it
    must repeat (or leave out)."""

    def __init__(self, signature, names, traced_args, traced_kwargs):
        self._signature = signature
        # (parameter, traced value: placeholders for tensors) in flat tensor order
        self._params = list(zip(names, traced_args)) + sorted(traced_kwargs.items())
        self._n_args = len(traced_args)

    def structured(self):
        def specs_of(value, name):
            # As TensorFlow: a structure's tensors are named pair_0, pair_1, ...
            leaves = nest.flatten(value)
            names = [name] if len(leaves) == 1 else [f"{name}_{i}" for i in range(len(leaves))]
            return nest.pack_sequence_as(value, [
                TensorSpec(v._shape, v.dtype, n) if isinstance(v, Tensor) else v
                for v, n in zip(leaves, names)])
        specs = [(name, specs_of(value, name)) for name, value in self._params]
        return tuple(v for _, v in specs[:self._n_args]), dict(specs[self._n_args:])

    def tensors_of(self, name, args, kwargs):
        """The flat tensors of a call `name(*args, **kwargs)`."""
        if self._signature is None or any(
                p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                for p in self._signature.parameters.values()):
            raise TypeError(f"{name}: the ConcreteFunction of a function with *args or "
                            f"**kwargs (or no signature) takes its tensors positionally")
        try:
            given = self._signature.bind_partial(*args, **kwargs).arguments
        except TypeError as e:
            raise TypeError(f"{name}: {e}") from None
        flat = []
        for param, traced in self._params:
            traced_leaves = nest.flatten(traced)
            holds_tensors = any(isinstance(v, Tensor) for v in traced_leaves)
            if param not in given:
                if holds_tensors:
                    raise TypeError(f"{name}: missing a required argument: '{param}'")
                continue
            leaves = nest.flatten(given[param])
            if len(leaves) != len(traced_leaves):
                raise TypeError(f"{name}: argument '{param}' has {len(leaves)} values where "
                                f"the trace has {len(traced_leaves)}")
            for value, fixed in zip(leaves, traced_leaves):
                if isinstance(fixed, Tensor):
                    flat.append(value)
                elif trace_key_of(value) != trace_key_of(fixed):  # as the trace key
                    raise TypeError(f"{name}: argument '{param}' is {value!r}, but this "
                                    f"trace was made for {fixed!r}; call the tf.function "
                                    f"itself to trace for another value")
        return flat



def positional_arity(signature):
    """How many arguments a call passes when it gives every parameter positionally (and
    binding would change nothing); -1 when the signature has other kinds of parameter."""
    if signature is None:
        return -1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = list(signature.parameters.values())
    return len(params) if all(p.kind in kinds for p in params) else -1



def is_signature_key(key):
    return bool(key) and key[0] == "signature"


def python_signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def first_change(old, new):
    if len(old) != len(new):
        return "the number of arguments changed"
    for (name_a, a), (name_b, b) in zip(old, new):
        if name_a != name_b or a != b:
            return _describe_change(repr(name_b), a, b)
    return "an argument changed"


def _walk_pairs(a, b):
    """Pairs of TensorArg leaves at the same place in two keys (None if shapes differ)."""
    if isinstance(a, TensorArg) or isinstance(b, TensorArg):
        return [(a, b)] if isinstance(a, TensorArg) and isinstance(b, TensorArg) else None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        pairs = []
        for x, y in zip(a, b):
            sub = _walk_pairs(x, y)
            if sub is None:
                return None
            pairs.extend(sub)
        return pairs
    return [] if a == b else None


def accepts(existing, key):
    pairs = _walk_pairs(existing, key)
    return pairs is not None and all(a.accepts(b) for a, b in pairs)


def generalize(existing, key):
    pairs = _walk_pairs(existing, key)
    if pairs is None or any(a.dtype is not b.dtype or len(a.shape) != len(b.shape)
                            for a, b in pairs):
        return None

    def rebuild(a, b):
        if isinstance(a, TensorArg):
            return TensorArg(a.dtype, [x if x == y else None for x, y in zip(a.shape, b.shape)])
        if isinstance(a, tuple):
            return tuple(rebuild(x, y) for x, y in zip(a, b))
        return a

    return rebuild(existing, key)

