"""custom_gradient and RegisterGradient: user-supplied gradient rules."""

import functools
import inspect

from .. import context, nest
from ..ops.elementwise import IDENTITY, stop_gradient
from ..ops.registry import GRADIENT_OVERRIDES, record
from ..ops.structural import CUSTOM_GRADIENT
from ..tensor import Tensor, convert_to_tensor, wrap


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "variables" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def custom_gradient(f=None):
    """Decorates `f(*x) -> (y, grad_fn)` so that tapes use `grad_fn(*dy)` as y's gradient.

    `grad_fn` returns one gradient per leaf of the positional arguments, Python numbers
    and NumPy arrays included (usually None for those). If `f` reads trainable Variables
    that were not passed to it, `grad_fn` must accept `variables=` and return
    `(input_grads, variable_grads)`, one gradient per variable, as in TensorFlow.

    >>> import tapeflow as tf
    >>> @tf.custom_gradient
    ... def clipped_identity(x):
    ...     return tf.identity(x), lambda dy: tf.clip_by_value(dy, -1.0, 1.0)
    >>> x = tf.constant(2.0)
    >>> with tf.GradientTape() as t:
    ...     t.watch(x)
    ...     y = clipped_identity(x) * 5.0
    >>> t.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=1.0>
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        graph = context.current_graph.get()
        if graph is None:
            return _eager_call(f, args, kwargs)
        return _traced_call(f, args, kwargs, graph)

    return decorated


def _eager_call(f, args, kwargs):
    result, grad_fn, variables = _run_body(f, args, kwargs)
    # TensorFlow converts every positional leaf after the body ran (the body sees the
    # values as passed); keyword arguments are never inputs.
    flat_inputs = [_as_input(a) for a in nest.flatten(args)]
    flat_result = [convert_to_tensor(y) for y in nest.flatten(result)]
    # Fresh ids: a tape that records the custom op reaches the inputs only through grad_fn.
    outputs = [wrap(y._value) for y in flat_result]
    tapes = context.recording_tapes.get()
    if tapes:
        _watch_variables(tapes, variables)
        inputs = _tensors(flat_inputs) + [_snapshot(v) for v in variables]
        op = _custom_op(f, grad_fn, flat_inputs, variables, len(outputs))
        for tape in tapes:
            if any(x._id in tape._watched for x in inputs):
                record(op, {}, inputs, outputs, (tape,))
            else:
                # TensorFlow records the custom op only on tapes that watch one of its
                # inputs; on the others each output is an identity of the body's result,
                # so their gradients (to keyword arguments, to tensors the body closes
                # over) go through the body's own ops.
                for y, out in zip(flat_result, outputs):
                    record(IDENTITY, {}, [y], [out], (tape,))
    return nest.pack_sequence_as(result, outputs)


def _traced_call(f, args, kwargs, graph):
    if kwargs:
        raise ValueError(
            "The custom_gradient decorator currently supports keywords arguments only when "
            "eager execution is enabled.")
    # As TensorFlow's graph mode, the body gets every argument as a tensor; a Variable
    # argument is read here, outside the body, so it is an input and not in `variables`.
    args = nest.map_structure(_as_input, args)
    result, grad_fn, variables = _run_body(f, args, {})
    flat_inputs = nest.flatten(args)
    # Unrecorded copies, and a mark telling the function's backward to retrace the
    # Python code (grad_fn closes over this trace's values).
    outputs = [stop_gradient(y) for y in nest.flatten(result)]
    graph.has_custom_gradient = True
    tapes = context.recording_tapes.get()
    if tapes:
        _watch_variables(tapes, variables)
        inputs = _tensors(flat_inputs) + [v.read_value() for v in variables]
        op = _custom_op(f, grad_fn, flat_inputs, variables, len(outputs))
        record(op, {}, inputs, outputs, tapes)
    return nest.pack_sequence_as(result, outputs)


def _run_body(f, args, kwargs):
    """Calls `f`; returns its result, its grad_fn and the trainable variables it read that
    are not among its arguments (an argument's gradient is an input gradient in
    TensorFlow, even when the argument is a Variable)."""
    accessed = []
    token = context.variable_watchers.set(context.variable_watchers.get() + (accessed,))
    try:
        result, grad_fn = f(*args, **kwargs)
    finally:
        context.variable_watchers.reset(token)
    passed = nest.flatten(args) + nest.flatten(kwargs)
    # `is`, never `in`: == on tensors is elementwise.
    variables = [v for v in {id(v): v for v in accessed if v.trainable}.values()
                 if all(v is not p for p in passed)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            "If using @custom_gradient with a function that uses variables, then "
            "grad_fn must accept a keyword argument 'variables'.")
    return result, grad_fn, variables


def _as_input(value):
    """A positional argument as the tensor TensorFlow would make of it."""
    if isinstance(value, (str, bytes)):
        # TensorFlow makes a (never differentiable) string tensor; tapeflow has no string
        # tensors, so the string stays as it is and only counts as a gradient slot.
        return value
    try:
        return convert_to_tensor(value)
    except TypeError:
        raise ValueError(f"Attempt to convert a value ({value!r}) with an unsupported type "
                         f"({type(value)}) to a Tensor.") from None


def _tensors(flat_inputs):
    return [x for x in flat_inputs if isinstance(x, Tensor)]


def _watch_variables(tapes, variables):
    for tape in tapes:
        if tape._watch_accessed_variables:
            for v in variables:
                tape._watch_variable(v)


def _snapshot(var):
    t = wrap(var._value)
    t._id = var._id
    return t


def _custom_op(f, grad_fn, flat_inputs, variables, n_out):
    n_args = len(flat_inputs)
    tensor_slots = [i for i, x in enumerate(flat_inputs) if isinstance(x, Tensor)]
    name = getattr(f, "__name__", "custom_gradient function")

    def grad(ctx, *dys):
        if variables:
            input_grads, variable_grads = grad_fn(*dys, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError(
                    "Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads, variable_grads = grad_fn(*dys), []
        flat_grads = nest.flatten(input_grads)
        if len(flat_grads) != n_args:
            raise ValueError(
                f"custom_gradient function {name} expected to return {n_args} gradients, "
                f"but returned {len(flat_grads)} instead.")
        grads = [flat_grads[i] for i in tensor_slots] + list(variable_grads)
        return [None if g is None else convert_to_tensor(g) for g in grads]

    n_recorded = len(tensor_slots) + len(variables)
    return CUSTOM_GRADIENT.specialized(args=tuple(f"x{i}" for i in range(n_recorded)),
                                       grad=grad, n_out=n_out)


class RegisterGradient:
    """Registers `fn(op, *grads)` as the gradient of the op named `op_type`, replacing the
    table's rule (`op.inputs`, `op.outputs`, `op.get_attr(name)` as in TensorFlow).

    Registering a second function for the same name raises KeyError, as TensorFlow does.
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in GRADIENT_OVERRIDES:
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        GRADIENT_OVERRIDES[self._op_type] = fn
        return fn


def no_gradient(op_type):
    """Declares ops named `op_type` not differentiable: a tape's gradient stops there (None
    for their inputs), as tf.no_gradient. Declaring it twice, or for an op that has a
    registered gradient, raises KeyError, as TensorFlow does."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in GRADIENT_OVERRIDES:
        raise KeyError(f"Registering two gradient with name '{op_type}'!")

    def no_gradient_of(op, *grads):
        return [None] * len(op.inputs)

    GRADIENT_OVERRIDES[op_type] = no_gradient_of
