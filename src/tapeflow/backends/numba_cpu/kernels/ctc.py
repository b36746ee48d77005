"""The forward-backward algorithm of CTCLossDense (ops/ctc.py), one sequence at a time in
float64: the loss of each sequence and its gradient with respect to the logits, as the
op's NumPy kernel computes them, in one compiled helper that every kernel calling it
shares."""

import math

import numpy as np

from . import array_helper as _array_jit
from . import inlined_helper as _inlined
from .allocation import empty_array, zeros_array

# ops/ctc.py's LOG_ZERO, the log of a probability of 0, finite: a copy, since importing
# that module would make it part of every helper's cache key (cache.py); a test keeps
# the two equal.
_LOG_ZERO = -1e30


@_inlined
def _log_add(a, b):
    high = a if a > b else b
    return high + math.log(math.exp(a - high) + math.exp(b - high))


@_array_jit
def ctc_loss_grad(logits, labels, label_length, logit_length, code):
    """(loss [B], gradient [T, B, K]) for time-major logits whose class 0 is the blank;
    a label within label_length outside [0, K) raises IndexError(code, label)."""
    frames, batch, classes = logits.shape
    width = labels.shape[1]
    states = 2 * width + 1
    loss = empty_array(batch, logits.dtype)
    grad = zeros_array((frames, batch, classes), logits.dtype)
    log_probs = empty_array((frames, classes), np.float64)
    alpha = empty_array((frames, states), np.float64)
    beta = empty_array((frames, states), np.float64)
    extended = zeros_array(states, np.int64)
    row = empty_array(classes, np.float64)
    for b in range(batch):
        used = min(max(np.int64(label_length[b]), 0), width)
        for j in range(width):
            label = np.int64(labels[b, j])
            if j < used and (label < 0 or label >= classes):
                raise IndexError(code, label)
            extended[2 * j + 1] = label if j < used else 0
        end = 2 * np.int64(label_length[b])
        length = min(max(np.int64(logit_length[b]), 0), frames)
        for t in range(length):
            high = np.float64(logits[t, b, 0])
            for k in range(1, classes):
                high = max(high, np.float64(logits[t, b, k]))
            total = 0.0
            for k in range(classes):
                total += math.exp(np.float64(logits[t, b, k]) - high)
            norm = high + math.log(total)
            for k in range(classes):
                log_probs[t, k] = np.float64(logits[t, b, k]) - norm
        # alpha[t, s]: every path's log-probability up to frame t, ending in state s.
        for t in range(length):
            for s in range(states):
                if s > end:
                    alpha[t, s] = _LOG_ZERO
                    continue
                if t == 0:
                    came = 0.0 if s < 2 else _LOG_ZERO
                else:
                    came = alpha[t - 1, s]
                    if s >= 1:
                        came = _log_add(came, alpha[t - 1, s - 1])
                    if s >= 2 and s % 2 == 1 and extended[s] != extended[s - 2]:
                        came = _log_add(came, alpha[t - 1, s - 2])
                alpha[t, s] = came + log_probs[t, extended[s]]
        likelihood = _LOG_ZERO
        if length == 0:
            if end == 0:
                likelihood = 0.0
        else:
            for s in (end - 1, end):
                if 0 <= s < states:
                    likelihood = _log_add(likelihood, alpha[length - 1, s])
        loss[b] = -likelihood
        if likelihood <= _LOG_ZERO / 2:  # impossible: no gradient
            continue
        # beta[t, s]: the paths' log-probability from state s at frame t to the end.
        for t in range(length - 1, -1, -1):
            for s in range(states):
                if s > end:
                    beta[t, s] = _LOG_ZERO
                    continue
                if t == length - 1:
                    ahead = 0.0 if s == end or s == end - 1 else _LOG_ZERO
                else:
                    ahead = beta[t + 1, s]
                    if s + 1 < states:
                        ahead = _log_add(ahead, beta[t + 1, s + 1])
                    if s + 2 < states and (s + 2) % 2 == 1 and \
                            extended[s + 2] != extended[s]:
                        ahead = _log_add(ahead, beta[t + 1, s + 2])
                beta[t, s] = ahead + log_probs[t, extended[s]]
        for t in range(length):
            for k in range(classes):
                row[k] = math.exp(log_probs[t, k])
            for s in range(min(end + 1, states)):
                row[extended[s]] -= math.exp(alpha[t, s] + beta[t, s]
                                             - log_probs[t, extended[s]] - likelihood)
            for k in range(classes):
                grad[t, b, k] = row[k]
    return loss, grad
