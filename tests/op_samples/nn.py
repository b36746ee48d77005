"""Samplers and error cases for ops/nn.py."""

import importlib

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

nn = importlib.import_module("tapeflow.ops.nn")

from .common import Case, floats, ints, shapes
from .common import constant as _c


def _class_axis(draw, shape):
    return draw(st.integers(0, len(shape) - 1))


def _softmax(draw):
    shape = shapes(draw, min_dims=1)
    return Case([floats(draw, shape, (-3.0, 3.0))], {"axis": _class_axis(draw, shape)})


def _probabilities(draw, shape, axis):
    p = floats(draw, shape, (0.1, 1.0))
    return p / p.sum(axis=axis, keepdims=True)


def _xent(draw):
    shape = shapes(draw, min_dims=1)
    axis = _class_axis(draw, shape)
    # Labels are distributions: TensorFlow's gradient (softmax - labels) assumes so.
    labels = _probabilities(draw, shape, axis)
    inputs = [floats(draw, shape, (-3.0, 3.0)), labels]
    if draw(st.booleans()):  # the logits, through the loss and the backprop output
        return Case(inputs, {"axis": axis}, wrt=(0,))
    # The labels, through the loss only: as TensorFlow's rule, what reaches the backprop
    # output (a second derivative) does not flow to the labels.
    return Case(inputs, {"axis": axis}, wrt=(1,), outputs=(0,))


def _sparse_xent(draw):
    shape = shapes(draw, min_dims=1)
    labels = ints(draw, shape[:-1], 0, shape[-1], dtype=draw(st.sampled_from([np.int32,
                                                                              np.int64])))
    return Case([floats(draw, shape, (-3.0, 3.0)), labels])


def _l2_loss(draw):
    return Case([floats(draw, shapes(draw))])


def _bias_add(draw):
    shape = shapes(draw, min_dims=2, max_dims=4)
    data_format = draw(st.sampled_from([None, "NHWC", "NCHW"] if len(shape) > 2 else
                                       [None, "NHWC"]))
    channel = 1 if data_format == "NCHW" else -1
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, shape), ints(draw, (shape[channel],))],
                    {"data_format": data_format})
    return Case([floats(draw, shape), floats(draw, (shape[channel],))],
                {"data_format": data_format})


def _alpha(draw):
    return {"alpha": draw(st.sampled_from([0.2, 0.01, 0.5, 1.5]))}


def _leaky_relu(draw):
    return Case([floats(draw, shapes(draw), avoid=(0.0,))], _alpha(draw))


def _leaky_relu_grad(draw):
    shape = shapes(draw)
    return Case([floats(draw, shape), floats(draw, shape, avoid=(0.0,))], _alpha(draw))


def _relu6(draw):
    shape = shapes(draw)
    if draw(st.integers(0, 5)) == 0:
        return Case([ints(draw, shape, -3, 9)])
    return Case([floats(draw, shape, (-2.0, 8.0), avoid=(0.0, 6.0))])


def _relu6_grad(draw):
    shape = shapes(draw)
    return Case([floats(draw, shape), floats(draw, shape, (-2.0, 8.0), avoid=(0.0, 6.0))])


SAMPLES = {
    "Softmax": _softmax,
    "LogSoftmax": _softmax,
    "SoftmaxCrossEntropyWithLogits": _xent,
    "SparseSoftmaxCrossEntropyWithLogits": _sparse_xent,
    "L2Loss": _l2_loss,
    "BiasAdd": _bias_add,
    "LeakyRelu": _leaky_relu,
    "LeakyReluGrad": _leaky_relu_grad,
    "Relu6": _relu6,
    "Relu6Grad": _relu6_grad,
}



