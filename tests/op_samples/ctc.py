"""Samplers and error cases for ops/ctc.py."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError

from .common import Case, floats, ints


def _ctc_loss(draw):
    batch, classes, width = (draw(st.integers(1, 3)), draw(st.integers(2, 5)),
                             draw(st.integers(0, 3)))
    frames = 2 * width + draw(st.integers(1, 3))
    label_length = ints(draw, (batch,), 0, width + 1)
    # 2L frames hold any L labels, repeats and their blanks included: every labeling is
    # possible, so that the gradient is the loss's everywhere.
    logit_length = ints(draw, (batch,), 2 * width, frames + 1)
    labels = ints(draw, (batch, width), 1, classes)
    # Only the loss is weighed: the gradient output is a constant to its own derivative.
    return Case([floats(draw, (frames, batch, classes)), labels, label_length, logit_length],
                wrt=(0,), outputs=(0,))


SAMPLES = {"CTCLossDense": _ctc_loss}

ERRORS = [
    (lambda: tf.nn.ctc_loss([[1, 5]], tf.zeros([4, 1, 3]), [2], [4]), InvalidArgumentError,
     r"Received a label value of 5 which is outside the valid range of \[0, 3\) "
     r"\[Op:CTCLossDense\]"),
    (lambda: tf.nn.ctc_loss([[1, 2]], tf.zeros([4, 2, 3]), [2], [4]), InvalidArgumentError,
     r"labels has 1 sequences and logits 2.*\[Op:CTCLossDense\]"),
    (lambda: tf.nn.ctc_loss(np.array([[1.0]]), tf.zeros([4, 1, 3]), [1], [4]),
     InvalidArgumentError, r"labels must be int32 or int64.*\[Op:ctc_loss_dense\]"),
]
