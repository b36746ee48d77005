"""The object graph a checkpoint saves: the objects reachable from a root by named
attributes (and list, tuple and dict entries), each once, breadth first."""

from ..variable import Variable


def _has_children(value):
    return hasattr(value, "_checkpoint_children") and not isinstance(value, type)


def is_trackable(value):
    """A Variable, an object with checkpoint children (Modules, layers, optimizers,
    Checkpoints), or a list, tuple or dict holding one."""
    if isinstance(value, Variable) or _has_children(value):
        return True
    if isinstance(value, dict):
        return any(is_trackable(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(is_trackable(v) for v in value)
    return False


def children(obj):
    """{name: child} of the trackable values right below `obj`: attribute names, list
    indices as strings, dict keys (which must be strings)."""
    if isinstance(obj, Variable):
        return {}
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = ((str(i), v) for i, v in enumerate(obj))
    else:
        items = obj._checkpoint_children().items()
    found = {}
    for name, value in items:
        if not is_trackable(value):
            continue
        if not isinstance(name, str):
            raise ValueError(
                f"Unable to save the object {obj!r} (a dictionary wrapper constructed "
                f"automatically on attribute assignment). The wrapped dictionary contains "
                f"a non-string key which maps to a trackable object or mutable data "
                f"structure.")
        found[name] = value
    return found


def _escape(name):
    # TensorFlow's escaping, so a name holding `/` cannot fake a deeper path.
    return name.replace(".", "..").replace("/", ".S")


class ObjectGraph:
    """The objects below `root`: `objects[i]` was first reached by `paths[i]` (names from
    the root), `edges[i]` maps its children's names to their node ids."""

    def __init__(self, root):
        self.objects, self.paths, self.edges = [root], [()], []
        ids = {id(root): 0}
        node = 0
        while node < len(self.objects):  # a queue: objects grows while it is walked
            edges = {}
            for name, child in children(self.objects[node]).items():
                if id(child) not in ids:
                    ids[id(child)] = len(self.objects)
                    self.objects.append(child)
                    self.paths.append(self.paths[node] + (name,))
                edges[name] = ids[id(child)]
            self.edges.append(edges)
            node += 1
        self._ids = ids

    def node_of(self, obj):
        return self._ids.get(id(obj))

    def variable_key(self, node):
        return "/".join(map(_escape, self.paths[node])) + "/.ATTRIBUTES/VARIABLE_VALUE"

    def slots(self):
        """(optimizer node, variable node, slot name, slot) for each slot of an optimizer
        in the graph whose variable is in the graph too."""
        found = []
        for node, obj in enumerate(self.objects):
            for var, name, slot in getattr(obj, "_checkpoint_slots", list)():
                var_node = self.node_of(var)
                if var_node is not None:
                    found.append((node, var_node, name, slot))
        return found

    def slot_key(self, optimizer_node, variable_node, name):
        # TensorFlow's key for a slot: under its variable, naming the optimizer.
        return "/".join([*map(_escape, self.paths[variable_node]), ".OPTIMIZER_SLOT",
                         *map(_escape, self.paths[optimizer_node] + (name,))])

    def variables(self):
        """Every Variable below the root, slots included."""
        found = [obj for obj in self.objects if isinstance(obj, Variable)]
        return found + [slot for _, _, _, slot in self.slots()]


def pretty_path(path):
    """TensorFlow's name of a checkpointed object in messages: `(root).model.kernel`."""
    return ".".join(("(root)",) + tuple(path))
