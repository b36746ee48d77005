"""Traced Graphs to JSON-able data and back; their constants travel as NumPy arrays.

Reading runs nothing that was read: an op is looked up by name in the op table or among
its savable structural entries (ops/structural.py), attrs are plain data (numbers, strings, tuples, dtypes,
sub-graphs, arrays by key), and every node is checked against its op's shape rule before
the graph is used. Anything else is a ValueError naming the file and the place in it.

A graph is {"name", "inputs": [aval], "variables": [saved variable index], "nodes":
[{"op", "inputs": [ref], "outputs": [aval], "attrs", "source"}], "outputs": [ref]}, where
an aval is {"shape": [int or null], "dtype", "name"} and a ref is {"value": k} (the k-th
value the graph defines: its inputs, then each node's outputs in order) or
{"constant": key} (an array of the constants file).
"""

import math

import numpy as np

from .. import dtypes
from ..ops.control import WHILE
from ..ops.registry import OPS
from ..ops.structural import IDENTITY_N, STRUCTURAL_OPS, of_kind
from ..tensor import Symbolic, Tensor, wrap
from .identity_n import identity_n
from .ir import Graph, Node

_DTYPES = {d.name: d for d in dtypes.ALL}


def _savable_structural(name):
    """The structural entry named `name` whose nodes a saved graph may hold, or None."""
    op = STRUCTURAL_OPS.get(name)
    return op if op is not None and op.savable else None


def _specialized(entry, args, saves, n_out):
    return entry.specialized(args=tuple(args), saves=tuple(saves), n_out=n_out)


# -- writing ----------------------------------------------------------------------------------

class GraphWriter:
    """Encodes graphs; the constants they hold collect in `arrays` (key -> ndarray).

    variable_key(variable) -> the variable's index among the saved variables (it raises
    for a variable that is not saved).
    """

    def __init__(self, variable_key):
        self.arrays = {}
        self._variable_key = variable_key
        self._constant_keys = {}  # id(tensor) -> key
        self._kept = []  # the tensors keyed by id, alive while their ids are keys

    def graph(self, graph):
        values = {}

        def define(t):
            values[id(t)] = len(values)
            return {"shape": list(t._shape), "dtype": t.dtype.name, "name": t.name}

        inputs = [define(t) for t in graph.inputs]
        nodes = []
        for node in graph.nodes:
            encoded = {"op": node.op.name, **self._op_fields(node.op),
                       "inputs": [self._ref(x, values, node) for x in node.inputs],
                       "attrs": self._attrs(node),
                       "outputs": [define(y) for y in node.outputs],
                       "source": list(node.source) if node.source else None}
            nodes.append(encoded)
        return {"name": graph.name, "inputs": inputs,
                "variables": [self._variable_key(v) for v in graph.variables],
                "nodes": nodes, "outputs": [self._ref(x, values, None) for x in graph.outputs]}

    def _ref(self, x, values, node):
        if isinstance(x, Symbolic):
            if id(x) not in values:
                where = f"node {node.op.name} at {node.where()}" if node else "an output"
                raise ValueError(f"cannot save graph: {where} uses %{x.name}, a value of "
                                 f"another graph")
            return {"value": values[id(x)]}
        return {"constant": self._array_key(x)}

    def _array_key(self, value):
        key = self._constant_keys.get(id(value))
        if key is None:
            key = self._constant_keys[id(value)] = f"c{len(self.arrays)}"
            array = value._value if isinstance(value, Tensor) else value
            self.arrays[key] = np.asarray(array)
            self._kept.append(value)
        return key

    def _op_fields(self, op):
        if OPS.get(op.name) is op:
            return {}
        if of_kind(op, IDENTITY_N):  # a custom gradient: what its copy of the entry holds
            return {"n_results": op.n_results, "gradient_slots": list(op.gradient_slots),
                    "gradient": None if op.gradient is None else self.graph(op.gradient)}
        if op.structural and op.savable and _specialized(op.entry, op.args, op.saves,
                                                         op.n_out) == op:
            return {"args": list(op.args), "saves": list(op.saves), "n_out": op.n_out}
        raise ValueError(f"tapeflow cannot save {op.name} nodes: it saves the op table's "
                         f"ops, tf.cond, tf.while_loop, variables and custom gradients")

    def _attrs(self, node):
        # A node's attrs may name nodes of its own sub-graphs (the draws of a branch or
        # loop): by (attr key, index).
        inner = {id(n): [key, i] for key, g in node.attrs.items() if isinstance(g, Graph)
                 for i, n in enumerate(g.nodes)}
        return {str(key): self._attr(value, inner, node, key)
                for key, value in node.attrs.items()}

    def _attr(self, value, inner, node, key):
        def leaf(v):
            if isinstance(v, dtypes.DType):
                return {"dtype": v.name}
            if v is Ellipsis:
                return {"ellipsis": None}
            if isinstance(v, Graph):
                return {"graph": self.graph(v)}
            if isinstance(v, Node) and id(v) in inner:
                return {"node": inner[id(v)]}
            if isinstance(v, Symbolic):
                # The loop variables' structure of a While node holds the values it was
                # built from: only the structure is ever read.
                return {"symbolic": None}
            if isinstance(v, Tensor):
                return {"tensor": self._array_key(v)}
            if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biuf":
                return {"array": self._array_key(v), "scalar": isinstance(v, np.generic)}
            raise ValueError(f"cannot save attr {key!r} of {node.op.name} (at {node.where()}):"
                             f" a {type(v).__name__} ({v!r})")
        return encode_data(value, leaf)


