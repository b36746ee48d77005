"""tf.nn.ctc_loss's gradient with respect to the logits: 4 sequences of up to 6 labels,
12 classes, float32, at 100 and 1,000 frames. "numpy" is the forward-backward algorithm
in NumPy alone (the op's own kernel, ops/ctc.py, without a tape); "tapeflow eager" is a
GradientTape around the loss; "tapeflow fn" the same in a tf.function. The last row is
the function's first call in a fresh process with an empty cache directory (the one-time
helpers included), as perf/compile.py measures first calls."""

import tempfile

import numpy as np

import tapeflow as tf
from tapeflow.ops.ctc import ctc_forward_backward

from common import Result, best_times

BATCH, CLASSES, LABELS = 4, 12, 6

_FIRST_CALL = """
import time
import numpy as np
import tapeflow as tf
import ctc
logits, labels, label_length, logit_length = ctc.make_data(FRAMES)
fn = tf.function(ctc.gradient)
start = time.perf_counter()
fn(tf.constant(logits), tf.constant(labels), label_length, logit_length)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def make_data(frames, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(frames, BATCH, CLASSES)).astype(np.float32)
    labels = rng.integers(1, CLASSES, size=(BATCH, LABELS)).astype(np.int32)
    label_length = np.array([6, 5, 6, 3], np.int32)
    logit_length = np.array([frames, frames - 3, frames, frames // 2], np.int32)
    return logits, labels, label_length, logit_length


def gradient(logits, labels, label_length, logit_length):
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = tf.reduce_sum(tf.nn.ctc_loss(labels, logits, label_length, logit_length))
    return tape.gradient(loss, logits)


def _rows(frames):
    logits, labels, label_length, logit_length = make_data(frames)
    x, y = tf.constant(logits), tf.constant(labels)
    compiled = tf.function(gradient)
    want = ctc_forward_backward(logits, labels, label_length, logit_length)[1]
    for got in (gradient(x, y, label_length, logit_length),
                compiled(x, y, label_length, logit_length)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)
    times = best_times({
        "numpy": lambda: ctc_forward_backward(logits, labels, label_length, logit_length),
        "tapeflow eager": lambda: gradient(x, y, label_length, logit_length),
        "tapeflow fn": lambda: compiled(x, y, label_length, logit_length)},
        repeat=3, min_time=0.3)
    name = f"ctc_loss gradient, {frames} frames"
    return [Result(name, impl, t, times["numpy"]) for impl, t in times.items()], times


def run(peers):
    from compile import _run_script
    rows = []
    for frames in (100, 1000):
        more, times = _rows(frames)
        rows += more
    with tempfile.TemporaryDirectory() as cache_dir:
        first = _run_script(_FIRST_CALL, cache_dir, FRAMES=1000)["seconds"]
    rows.append(Result("ctc_loss gradient, 1000 frames", "fn first call", first,
                       times["numpy"], "fresh process, empty cache (helpers included)"))
    return rows
