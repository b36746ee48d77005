"""tf.saved_model.load: reads tapeflow's SavedModel directory back into objects whose
functions run the saved graphs. Nothing read is executed: no pickle, no eval, no import;
JSON and numeric arrays only, every reference and shape checked (docs/saving.md)."""

import inspect
import json
import os
import zipfile

import numpy as np

from .. import dtypes, nest
from ..graph.function import ConcreteFunction, TensorSpec
from ..graph.serialize import GraphReader, decode_data
from ..variable import Variable
from . import format as fmt
from .options import LoadOptions
from .restored import (RestoredFunction, SignatureFunction, SignatureMap, _UserObject,
                       signature_of)

_KINDS = {kind.name for kind in inspect._ParameterKind}


def load(export_dir, tags=None, options=None):
    """Loads a SavedModel that tf.saved_model.save wrote.

    Returns an object with the saved attributes: Variables, submodules, lists and dicts,
    and functions that run the saved traces (compiled, differentiable), plus
    `.signatures`. The Python code that defined them is not needed.

    Raises:
      OSError: a file of the SavedModel is missing (FileNotFoundError).
      ValueError: a file is damaged or not tapeflow's (the message names it).
    """
    if options is not None and not isinstance(options, LoadOptions):
        raise TypeError(f"options must be a tf.saved_model.LoadOptions, got {options!r}")
    return _Loader(os.fspath(export_dir)).root()


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _read_npz(path):
    """{name: array} of an .npz file of numeric arrays; pickled objects are refused."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"SavedModel file does not exist at: {path}")
    try:
        with np.load(path, allow_pickle=False) as npz:
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise ValueError("not an .npz archive")
            arrays = {name: npz[name] for name in npz.files}
    except AttributeError:  # np.load gave a bare array, which has no context manager
        raise ValueError(f"{path}: not an .npz archive") from None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise ValueError(f"{path}: damaged or not tapeflow's: {e}") from None
    for name, array in arrays.items():
        if array.dtype not in dtypes._BY_NUMPY:
            raise ValueError(f"{path}: array {name!r} has dtype {array.dtype}, which no "
                             f"tapeflow tensor has")
    return arrays


class _Loader:
    def __init__(self, export_dir):
        self._path = os.path.join(export_dir, fmt.DOCUMENT_FILE)
        if not os.path.isfile(self._path):
            raise FileNotFoundError(f"SavedModel file does not exist at: {self._path}")
        try:
            with open(self._path, "rb") as f:
                document = json.loads(f.read().decode("utf-8"),
                                      parse_constant=_reject_constant)
        except (ValueError, RecursionError, UnicodeDecodeError) as e:
            raise ValueError(f"{self._path}: not a tapeflow SavedModel (unreadable JSON: "
                             f"{e})") from None
        self._document = document
        if not isinstance(document, dict) or document.get("format") != fmt.FORMAT:
            raise ValueError(f"{self._path}: not a tapeflow SavedModel (format "
                             f"{document.get('format') if isinstance(document, dict) else None!r})")
        if document.get("version") != fmt.VERSION:
            raise ValueError(f"{self._path}: SavedModel version {document.get('version')!r}; "
                             f"this tapeflow reads version {fmt.VERSION}")
        self._variables = self._load_variables(os.path.join(export_dir, fmt.VARIABLES_FILE))
        self._graphs = GraphReader(_read_npz(os.path.join(export_dir, fmt.CONSTANTS_FILE)),
                                   self._variables, self._path)
        self._fail = self._graphs.fail

    def root(self):
        try:
            functions = [self._function(f, f"functions[{i}]")
                         for i, f in enumerate(self._list("functions"))]
            objects = self._list("objects")
            built = {}
            root = self._resolve(self._document.get("root"), objects, functions, built,
                                 "root")
            if not isinstance(root, _UserObject):
                self._fail("root", "the saved object is not a module")
            signatures = self._document.get("signatures")
            if not isinstance(signatures, dict):
                self._fail("signatures", "expected an object")
            root.signatures = SignatureMap(
                {name: self._signature(s, functions, f"signatures.{name}")
                 for name, s in signatures.items()})
        except (KeyError, IndexError, TypeError, AttributeError, RecursionError) as e:
            raise ValueError(f"{self._path}: damaged SavedModel ({type(e).__name__}: "
                             f"{e})") from None
        return root

    def _list(self, key):
        value = self._document.get(key)
        if not isinstance(value, list):
            self._fail(key, "expected a list")
        return value

    # -- variables -------------------------------------------------------------------------
    def _load_variables(self, path):
        entries = self._document.get("variables")
        if not isinstance(entries, list):
            raise ValueError(f"{self._path}: variables: expected a list")
        arrays = _read_npz(path)
        variables = []
        for i, entry in enumerate(entries):
            where = f"variables[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ValueError(f"{self._path}: {where}: expected a named variable")
            array = arrays.get(f"v{i}")
            if array is None:
                raise ValueError(f"{path}: no value for variable {i} ({entry['name']!r})")
            dtype = dtypes._BY_NAME.get(entry.get("dtype"))
            shape = entry.get("shape")
            if dtype is None or dtypes._BY_NUMPY[array.dtype] is not dtype or \
                    list(array.shape) != shape:
                raise ValueError(f"{path}: variable {entry['name']!r} is {array.dtype}"
                                 f"{list(array.shape)}; {self._path} says "
                                 f"{entry.get('dtype')}{shape}")
            variables.append(Variable(array, trainable=entry.get("trainable") is not False,
                                      name=entry["name"], dtype=dtype))
        return variables

    # -- functions -------------------------------------------------------------------------
    def _function(self, entry, path):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            self._fail(path, "expected a named function")
        concretes = [self._concrete(c, f"{path}.concrete[{k}]")
                     for k, c in enumerate(entry.get("concrete") or [])]
        specs = entry.get("input_signature")
        if specs is not None:
            specs = [TensorSpec(self._graphs.shape(s.get("shape"), f"{path}.input_signature"),
                                self._graphs.dtype(s.get("dtype"), f"{path}.input_signature"))
                     for s in specs]
        parameters = entry.get("parameters")
        if parameters is None:  # a signature's function: its trace's parameters
            parameters = [{"name": name, "kind": "POSITIONAL_OR_KEYWORD"}
                          for name, _ in (concretes[0][1] if concretes else [])]
        try:
            signature = signature_of([self._parameter(p, f"{path}.parameters")
                                      for p in parameters])
        except ValueError as e:
            self._fail(f"{path}.parameters", str(e))
        return RestoredFunction(entry["name"], signature, specs, concretes)

    def _parameter(self, entry, path):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or \
                not entry["name"].isidentifier() or entry.get("kind") not in _KINDS:
            self._fail(path, f"unreadable parameter {entry!r}")
        has_default = "default" in entry
        default = decode_data(entry["default"], self._no_leaf, self._fail, path) \
            if has_default else None
        return entry["name"], entry["kind"], has_default, default

    def _no_leaf(self, tag, body, whole, path):
        return self._fail(path, f"unexpected {tag!r} in plain data")

    def _concrete(self, entry, path):
        if not isinstance(entry, dict):
            self._fail(path, "expected an object")
        graph = self._graphs.graph(entry.get("graph"), f"{path}.graph")

        def spec_leaf(tag, body, whole, where):
            if tag != "spec" or not isinstance(body, dict):
                self._fail(where, f"expected a TensorSpec, found {tag!r}")
            return TensorSpec(self._graphs.shape(body.get("shape"), where),
                              self._graphs.dtype(body.get("dtype"), where))

        def output_leaf(tag, body, whole, where):
            if tag != "output":
                self._fail(where, f"expected an output reference, found {tag!r}")
            return fmt.OutputSlot(self._graphs._int(body, where, 0, len(graph.outputs)))

        params = []
        for k, pair in enumerate(entry.get("inputs") or []):
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                self._fail(f"{path}.inputs[{k}]", "expected [parameter, structure]")
            params.append((pair[0], decode_data(pair[1], spec_leaf, self._fail,
                                                f"{path}.inputs[{k}]")))
        specs = [s for _, structure in params for s in nest.flatten(structure)
                 if isinstance(s, TensorSpec)]
        if [(tuple(s.shape), s.dtype) for s in specs] != [
                (p._shape, p.dtype) for p in graph.inputs]:
            self._fail(f"{path}.inputs", "the parameters do not match the graph's inputs")
        structure = decode_data(entry.get("outputs"), output_leaf, self._fail,
                                f"{path}.outputs")
        leaves = nest.flatten(structure)
        slots = [leaf.index if isinstance(leaf, fmt.OutputSlot) else None for leaf in leaves]
        outputs = nest.pack_sequence_as(structure, [
            graph.outputs[s] if s is not None else leaf for leaf, s in zip(leaves, slots)])
        return ConcreteFunction(graph, outputs, slots, graph.name), params

    def _signature(self, entry, functions, path):
        if not isinstance(entry, dict):
            self._fail(path, "expected an object")
        function = functions[self._graphs._int(entry.get("function"), f"{path}.function", 0,
                                               len(functions))]
        if not function.concrete_functions:
            self._fail(path, "its function has no saved trace")
        graph = function.concrete_functions[0].graph
        names = entry.get("inputs")
        if not isinstance(names, list) or len(names) != len(graph.inputs) or not all(
                isinstance(n, str) for n in names):
            self._fail(f"{path}.inputs", "expected a name per input")
        specs = function._input_signature or [TensorSpec(p._shape, p.dtype)
                                              for p in graph.inputs]
        specs = [TensorSpec(s.shape, s.dtype, n) for s, n in zip(specs, names)]
        outputs = entry.get("outputs")
        if not isinstance(outputs, dict):
            self._fail(f"{path}.outputs", "expected an object")
        for c in function.concrete_functions:
            for name, k in outputs.items():
                self._graphs._int(k, f"{path}.outputs.{name}", 0, len(c.graph.outputs))
        return SignatureFunction(function, specs, dict(outputs))

    # -- objects ---------------------------------------------------------------------------
    def _resolve(self, ref, objects, functions, built, path):
        if ref is None:
            return None
        if not isinstance(ref, dict) or len(ref) != 1:
            self._fail(path, f"unreadable reference {ref!r}")
        (kind, index), = ref.items()
        if kind == "variable":
            return self._variables[self._graphs._int(index, path, 0, len(self._variables))]
        if kind == "function":
            return functions[self._graphs._int(index, path, 0, len(functions))]
        if kind != "object":
            self._fail(path, f"unknown reference kind {kind!r}")
        index = self._graphs._int(index, path, 0, len(objects))
        if index in built:
            return built[index]
        entry = objects[index]
        if not isinstance(entry, dict):
            self._fail(f"objects[{index}]", "expected an object")
        where = f"objects[{index}]"
        kind = entry.get("kind")
        if kind == "module":
            obj = built[index] = _UserObject()
            attributes = entry.get("attributes")
            if not isinstance(attributes, dict):
                self._fail(where, "expected attributes")
            for name, value in attributes.items():
                if not name.isidentifier() or name == "signatures" or (
                        name.startswith("__") and name != "__call__"):
                    self._fail(where, f"attribute name {name!r} is not allowed")
                setattr(obj, name, self._resolve(value, objects, functions, built,
                                                 f"{where}.{name}"))
            return obj
        items = entry.get("items")
        if not isinstance(items, list):
            self._fail(where, "expected items")
        if kind == "list":
            obj = built[index] = []
            obj.extend(self._resolve(v, objects, functions, built, f"{where}[{i}]")
                       for i, v in enumerate(items))
            return obj
        if kind == "dict":
            obj = built[index] = {}
            for i, pair in enumerate(items):
                if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                    self._fail(f"{where}[{i}]", "expected [key, value]")
                obj[pair[0]] = self._resolve(pair[1], objects, functions, built,
                                             f"{where}[{i}]")
            return obj
        if kind == "tuple":
            built[index] = None  # a tuple cannot hold itself
            obj = built[index] = tuple(
                self._resolve(v, objects, functions, built, f"{where}[{i}]")
                for i, v in enumerate(items))
            return obj
        return self._fail(where, f"unknown object kind {kind!r}")
