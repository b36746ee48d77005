"""tf.nn.ctc_loss on the device (numba_cuda/ctc.py): the loss and its gradient equal the
CPU's, eagerly and in a function, for sequences of every kind (repeated labels, shorter
than the logits, empty, impossible), and a label outside the classes gives NaN."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.device_tensor import DeviceTensor

from ..op_samples.common import TOLERANCE

LABELS = [[1, 2, 2], [3, 0, 0], [1, 1, 0], [2, 3, 1]]
LABEL_LENGTH, LOGIT_LENGTH = [3, 1, 2, 0], [7, 4, 2, 5]  # the third is impossible


def _loss_and_gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.nn.ctc_loss(tf.constant(LABELS), x, LABEL_LENGTH, LOGIT_LENGTH)
        total = tf.reduce_sum(loss * [1.0, 2.0, 3.0, 4.0])
    return loss, tape.gradient(total, x)


@pytest.mark.parametrize("compiled", [False, True])
def test_ctc_loss_on_the_device_is_the_cpus(compiled, notes, sync_compiles):
    x = np.random.default_rng(5).normal(size=(7, 4, 5)).astype(np.float32)
    fn = tf.function(_loss_and_gradient) if compiled else _loss_and_gradient
    cpu = _loss_and_gradient(tf.constant(x))
    with tf.device("/GPU:0"):
        gpu = fn(tf.identity(tf.constant(x)))
    assert notes() == []  # nothing ran on the host
    tol = TOLERANCE["float32"]
    for g, c in zip(gpu, cpu):
        assert type(g) is DeviceTensor and g.shape == c.shape and g.dtype == c.dtype
        np.testing.assert_allclose(np.asarray(g), c.numpy(), rtol=tol["rtol"],
                                   atol=tol["atol"])
    assert np.asarray(gpu[0])[2] == 1e30 and not np.asarray(gpu[1])[:, 2].any()


def test_ctc_loss_label_outside_the_classes_is_nan_on_the_device():
    with tf.device("/GPU:0"):
        x = tf.identity(tf.zeros([4, 2, 3]))
        loss = tf.nn.ctc_loss(tf.constant([[1, 7], [1, 2]]), x, [2, 2], [4, 4])
    assert np.isnan(np.asarray(loss)[0]) and np.isfinite(np.asarray(loss)[1])
