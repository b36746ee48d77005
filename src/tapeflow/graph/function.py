"""@function: the `Function` object (`tf.function`): trace once per input signature,
count and warn about retracing, and call the trace (graph/concrete.py) that fits.

Traces are ConcreteFunctions (graph/concrete.py); the call's key is graph/signature.py's;
a call under a tape is differentiated by graph/function_gradients.py."""

import functools
import threading
import types
import warnings
import weakref

import numpy as np

from .. import dtypes, nest, placement
from ..config import settings
from ..tensor import Tensor, TensorShape, _Operators, convert_to_tensor, wrap
from .concrete import ConcreteFunction
from .ir import Graph
from .signature import (
    CallSignature,
    TensorSpec,
    accepts,
    as_spec,
    call_argument,
    first_change,
    generalize,
    is_array,
    is_handle_argument,
    is_signature_key,
    is_tensor_argument,
    positional_arity,
    python_signature,
    trace_key_of,
)
from .trace import tracing, tracing_for_call_shapes

__all__ = ["ConcreteFunction", "Function", "TensorSpec", "function"]

_RETRACE_WARNING_AT = 5


# -- the decorator ------------------------------------------------------------------------

class _WeakMethod:
    """A method of an instance that it does not keep alive: bound() makes the bound
    method when the Function is called or traced."""

    __slots__ = ("function", "instance")

    def __init__(self, function, instance):
        self.function = function
        self.instance = weakref.ref(instance)

    def bound(self):
        instance = self.instance()
        if instance is None:
            raise ReferenceError(f"the object whose method {self.function.__name__} this "
                                 f"tf.function is has been deleted")
        return types.MethodType(self.function, instance)


