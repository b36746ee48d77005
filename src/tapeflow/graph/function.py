"""@function: trace once per input signature, run the graph (compiled when ready), and
differentiate a call as one tape entry whose gradient is itself a traced function."""

import functools
import inspect
import os
import queue
import sys
import threading
import time
import types
import warnings
import weakref

import numpy as np

from .. import context, dtypes, nest
from ..config import settings
from ..ops.draws import draws, drawn_outputs
from ..ops.random import nested_draws, streams
from ..ops.batching import Batched
from ..ops.registry import OpDef, never_bound, record
from ..tensor import Tensor, TensorShape, _Operators, convert_to_tensor, wrap
from .execute import run_graph
from .ir import Graph
from .trace import tracing, tracing_for_call_shapes, warn

_RETRACE_WARNING_AT = 5


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

class _TensorArg:
    """A tensor leaf of a call signature: dtype and shape (None dims when relaxed)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, tuple(shape)

    def _key(self):
        return (self.dtype.name, self.shape)

    def __eq__(self, other):
        return isinstance(other, _TensorArg) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def accepts(self, other):
        return (isinstance(other, _TensorArg) and other.dtype is self.dtype
                and len(other.shape) == len(self.shape)
                and all(a is None or a == b for a, b in zip(self.shape, other.shape)))

    def describe(self):
        return f"{self.dtype.name} tensor of shape {TensorShape(self.shape)}"


class _ObjectArg:
    """Any other Python object: a trace per object, held weakly where possible."""

    __slots__ = ("ref", "ident", "strong")

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


def _as_spec(spec):
    return spec if isinstance(spec, TensorSpec) else TensorSpec(spec.shape, spec.dtype)


def _is_array(value):
    """A NumPy array or numeric NumPy scalar: a tensor argument, as in TensorFlow (a new
    value of the same dtype and shape reuses the trace)."""
    return isinstance(value, np.ndarray) or (isinstance(value, np.generic)
                                             and value.dtype.kind in "biuf")


def _is_tensor_argument(value):
    """An argument that becomes a placeholder of the trace (not part of its key by value)."""
    return isinstance(value, (Tensor, TensorSpec)) or _is_array(value)


def _signature_of(value):
    """The part of the trace key one argument contributes (TensorFlow's rules: Tensors by
    dtype and shape, Python values by value, other objects by identity)."""
    if isinstance(value, Tensor):
        return _TensorArg(value.dtype, value._shape)
    if isinstance(value, _Operators):  # Variables: captured by reference, per object
        return _ObjectArg(value)
    if _is_array(value):
        return _TensorArg(dtypes.from_numpy(value.dtype), value.shape)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_signature_of(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _signature_of(value[k])) for k in sorted(value)))
    if value is None or isinstance(value, (bool, int, float, str, bytes, np.generic)):
        return ("py", type(value).__name__, value)
    if isinstance(value, TensorSpec):
        return _TensorArg(value.dtype, value.shape if value.shape is not None else ("any",))
    return _ObjectArg(value)


def _kind(part):
    """'py', 'list', 'tuple' or 'dict' for those trace-key parts, else None."""
    if isinstance(part, tuple) and part and part[0] in ("py", "list", "tuple", "dict"):
        return part[0]
    return None


def _describe_change(path, old, new):
    if isinstance(old, _TensorArg) and isinstance(new, _TensorArg):
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


# -- concrete functions -------------------------------------------------------------------

_no_infer = never_bound("tf.function call")


def _without_nones(grads):
    """(the gradients that are not None, each gradient's index among them or None): a
    graph's outputs and the slots that put the Nones back."""
    flat, slots = [], []
    for g in grads:
        slots.append(None if g is None else len(flat))
        if g is not None:
            flat.append(g)
    return flat, slots


def _has_op(graph, name):
    return any(node.op.name == name for node in graph.all_nodes())


_VARIABLE_UPDATES = threading.RLock()


def _wrap_outputs(arrays):
    """A compiled kernel's results as new Tensors (None stays None)."""
    return [None if a is None else wrap(a if isinstance(a, (np.ndarray, np.generic))
                                        else np.asarray(a)) for a in arrays]


def _watched_by(tapes, values):
    ids = [v._id for v in values]
    return any(i in tape._watched for tape in tapes for i in ids)


def _zeros(shape, dtype):
    from ..ops.creation import zeros
    return zeros(shape, dtype=dtype)


class _CompileWorker:
    """One daemon thread that runs the background compiles, in order. Starting a thread
    per trace cost the call that started it about 0.15 ms (a thread's start waits for the
    thread to run); queueing a job costs microseconds. Numba compiles one function at a
    time anyway (its compiler lock). A daemon, so that exiting never waits for a compile."""

    def __init__(self):
        self._jobs = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._pid = None  # the process whose thread it is: a forked child starts its own

    def submit(self, job):
        self._jobs.put(job)
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    threading.Thread(target=self._run, daemon=True,
                                     name="tapeflow-compile").start()
                    self._pid = os.getpid()

    def _run(self):
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # noqa: BLE001, S112 - _compile records its failures;
                continue  # nothing else may stop the compiles queued after this one


_compile_worker = _CompileWorker()
# Traces whose compile is queued or running. A forked child has no worker thread and
# none of the parent's other threads, so it starts these again itself.
_unfinished = weakref.WeakSet()


def _numba_compiler_lock():
    module = sys.modules.get("numba.core.compiler_lock")  # None until a compile started
    return None if module is None else module.global_compiler_lock


def _before_fork():
    """Waits for a Numba compile in progress: a child made while another thread holds
    Numba's compiler lock could never compile (nor load a cached kernel)."""
    lock = _numba_compiler_lock()
    if lock is not None:
        lock.acquire()


def _after_fork_in_parent():
    lock = _numba_compiler_lock()
    if lock is not None:
        lock.release()


def _after_fork_in_child():
    _after_fork_in_parent()
    _compile_worker.__init__()
    for concrete in list(_unfinished):
        concrete._restart_compile_after_fork()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)


