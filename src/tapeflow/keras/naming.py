"""Keras 3's names: unique default object names and the scope that gives variables paths."""

import collections
import contextvars
import re
import threading

_name_counts = collections.Counter()
_name_counts_lock = threading.Lock()

# The Keras name scopes entered, outermost first: (name, the object that entered it).
# Independent of tf.name_scope, as in Keras 3.
_scopes = contextvars.ContextVar("tapeflow_keras_name_scopes", default=())


def to_snake_case(name):
    """Keras' rule: `BatchNormalization` -> `batch_normalization`."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def auto_name(class_name):
    """`dense`, then `dense_1`, `dense_2`, ...: one counter per name for every Keras
    object (layers and optimizers alike), as Keras' `auto_name`."""
    base = to_snake_case(class_name)
    with _name_counts_lock:
        n = _name_counts[base]
        _name_counts[base] += 1
    return base if n == 0 else f"{base}_{n}"


def check_name(name):
    """Keras' check of a layer's `name` argument."""
    if not isinstance(name, str) or "/" in name:
        raise ValueError(f"Argument `name` must be a string and cannot contain character "
                         f"`/`. Received: name={name} (of type {type(name)})")


class name_scope:  # noqa: N801 (Keras' name)
    """Keras' name scope: variables created inside have paths under it. Entering the
    scope its own object entered last adds nothing (a layer building inside its call)."""

    def __init__(self, name, caller):
        self.name, self.caller = name, caller
        self._tokens = []

    def __enter__(self):
        scopes = _scopes.get()
        if scopes and scopes[-1][0] == self.name and scopes[-1][1] is self.caller:
            self._tokens.append(None)
        else:
            self._tokens.append(_scopes.set(scopes + ((self.name, self.caller),)))
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        token = self._tokens.pop()
        if token is not None:
            _scopes.reset(token)
        return False


def variable_path(name):
    """The path of a variable named `name` created now: `outer/dense/kernel`."""
    return "/".join([scope for scope, _ in _scopes.get()] + [name])
