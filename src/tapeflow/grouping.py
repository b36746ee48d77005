"""tf.no_op, tf.group, tf.tuple, tf.control_dependencies and tf.get_current_name_scope.
Ops run in program order, eagerly and in a traced function alike (a function's stateful
ops and checks are kept and ordered as written, as TensorFlow 2's automatic control
dependencies order them), so grouping and control dependencies have nothing left to
order: they return what TensorFlow 2 returns eagerly."""

import contextlib

from . import context


def no_op(name=None):
    """Does nothing (tf.no_op); None, as in eager TensorFlow."""
    return None


def group(*inputs, **kwargs):
    """Groups ops to run together (tf.group); None, as in eager TensorFlow."""
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"Unknown keyword arguments: {sorted(unknown)}")
    return None


def tuple(tensors, control_inputs=None, name=None):  # noqa: A001 - TensorFlow's name
    """The tensors themselves, None entries included (tf.tuple, as TensorFlow 2 runs it
    eagerly)."""
    if control_inputs is not None:
        for control in control_inputs:
            if callable(control):
                control()
    return list(tensors)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Runs callables among control_inputs first; everything else already runs in
    program order (tf.control_dependencies)."""
    for control in control_inputs or ():
        if callable(control):
            control()
    yield None


def get_current_name_scope():
    """The tf.name_scope in effect, "outer/inner" ("" at the top)."""
    return context.name_scope.get().rstrip("/")


__all__ = ["control_dependencies", "get_current_name_scope", "group", "no_op", "tuple"]
