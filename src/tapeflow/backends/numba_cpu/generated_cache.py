"""A large graph's generated kernel, remembered by the graph itself.

The kernel cache is keyed by the generated source, so a warm process generates the
source before it can look its kernel up. For a graph of thousands of nodes (a Python loop
unrolled at trace time) that generation, and the outlining of its repeated code, is
nearly all of a warm first call: some 3 s of the unrolled RNN's at T=1000, where
loading its kernel then takes 0.05 s. So, for graphs of at least MIN_NODES nodes, what
generation made is kept in the cache directory beside the kernels, signed as they are:
the module's text, the kernel's parameters, and what the runtime
takes from the generator (the packs of scalar constants, the array constants, the
shape-like ints, the outputs, the variables assigned, and the node each error code and
each site names, by its place in the graph).

It is keyed by everything generation reads: the optimized graph in full (each node's op,
attributes, inputs, output shapes and dtypes, as graph/serialize.py writes a graph, less
the user's source lines; the constants' bytes; the variables' dtypes and shapes), tapeflow's own
source files, the versions in the kernels' key (cache.salt) and NumPy's, and microgemm's
choices for this CPU. A graph serialize.py cannot write (a random op's state, a Python
function), or whose generation refers to what is not a plain value, is generated each
time, as is any graph smaller than MIN_NODES, whose generation costs less than its key.
"""

import base64
import functools
import hashlib
import json
import os
import platform
import types

import numpy as np

from ... import cache_store
from ...graph.serialize import GraphWriter, decode_data, encode_data
from . import cache
from .generator import Param

# Smaller graphs generate in a few milliseconds: keying them would cost about as much.
MIN_NODES = 500
_FORMAT = 1
_SUFFIX = ".generated"
# The parameters whose references are plain values (the random ones name nodes, streams
# and seeds: such graphs are generated each time).
_PLAIN_PARAMS = {"input", "variable", "scalars", "array", "ints", "site"}


class _Unkeyable(ValueError):
    """The graph, or what generation made of it, is not plain data."""


def key(graph):
    """The hex key of what generating `graph` (optimized) makes, or None where it is not
    kept (a small graph, or one that is not plain data)."""
    nodes = sum(1 for _ in graph.all_nodes())
    if nodes < MIN_NODES:
        return None
    try:
        fingerprint = _fingerprint(graph)
    except (ValueError, TypeError):  # serialize.py could not write it
        return None
    h = hashlib.sha256(_environment())
    h.update(fingerprint)
    return h.hexdigest()


def load(found_key, graph):
    """(generated state, output specs, assigned, module source, params, digest) kept for
    `found_key`, with its nodes those of `graph`; None where nothing usable is kept (a
    damaged file is reported, removed, and generated again)."""
    path = _path(found_key)
    if not os.path.exists(path):
        return None
    body = cache_store.read_signed(path)
    try:
        if body is None:
            raise ValueError("not tapeflow's")
        found = _decoded(json.loads(body), graph, list(graph.all_nodes()))
    except (ValueError, KeyError, TypeError, IndexError) as e:
        if body is not None:
            cache_store.report_damage(path, f"{type(e).__name__}: {e}")
        cache_store.remove(path)
        return None
    cache_store.touch(path)
    return found


def save(found_key, graph, cg, output_specs, assigned, source, params, digest):
    """Keeps what generating `graph` made under `found_key`; nothing where it is not plain
    data, or the directory cannot be written (the next process generates it again)."""
    try:
        body = _encoded(list(graph.all_nodes()), cg, output_specs, assigned, source, params,
                        digest)
    except _Unkeyable:
        return
    try:
        cache_store.write_signed(_path(found_key), json.dumps(body).encode())
    except OSError:
        pass


# -- the key ----------------------------------------------------------------------------

def _fingerprint(graph):
    variables = {}

    def variable_key(variable):
        ordinal = variables.setdefault(id(variable), len(variables))
        return [ordinal, variable.dtype.name, list(variable._shape)]

    writer = _WriterWithoutLines(variable_key)
    encoded = writer.graph(graph)
    # repr, not json.dumps: the same data (JSON's types only), a third of the time; the
    # same graph writes its dicts in the same order.
    h = hashlib.sha256(repr(encoded).encode())
    for name in sorted(writer.arrays):
        array = np.ascontiguousarray(writer.arrays[name])
        if array.dtype.kind not in "biufc":
            raise TypeError(f"a constant of dtype {array.dtype}")
        h.update(f"{name} {array.dtype.str} {array.shape}".encode())
        h.update(array.tobytes())
    return h.digest()


class _WriterWithoutLines(GraphWriter):
    """graph/serialize.py's writer, less the user's lines (its nodes' and its sub-graphs'):
    the module text and what the runtime reads never hold them (an error names the line
    of the node in the graph it runs for), so a script run from another folder, or a
    notebook cell run again, finds what was kept. Only the shown source names them: it is
    generated when it is asked for (runtime.CompiledGraph.source)."""

    def graph(self, graph):
        encoded = super().graph(graph)
        for node in encoded["nodes"]:
            node["source"] = None
        return encoded


