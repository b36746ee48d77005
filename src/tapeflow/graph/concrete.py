"""One trace of a tf.function (ConcreteFunction): running its graph in the tier at hand
(compiled kernel, NumPy interpreter, inlined into an enclosing trace, vectorized over a
batch) and recording a call on the tapes that watch it."""

import threading
import time

import numpy as np

from .. import context, nest, placement
from ..device_tensor import DeviceTensor, alias
from ..ops.batching import Batched
from ..ops.random import nested_draws, streams
from ..tensor import Tensor, TensorShape, _Operators, convert_to_tensor, wrap
from .compile_worker import Compilation
from .execute import run_graph
from .function_gradients import call_recorded
from .ir import Graph
from .signature import TensorArg, TensorSpec
from .trace import tracing
from .variables import ASSIGN_VARIABLE

_VARIABLE_UPDATES = threading.RLock()


def _wrap_outputs(arrays):
    """A compiled kernel's results as new Tensors (None stays None)."""
    return [None if a is None else wrap(a if isinstance(a, (np.ndarray, np.generic))
                                        else np.asarray(a)) for a in arrays]


def _watched_by(tapes, values):
    ids = [v._id for v in values]
    return any(i in tape._watched for tape in tapes for i in ids)


class ConcreteFunction:
    """One trace of a tf.function: its graph, how to run it, and its gradient."""

    def __init__(self, graph, structured_outputs, output_slots, name, retrace=None,
                 call_signature=None):
        self.graph = graph
        # The traced call, as the Python function's parameters see it (a CallSignature),
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
        self._vectorized = {}  # batch layout of the inputs -> the vectorized trace
        self._compilation = Compilation(graph, name, placement.trace_placement())
        self._assigns = any(node.op is ASSIGN_VARIABLE for node in graph.all_nodes())
        self._nested_draws = nested_draws(graph)  # random ops in its branches and loops
        # How a call under a tape is differentiated (function_gradients.CallGradient),
        # traced at the first such call.
        self._call_gradient = None
        # None: a call's random ops draw. A forward kernel's gradient replays a call
        # that happened: [(drawing node, indices of the outputs with what it drew)].
        self._replayed_draws = None

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
            if not TensorArg(p.dtype, p._shape).accepts(TensorArg(x.dtype, x._shape)):
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
        """A call, where it must run: the compiled kernel when nobody is told about it;
        inlined while tracing another function; vectorized on a batch; the forward kernel
        of the call's gradient when a tape watches (function_gradients.py); else the
        graph itself, interpreted until its kernel is compiled."""
        compiled = self._compilation.kernel
        if (compiled is not None and not context.recording_tapes.get()
                and context.interpreter.get() is None
                and not context.variable_watchers.get()):
            return self._call_compiled(compiled, inputs)
        var_values = [v.read_value() for v in self.graph.variables]
        if context.current_graph.get() is not None:
            return self._inline(inputs, var_values)
        if any(type(x) is Batched for x in inputs):
            return self._call_vectorized(inputs, var_values)
        tapes = context.recording_tapes.get()
        if tapes and _watched_by(tapes, list(inputs) + var_values):
            return call_recorded(self, inputs, var_values, tapes)
        token = context.recording_tapes.set(())
        try:
            outputs, new_values = self._execute(inputs, var_values)
        finally:
            context.recording_tapes.reset(token)
        self._update_variables(var_values, new_values)
        return outputs

    def _inline(self, inputs, var_values):
        """A call while tracing another function: this graph's nodes join that one."""
        if self.graph.has_custom_gradient and self._retrace is not None:
            context.current_graph.get().has_custom_gradient = True
            return self._retrace(inputs)
        outputs, new_values = run_graph(self.graph, inputs, var_values)
        for var, old, new in zip(self.graph.variables, var_values, new_values):
            if new is not old:
                var.assign(new)
        return outputs

    def _call_compiled(self, compiled, inputs):
        """The common call: compiled code, and nobody (tape, trace, vectorized walk,
        custom gradient) to tell about it, so variables are read as bare arrays."""
        if self._compilation.placed is not None:  # a GPU program: tensors in and out,
            # so device values stay in device memory
            old = [v._snapshot() for v in self.graph.variables]
            outputs, new = compiled(inputs, old, self._streams())
            self._update_variables(old, new)
            return outputs
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
        layout = tuple(x.batch_size if type(x) is Batched else None for x in inputs)
        vectorized_fn = self._vectorized.get(layout)
        if vectorized_fn is None:
            vectorized_fn = self._vectorized[layout] = self._trace_vectorized(inputs, layout)
        flat = [x.inner if type(x) is Batched else x for x in inputs] + list(var_values)
        return [Batched(o) for o in vectorized_fn._call_flat(flat)]

    def _trace_vectorized(self, inputs, layout):
        from ..ops.batching import stacked, vectorized
        batch = next(b for b in layout if b is not None)
        graph = Graph(f"{self.graph.name}_vectorized")
        with tracing(graph):
            placeholders = [graph.placeholder(x._shape if b is None else (b,) + x._shape,
                                              x.dtype, "x") for x, b in zip(inputs, layout)]
            args = [p if b is None else Batched(p) for p, b in zip(placeholders, layout)]
            vs = graph.placeholders_like(self.graph.variables, "var")
            with vectorized():
                outputs, _ = run_graph(self.graph, args, vs)
            graph.outputs = [o.inner if type(o) is Batched else stacked(o, batch)
                             for o in outputs]
        graph.inputs = placeholders + vs
        return ConcreteFunction(graph, list(graph.outputs), list(range(len(graph.outputs))),
                                f"{self.name}_vectorized")

    def _update_variables(self, var_values, new_values):
        for var, old, new in zip(self.graph.variables, var_values, new_values):
            if type(new) is DeviceTensor:
                if new is not old:
                    var._set(new)  # a device variable keeps the device array
            elif new is not old:
                var._value = wrap(np.asarray(new._value if isinstance(new, Tensor) else new))._value

    def _execute(self, inputs, var_values):
        compiled = self._compilation.for_this_call()
        generators = self._streams()
        if compiled is None:
            token = context.random_streams.set(generators)
            start = time.perf_counter()
            try:
                outputs, new_values = run_graph(self.graph, inputs, var_values)
            finally:
                context.random_streams.reset(token)
            # After the answer, not before: a compile would compete with it for the
            # interpreter lock.
            self._compilation.interpreted_for(time.perf_counter() - start)
            return [self._fresh(o) for o in outputs], new_values
        if self._compilation.placed is not None:  # a GPU program, on tensors
            return compiled(inputs, var_values, generators)
        arrays, new_arrays = compiled([x._value for x in inputs],
                                      [v._value for v in var_values], generators)
        outputs = _wrap_outputs(arrays)
        new_values = [old if new is old._value else wrap(np.asarray(new))
                      for old, new in zip(var_values, new_arrays)]
        return outputs, new_values

    @staticmethod
    def _fresh(t):
        # Outputs get ids of their own, even when the graph returns an input or a constant.
        return None if t is None else alias(t)

    # -- tiers ----------------------------------------------------------------------------
    def wait_compiled(self, timeout=None):
        """Blocks until the background compile (if any) finished; True if compiled."""
        return self._compilation.wait(timeout)

    @property
    def kernel_source(self):
        """The generated Python source that Numba compiles for this trace."""
        return self._compilation.source

    def __repr__(self):
        return f"<ConcreteFunction {self.name} ({len(self.graph.nodes)} nodes)>"

