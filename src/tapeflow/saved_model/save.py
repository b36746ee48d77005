"""tf.saved_model.save: an object's variables, tf.function traces and signatures, written
as tapeflow's own format (docs/saving.md): JSON, and NumPy arrays in .npz files."""

import inspect
import json
import os
import tempfile

import numpy as np

from .. import nest
from ..graph.function import ConcreteFunction, Function, TensorSpec
from ..graph.serialize import GraphWriter, encode_data
from ..tensor import Tensor, _Operators
from ..variable import Variable
from . import format as fmt
from .custom_gradients import saveable_graph
from .options import SaveOptions

# A TensorSpec of unknown rank: tapeflow's graphs know their ranks, so such a function
# is saved as one trace per rank from 0 to this bound, among those the function accepts.
UNKNOWN_RANK_TRACES = 5


def save(obj, export_dir, signatures=None, options=None):
    """Saves `obj` (a tf.Module or Keras layer) to the directory `export_dir`.

    Saved: the Variables it holds (through attributes, lists, dicts and tuples, in
    submodules too), the traces of its tf.function methods (those with an
    input_signature, and those already traced) and `signatures`, in tapeflow's own format
    (docs/saving.md), which tf.saved_model.load reads back without the Python code.

    Args:
      obj: the tf.Module (or Keras layer) to save.
      export_dir: the directory to write; files of an earlier save there are replaced.
      signatures: a tf.function with an input_signature, a ConcreteFunction, or a dict of
        them by signature name; by default the object's only tf.function with an
        input_signature, if it has exactly one, becomes "serving_default".
      options: a tf.saved_model.SaveOptions.

    Raises:
      ValueError: `obj` is not a module, or holds something tapeflow cannot save.
    """
    options = options or SaveOptions()
    if not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a tf.saved_model.SaveOptions, got {options!r}")
    if not _is_module(obj):
        raise ValueError(f"Expected an object of type `Trackable`, such as `tf.Module` or a "
                         f"subclass of the `Trackable` class, for export. Got {obj!r} with "
                         f"type {type(obj)}.")
    writer = _Writer(options.experimental_custom_gradients)
    root = writer.object(obj)
    named = _signature_functions(obj, signatures)
    document = {"format": fmt.FORMAT, "version": fmt.VERSION, "root": root,
                "objects": writer.objects, "functions": writer.functions,
                "signatures": {name: writer.signature(name, fn) for name, fn in named.items()},
                "variables": [{"name": v._name, "dtype": v.dtype.name, "shape": list(v._shape),
                               "trainable": v.trainable} for v in writer.variables]}
    export_dir = os.fspath(export_dir)
    os.makedirs(os.path.join(export_dir, fmt.VARIABLES_DIR), exist_ok=True)
    values = {f"v{i}": np.asarray(v._value) for i, v in enumerate(writer.variables)}
    _write_atomically(os.path.join(export_dir, fmt.VARIABLES_FILE),
                      lambda f: np.savez(f, **values))
    _write_atomically(os.path.join(export_dir, fmt.CONSTANTS_FILE),
                      lambda f: np.savez(f, **writer.graphs.arrays))
    # The JSON last: a reader never finds it before the arrays it refers to.
    text = json.dumps(document, allow_nan=False).encode()
    _write_atomically(os.path.join(export_dir, fmt.DOCUMENT_FILE), lambda f: f.write(text))


def _is_module(obj):
    from ..module import Module
    return isinstance(obj, Module)


def _write_atomically(path, write):
    """Calls write(file) on a new file that then replaces `path` in one step: a reader
    finds the old file or the whole new one."""
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(temp, 0o644)  # mkstemp's 0600 would hide the model from its readers
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