@functools.cache
def _environment():
    """What generation depends on besides the graph, once per process."""
    from .kernels import gemm_shape
    h = hashlib.sha256(cache.salt())
    h.update(f"numpy {np.__version__} python {platform.python_version()} format {_FORMAT} "
             f"microgemm {gemm_shape.VECTOR_BYTES} {gemm_shape.ENABLED} "
             f"{gemm_shape.ROWS} {gemm_shape.DEPTH}".encode())
    # tapeflow's own source: the passes, the lowerings and the op table all shape the
    # generated text, and a version number does not change with every edit.
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for folder, subfolders, files in os.walk(package):
        subfolders.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, package).encode() + b"\0")
                with open(path, "rb") as file:
                    h.update(hashlib.sha256(file.read()).digest())
    return h.digest()


def _path(found_key):
    return os.path.join(cache_store.directory(), f"{cache.module_name(found_key)}{_SUFFIX}")


# -- what is kept -------------------------------------------------------------------------

def _encoded(nodes, cg, output_specs, assigned, source, params, digest):
    places = {id(node): k for k, node in enumerate(nodes)}

    def place(node):
        if node is None:
            return None
        if id(node) not in places:
            raise _Unkeyable("a node outside the graph")
        return places[id(node)]

    def plain(value):
        try:
            return encode_data(value, _refuse)
        except (ValueError, TypeError) as e:
            raise _Unkeyable(str(e)) from None

    kept_params = []
    for p in params:
        if p.kind not in _PLAIN_PARAMS or not (p.ref is None or type(p.ref) in (int, str)):
            raise _Unkeyable(f"a {p.kind} parameter")
        kept_params.append([p.name, p.kind, p.ref, np.dtype(p.dtype).str, int(p.ndim)])
    outputs = []
    for kind, ref in output_specs:
        outputs.append([kind, _array(ref) if kind == "constant" else int(ref)])
    return {
        "format": _FORMAT, "source": source, "digest": digest,
        "params": kept_params,
        "scalar_packs": {name: _array(np.array(values, dtype=np.dtype(name)))
                         for name, values in cg.scalar_packs.items()},
        "arrays": [_array(np.asarray(a)) for a in cg.arrays],
        "ints": [int(v) for v in cg.ints],
        "errors": [[kind, place(node), plain(detail)] for kind, node, detail in cg.errors],
        "sites": [place(node) for node in cg.sites],
        "outputs": outputs,
        "assigned": [[int(index), int(k)] for index, k in assigned],
    }


def _refuse(value):
    raise _Unkeyable(f"a {type(value).__name__}")


def _array(array):
    array = np.asarray(array)
    if array.dtype.kind not in "biufc":
        raise _Unkeyable(f"an array of dtype {array.dtype}")
    return {"dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}


def _from_array(kept):
    dtype = np.dtype(kept["dtype"])
    if dtype.kind not in "biufc":
        raise ValueError(f"an array of dtype {dtype}")
    data = base64.b64decode(kept["data"], validate=True)
    # a copy: writable and owning its memory, as the generator's arrays were
    return np.frombuffer(data, dtype=dtype).reshape(kept["shape"]).copy()


def _text(value):
    if not isinstance(value, str):
        raise ValueError(f"expected text, found {value!r}")
    return value


def _decoded(kept, graph, nodes):
    if kept.get("format") != _FORMAT:
        raise ValueError("written by another version")
    source, digest = kept["source"], kept["digest"]
    if not isinstance(source, str) or cache.key(source) != digest:
        raise ValueError("its source is not the one its digest names")

    def node(place, required=False):
        if place is None and not required:  # a site may name none
            return None
        if type(place) is not int or not 0 <= place < len(nodes):
            raise ValueError(f"no node {place!r}")
        return nodes[place]

    state = types.SimpleNamespace(
        scalar_packs={name: _from_array(a) for name, a in kept["scalar_packs"].items()},
        arrays=[_from_array(a) for a in kept["arrays"]],
        ints=[int(v) for v in kept["ints"]],
        errors=[(_text(kind), node(place, required=True), _plain_value(detail))
                for kind, place, detail in kept["errors"]],
        sites=[node(place) for place in kept["sites"]])
    # What each kind of parameter refers to must be there (runtime.py looks it up).
    refs = {"input": range(len(graph.inputs)), "variable": range(len(graph.variables)),
            "scalars": state.scalar_packs, "array": range(len(state.arrays))}
    params = []
    for name, kind, ref, dtype, ndim in kept["params"]:
        if kind not in _PLAIN_PARAMS or not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"a parameter {name!r} of kind {kind!r}")
        if kind in refs and (type(ref) not in (int, str) or ref not in refs[kind]):
            raise ValueError(f"parameter {name} refers to {ref!r}, which is not there")
        params.append(Param(name, kind, ref, np.dtype(dtype), int(ndim)))
    outputs = [(kind, _from_array(ref) if kind == "constant" else int(ref))
               for kind, ref in kept["outputs"]]
    assigned = [(int(index), int(k)) for index, k in kept["assigned"]]
    return state, outputs, assigned, source, params, digest


def _plain_value(encoded):
    def fail(path, message):
        raise ValueError(f"{path}: {message}")

    def leaf(tag, body, whole, path):
        fail(path, f"unexpected {tag!r}")

    return decode_data(encoded, leaf, fail, "detail")
