"""`tf.Module` and `tf.name_scope`: named objects whose Variables and submodules are
found by walking their attributes."""

import functools
import re
import threading

from . import context
from .tracking import DEFERRED_ATTRIBUTE, AutoTrackable
from .variable import Variable

# TensorFlow's rules (tensorflow/python/module/module.py), so names agree.
_VALID_IDENTIFIER = re.compile(r"^[a-zA-Z_]([a-zA-Z0-9_])*$")
_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


def camel_to_snake(value):
    """`MyHTTPModule` -> `my_http_module`, TensorFlow's default module name."""
    return _CAMEL_TO_SNAKE.sub(r"_\1", value).lower()


class name_scope:  # noqa: N801 (TensorFlow's name)
    """A context manager that prefixes the names of Variables created inside it, as
    `tf.name_scope` does in TensorFlow 2 (eagerly too; names are not made unique).

    A name ending in `/` is absolute: it replaces the enclosing scope instead of nesting
    in it; `""` returns to the top. Entering returns the scope's full name.

    >>> import tapeflow as tf
    >>> with tf.name_scope("outer"):
    ...     with tf.name_scope("inner") as scope:
    ...         v = tf.Variable(1.0, name="v")
    >>> scope, v.name
    ('outer/inner/', 'outer/inner/v:0')
    """

    def __init__(self, name):
        if not isinstance(name, str):
            raise ValueError("name for name_scope must be a string.")
        self._name = name
        # One object may be entered again while entered (a module's scope around a
        # recursive call) and from several threads: each thread keeps its own stack.
        self._entered = threading.local()

    @property
    def name(self):
        return self._name

    def __enter__(self):
        outer = context.name_scope.get()
        name = self._name
        if not name:
            scope = ""
        elif name.endswith("/"):
            scope = name
        else:
            scope = outer + name + "/"
        tokens = self._entered.__dict__.setdefault("tokens", [])
        tokens.append(context.name_scope.set(scope))
        return scope

    def __exit__(self, exc_type, exc_value, traceback):
        context.name_scope.reset(self._entered.tokens.pop())
        return False


def _is_module(value):
    return isinstance(value, Module)


def _is_variable(value):
    return isinstance(value, Variable)


def _leaves_with_paths(value):
    """(path, leaf) for each leaf of a nest of lists, tuples and dicts, as TensorFlow's
    `nest.flatten_with_tuple_paths`: dict entries in sorted-key order."""
    if isinstance(value, dict):
        for key in sorted(value):
            for path, leaf in _leaves_with_paths(value[key]):
                yield (key,) + path, leaf
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            for path, leaf in _leaves_with_paths(item):
                yield (i,) + path, leaf
    else:
        yield (), value


def _flatten_module(module, recursive, predicate, attribute_traversal_key, with_path,
                    module_path=(), seen=None, recursion_stack=None):
    """TensorFlow's walk: a module's own attributes (sorted by name) first, then each
    submodule's in the order found; without paths each object is given once."""
    if seen is None:
        seen = {id(module)}
    if recursion_stack is None:
        recursion_stack = []
    if id(module) in recursion_stack:  # a cycle: this module's leaves, no deeper
        recursive = False
    submodules = []
    attributes = vars(module)
    for key in sorted(attributes, key=attribute_traversal_key):
        if key == DEFERRED_ATTRIBUTE:
            continue
        prop = attributes[key]
        try:
            leaves = list(_leaves_with_paths(prop))
        except TypeError as cause:  # dict keys that do not sort
            raise ValueError(f"Error processing property {key!r} of {prop!r}") from cause
        for leaf_path, leaf in leaves:
            path = module_path + (key,) + leaf_path
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (path, leaf) if with_path else leaf
            if recursive and _is_module(leaf):
                submodules.append((path, leaf))
    recursion_stack.append(id(module))
    for path, submodule in submodules:
        yield from _flatten_module(submodule, recursive, predicate, attribute_traversal_key,
                                   with_path, path, seen, recursion_stack)
    recursion_stack.pop()


class Module(AutoTrackable):
    """A named container of Variables, other Modules and tf.functions, as `tf.Module`.

    Whatever its attributes hold (directly or inside lists, tuples and dicts) is found
    when asked for: `variables`, `trainable_variables`, `submodules`.

    >>> import tapeflow as tf
    >>> class Linear(tf.Module):
    ...     def __init__(self, units, name=None):
    ...         super().__init__(name=name)
    ...         self.w = tf.Variable(tf.ones([2, units]), name="w")
    ...         self.b = tf.Variable(tf.zeros([units]), name="b")
    ...     @tf.Module.with_name_scope
    ...     def __call__(self, x):
    ...         return x @ self.w + self.b
    >>> layer = Linear(3)
    >>> layer.name, [v.name for v in layer.trainable_variables]
    ('linear', ['b:0', 'w:0'])
    """

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not _VALID_IDENTIFIER.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be "
                             f"valid Python identifiers (e.g. a valid class name).")
        self._set_name(name)

    def _set_name(self, name):
        self._name = name
        # The scope is the one around the constructor plus the name, fixed now: entering
        # it later, anywhere, gives the same prefix.
        with name_scope(name) as scope:
            self._name_scope = name_scope(scope)

    @property
    def name(self):
        """The module's name: the constructor's `name`, or its class name in snake_case."""
        return self._name

    @property
    def name_scope(self):
        """A `tf.name_scope` for the module: `with self.name_scope:` prefixes the names
        of the Variables created inside with the module's name."""
        return self._name_scope

    @property
    def variables(self):
        """Every Variable this module and its submodules hold, each once."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and v.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(predicate=lambda v: _is_variable(v) and not v.trainable))

    @property
    def submodules(self):
        """The Modules found below this one: its own attributes' first, then theirs."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive=True, predicate=None, attribute_traversal_key=None,
                 with_path=False, expand_composites=False):
        """The values below this module for which `predicate` is true (all of them
        without one): a generator, as TensorFlow's.

        Attributes are visited in sorted name order (or by `attribute_traversal_key`),
        then the submodules found, depth by depth. With `with_path`, each value comes as
        (path, value), the path a tuple of attribute names, list indices and dict keys
        (`("layers", 0, "kernel")`), once for each path that reaches it.
        """
        return _flatten_module(self, recursive, predicate or (lambda _: True),
                               attribute_traversal_key, with_path)

    def _functions(self):
        """{name: tf.function} for the tf.function methods of the module's class and the
        tf.functions it holds as attributes, sorted by name; methods come bound to this
        module (each instance traces its own graphs)."""
        from .graph.function import Function
        found = {}
        for klass in type(self).__mro__:
            for name, value in vars(klass).items():
                if isinstance(value, Function) and name not in found:
                    found[name] = getattr(self, name)
        for name, value in vars(self).items():
            if isinstance(value, Function):
                found[name] = value
        return dict(sorted(found.items()))

    @classmethod
    def with_name_scope(cls, method):
        """Decorates a method to run inside the module's `name_scope`."""
        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return method_with_name_scope