def encode_data(value, leaf):
    """Python data (None, bool, int, float, str, lists, tuples, dicts) as JSON values;
    any other value goes to leaf(value), which returns a tagged JSON object or raises."""
    if value is None or isinstance(value, (bool, int, str)) and not isinstance(
            value, np.generic):
        return value
    if isinstance(value, float) and not isinstance(value, np.generic):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, list):
        return [encode_data(x, leaf) for x in value]
    if isinstance(value, tuple):
        return {"tuple": [encode_data(x, leaf) for x in value]}
    if isinstance(value, dict):
        return {"dict": [[encode_data(k, leaf), encode_data(x, leaf)]
                         for k, x in value.items()]}
    return leaf(value)


def decode_data(value, leaf, fail, path):
    """The value encode_data wrote; a tagged object it does not know goes to
    leaf(tag, body, whole object, path). fail(path, message) raises."""
    if value is None or isinstance(value, (bool, int, str, float)):
        return value
    if isinstance(value, list):
        return [decode_data(v, leaf, fail, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict) or len(value) not in (1, 2):
        return fail(path, f"unreadable value {value!r}")
    tag = next(iter(value))
    body = value[tag]
    if tag == "tuple" and isinstance(body, list):
        return tuple(decode_data(v, leaf, fail, f"{path}[{i}]") for i, v in enumerate(body))
    if tag == "dict" and isinstance(body, list):
        result = {}
        for i, pair in enumerate(body):
            if not (isinstance(pair, list) and len(pair) == 2):
                fail(f"{path}[{i}]", "expected a [key, value] pair")
            key = decode_data(pair[0], leaf, fail, f"{path}[{i}].key")
            try:
                result[key] = decode_data(pair[1], leaf, fail, f"{path}[{i}]")
            except TypeError:
                fail(f"{path}[{i}]", f"unhashable key {key!r}")
        return result
    if tag == "float":
        if body not in ("inf", "-inf", "nan"):
            fail(path, f"expected inf, -inf or nan, found {body!r}")
        return float(body)
    return leaf(tag, body, value, path)


# -- reading ----------------------------------------------------------------------------------

class GraphReader:
    """Decodes graphs written by GraphWriter.

    arrays: key -> ndarray (the constants file, already checked for numeric dtypes);
    variables: the loaded Variables, by saved index; where: the file, for messages.
    """

    def __init__(self, arrays, variables, where):
        self._arrays = arrays
        self._variables = variables
        self._where = where
        self._tensors = {}  # key -> Tensor: a constant used twice is one Tensor

    def fail(self, path, message):
        raise ValueError(f"{self._where}: {path}: {message}")

    def graph(self, data, path):
        """The Graph of `data`; ValueError naming `path` when anything is amiss."""
        from .passes import VerifyError, verify
        data = self._object(data, path, ("name", "inputs", "variables", "nodes", "outputs"))
        graph = Graph(self._string(data["name"], f"{path}.name"))
        values = [graph.placeholder(*self._aval(a, f"{path}.inputs[{i}]"))
                  for i, a in enumerate(self._list(data["inputs"], f"{path}.inputs"))]
        graph.variables = [self._variable(k, f"{path}.variables[{i}]")
                           for i, k in enumerate(self._list(data["variables"],
                                                            f"{path}.variables"))]
        graph._variable_index = {id(v): i for i, v in enumerate(graph.variables)}
        for i, node_data in enumerate(self._list(data["nodes"], f"{path}.nodes")):
            node = self._node(graph, node_data, values, f"{path}.nodes[{i}]")
            graph.nodes.append(node)
            values.extend(node.outputs)
        graph.outputs = [self._ref(r, values, f"{path}.outputs[{i}]")
                         for i, r in enumerate(self._list(data["outputs"], f"{path}.outputs"))]
        try:
            verify(graph)
        except VerifyError as e:
            self.fail(path, str(e))
        graph.closed = True
        return graph

    # -- pieces ---------------------------------------------------------------------------
    def _object(self, data, path, keys):
        if not isinstance(data, dict):
            self.fail(path, f"expected an object, found {type(data).__name__}")
        missing = [k for k in keys if k not in data]
        if missing:
            self.fail(path, f"missing {', '.join(missing)}")
        return data

    def _list(self, data, path):
        if not isinstance(data, list):
            self.fail(path, f"expected a list, found {type(data).__name__}")
        return data

    def _string(self, data, path):
        if not isinstance(data, str):
            self.fail(path, f"expected a string, found {type(data).__name__}")
        return data

    def _int(self, data, path, low=0, high=None):
        if type(data) is not int or data < low or (high is not None and data >= high):
            bound = f" below {high}" if high is not None else ""
            self.fail(path, f"expected an integer from {low}{bound}, found {data!r}")
        return data

    def dtype(self, name, path):
        if not isinstance(name, str) or name not in _DTYPES:
            self.fail(path, f"unknown dtype {name!r}")
        return _DTYPES[name]

    def shape(self, data, path):
        if data is None:
            return None
        dims = self._list(data, path)
        return tuple(None if d is None else self._int(d, f"{path}[{i}]")
                     for i, d in enumerate(dims))

    def _aval(self, data, path):
        data = self._object(data, path, ("shape", "dtype"))
        shape = self.shape(data["shape"], f"{path}.shape")
        if shape is None:
            self.fail(f"{path}.shape", "a graph value needs a rank")
        name = data.get("name", "x")
        return shape, self.dtype(data["dtype"], f"{path}.dtype"), self._string(
            name, f"{path}.name")

    def _variable(self, index, path):
        return self._variables[self._int(index, path, 0, len(self._variables))]

    def constant(self, key, path):
        if not isinstance(key, str) or key not in self._arrays:
            self.fail(path, f"no array {key!r} in the constants file")
        tensor = self._tensors.get(key)
        if tensor is None:
            tensor = self._tensors[key] = wrap(self._arrays[key])
        return tensor

    def _ref(self, ref, values, path):
        ref = self._object(ref, path, ())
        if "value" in ref:
            return values[self._int(ref["value"], f"{path}.value", 0, len(values))]
        if "constant" in ref:
            return self.constant(ref["constant"], f"{path}.constant")
        return self.fail(path, f"expected a value or constant reference, found {ref!r}")

    def _node(self, graph, data, values, path):
        data = self._object(data, path, ("op", "inputs", "attrs", "outputs"))
        op = self._op(data, path)
        inputs = [self._ref(r, values, f"{path}.inputs[{i}]")
                  for i, r in enumerate(self._list(data["inputs"], f"{path}.inputs"))]
        attrs = self._attrs(data["attrs"], f"{path}.attrs")
        avals = [self._aval(a, f"{path}.outputs[{i}]")
                 for i, a in enumerate(self._list(data["outputs"], f"{path}.outputs"))]
        source = data.get("source")
        if source is not None:
            if not (isinstance(source, list) and len(source) == 2
                    and isinstance(source[0], str) and type(source[1]) is int):
                self.fail(f"{path}.source", f"expected [file, line], found {source!r}")
            source = tuple(source)
        self._check_structure(op, inputs, attrs, avals, graph, path)
        outputs = [graph._symbolic(shape, dtype, op.name.lower()) for shape, dtype, _ in avals]
        return Node(op, tuple(inputs), attrs, outputs, source)

    def _op(self, data, path):
        name = self._string(data["op"], f"{path}.op")
        table = OPS.get(name)
        if table is not None:
            return table
        base = _savable_structural(name)
        if base is None:
            self.fail(f"{path}.op", f"unknown op {name!r}: not in tapeflow's op table")
        if base is IDENTITY_N:
            return self._custom_gradient_identity(data, path)
        args = [self._string(a, f"{path}.args") for a in self._list(data.get("args"),
                                                                    f"{path}.args")]
        saves = [self._string(a, f"{path}.saves") for a in self._list(data.get("saves"),
                                                                      f"{path}.saves")]
        try:
            op = _specialized(base, args, saves,
                              self._int(data.get("n_out"), f"{path}.n_out"))
        except ValueError as e:
            return self.fail(path, f"{name}: {e}")
        return base if op == base else op  # variable nodes are told apart by identity

    def _custom_gradient_identity(self, data, path):
        """An IdentityN node's op: the entry's copy holding the node's own gradient."""
        slots = self._list(data.get("gradient_slots"), f"{path}.gradient_slots")
        gradient = data.get("gradient")
        if gradient is not None:
            gradient = self.graph(gradient, f"{path}.gradient")
            n_grads = len(gradient.outputs)
            slots = [None if s is None else self._int(s, f"{path}.gradient_slots", 0,
                                                      n_grads) for s in slots]
        n_results = self._int(data.get("n_results"), f"{path}.n_results")
        n_inputs = len(self._list(data["inputs"], f"{path}.inputs"))
        n_captured = n_inputs - n_results - len(slots)
        if n_captured < 0 or gradient is not None and \
                len(gradient.inputs) != n_results + n_captured:
            self.fail(path, "IdentityN's inputs do not match its gradient")
        return identity_n(n_results, slots, n_captured, gradient)

    def _check_structure(self, op, inputs, attrs, avals, graph, path):
        """What verify() cannot check: the structural nodes' variables and sub-graphs."""
        if not op.structural:
            return
        name = op.name
        if op.variable_access is not None:
            var = graph.variables[self._int(attrs.get("index"), f"{path}.attrs.index", 0,
                                            len(graph.variables))]
            if op.variable_access == "read":
                ok = len(avals) == 1 and avals[0][:2] == (var._shape, var.dtype)
            else:
                ok = len(inputs) == 1 and inputs[0].dtype is var.dtype and len(
                    inputs[0]._shape) == len(var._shape)
            if not ok:
                self.fail(path, f"{name} does not match its {var.dtype.name}"
                                f"{list(var._shape)} variable")
        elif op.subgraphs:
            if len(inputs) != len(op.args) or len(avals) != op.n_out:
                self.fail(path, f"{name} has {len(inputs)} inputs and {len(avals)} outputs "
                                f"for args {op.args} and {op.n_out} outputs")
            outputs = {f"out{k}" for k in range(op.n_out)}
            if not set(op.saves) <= set(op.args) | outputs:
                self.fail(f"{path}.saves", f"{op.saves} names values {name} does not have")
            first = op.leading_inputs
            for key in op.subgraphs:
                sub = attrs.get(key)
                if not isinstance(sub, Graph):
                    self.fail(f"{path}.attrs.{key}", "expected a graph")
                if [(len(x._shape), x.dtype) for x in sub.inputs] != [
                        (len(x._shape), x.dtype) for x in inputs[first:]]:
                    self.fail(f"{path}.attrs.{key}", "its inputs do not match the node's")
            if of_kind(op, WHILE):
                self._int(attrs.get("n_vars"), f"{path}.attrs.n_vars", 0, len(inputs) + 1)
        elif of_kind(op, IDENTITY_N) and [aval[:2] for aval in avals] != [
                (x._shape, x.dtype) for x in inputs]:
            self.fail(path, f"{name}'s outputs are not its inputs")

    def _attrs(self, data, path):
        data = self._object(data, path, ())
        decoded = {}
        # Sub-graphs first: other attrs may name their nodes.
        for key, value in data.items():
            if isinstance(value, dict) and set(value) == {"graph"}:
                decoded[key] = self.graph(value["graph"], f"{path}.{key}")
        for key, value in data.items():
            if key not in decoded:
                decoded[key] = self._attr(value, decoded, f"{path}.{key}")
        return decoded

    def _attr(self, value, graphs, path):
        def leaf(tag, body, whole, path):
            if tag == "dtype":
                return self.dtype(body, path)
            if tag == "ellipsis":
                return Ellipsis
            if tag == "node":
                if not (isinstance(body, list) and len(body) == 2
                        and isinstance(graphs.get(body[0]), Graph)):
                    self.fail(path, f"no sub-graph for node reference {body!r}")
                nodes = graphs[body[0]].nodes
                return nodes[self._int(body[1], f"{path}.node", 0, len(nodes))]
            if tag == "symbolic":
                return None
            if tag == "tensor":
                return self.constant(body, path)
            if tag == "array":
                array = self.constant(body, path)._value
                return np.asarray(array)[()] if whole.get("scalar") else np.asarray(array)
            return self.fail(path, f"unknown attr kind {tag!r}")
        return decode_data(value, leaf, self.fail, path)
