"""`tf.print`: prints tensors' values the way TensorFlow formats them."""

import sys

import numpy as np

from . import context, nest
from .ops.registry import never_bound
from .ops.structural import StructuralOp, bind_structural, register_structural
from .tensor import _Operators


# TensorFlow's float formatting (absl's): the shortest of FLT_DIG / DBL_DIG significant
# digits if that reads back as the same value, else FLT_DIG + 3 / DBL_DIG + 2 digits:
# 0.1, 0.333333343, 123456792.
_FLOAT_DIGITS = {np.dtype(np.float16): (6, 9), np.dtype(np.float32): (6, 9),
                 np.dtype(np.float64): (15, 17)}


def _format_scalar(value, dtype):
    if dtype.kind == "b":
        return "1" if value else "0"  # TensorFlow prints bools as numbers
    if dtype.kind != "f":
        return str(value)
    short, full = _FLOAT_DIGITS.get(dtype, (15, 17))
    text = "%.*g" % (short, value)
    if not np.isnan(value) and dtype.type(text) != value:
        text = "%.*g" % (full, value)
    return text


def _format_array(arr, summarize):
    arr = np.asarray(arr)

    def scalar(value):
        return _format_scalar(value, arr.dtype)

    if arr.ndim == 0:
        return scalar(arr[()])

    def fmt(a):
        if a.ndim == 0:
            return scalar(a[()])
        items = [fmt(a[i]) for i in range(a.shape[0])]
        if summarize >= 0 and a.shape[0] > 2 * summarize:
            items = items[:summarize] + ["..."] + items[-summarize:]
        sep = " " if a.ndim == 1 else "\n" + " " * (arr.ndim - a.ndim + 1)
        return "[" + sep.join(items) + "]"

    return fmt(arr)


def print_(*inputs, output_stream=sys.stderr, sep=" ", end="\n", summarize=3, name=None):
    """Prints its arguments: tensors as their values (`tf.print`); stderr by default.

    Nested structures print with their tensors' values in place. Inside a tf.function it
    prints at every call, with the values of that call.
    """
    if context.current_graph.get() is not None:  # a node, even for Python values only
        leaves = nest.flatten(list(inputs))
        tensors = [x for x in leaves if isinstance(x, _Operators)]
        _trace_print(inputs, tensors, dict(output_stream=output_stream, sep=sep, end=end,
                                           summarize=summarize))
        return
    def text(x, nested=False):
        # Inside a structure, Python values print as their repr ('a'), tensors as values.
        if isinstance(x, _Operators):
            return _format_array(x.numpy(), summarize)
        if isinstance(x, dict):
            return "{" + ", ".join(f"{k!r}: {text(v, True)}" for k, v in x.items()) + "}"
        if isinstance(x, list):
            return "[" + ", ".join(text(v, True) for v in x) + "]"
        if isinstance(x, tuple):
            items = [text(v, True) for v in x]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return repr(x) if nested else str(x)

    message = sep.join(text(x) for x in inputs) + end
    stream = output_stream
    if stream in ("stdout", "file://stdout"):
        stream = sys.stdout
    elif stream in ("stderr", "file://stderr"):
        stream = sys.stderr
    stream.write(message)
    if hasattr(stream, "flush"):
        stream.flush()


def _print_replay(node, args):
    template, options = node.attrs["template"], node.attrs["options"]
    values = iter(args)
    leaves = [next(values) if leaf is _TENSOR else leaf for leaf in nest.flatten(template)]
    print_(*nest.pack_sequence_as(template, leaves), **dict(options))
    return []


_PRINT_ONLY = never_bound("PrintV2 (tf.print)")
# Inside tf.function a print is a node that runs at every call (each node a copy with
# its own number of tensors).
PRINT = register_structural(StructuralOp(
    name="PrintV2", args=(), infer=_PRINT_ONLY, eager=_PRINT_ONLY, differentiable=False,
    stateful=True, n_out=0, effect=True, replay=_print_replay))


class _TensorSlot:
    def __repr__(self):
        return "<tensor>"


_TENSOR = _TensorSlot()


def _trace_print(inputs, tensors, options):
    template = nest.pack_sequence_as(
        list(inputs), [_TENSOR if isinstance(x, _Operators) else x
                       for x in nest.flatten(list(inputs))])
    values = [t.read_value() if hasattr(t, "read_value") else t for t in tensors]
    op = PRINT.specialized(args=tuple(f"x{i}" for i in range(len(values))))
    bind_structural(op, values, {"template": template, "options": tuple(options.items())},
                    [])