class _CallSignature:
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
                elif _signature_of(value) != _signature_of(fixed):  # as the trace key
                    raise TypeError(f"{name}: argument '{param}' is {value!r}, but this "
                                    f"trace was made for {fixed!r}; call the tf.function "
                                    f"itself to trace for another value")
        return flat


class ConcreteFunction:
    """One trace of a tf.function: its graph, how to run it, and its gradient."""

    def __init__(self, graph, structured_outputs, output_slots, name, retrace=None,
                 split_calls=True, call_signature=None):
        self.graph = graph
        # The traced call, as the Python function's parameters see it (a _CallSignature),
        # for keyword calls and structured_input_signature; None for internal traces.
        self._call_signature = call_signature
        # retrace(flat_inputs) -> flat outputs: runs the Python function again in the
        # current context (needed when the graph holds custom gradients).
        self._retrace = retrace
        self.structured_outputs = structured_outputs
        self._output_slots = output_slots  # flat leaf index -> graph output index or None
        self._leaves = nest.flatten(structured_outputs)
        self._flat_container = (type(structured_outputs) if type(structured_outputs) in (
            list, tuple) and not any(nest.is_nested(x) for x in structured_outputs) else None)
        self.name = name
        self._backward = None
        self._split_cache = None
        self._vectorized = {}  # batch layout of the inputs -> the vectorized trace
        self._recorded_op = None
        # Calls of the user's functions run the split forward under a tape; the
        # functions made from them (backward and forward kernels) differentiate by replay.
        self._split_calls = split_calls
        self._compiled = None
        self._compile_error = None
        self._compile_done = None  # a threading.Event, once a background compile is queued
        self._lock = threading.Lock()          # starting the background compile
        self._compile_lock = threading.Lock()  # the compile itself: calls never wait on it
        self._assigns = _has_op(graph, "AssignVariableOp")
        self._nested_draws = nested_draws(graph)  # random ops in its branches and loops
        # A split forward: [(drawing node, indices of the outputs with what it drew)]
        self._drawn = []
        n_args = len(graph.inputs) + len(graph.variables)
        arg_names = tuple(f"x{i}" for i in range(n_args))
        self._call_op = OpDef(name=f"__inference_{name}", args=arg_names, infer=_no_infer,
                              eager=_no_infer, emit="call", grad=self._gradient,
                              saves=arg_names, n_out=len(graph.outputs))

    # -- running --------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        placeholders = self.graph.inputs
        flat = nest.flatten(args)
        if kwargs or (len(flat) != len(placeholders) and self._call_signature is not None):
            if self._call_signature is None:
                raise TypeError(f"{self.name} takes its tensors positionally")
            # As TensorFlow: the original function's parameters, by position or keyword.
            flat = self._call_signature.tensors_of(self.name, args, kwargs)
        flat = [convert_to_tensor(a) for a in flat]
        if len(flat) != len(placeholders):
            raise TypeError(f"{self.name} takes {len(placeholders)} tensors, got {len(flat)}")
        for i, (x, p) in enumerate(zip(flat, placeholders)):
            if not _TensorArg(p.dtype, p._shape).accepts(_TensorArg(x.dtype, x._shape)):
                raise TypeError(f"{self.name}: argument {i} is a {x.dtype.name} tensor of "
                                f"shape {TensorShape(x._shape)}; the trace expects "
                                f"{p.dtype.name} of shape {TensorShape(p._shape)}")
        return self._structured(self._call_flat(flat))

    @property
    def structured_input_signature(self):
        """(args, kwargs) of the traced call: a TensorSpec named after its parameter for
        each tensor, and the Python values the trace holds fixed."""
        if self._call_signature is None:
            return (tuple(TensorSpec(p._shape, p.dtype) for p in self.graph.inputs), {})
        return self._call_signature.structured()

    @property
    def inputs(self):
        """The graph's placeholders, in call order (as TensorFlow's ConcreteFunction)."""
        return list(self.graph.inputs)

    @property
    def outputs(self):
        """The graph's output tensors, flat."""
        return list(self.graph.outputs)

    @property
    def output_shapes(self):
        """The outputs' TensorShapes, in the structure the Python function returned."""
        return nest.map_structure(
            lambda t: t.shape if isinstance(t, _Operators) else None, self.structured_outputs)

    @property
    def output_dtypes(self):
        """The outputs' dtypes, in the structure the Python function returned."""
        return nest.map_structure(
            lambda t: t.dtype if isinstance(t, _Operators) else None, self.structured_outputs)

    def _structured(self, flat_outputs):
        filled = [leaf if slot is None else flat_outputs[slot]
                  for leaf, slot in zip(self._leaves, self._output_slots)]
        if self._flat_container is not None:  # a plain list or tuple of outputs
            return self._flat_container(filled)
        return nest.pack_sequence_as(self.structured_outputs, filled)

    def _call_flat(self, inputs):
        """Runs the graph on `inputs`; returns the flat outputs (Tensors, None allowed).
        A call that assigns variables runs alone: each reads the variables, runs, then
        writes them, so concurrent calls (threads; compiled kernels release the GIL)
        would lose updates that TensorFlow's atomic assign_add keeps."""
        if self._assigns:
            with _VARIABLE_UPDATES:
                return self._run(inputs)
        return self._run(inputs)

    def _run(self, inputs):
        compiled = self._compiled
        if (compiled is not None and not context.recording_tapes.get()
                and context.interpreter.get() is None
                and not context.variable_watchers.get()):
            return self._call_compiled(compiled, inputs)
        variables = self.graph.variables
        var_values = [v.read_value() for v in variables]
        if context.current_graph.get() is not None:
            # A call while tracing another function: inline this graph into that one.
            if self.graph.has_custom_gradient and self._retrace is not None:
                context.current_graph.get().has_custom_gradient = True
                return self._retrace(inputs)
            outputs, new_values = run_graph(self.graph, inputs, var_values)
            for var, old, new in zip(variables, var_values, new_values):
                if new is not old:
                    var.assign(new)
            return outputs
        if any(type(x) is Batched for x in inputs):
            return self._call_vectorized(inputs, var_values)
        tapes = context.recording_tapes.get()
        if tapes and self._split_calls and not self.graph.has_custom_gradient and _watched_by(
                tapes, list(inputs) + var_values):
            return self._call_recorded(inputs, var_values, tapes)
        token = context.recording_tapes.set(())
        try:
            outputs, new_values = self._execute(inputs, var_values)
        finally:
            context.recording_tapes.reset(token)
        self._update_variables(var_values, new_values)
        if tapes:
            real = [o for o in outputs if o is not None]
            if len(real) == len(outputs):
                record(self._call_op, {}, list(inputs) + var_values, outputs, tapes)
        return outputs

    def _call_compiled(self, compiled, inputs):
        """The common call: compiled code, and nobody (tape, trace, vectorized walk,
        custom gradient) to tell about it, so variables are read as bare arrays."""
        old_arrays = [v._value for v in self.graph.variables]
        arrays, new_arrays = compiled([x._value for x in inputs], old_arrays, self._streams())
        self._update_variables(old_arrays, new_arrays)
        return _wrap_outputs(arrays)

    def _streams(self):
        """This call's Generators for the random ops in branches and loops (or None)."""
        return streams(self._nested_draws) if self._nested_draws else None

    def _call_vectorized(self, inputs, var_values):
        """A call on Batched inputs (a vectorized backward walk passing through this
        function): runs the function's vectorized form, traced once per batch layout and
        compiled like any trace. Outputs come back Batched."""
        kind = Batched
        layout = tuple(x.batch_size if type(x) is kind else None for x in inputs)
        vectorized_fn = self._vectorized.get(layout)
        if vectorized_fn is None:
            vectorized_fn = self._vectorized[layout] = self._trace_vectorized(inputs, layout)
        flat = [x.inner if type(x) is kind else x for x in inputs] + list(var_values)
        return [kind(o) for o in vectorized_fn._call_flat(flat)]

    def _trace_vectorized(self, inputs, layout):
        from ..ops.batching import stacked, vectorized
        kind = Batched
        batch = next(b for b in layout if b is not None)
        graph = Graph(f"{self.graph.name}_vectorized")
        with tracing(graph):
            placeholders = [graph.placeholder(x._shape if b is None else (b,) + x._shape,
                                              x.dtype, "x") for x, b in zip(inputs, layout)]
            args = [p if b is None else kind(p) for p, b in zip(placeholders, layout)]
            vs = graph.placeholders_like(self.graph.variables, "var")
            with vectorized():
                outputs, _ = run_graph(self.graph, args, vs)
            graph.outputs = [o.inner if type(o) is kind else stacked(o, batch)
                             for o in outputs]
        graph.inputs = placeholders + vs
        return ConcreteFunction(graph, list(graph.outputs), list(range(len(graph.outputs))),
                                f"{self.name}_vectorized", split_calls=False)

    def _gradients(self, inputs):
        """Calls a backward function: one gradient per input of the forward, None where
        there is none (the graph's outputs hold only the others)."""
        flat = self._call_flat(inputs)
        return [None if slot is None else flat[slot] for slot in self._output_slots]

    def _update_variables(self, var_values, new_values):
        for var, old, new in zip(self.graph.variables, var_values, new_values):
            if new is not old:
                var._value = wrap(np.asarray(new._value if isinstance(new, Tensor) else new))._value

    # -- a call under a tape: the forward saves what the backward needs -------------------
    def _call_recorded(self, inputs, var_values, tapes):
        forward, backward, n_saves = self._split()
        n_out, n_var = len(self.graph.outputs), len(var_values)
        token = context.recording_tapes.set(())
        try:
            results = forward._call_flat(list(inputs) + var_values)
        finally:
            context.recording_tapes.reset(token)
        outputs = results[:n_out]
        self._update_variables(var_values, results[n_out:n_out + n_var])
        saves = results[n_out + n_var:]
        op = self._recorded_op
        if op is None:
            n_args = len(inputs) + n_var
            names = tuple(f"x{i}" for i in range(n_args))
            op = self._recorded_op = OpDef(
                name=f"__forward_{self.name}", args=names, infer=_no_infer, eager=_no_infer,
                emit="call", grad=self._split_gradient, none_dys=True,
                saves=names + tuple(f"out{n_out + i}" for i in range(n_saves)),
                n_out=n_out + n_saves)
        record(op, {}, list(inputs) + var_values, outputs + saves, tapes)
        return outputs

    def _split_gradient(self, ctx, *dys):
        forward, backward, n_saves = self._split()
        n_out = len(self.graph.outputs)
        n_args = len(self._recorded_op.args)
        args = [getattr(ctx, f"x{i}") for i in range(n_args)]
        shapes = ctx.out_shapes or [ctx.shapes[0]]
        dtypes_ = ctx.out_dtypes or [ctx.dtypes[0]]
        filled = [dy if dy is not None else _zeros(s, d)
                  for dy, s, d in zip(dys, shapes, dtypes_)]
        dy_out = filled[:n_out]
        if all(dy is None for dy in dys[n_out:]):
            saves = [getattr(ctx, f"out{n_out + i}") for i in range(n_saves)]
            return backward._gradients(saves + dy_out)
        # A higher-order gradient that flows into the saved values too: differentiate
        # the forward kernel as a whole (it replays it under a tape, with the numbers its
        # random ops drew: forward outputs, as saves).
        n_var = len(self.graph.variables)
        var_dys = [_zeros(v._shape, v.dtype) for v in args[len(args) - n_var:]]
        drawn = [getattr(ctx, f"out{k - n_var}") for _, ks in forward._drawn for k in ks]
        return forward._backward_function()._gradients(args + dy_out + var_dys +
                                                       filled[n_out:] + drawn)

    def _split(self):
        """One joint trace of forward and backward, cut in two: the nodes that do not
        depend on the output gradients form the forward kernel, which also returns the
        values the backward reads (the saves); the rest form the backward kernel. Random
        draws therefore happen once, in the forward, and the backward sees the same
        numbers; and the backward recomputes nothing. (Graphs holding custom gradients
        differentiate by retracing the Python code instead: their grad_fn closes over
        the trace.)"""
        if self._split_cache is None:
            from ..autodiff.tape import GradientTape
            from ..tensor import Symbolic
            graph = self.graph
            joint = Graph(f"{graph.name}_joint")
            with tracing(joint):
                xs = joint.placeholders_like(graph.inputs, "x")
                vs = joint.placeholders_like(graph.variables, "var")
                with GradientTape() as tape:
                    tape._watch_all(xs + vs)
                    outputs, new_vars = run_graph(graph, xs, vs)
                dys = joint.placeholders_like(outputs, "dy")
                grads = tape.gradient(outputs, xs + vs, output_gradients=dys)
            depends = {id(d) for d in dys}
            forward_nodes, backward_nodes = [], []
            for node in joint.nodes:
                if any(id(x) in depends for x in node.inputs):
                    backward_nodes.append(node)
                    depends.update(id(o) for o in node.outputs)
                else:
                    forward_nodes.append(node)
            saves, seen = [], set()
            needed = [x for n in backward_nodes for x in n.inputs] + [
                g for g in grads if g is not None]
            # What the forward drew is saved too: a gradient of gradients replays the
            # forward (see _backward_function) and must see the same numbers.
            drawing = [n for n in forward_nodes if draws(n)]
            needed += [y for n in drawing for y in drawn_outputs(n)]
            for x in needed:
                if isinstance(x, Symbolic) and id(x) not in depends and id(x) not in seen:
                    seen.add(id(x))
                    saves.append(x)
            fwd = Graph(f"{graph.name}_forward")
            fwd.inputs, fwd.nodes = xs + vs, forward_nodes
            fwd.outputs = list(outputs) + list(new_vars) + saves
            bwd = Graph(f"{graph.name}_backward")
            bwd.inputs, bwd.nodes = saves + dys, backward_nodes
            bwd.outputs, slots = _without_nones(grads)
            forward = ConcreteFunction(fwd, list(fwd.outputs), list(range(len(fwd.outputs))),
                                       f"{self.name}_forward", split_calls=False)
            position = {id(y): k for k, y in enumerate(fwd.outputs)}
            forward._drawn = [(n, [position[id(y)] for y in drawn_outputs(n)])
                              for n in drawing]
            backward = ConcreteFunction(bwd, list(grads), slots, f"{self.name}_backward",
                                        split_calls=False)
            self._split_cache = (forward, backward, len(saves))
        return self._split_cache

    def _execute(self, inputs, var_values):
        compiled = self._compiled_kernel()
        generators = self._streams()
        if compiled is None:
            token = context.random_streams.set(generators)
            try:
                outputs, new_values = run_graph(self.graph, inputs, var_values)
            finally:
                context.random_streams.reset(token)
            # Start the background compile after this first answer, not before: importing
            # Numba in a thread would compete with it for the interpreter lock.
            self._start_background_compile()
            return [self._fresh(o) for o in outputs], new_values
        arrays, new_arrays = compiled([x._value for x in inputs],
                                      [v._value for v in var_values], generators)
        outputs = _wrap_outputs(arrays)
        new_values = [old if new is old._value else wrap(np.asarray(new))
                      for old, new in zip(var_values, new_arrays)]
        return outputs, new_values

    @staticmethod
    def _fresh(t):
        # Outputs get ids of their own, even when the graph returns an input or a constant.
        return None if t is None else wrap(t._value)

    # -- tiers ----------------------------------------------------------------------------
    def _compiled_kernel(self):
        if self._compiled is not None or self._compile_error is not None:
            return self._compiled
        mode = settings.compile_mode
        if mode == "off":
            return None
        if mode == "sync":
            self._compile()
            return self._compiled
        return None

    def _start_background_compile(self):
        if settings.compile_mode in ("off", "sync") or self._compile_error is not None:
            return
        with self._lock:
            if self._compile_done is None and self._compiled is None:
                self._compile_done = threading.Event()
                _unfinished.add(self)
                _compile_worker.submit(self._compile_in_background)

    def _compile_in_background(self):
        try:
            # Hand the interpreter lock back first: the call that queued this compile
            # returns its answer now instead of after this thread's first time slice.
            time.sleep(0.001)
            self._compile()
        finally:
            self._compile_done.set()
            _unfinished.discard(self)

    def _restart_compile_after_fork(self):
        """In a forked child: the threads that held this trace's locks or ran its compile
        are gone. The next call (or wait_compiled) queues the compile again here."""
        self._lock = threading.Lock()
        self._compile_lock = threading.Lock()
        if self._compiled is None and self._compile_error is None:
            self._compile_done = None
        else:
            self._compile_done = threading.Event()
            self._compile_done.set()
            _unfinished.discard(self)

    def _compile(self):
        _unfinished.add(self)
        try:
            with self._compile_lock:
                self._compile_now()
        finally:
            _unfinished.discard(self)

    def _compile_now(self):
        if self._compiled is not None or self._compile_error is not None:
            return
        try:
            from ..backends.numba_cpu import Unsupported, compile_graph
        except ImportError as e:  # no compiled backend available: interpret
            self._compile_error = e
            return
        try:
            self._compiled = compile_graph(self.graph)
        except Unsupported as e:
            self._compile_error = e
            if _has_op(self.graph, "PrintV2"):  # documented: printing functions run on NumPy
                return
            warn(f"tf.function {self.name} runs with NumPy kernels, not compiled: {e}")
        except Exception as e:  # noqa: BLE001 - kept and shown: the NumPy kernels answer
            self._compile_error = e
            warn(f"tf.function {self.name} runs with NumPy kernels: compiling it failed "
                 f"with {type(e).__name__}: {e}")

    def wait_compiled(self, timeout=None):
        """Blocks until the background compile (if any) finished; True if compiled."""
        self._start_background_compile()
        done = self._compile_done
        if done is not None and self._compiled is None and self._compile_error is None:
            done.wait(timeout)
        return self._compiled is not None

    @property
    def kernel_source(self):
        """The generated Python source that Numba compiles for this trace."""
        if self._compiled is None and self._compile_error is None:
            self._compile()
        if self._compiled is None:
            raise ValueError(f"{self.name} is not compiled: {self._compile_error}")
        return self._compiled.source

    # -- gradients ------------------------------------------------------------------------
    def _gradient(self, ctx, *dys):
        inputs = [getattr(ctx, name) for name in self._call_op.args]
        backward = self._backward_function()
        grads = backward._gradients(list(inputs) + list(dys))
        return grads

    def _backward_function(self):
        if self._backward is None:
            from ..autodiff.tape import GradientTape
            graph = self.graph
            bwd = Graph(f"{graph.name}_grad")
            with tracing(bwd):
                xs = bwd.placeholders_like(graph.inputs, "x")
                vs = bwd.placeholders_like(graph.variables, "var")
                dys = bwd.placeholders_like(graph.outputs, "dy")
                # The values its random ops (and drawing branches and loops) drew in the
                # run being differentiated: the replay draws nothing.
                drawn = {id(node): bwd.placeholders_like([graph.outputs[k] for k in ks], "drawn")
                         for node, ks in self._drawn}
                sources = xs + vs
                with GradientTape() as tape:
                    tape._watch_all(sources)
                    if graph.has_custom_gradient and self._retrace is not None:
                        for v, var in zip(vs, graph.variables):
                            v._id = var._id  # the retrace's reads of var are this source
                        outputs = self._retrace(xs)
                    else:
                        outputs, _ = run_graph(graph, xs, vs, drawn)
                grads = tape.gradient(outputs, sources, output_gradients=dys)
            # A backward never repeats the forward's side effects.
            from .variables import ASSIGN_VARIABLE
            bwd.nodes = [n for n in bwd.nodes
                         if n.op is not ASSIGN_VARIABLE and n.op.name != "PrintV2"]
            bwd.outputs, slots = _without_nones(grads)
            self._backward = ConcreteFunction(bwd, list(grads), slots, f"{self.name}_grad")
        return self._backward

    def __repr__(self):
        return f"<ConcreteFunction {self.name} ({len(self.graph.nodes)} nodes)>"


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
            nest.map_structure(_as_spec, list(input_signature)))
        self._input_signature = None if input_signature is None else nest.flatten(
            self._signature_structure)
        self._reduce_retracing = reduce_retracing
        self._autograph = autograph
        self._jit_compile = jit_compile
        self._traces = {}
        self._tracing_count = 0
        self._graph_count = 0
        self._last_key = None
        self._warned = False
        self._lock = threading.RLock()
        self._signature = _python_signature(self._python_function)
        # Calls whose arguments are all Tensors, one per parameter: (shape, dtype) per
        # argument -> (trace, policy key), skipping argument binding and key building.
        self._fast_calls = {}
        self._fast_arity = _positional_arity(self._signature)
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
                if _is_array(value) and spec.dtype is not None:
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
            parts.append((names[i] if i < len(names) else f"arg{i}", _signature_of(value)))
        for k in sorted(kwargs):
            parts.append((k, _signature_of(kwargs[k])))
        return tuple(parts)

    def _relaxed(self, key):
        """With reduce_retracing: an existing trace that accepts `key`, or a key whose
        differing dims are None (traced once, then shared)."""
        for existing in self._traces:
            if _accepts(existing, key):
                return existing
        for existing in self._traces:
            general = _generalize(existing, key)
            if general is not None:
                return general
        return key

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tracing now if needed); `.graph` prints it."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        args, kwargs = self._canonical(args, kwargs)
        concrete, _ = self._concrete_for(args, kwargs)
        return concrete

    def _concrete_for(self, args, kwargs):
        """The trace for a call. Traces are counted (and warned about) per *policy* key:
        the exact signature, or with input_signature / reduce_retracing the relaxed one.
        Under one policy key, each exact set of shapes gets a graph of its own, traced
        quietly: tapeflow's graphs always know their shapes, and the compiled kernel is
        shared anyway, since it is keyed by ranks."""
        key = self._key(args, kwargs)
        exact = key if not _is_signature_key(key) else self._exact_key(args, kwargs)
        with self._lock:
            if key not in self._traces and not _is_signature_key(key):
                # A more general trace (get_concrete_function(TensorSpec([None]))) serves
                # the call, as TensorFlow's function cache looks up a compatible supertype.
                key = self._relaxed(key) if self._reduce_retracing else next(
                    (k for k in self._traces if _accepts(k, key)), key)
            bucket = self._traces.get(key)
            first = bucket is None
            if first:
                bucket = self._traces[key] = {}
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
                    self._note_retrace(key)
            self._last_key = key
        return concrete, key

    def _has_unknown_dims(self, key, exact):
        """Whether the counted trace for `key` leaves dimensions that `exact` (this
        call's shapes) fills in unknown."""
        if _is_signature_key(key):
            return any(spec.shape is None or None in tuple(spec.shape)
                       for spec in nest.flatten(self._input_signature)
                       if isinstance(spec, TensorSpec))
        return key != exact

    def _note_retrace(self, key):
        previous = self._last_key
        if (self._tracing_count >= _RETRACE_WARNING_AT and not self._warned
                and previous is not None and not _is_signature_key(previous)):
            self._warned = True
            change = _first_change(previous, key)
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
            if _is_tensor_argument(value):
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
            swap = (lambda v: next(values) if _is_tensor_argument(v) else v)
            again_args = nest.map_structure(swap, list(args))
            again_kwargs = {k: nest.map_structure(swap, kwargs[k]) for k in sorted(kwargs)}
            # Looked up now: a closure over the bound method would keep its object alive.
            again = self._traceable()(*again_args, **again_kwargs)
            return [leaf if isinstance(leaf, Tensor) else leaf.read_value()
                    for leaf in nest.flatten(again) if isinstance(leaf, _Operators)]

        call_signature = _CallSignature(self._signature, names, traced_args, traced_kwargs)
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
        fast_key = None
        if not kwargs and len(args) == self._fast_arity:
            fast_key = tuple([(a._shape, a.dtype) if type(a) is Tensor else None
                              for a in args])
            hit = None if None in fast_key else self._fast_calls.get(fast_key)
            if hit is not None:
                concrete, self._last_key = hit
                return concrete._structured(concrete._call_flat(list(args)))
        args, kwargs = self._canonical(args, kwargs)
        concrete, key = self._concrete_for(args, kwargs)
        if fast_key is not None and None not in fast_key:
            self._fast_calls[fast_key] = (concrete, key)
        flat = [convert_to_tensor(x) for x in nest.flatten((list(args), kwargs))
                if _is_tensor_argument(x)]
        return concrete._structured(concrete._call_flat(flat))

    def __repr__(self):
        return f"<tf.function {self._name}>"


