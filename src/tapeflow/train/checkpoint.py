"""`tf.train.Checkpoint`: saves the Variables reachable from its arguments by attribute
paths, and restores them into objects with the same paths, including objects made after
the restore (a layer built later, an optimizer's slots made at its first step)."""

import collections
import functools
import logging
import os
import weakref

from .. import dtypes
from ..errors import InvalidArgumentError
from ..graph.trace import init_scope
from ..tracking import AutoTrackable
from ..variable import Variable
from . import checkpoint_file, object_graph
from .checkpoint_state import CheckpointState, write_state

_logger = logging.getLogger("tapeflow")


def _write(root, prefix):
    """Writes every Variable below `root` (optimizer slots included) as checkpoint
    `prefix`."""
    graph = object_graph.ObjectGraph(root)
    variables, arrays = [], []

    def add(key, var):
        variables.append({"key": key, "dtype": var.dtype.name, "shape": list(var.shape)})
        arrays.append(var.numpy())
        return len(variables) - 1

    nodes = []
    for node, obj in enumerate(graph.objects):
        nodes.append({"children": graph.edges[node]})
        if isinstance(obj, Variable):
            nodes[-1]["variable"] = add(graph.variable_key(node), obj)
    slots = [{"optimizer": opt, "variable": var, "name": name,
              "value": add(graph.slot_key(opt, var, name), slot)}
             for opt, var, name, slot in graph.slots()]
    checkpoint_file.write(prefix, {"nodes": nodes, "variables": variables, "slots": slots},
                          arrays)


def _saved_paths(nodes):
    """Each saved node's first path from the root, breadth first (as it was saved)."""
    paths = {0: ()}
    queue = collections.deque([0])
    while queue:
        node = queue.popleft()
        for name, child in nodes[node]["children"].items():
            if child not in paths:
                paths[child] = paths[node] + (name,)
                queue.append(child)
    return paths


class _Unrestored:
    """The values a restore has not given to any object yet, read when the restore is
    garbage collected (so it must not refer to the restore)."""

    def __init__(self, names):
        self.names = names  # value index -> its name in messages
        self.expected = False  # expect_partial() was called


def _warn_unrestored(unrestored):
    if unrestored.names and not unrestored.expected:
        _logger.warning(
            "Detecting that an object or model or tf.train.Checkpoint is being deleted "
            "with unrestored values. To silence these warnings, use "
            "`status.expect_partial()`.")
        for name in unrestored.names.values():
            _logger.warning("Value in checkpoint could not be found in the restored "
                            "object: %s", name)