class Function:
    """A Python function traced into graphs, one per input signature (`tf.function`)."""

    def __init__(self, python_function, input_signature=None, jit_compile=None,
                 reduce_retracing=False, autograph=True, name=None):
        if isinstance(python_function, _WeakMethod):
            functools.update_wrapper(self, python_function.function)
        else:
            functools.update_wrapper(self, python_function)
        self._target = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._signature_structure = None if input_signature is None else list(
            nest.map_structure(as_spec, list(input_signature)))
        self._input_signature = None if input_signature is None else nest.flatten(
            self._signature_structure)
        self._reduce_retracing = reduce_retracing
        self._autograph = autograph
        self._jit_compile = jit_compile
        # (device, policy key) -> {exact key -> trace}: as TensorFlow's function cache,
        # which keys on the device scope, a call placed on another device traces anew.
        self._traces = {}
        self._tracing_count = 0
        self._graph_count = 0
        self._last_key = None
        self._warned = False
        self._lock = threading.RLock()
        self._signature = python_signature(self._python_function)
        # Calls on the CPU whose arguments are all Tensors, one per parameter: (shape,
        # dtype) per argument -> (trace, (device, policy key)), skipping argument binding
        # and key building; the same per GPU in _gpu_fast_calls[device].
        self._fast_calls = {}
        self._gpu_fast_calls = {}
        self._fast_arity = positional_arity(self._signature)
        self._instances = {}  # id(instance) -> its Function (a method's), while it lives

    @property
    def _python_function(self):
        target = self._target
        return target.bound() if isinstance(target, _WeakMethod) else target

    @property
    def python_function(self):
        return self._python_function

    def __get__(self, instance, owner):
        """The method's Function for `instance`: one per instance (its traces are its
        own), holding the instance weakly, so an object with a tf.function method is
        freed as usual; unhashable instances (dataclasses) included."""
        if instance is None:
            return self
        bound = self._instances.get(id(instance))
        if bound is not None and bound._target.instance() is instance:
            return bound
        try:
            method = _WeakMethod(self._python_function, instance)
        except TypeError:  # no weak references to it (__slots__): bound for this call
            return Function(self._python_function.__get__(instance, owner),
                            self._input_signature, self._jit_compile,
                            self._reduce_retracing, self._autograph, self._name)
        bound = Function(method, self._input_signature, self._jit_compile,
                         self._reduce_retracing, self._autograph, self._name)
        self._instances[id(instance)] = bound
        weakref.finalize(instance, self._instances.pop, id(instance), None)
        return bound

    def experimental_get_tracing_count(self):
        return self._tracing_count

    def _canonical(self, args, kwargs):
        if self._signature is not None:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{self._name}() {e}") from None
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if self._input_signature is not None:
            args = self._conformed(args)
        return args, kwargs

    def _conformed(self, args):
        """`args` with the Python values that input_signature covers converted to Tensors
        of the spec's dtype, as TensorFlow converts `f([1.0, 2.0])` for a TensorSpec."""
        specs = self._signature_structure
        if len(args) < len(specs):
            raise TypeError(f"{self._name}: input_signature has {len(specs)} arguments, "
                            f"but the call passed {len(args)}")

        def conform(spec, value, where):
            if isinstance(spec, TensorSpec):
                if isinstance(value, (Tensor, TensorSpec)):
                    return value
                if is_array(value) and spec.dtype is not None:
                    # As TensorFlow: a NumPy array becomes a tensor of the spec's dtype.
                    try:
                        return wrap(np.asarray(value).astype(spec.dtype._np))
                    except (TypeError, ValueError):
                        raise TypeError(f"{self._name}: {where} (a NumPy {value.dtype} "
                                        f"array) cannot be cast for input_signature "
                                        f"{spec!r}") from None
                try:
                    return convert_to_tensor(value, dtype_hint=spec.dtype)
                except (TypeError, ValueError):
                    raise TypeError(f"{self._name}: {where} ({value!r}) cannot be converted "
                                    f"to a tensor for input_signature {spec!r}") from None
            if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
                return {k: conform(spec[k], value[k], f"{where}[{k!r}]") for k in value}
            if isinstance(spec, (list, tuple)) and isinstance(value, (list, tuple)) and \
                    len(spec) == len(value):
                return type(value)(conform(p, v, f"{where}[{i}]")
                                   for i, (p, v) in enumerate(zip(spec, value)))
            raise TypeError(f"{self._name}: {where} ({value!r}) does not have the structure "
                            f"of input_signature {spec!r}")

        return tuple(conform(spec, value, f"argument {i}")
                     for i, (spec, value) in enumerate(zip(specs, args))) + args[len(specs):]

    def _key(self, args, kwargs):
        if self._input_signature is not None:
            covered = len(self._signature_structure)
            tensors = nest.flatten(args[:covered])
            for i, (spec, x) in enumerate(zip(self._input_signature, tensors)):
                t = x if isinstance(x, TensorSpec) else convert_to_tensor(x)
                shape = t.shape if t.shape is not None else TensorShape(())
                if t.dtype is not spec.dtype or not spec._accepts_shape(shape):
                    raise TypeError(
                        f"{self._name}: argument {i} ({t.dtype.name} tensor of shape "
                        f"{t.shape}) is not compatible with input_signature "
                        f"{spec!r}")
            # One policy key for every shape the signature accepts (a spec of unknown rank
            # included): counted as one trace. Parameters after the signature's (those
            # with defaults) key as in a call without one.
            return ("signature", self._exact_key(args[covered:], kwargs, first=covered))
        return self._exact_key(args, kwargs)

    def _exact_key(self, args, kwargs, first=0):
        names = list(self._signature.parameters) if self._signature else []
        parts = []
        for i, value in enumerate(args, first):
            parts.append((names[i] if i < len(names) else f"arg{i}", trace_key_of(value)))
        for k in sorted(kwargs):
            parts.append((k, trace_key_of(kwargs[k])))
        return tuple(parts)

    def _relaxed(self, key, traced):
        """With reduce_retracing: a key of `traced` (those on the call's device) that
        accepts `key`, or a key whose differing dims are None (traced once, then shared)."""
        for existing in traced:
            if accepts(existing, key):
                return existing
        for existing in traced:
            general = generalize(existing, key)
            if general is not None:
                return general
        return key

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tracing now if needed); `.graph` prints it."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        args, kwargs = self._canonical(args, kwargs)
        concrete, _ = self._concrete_for(args, kwargs, _call_device())
        return concrete

    def _concrete_for(self, args, kwargs, device):
        """The trace for a call on `device` (`_call_device`). Traces are counted (and
        warned about) per device and *policy* key: the exact signature, or with
        input_signature / reduce_retracing the relaxed one.
        Under one policy key, each exact set of shapes gets a graph of its own, traced
        quietly: tapeflow's graphs always know their shapes, and the compiled kernel is
        shared anyway, since it is keyed by ranks."""
        key = self._key(args, kwargs)
        exact = key if not is_signature_key(key) else self._exact_key(args, kwargs)
        with self._lock:
            if (device, key) not in self._traces and not is_signature_key(key):
                # A more general trace (get_concrete_function(TensorSpec([None]))) serves
                # the call, as TensorFlow's function cache looks up a compatible supertype.
                traced = [k for d, k in self._traces if d == device]
                key = self._relaxed(key, traced) if self._reduce_retracing else next(
                    (k for k in traced if accepts(k, key)), key)
            bucket = self._traces.get((device, key))
            first = bucket is None
            if first:
                bucket = self._traces[device, key] = {}
            concrete = bucket.get(exact)
            if concrete is None:
                with tracing_for_call_shapes(self._has_unknown_dims(key, exact)):
                    concrete = self._trace(args, kwargs)
                if concrete.graph.created_variables:
                    # As TensorFlow: trace again; variables made on the first trace only
                    # (Keras layers building themselves) are fine, but a body that makes a
                    # new Variable at every call is an error.
                    concrete = self._trace(args, kwargs, forbid_variables=True)
                bucket[exact] = concrete
                if first:
                    self._tracing_count += 1
                    self._note_retrace(device, key)
            self._last_key = (device, key)
        return concrete, self._last_key

    def _has_unknown_dims(self, key, exact):
        """Whether the counted trace for `key` leaves dimensions that `exact` (this
        call's shapes) fills in unknown."""
        if is_signature_key(key):
            return any(spec.shape is None or None in tuple(spec.shape)
                       for spec in nest.flatten(self._input_signature)
                       if isinstance(spec, TensorSpec))
        return key != exact

    def _note_retrace(self, device, key):
        if self._last_key is None:
            return
        previous_device, previous = self._last_key
        if (self._tracing_count >= _RETRACE_WARNING_AT and not self._warned
                and not is_signature_key(previous)):
            self._warned = True
            change = (first_change(previous, key) if device == previous_device else
                      f"it was called on {_device_name(device)}, not "
                      f"{_device_name(previous_device)}")
            warnings.warn(
                f"tf.function {self._name} has been traced {self._tracing_count} times; the "
                f"latest retrace happened because {change}. Tracing is slow: use "
                f"input_signature, reduce_retracing=True, or pass tensors instead of Python "
                f"values.", RuntimeWarning, stacklevel=4)

    def _traceable(self):
        fn = self._python_function
        return _autograph_convert(fn) if self._autograph else fn

    def _trace(self, args, kwargs, forbid_variables=False):
        graph = Graph(self._name)
        graph.forbid_variables = forbid_variables
        spec_iter = iter(self._input_signature or ())

        def placeholder_for(value, name="x"):
            if is_handle_argument(value):
                return value._traced_argument(graph.placeholder((), dtypes.int64, name))
            if is_tensor_argument(value):
                spec = next(spec_iter, None)
                if isinstance(value, TensorSpec):
                    shape = value.shape if value.shape is not None else (
                        spec.shape if spec is not None else None)
                    if shape is None:
                        raise ValueError(
                            f"{self._name}: tapeflow traces need each tensor's rank; give "
                            f"the TensorSpec a shape such as [None, None]")
                    return graph.placeholder(tuple(shape), value.dtype, value.name or name)
                t = convert_to_tensor(value)
                return graph.placeholder(t._shape, t.dtype, name)
            return value

        # Placeholders are named after the parameters, as TensorFlow's ("y:0" for y).
        names = self._parameter_names(len(args))
        with tracing(graph):
            traced_args = [nest.map_structure(lambda v, n=n: placeholder_for(v, n), a)
                           for a, n in zip(args, names)]
            # Sorted, as nest.flatten orders dict keys: placeholders follow the call's
            # flat tensor order.
            traced_kwargs = {k: nest.map_structure(lambda v, k=k: placeholder_for(v, k),
                                                   kwargs[k])
                             for k in sorted(kwargs)}
            result = self._traceable()(*traced_args, **traced_kwargs)
            # As TensorFlow's func_graph: every output leaf but None becomes a Tensor
            # (Python numbers too); anything else is an error.
            result = nest.map_structure(lambda leaf: _as_output(leaf, self._name), result)
            leaves = nest.flatten(result)
            outputs, slots = [], []
            for leaf in leaves:
                if isinstance(leaf, _Operators):
                    value = leaf if isinstance(leaf, Tensor) else leaf.read_value()
                    slots.append(len(outputs))
                    outputs.append(value)
                else:
                    slots.append(None)
        graph.outputs = outputs
        self._graph_count += 1

        def retrace(flat_inputs):
            values = iter(flat_inputs)
            swap = (lambda v: (v._traced_argument(next(values)) if is_handle_argument(v)
                               else next(values)) if is_tensor_argument(v) else v)
            again_args = nest.map_structure(swap, list(args))
            again_kwargs = {k: nest.map_structure(swap, kwargs[k]) for k in sorted(kwargs)}
            # Looked up now: a closure over the bound method would keep its object alive.
            again = self._traceable()(*again_args, **again_kwargs)
            return [leaf if isinstance(leaf, Tensor) else leaf.read_value()
                    for leaf in nest.flatten(again) if isinstance(leaf, _Operators)]

        call_signature = CallSignature(self._signature, names, traced_args, traced_kwargs)
        return ConcreteFunction(graph, result, slots, f"{self._name}_{self._graph_count}",
                                retrace, call_signature=call_signature)

    def _parameter_names(self, n_args):
        names, rest = [], "args"
        if self._signature is not None:
            params = self._signature.parameters.values()
            names = [p.name for p in params
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            rest = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), rest)
        # As TensorFlow: *xs's tensors are xs_0, xs_1, ...
        extra = [f"{rest}_{i}" for i in range(n_args - len(names))]
        return (names + extra)[:n_args]

    def __call__(self, *args, **kwargs):
        if settings.run_functions_eagerly:
            return self._python_function(*args, **kwargs)
        # _call_device(), inlined: a call on the CPU costs the flag test only.
        device = placement.requested_gpu() if placement.active else None
        fast_calls = (self._fast_calls if device is None
                      else self._gpu_fast_calls.setdefault(device, {}))
        fast_key = None
        if not kwargs and len(args) == self._fast_arity:
            fast_key = tuple([(a._shape, a.dtype) if type(a) is Tensor else None
                              for a in args])
            hit = None if None in fast_key else fast_calls.get(fast_key)
            if hit is not None:
                concrete, self._last_key = hit
                return concrete._structured(concrete._call_flat(list(args)))
        args, kwargs = self._canonical(args, kwargs)
        concrete, key = self._concrete_for(args, kwargs, device)
        if fast_key is not None and None not in fast_key:
            fast_calls[fast_key] = (concrete, key)
        flat = [call_argument(x) for x in nest.flatten((list(args), kwargs))
                if is_tensor_argument(x)]
        return concrete._structured(concrete._call_flat(flat))

    def __repr__(self):
        return f"<tf.function {self._name}>"