class _Writer:
    """Walks the object graph: modules, containers, Variables, tf.functions."""

    def __init__(self, save_gradients):
        self.objects = []
        self.functions = []
        self.variables = []
        self._save_gradients = save_gradients
        self._seen = {}  # id -> reference, so shared objects stay shared
        self._kept = []  # what the ids above belong to
        self.graphs = GraphWriter(self.variable_key)

    def variable_key(self, var):
        ref = self._seen.get(id(var))
        if ref is None:
            ref = self._remember(var, {"variable": len(self.variables)})
            self.variables.append(var)
        return ref["variable"]

    def _remember(self, obj, ref):
        self._seen[id(obj)] = ref
        self._kept.append(obj)
        return ref

    def ref(self, value):
        """A reference to a saveable value, or None for anything else (not saved)."""
        if id(value) in self._seen:
            return self._seen[id(value)]
        if isinstance(value, Variable):
            self.variable_key(value)
            return self._seen[id(value)]
        if isinstance(value, Function):
            return self._remember(value, {"function": self.function(value)})
        if isinstance(value, (list, tuple, dict)) or _is_module(value):
            return self.object(value)
        return None

    def object(self, obj):
        ref = self._remember(obj, {"object": len(self.objects)})
        entry = {}
        self.objects.append(entry)
        if isinstance(obj, (list, tuple)):
            entry["kind"] = type(obj).__name__ if type(obj) in (list, tuple) else "list"
            entry["items"] = [self.ref(v) for v in obj]
        elif isinstance(obj, dict):
            entry["kind"] = "dict"
            entry["items"] = [[k, self.ref(v)] for k, v in obj.items() if isinstance(k, str)]
        else:
            entry["kind"] = "module"
            entry["attributes"] = self._attributes(obj)
        return ref

    def _attributes(self, obj):
        attributes = {}
        for name, value in _members(obj):
            ref = self.ref(value)
            if ref is not None:
                attributes[name] = ref
        from ..keras.layers import Layer
        if isinstance(obj, Layer):
            # As a Keras layer loaded by tf.saved_model.load: its variable lists.
            for name in ("variables", "trainable_variables", "non_trainable_variables"):
                attributes[name] = self.object(list(getattr(obj, name)))
        return attributes

    # -- functions ------------------------------------------------------------------------
    def function(self, fn):
        index = len(self.functions)
        specs = fn._input_signature
        entry = {"name": fn._name, "parameters": _parameters(fn._signature),
                 "input_signature": None if specs is None else [
                     {"shape": None if s.shape is None else list(s.shape),
                      "dtype": s.dtype.name} for s in specs],
                 "concrete": []}
        self.functions.append(entry)
        entry["concrete"] = [self.concrete(c) for c in _traces(fn)]
        return index

    def concrete(self, concrete):
        graph = saveable_graph(concrete, self._save_gradients)
        params = concrete._call_signature._params if concrete._call_signature else [
            (f"x{i}", p) for i, p in enumerate(concrete.graph.inputs)]
        inputs = [[name, encode_data(value, _input_leaf(concrete.name))]
                  for name, value in params]
        outputs = encode_data(nest.pack_sequence_as(
            concrete.structured_outputs,
            [None if slot is None else fmt.OutputSlot(slot) for slot in concrete._output_slots]),
            _output_leaf(concrete.name))
        return {"graph": self.graphs.graph(graph), "inputs": inputs, "outputs": outputs}

    def signature(self, name, source):
        """A signature: the saved function it calls, its input and output names."""
        if isinstance(source, Function):
            index = self.ref(source)["function"]
            first = _traces(source)[0]
        else:
            first, index = source, len(self.functions)
            self.functions.append({"name": source.name, "parameters": None,
                                   "input_signature": None,
                                   "concrete": [self.concrete(source)]})
        return {"function": index, "inputs": [p.name for p in first.graph.inputs],
                "outputs": _output_names(name, first)}


def _input_leaf(name):
    def leaf(value):
        if isinstance(value, Tensor):
            return {"spec": {"shape": list(value._shape), "dtype": value.dtype.name}}
        raise ValueError(f"tapeflow cannot save the trace {name}: it was traced for the "
                         f"Python object {value!r}")
    return leaf