class _Restoration:
    """One restore: matches saved nodes to objects by child names from the root, gives
    each matched Variable its value, and leaves callbacks on objects (and optimizers) for
    the children (and slots) that do not exist yet."""

    def __init__(self, data):
        self.data = data
        self.nodes = data.index["nodes"]
        self.variables = data.index["variables"]
        self.slots = data.index["slots"]
        self.paths = _saved_paths(self.nodes)
        self.matched = {}  # saved node -> object
        self.bound = {}  # id -> each object that got a value (kept, so ids stay unique)
        self.requested_slots = set()
        self.slots_of = collections.defaultdict(list)  # node -> its slot entries
        for i, slot in enumerate(self.slots):
            self.slots_of[slot["optimizer"]].append(i)
            self.slots_of[slot["variable"]].append(i)
        names = {node["variable"]: object_graph.pretty_path(self.paths.get(n, (str(n),)))
                 for n, node in enumerate(self.nodes) if "variable" in node}
        names.update((slot["value"], self.variables[slot["value"]]["key"])
                     for slot in self.slots)
        self.unrestored = _Unrestored(names)
        weakref.finalize(self, _warn_unrestored, self.unrestored)

    def match(self, node, obj):
        saved = self.nodes[node]
        if node in self.matched or ("variable" in saved) != isinstance(obj, Variable):
            return
        self.matched[node] = obj
        if "variable" in saved:
            self._assign(obj, saved["variable"])
        present = object_graph.children(obj)
        for name, child in saved["children"].items():
            if name in present:
                self.match(child, present[name])
            elif hasattr(obj, "_defer_restoration"):
                obj._defer_restoration(name, functools.partial(self._match_late, obj, name,
                                                               child))
        for slot in self.slots_of[node]:
            self._request_slot(slot)

    def _match_late(self, owner, name, node, value):
        if object_graph.is_trackable(value):
            self.match(node, value)
        else:  # set to None (say) first: wait for the real value
            owner._defer_restoration(name, functools.partial(self._match_late, owner, name,
                                                             node))

    def _request_slot(self, i):
        slot = self.slots[i]
        optimizer = self.matched.get(slot["optimizer"])
        var = self.matched.get(slot["variable"])
        if i in self.requested_slots or var is None or \
                not hasattr(optimizer, "_restore_slot"):
            return
        self.requested_slots.add(i)
        optimizer._restore_slot(var, slot["name"],
                                functools.partial(self._assign, index=slot["value"]))

    def _assign(self, var, index):
        saved, value = self.variables[index], self.data.arrays[index]
        if saved["dtype"] != var.dtype.name:
            raise InvalidArgumentError(
                f"tensor_name = {saved['key']}; expected dtype {var.dtype.name} does not "
                f"equal original dtype {saved['dtype']} (restoring {var.name} from "
                f"{self.data.prefix})")
        if list(var.shape) != saved["shape"]:
            raise ValueError(
                f"Received incompatible tensor with shape {tuple(saved['shape'])} when "
                f"attempting to restore variable with shape {tuple(var.shape)} and name "
                f"{var.name}.")
        with init_scope():  # a value, also when a traced function builds the variable
            var.assign(value)
        self.bound[id(var)] = var
        self.unrestored.names.pop(index, None)


class CheckpointLoadStatus:
    """What `Checkpoint.restore` and `read` return: checks of how the checkpoint and the
    objects matched, as TensorFlow's."""

    def __init__(self, restoration, root):
        self._restoration = restoration
        self._root = root

    def assert_consumed(self):
        """Raises AssertionError unless every value in the checkpoint went to an object
        (slots included) and every Variable below the root got one."""
        self.assert_existing_objects_matched()
        r = self._restoration
        for node, saved in enumerate(r.nodes):
            if "variable" in saved and node not in r.matched:
                var = r.variables[saved["variable"]]
                path = object_graph.pretty_path(r.paths.get(node, (str(node),)))
                raise AssertionError(
                    f"Unresolved object in checkpoint {path}: a {var['dtype']} variable of "
                    f"shape {var['shape']} (checkpoint key {var['key']!r})")
        unresolved = [r.variables[slot["value"]]["key"] for slot in r.slots
                      if slot["value"] in r.unrestored.names]
        if unresolved:
            raise AssertionError(f"Unresolved slot restorations: {unresolved}")
        return self

    def _unmatched_variables(self):
        bound = self._restoration.bound
        return [v for v in object_graph.ObjectGraph(self._root).variables()
                if id(v) not in bound]

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a Variable below the root now got no value (values
        for objects not made yet are not asked for)."""
        unmatched = self._unmatched_variables()
        if unmatched:
            shown = unmatched[:10]
            raise AssertionError(
                f"Found {len(unmatched)} Python objects that were not bound to checkpointed "
                f"values, likely due to changes in the Python program. Showing "
                f"{len(shown)} of {len(unmatched)} unmatched objects: {shown}")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing but the root matched."""
        if len(self._restoration.matched) <= 1:
            raise AssertionError(
                f"Nothing except the root object matched a checkpointed value. Typically "
                f"this means that the checkpoint does not match the Python program. The "
                f"following objects have no matching checkpointed value: "
                f"{self._unmatched_variables()}")
        return self

    def expect_partial(self):
        """Silences the warning about checkpoint values no object took."""
        self._restoration.unrestored.expected = True
        return self


