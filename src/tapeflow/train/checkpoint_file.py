"""tapeflow's checkpoint files: `<prefix>.index` (JSON: the object graph, each value's key,
dtype and shape, the data file's size and SHA-256) and `<prefix>.npz` (the values, as
NumPy arrays). Written atomically, data first; read without executing anything."""

import hashlib
import io
import json
import os
import re
import secrets
import zipfile

import numpy as np

from ..errors import DataLossError, NotFoundError

FORMAT = "tapeflow checkpoint"
VERSION = 1
# The dtypes a Variable can have; an array of any other (objects, above all) is refused.
DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                    "uint8", "bool"})
# An .npy header is at most a few hundred bytes; an entry much larger than its array is
# not tapeflow's (a compressed bomb, say) and is not read.
_NPY_HEADER_ALLOWANCE = 1 << 16


def index_path(prefix):
    return f"{prefix}.index"


def data_path(prefix):
    return f"{prefix}.npz"


def exists(prefix):
    return os.path.isfile(index_path(prefix))


def remove(prefix):
    for path in (index_path(prefix), data_path(prefix)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def write_atomically(path, data):
    """Writes bytes `data` to `path` so that `path` holds either its old content or all
    of `data`, whatever happens meanwhile: a temporary file in the same directory,
    flushed to disk, then renamed over it."""
    directory = os.path.dirname(path) or "."
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    try:
        with open(temporary, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.remove(temporary)
        except FileNotFoundError:
            pass
        raise
    try:  # the rename itself survives a power cut once the directory is synced
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write(prefix, index, arrays):
    """Writes the checkpoint `prefix`: `arrays[i]` is the value of `index["variables"][i]`.
    The data goes first and the index names its digest, so a reader never pairs an index
    with data from another (or an unfinished) save."""
    os.makedirs(os.path.dirname(prefix) or ".", exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **{f"v{i}": np.asarray(a) for i, a in enumerate(arrays)})
    data = buffer.getvalue()
    write_atomically(data_path(prefix), data)
    index = {"format": FORMAT, "version": VERSION, **index,
             "data": {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}}
    write_atomically(index_path(prefix), json.dumps(index, indent=1).encode("utf-8"))


# -- reading -------------------------------------------------------------------------------

class _Damaged(Exception):
    """What is wrong with an index, before the file's name is added."""


def _require(condition, what):
    if not condition:
        raise _Damaged(what)


def _is_int(value, low, high):
    return type(value) is int and low <= value < high


def _check_index(index):
    _require(isinstance(index, dict) and index.get("format") == FORMAT,
             "it is not a tapeflow checkpoint index")
    version = index.get("version")
    _require(type(version) is int, "no format version")
    _require(version <= VERSION, f"it was written by a newer tapeflow (format version "
                                 f"{version}; this one reads up to {VERSION})")
    data = index.get("data")
    _require(isinstance(data, dict) and _is_int(data.get("size"), 0, 1 << 62)
             and isinstance(data.get("sha256"), str)
             and re.fullmatch(r"[0-9a-f]{64}", data["sha256"]), "bad 'data' entry")
    variables = index.get("variables")
    _require(isinstance(variables, list), "no 'variables' list")
    for i, var in enumerate(variables):
        _require(isinstance(var, dict) and isinstance(var.get("key"), str)
                 and var.get("dtype") in DTYPES and isinstance(var.get("shape"), list)
                 and all(_is_int(d, 0, 1 << 62) for d in var["shape"]),
                 f"bad variable entry {i}")
    nodes = index.get("nodes")
    _require(isinstance(nodes, list) and nodes, "no 'nodes' list")
    for i, node in enumerate(nodes):
        _require(isinstance(node, dict) and isinstance(node.get("children"), dict)
                 and all(isinstance(name, str) and _is_int(child, 0, len(nodes))
                         for name, child in node["children"].items())
                 and ("variable" not in node
                      or _is_int(node["variable"], 0, len(variables))),
                 f"bad node {i}")
    slots = index.get("slots")
    _require(isinstance(slots, list), "no 'slots' list")
    for i, slot in enumerate(slots):
        _require(isinstance(slot, dict) and _is_int(slot.get("optimizer"), 0, len(nodes))
                 and _is_int(slot.get("variable"), 0, len(nodes))
                 and isinstance(slot.get("name"), str)
                 and _is_int(slot.get("value"), 0, len(variables)), f"bad slot entry {i}")


def _read_arrays(raw, variables):
    arrays = []
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        for i, var in enumerate(variables):
            info = archive.getinfo(f"v{i}.npy")
            dtype = np.dtype(var["dtype"])
            expected = dtype.itemsize * int(np.prod(var["shape"], dtype=np.int64))
            _require(info.file_size <= expected + _NPY_HEADER_ALLOWANCE,
                     f"value {i} ({var['key']}) is larger than its shape")
            with archive.open(info) as member:
                array = np.lib.format.read_array(member, allow_pickle=False)
            _require(array.dtype == dtype and list(array.shape) == var["shape"],
                     f"value {i} ({var['key']}) is a {array.dtype} array of shape "
                     f"{list(array.shape)}, its index says {var['dtype']} {var['shape']}")
            arrays.append(array)
    return arrays


class CheckpointData:
    """A checkpoint read and checked: `index` (as written) and `arrays`, the values."""

    def __init__(self, prefix, index, arrays):
        self.prefix, self.index, self.arrays = prefix, index, arrays


def read(prefix):
    """Reads and checks the checkpoint `prefix`. Raises NotFoundError if it does not
    exist, DataLossError (naming the file) if a file is truncated, damaged or not
    tapeflow's; nothing in the files is executed or unpickled."""
    path = index_path(prefix)
    if os.path.isdir(prefix) and not os.path.exists(path):
        raise DataLossError(f"Unable to open checkpoint {prefix}: it is a directory; pass "
                            f"a checkpoint prefix, such as tf.train.latest_checkpoint"
                            f"({prefix!r})")
    try:
        with open(path, "rb") as f:
            raw_index = f.read()
    except FileNotFoundError:
        raise NotFoundError(
            f"Failed to find any matching files for {prefix} (no {path})\nPlease "
            f"double-check that the path is correct. You may be missing the checkpoint "
            f"suffix (e.g. the '-1' in 'path/to/ckpt-1').") from None
    try:
        index = json.loads(raw_index.decode("utf-8"))
        _check_index(index)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise DataLossError(f"Unable to read checkpoint index {path}: not a tapeflow "
                            f"checkpoint index (truncated or damaged: {e})") from None
    except _Damaged as e:
        raise DataLossError(f"Unable to read checkpoint index {path}: {e}") from None
    data = data_path(prefix)
    try:
        with open(data, "rb") as f:
            raw = f.read(index["data"]["size"] + 1)
    except FileNotFoundError:
        raise NotFoundError(f"The checkpoint index {path} names the data file {data}, "
                            f"which does not exist") from None
    if len(raw) != index["data"]["size"] or \
            hashlib.sha256(raw).hexdigest() != index["data"]["sha256"]:
        raise DataLossError(f"Checkpoint data {data} does not match its index {path}: it "
                            f"is truncated, damaged, or from another save")
    try:
        arrays = _read_arrays(raw, index["variables"])
    except (_Damaged, KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise DataLossError(f"Unable to read checkpoint data {data}: {e}") from None
    return CheckpointData(prefix, index, arrays)