def _output_leaf(name):
    def leaf(value):
        if isinstance(value, fmt.OutputSlot):
            return {"output": value.index}
        raise ValueError(f"tapeflow cannot save the trace {name}: it returns {value!r}")
    return leaf


def _members(obj):
    """A module's attributes that may hold saveable values, its tf.function methods
    (bound to it) included, sorted by name."""
    return sorted({**obj._checkpoint_children(), **obj._functions()}.items())


def _parameters(signature):
    if signature is None:
        return None
    params = []
    for p in signature.parameters.values():
        entry = {"name": p.name, "kind": p.kind.name}
        if p.default is not inspect.Parameter.empty:
            try:
                entry["default"] = encode_data(p.default, _no_leaf)
            except ValueError:
                pass  # an object as default: a call must pass the argument
        params.append(entry)
    return params


def _no_leaf(value):
    raise ValueError(f"not data: {value!r}")


def _traces(fn):
    """The traces of a tf.function to save: with an input_signature, the one it
    describes (one per rank for specs of unknown rank); else every trace made so far."""
    if fn._input_signature is None:
        return [c for bucket in fn._traces.values() for c in bucket.values()]
    return _signature_traces(fn)


def _signature_traces(fn):
    specs = fn._input_signature
    if all(s.shape is not None for s in specs):
        return [fn.get_concrete_function()]
    traces = []
    for rank in range(UNKNOWN_RANK_TRACES):
        shaped = [s if s.shape is not None else TensorSpec([None] * rank, s.dtype, s.name)
                  for s in specs]
        try:
            traces.append(fn.get_concrete_function(
                *nest.pack_sequence_as(fn._signature_structure, shaped)))
        except (TypeError, ValueError, ArithmeticError, LookupError):
            continue  # a rank the function does not accept
    if not traces:
        raise ValueError(f"tapeflow cannot save {fn._name}: it traces for no rank below "
                         f"{UNKNOWN_RANK_TRACES}")
    return traces


def _signature_functions(obj, signatures):
    """{signature name: a tf.function with an input_signature, or a ConcreteFunction}, by
    TensorFlow's rule for the default."""
    if signatures is None:
        candidates = [fn for _, fn in _members(obj)
                      if isinstance(fn, Function) and fn._input_signature is not None]
        return {"serving_default": candidates[0]} if len(candidates) == 1 else {}
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    for name, fn in signatures.items():
        if isinstance(fn, Function) and fn._input_signature is None:
            raise ValueError(
                f"Expected a TensorFlow function for which to generate a signature (and "
                f"which takes an input_signature), got {fn!r} for {name!r}: pass "
                f"fn.get_concrete_function(...) or give it an input_signature.")
        if not isinstance(fn, (Function, ConcreteFunction)):
            raise ValueError(f"Expected a TensorFlow function to generate a signature for, "
                             f"but got {fn!r}.")
    return dict(signatures)


def _output_names(name, concrete):
    """TensorFlow's names for a signature's outputs: a dict's keys, else output_0, ..."""
    outputs = concrete.structured_outputs
    if isinstance(outputs, dict):
        if not all(isinstance(k, str) and isinstance(v, _Operators) for k, v in outputs.items()):
            raise ValueError(f"Outputs for functions used as signatures must be a single "
                             f"Tensor, a sequence of Tensors, or a dictionary from string to "
                             f"Tensor; signature {name!r} returns {outputs!r}.")
        return {k: concrete._output_slots[i] for i, k in enumerate(sorted(outputs))}
    flat = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    if not all(isinstance(v, _Operators) for v in flat):
        raise ValueError(f"Got a non-Tensor value in the output of the function "
                         f"{concrete.name} used to generate the SavedModel signature "
                         f"{name!r}. Outputs for functions used as signatures must be a "
                         f"single Tensor, a sequence of Tensors, or a dictionary from string "
                         f"to Tensor.")
    return {f"output_{i}": concrete._output_slots[i] for i in range(len(flat))}