class InitializationOnlyStatus:
    """What `restore(None)` returns: nothing is restored, so every assertion fails."""

    _MESSAGE = "No checkpoint specified (save_path=None); nothing is being restored."

    def assert_consumed(self):
        raise AssertionError(self._MESSAGE)

    assert_existing_objects_matched = assert_nontrivial_match = assert_consumed

    def expect_partial(self):
        return self


class Checkpoint(AutoTrackable):
    """Saves and restores the Variables reachable from its keyword arguments (Modules,
    Keras layers and optimizers, Variables, and lists and dicts of them), as
    `tf.train.Checkpoint`; the file format is tapeflow's own (see docs/saving.md).

    >>> import tempfile, tapeflow as tf
    >>> v = tf.Variable(1.0)
    >>> ckpt = tf.train.Checkpoint(v=v)
    >>> path = ckpt.save(tempfile.mkdtemp() + "/ckpt")
    >>> path.endswith("ckpt-1"), int(ckpt.save_counter)
    (True, 1)
    >>> _ = v.assign(5.0)
    >>> ckpt.restore(path).assert_consumed() and float(v)
    1.0
    """

    def __init__(self, root=None, **kwargs):
        named = dict(kwargs) if root is None else {"root": root, **kwargs}
        for name, value in named.items():
            if not object_graph.is_trackable(value):
                raise ValueError(
                    f"`Checkpoint` was expecting {name} to be a trackable object (an object "
                    f"derived from `Trackable`), got {value!r}. If you believe this object "
                    f"should be trackable (i.e. it is part of the TensorFlow Python API and "
                    f"manages state), please open an issue.")
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_save_counter", None)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def _checkpoint_children(self):
        found = object_graph.children(self._root) if self._root is not None else {}
        found.update((name, value) for name, value in vars(self).items()
                     if not name.startswith("_"))
        if self._save_counter is not None:
            found["save_counter"] = self._save_counter
        return found

    def _defer_restoration(self, name, restore):
        root = self._root
        if name != "save_counter" and hasattr(root, "_defer_restoration"):
            root._defer_restoration(name, restore)
        else:
            super()._defer_restoration(name, restore)

    @property
    def save_counter(self):
        """How many times `save` ran: an int64 Variable, made when first needed (and
        saved with the checkpoint), as TensorFlow's."""
        if self._save_counter is None:
            with init_scope():
                counter = Variable(0, dtype=dtypes.int64, trainable=False,
                                   name="save_counter")
            object.__setattr__(self, "_save_counter", counter)
            self._restore_deferred("save_counter", counter)
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes the checkpoint `file_prefix` (`.index` and `.npz` files) and returns
        it; touches neither `save_counter` nor the directory's `checkpoint` file."""
        file_prefix = os.fspath(file_prefix)
        _write(self, file_prefix)
        return file_prefix

    def save(self, file_prefix, options=None):
        """Adds one to `save_counter`, writes `<file_prefix>-<save_counter>`, names it in
        the directory's `checkpoint` file (for `tf.train.latest_checkpoint`) and returns
        it."""
        counter = self.save_counter
        with init_scope():
            counter.assign_add(1)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter)}")
        write_state(os.path.dirname(path) or ".", CheckpointState(path, [path]))
        return path

    def read(self, save_path, options=None):
        """Restores the values of checkpoint `save_path` written by `write` (or `save`):
        into the objects that exist now, and into those made later at the same paths.
        Returns a CheckpointLoadStatus."""
        restoration = _Restoration(checkpoint_file.read(os.fspath(save_path)))
        restoration.match(0, self)
        return CheckpointLoadStatus(restoration, self)

    def restore(self, save_path, options=None):
        """As `read`, also restoring `save_counter`; `save_path=None` (no checkpoint
        yet, as `latest_checkpoint` gives) restores nothing."""
        if save_path is None:
            return InitializationOnlyStatus()
        status = self.read(save_path)
        self.save_counter  # noqa: B018 (made now, it takes its saved value)
        return status