def _positional_arity(signature):
    """How many arguments a call passes when it gives every parameter positionally (and
    binding would change nothing); -1 when the signature has other kinds of parameter."""
    if signature is None:
        return -1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = list(signature.parameters.values())
    return len(params) if all(p.kind in kinds for p in params) else -1


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


def _is_signature_key(key):
    return bool(key) and key[0] == "signature"


def _python_signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _first_change(old, new):
    if len(old) != len(new):
        return "the number of arguments changed"
    for (name_a, a), (name_b, b) in zip(old, new):
        if name_a != name_b or a != b:
            return _describe_change(repr(name_b), a, b)
    return "an argument changed"


def _walk_pairs(a, b):
    """Pairs of _TensorArg leaves at the same place in two keys (None if shapes differ)."""
    if isinstance(a, _TensorArg) or isinstance(b, _TensorArg):
        return [(a, b)] if isinstance(a, _TensorArg) and isinstance(b, _TensorArg) else None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        pairs = []
        for x, y in zip(a, b):
            sub = _walk_pairs(x, y)
            if sub is None:
                return None
            pairs.extend(sub)
        return pairs
    return [] if a == b else None


def _accepts(existing, key):
    pairs = _walk_pairs(existing, key)
    return pairs is not None and all(a.accepts(b) for a, b in pairs)


def _generalize(existing, key):
    pairs = _walk_pairs(existing, key)
    if pairs is None or any(a.dtype is not b.dtype or len(a.shape) != len(b.shape)
                            for a, b in pairs):
        return None

    def rebuild(a, b):
        if isinstance(a, _TensorArg):
            return _TensorArg(a.dtype, [x if x == y else None for x, y in zip(a.shape, b.shape)])
        if isinstance(a, tuple):
            return tuple(rebuild(x, y) for x, y in zip(a, b))
        return a

    return rebuild(existing, key)


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