def _call_device():
    """The device a call here traces and compiles for: the logical GPU its ops are placed
    on (placement.py resolves the tf.device scope, so the default placement and an
    explicit '/GPU:0' on a machine with one GPU are the same device), or None for the
    CPU. Without a GPU, with soft placement on and placement not logged
    (`placement.active` false), every call is on the CPU."""
    return placement.requested_gpu() if placement.active else None


def _device_name(device):
    return "the CPU" if device is None else f"GPU:{device}"


def _as_output(leaf, name):
    if leaf is None or isinstance(leaf, _Operators):
        return leaf
    try:
        return convert_to_tensor(leaf)
    except (TypeError, ValueError):
        raise TypeError(
            f"To be compatible with tf.function, Python functions must return zero or more "
            f"Tensors or None values; in compilation of {name}, found return value of type "
            f"{type(leaf).__name__}, which is not a Tensor.") from None


def _autograph_convert(fn):
    try:
        from . import autograph
    except ImportError:
        return fn
    return autograph.convert(fn)


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_relax_shapes=None, name=None, **kwargs):
    """Compiles a Python function into a graph (`tf.function`): decorator or call form.

    >>> import tapeflow as tf
    >>> @tf.function
    ... def f(x):
    ...     return x * x + 1.0
    >>> f(tf.constant(3.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=10.0>
    """
    relax = reduce_retracing or bool(experimental_relax_shapes)

    def decorate(fn):
        if isinstance(fn, Function):
            fn = fn.python_function
        return Function(fn, input_signature=input_signature, jit_compile=jit_compile,
                        reduce_retracing=relax, autograph=autograph, name=name)

    return decorate if func is None else decorate(func)
