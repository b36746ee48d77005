"""`tf.debugging.enable_check_numerics`: every floating-point output of an eager op is
checked for NaN and Inf as it is computed, and every op traced into a tf.function
afterwards gets a CheckNumerics node on its floating-point outputs, as TensorFlow
instruments both through its op callbacks. A bad value raises InvalidArgumentError
naming the op, its dtype and shape, its inputs (eagerly) or the user's line (traced).
Every op is checked, also those that only move values (TensorFlow skips a list of them),
so a NaN in a function's input is reported at the first op that reads it."""

import numpy as np

from . import context
from .errors import InvalidArgumentError
from .ops import registry
from .ops.checks import CHECK_NUMERICS

def _problems(array):
    """TensorFlow's CheckNumericsV2 words for what `array` holds, and its element counts."""
    negative = int(np.count_nonzero(np.isneginf(array)))
    positive = int(np.count_nonzero(np.isposinf(array)))
    nan = int(np.count_nonzero(np.isnan(array)))
    words = [w for w, n in (("-Inf", negative), ("+Inf", positive)) if n]
    if nan:
        words.append("NaN")
    counts = [f"  # of {w} elements: {n}" for w, n in (("-Inf", negative), ("+Inf", positive),
                                                         ("+NaN", nan)) if n]
    return " and ".join(words), counts


def _checked_outputs(op, outputs):
    if op.checks:  # CheckNumerics and Assert: they check, nothing to add
        return []
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return [(k, y) for k, y in enumerate(outputs) if y is not None and y.dtype.is_floating]


def _check_eager(op, inputs, outputs):
    for k, y in _checked_outputs(op, outputs):
        value = np.asarray(y.numpy())
        if np.isfinite(value).all():
            continue
        found, counts = _problems(value)
        n_out = 1 if not isinstance(outputs, (list, tuple)) else len(outputs)
        if len(inputs) == 1:
            described = f"  Input tensor: {str(inputs[0])}"
        else:
            described = f"  Input tensors ({len(inputs)}):\n" + "\n".join(
                f"    {i}: {str(x)}" for i, x in enumerate(inputs))
        raise InvalidArgumentError(
            f"\n\n!!! Detected Infinity or NaN in output {k} of eagerly-executing op "
            f"\"{op.name}\" (# of outputs: {n_out}) !!!\n  dtype: {y.dtype}\n  shape: "
            f"{tuple(y.shape)}\n" + "\n".join(counts) + f"\n\n{described}\n\n : Tensor had "
            f"{found} values [Op:CheckNumericsV2]", op="CheckNumericsV2")


def _check_traced(op, inputs, outputs):
    """The outputs a traced op's users see: each floating-point one through a
    CheckNumerics node whose message names the op and the user's line."""
    from .source import user_source
    checked = _checked_outputs(op, outputs)
    if not checked:
        return outputs
    graph = context.current_graph.get()
    line = user_source()
    result = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    n_out = len(result)
    for k, y in checked:
        message = (f"\n\n!!! Detected Infinity or NaN in output {k} of graph op "
                   f"\"{op.name}\" (# of outputs: {n_out}) !!!\n  dtype: {y.dtype}\n  "
                   f"shape: {tuple(y.shape)}\n\n  Graph name: \"{getattr(graph, 'name', '')}\""
                   + (f"\n  Created at: {line}" if line else "") + "\n")
        result[k] = registry.bind(CHECK_NUMERICS, (y,), {"message": message})
    return result if isinstance(outputs, (list, tuple)) else result[0]


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Checks every floating-point value ops compute for NaN and Inf from now on, as
    `tf.debugging.enable_check_numerics`: eager ops at once, and the ops of functions
    traced from now on at every call (InvalidArgumentError naming the op).

    >>> import tapeflow as tf
    >>> tf.debugging.enable_check_numerics()
    >>> tf.math.log(tf.constant([-1.0, 2.0]))
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: ...
    >>> tf.debugging.disable_check_numerics()
    >>> tf.math.log(tf.constant([-1.0, 2.0])).numpy()
    array([       nan, 0.6931472], dtype=float32)
    """
    registry.set_numerics_checks(_check_eager, _check_traced)


def disable_check_numerics():
    """Stops the checks of `enable_check_numerics` (functions traced meanwhile keep theirs,
    as in TensorFlow)."""
    registry.set_numerics_checks(None, None)
