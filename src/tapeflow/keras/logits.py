"""Keras' `_keras_logits`: the logits that a softmax or sigmoid output came from, so that a
cross-entropy of those probabilities is computed from the logits, as Keras 3 does."""

import warnings

from .. import ops
from ..tensor import Symbolic
from . import notes


def remember(probabilities, logits):
    """Records that `probabilities` is a Keras softmax or sigmoid of `logits`."""
    return notes.attach(probabilities, "logits", logits)


def _traced_producer(tensor, op):
    """The input of the `op` node that made `tensor` in the graph being traced, if one
    did (Keras reads `output.op` of TensorFlow's graph tensors)."""
    for node in reversed(tensor.graph.nodes):
        if node.op is op and any(out is tensor for out in node.outputs):
            return node.inputs[0]
    return None


def _found_logits(output, activation):
    logits = notes.read(output, "logits")
    if logits is not None:
        return logits
    if isinstance(output, Symbolic):
        return _traced_producer(
            output, ops.nn.SOFTMAX if activation == "Softmax" else ops.elementwise.SIGMOID)
    return None


def logits_of(output, from_logits, activation, fn_name):
    """Keras' `_get_logits`: (the logits, True) where `output` came from a Keras softmax
    or sigmoid (either, as Keras checks), or, in a traced function, from the `activation`
    op ("Softmax" or "Sigmoid"); else (`output`, `from_logits`)."""
    logits = _found_logits(output, activation)
    if logits is None:
        return output, from_logits
    if from_logits:
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` '
                      f"argument was produced by a {activation} activation and thus does "
                      f"not represent logits. Was this intended?", stacklevel=3)
    return logits, True