ERRORS = [
    (lambda: nn.softmax(_c(1.0)), InvalidArgumentError,
     r"logits must have >= 1 dimension.*\[Op:Softmax\]"),
    (lambda: nn.softmax(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:Softmax\]"),
    (lambda: nn.softmax(tf.ones([2, 3]), axis=2), InvalidArgumentError,
     r"`dim` must be in the range \[-2, 2\).*Received: dim=2"),
    (lambda: nn.log_softmax(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:LogSoftmax\]"),
    (lambda: nn.log_softmax(tf.ones([2, 3]), axis=-3), InvalidArgumentError,
     r"Received: dim=-3"),
    # a float axis: TF 2.21's Transpose/Range ops reject it (InvalidArgumentError); a list
    # is a TypeError ("'<=' not supported between instances of 'int' and 'list'")
    (lambda: nn.softmax(tf.ones([2]), axis=0.5), InvalidArgumentError,
     r"axis must be an integer, got 0\.5 \[Op:Softmax\]"),
    (lambda: nn.log_softmax(tf.ones([2, 2]), axis=0.0), InvalidArgumentError,
     r"\[Op:LogSoftmax\]"),
    (lambda: nn.softmax(tf.ones([2]), axis=[0]), TypeError, r"Softmax: axis must be an integer"),
    (lambda: nn.softmax_cross_entropy_with_logits(tf.ones([2, 4]), tf.ones([2, 3])),
     InvalidArgumentError,
     (r"logits and labels must be broadcastable: logits_size=\[2,3\] labels_size=\[2,4\] "
      r"\[Op:SoftmaxCrossEntropyWithLogits\]")),
    (lambda: nn.softmax_cross_entropy_with_logits(tf.ones([3]), _c([1, 2, 3])),
     InvalidArgumentError, r"int32.*\[Op:SoftmaxCrossEntropyWithLogits\]"),
    (lambda: nn.softmax_cross_entropy_with_logits(tf.ones([2, 3]), tf.ones([2, 3]), axis=2),
     InvalidArgumentError, r"Received: dim=2"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits([0, 5], tf.ones([2, 3])),
     InvalidArgumentError,
     r"Received a label value of 5 which is outside the valid range of \[0, 3\)"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits([-1, 0], tf.ones([2, 3])),
     InvalidArgumentError, r"label value of -1.*\[Op:SparseSoftmaxCrossEntropyWithLogits\]"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], tf.ones([2, 3])),
     ValueError, r"Shape mismatch: The shape of labels \(received \(3,\)\)"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits([[0, 1]], tf.ones([2, 3])),
     ValueError, r"Rank mismatch"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits(_c([0.0, 1.0]), tf.ones([2, 3])),
     InvalidArgumentError, r"Tlabels.*float32"),
    (lambda: nn.sparse_softmax_cross_entropy_with_logits(0, _c(1.0)), ValueError,
     r"Logits cannot be scalars"),
    (lambda: nn.sigmoid_cross_entropy_with_logits(labels=tf.ones([2]), logits=tf.ones([3])),
     ValueError, r"must have the same shape"),
    (lambda: nn.sigmoid_cross_entropy_with_logits(logits=tf.ones([3])), ValueError,
     r"Both labels and logits must be provided"),
    (lambda: nn.l2_loss(_c([1, 2])), InvalidArgumentError, r"int32.*\[Op:L2Loss\]"),
    (lambda: nn.bias_add(tf.ones([3]), tf.ones([3])), InvalidArgumentError,
     r"Input tensor must be at least 2D: \[3\] \[Op:BiasAdd\]"),
    (lambda: nn.bias_add(tf.ones([2, 3]), tf.ones([4])), InvalidArgumentError,
     (r"Must provide as many biases as the last dimension of the input tensor: \[4\] vs. "
      r"\[2,3\] \[Op:BiasAdd\]")),
    (lambda: nn.bias_add(tf.ones([2, 3]), tf.ones([1, 3])), InvalidArgumentError,
     r"Biases must be 1D: \[1,3\] \[Op:BiasAdd\]"),
    (lambda: nn.bias_add(tf.ones([2, 3]), tf.ones([3], tf.float64)), InvalidArgumentError,
     r"float32.*float64.*\[Op:BiasAdd\]"),
    (lambda: nn.bias_add(tf.ones([2, 3]), tf.ones([3]), data_format="HWCN"), ValueError,
     r"data_format"),
    (lambda: nn.leaky_relu(_c([True])), InvalidArgumentError, r"bool.*\[Op:LeakyRelu\]"),
    (lambda: nn.relu6(_c([True])), InvalidArgumentError, r"bool.*\[Op:Relu6\]"),
    (lambda: nn.selu(_c([1, 2])), InvalidArgumentError, r"int32"),
    (lambda: nn.l2_normalize(_c([1, 2])), TypeError, r"1e-12.*int32"),
]

__all__ = ["ERRORS", "SAMPLES"]
