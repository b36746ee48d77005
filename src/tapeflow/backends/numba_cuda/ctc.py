"""CTCLossDense on the device: the forward-backward algorithm of ops/ctc.py, one thread
per sequence (a sequence's frames depend on each other; its sequences do not), in
float64 with scratch arrays in device memory, writing the loss and its gradient with
respect to the logits as the CPU helper (numba_cpu/kernels/ctc.py) does.

As the cross-entropy's kernel (rows.py), a label within label_length outside
[0, num_classes) gives that sequence a NaN loss and gradient where the CPU raises: the
check costs no copy to the host."""

from ... import dtypes
from ...device_tensor import on_device
from ...ops.ctc import CTC_LOSS, LOG_ZERO
from . import device, kernels

_FLOATS = frozenset({"float32", "float64"})

# Flat arrays: logits and grad [T, B, K], labels [B, L]; per sequence b the scratch rows
# alpha and beta [T, S] at b * T * S, log_probs [T, K] at b * T * K, extended [S] at
# b * S and row [K] at b * K.
_TEXT = f"""
@cuda.jit(device=True, inline="always")
def log_add(a, b):
    high = a if a > b else b
    return high + log_f64(exp_f64(a - high) + exp_f64(b - high))


def kernel(frames, batch, classes, width, loss, grad, logits, labels, label_length,
           logit_length, alpha, beta, log_probs, extended, row):
    log_zero = {LOG_ZERO!r}
    states = 2 * width + 1
    for b in range(cuda.grid(1), batch, cuda.gridsize(1)):
        a0 = b * frames * states
        p0 = b * frames * classes
        e0 = b * states
        r0 = b * classes
        used = min(max(np.int64(label_length[b]), 0), width)
        bad = False
        extended[e0] = 0
        for j in range(width):
            label = np.int64(labels[b * width + j])
            if j < used and (label < 0 or label >= classes):
                bad = True
            extended[e0 + 2 * j + 1] = label if j < used and not bad else 0
            extended[e0 + 2 * j + 2] = 0
        end = 2 * np.int64(label_length[b])
        length = min(max(np.int64(logit_length[b]), 0), frames)
        for t in range(length):
            at = (t * batch + b) * classes
            high = np.float64(logits[at])
            for k in range(1, classes):
                high = maximum(high, np.float64(logits[at + k]))
            total = 0.0
            for k in range(classes):
                total += exp_f64(np.float64(logits[at + k]) - high)
            norm = high + log_f64(total)
            for k in range(classes):
                log_probs[p0 + t * classes + k] = np.float64(logits[at + k]) - norm
        for t in range(length):
            for s in range(states):
                here = a0 + t * states + s
                if s > end:
                    alpha[here] = log_zero
                    continue
                if t == 0:
                    came = 0.0 if s < 2 else log_zero
                else:
                    came = alpha[here - states]
                    if s >= 1:
                        came = log_add(came, alpha[here - states - 1])
                    if s >= 2 and s % 2 == 1 and extended[e0 + s] != extended[e0 + s - 2]:
                        came = log_add(came, alpha[here - states - 2])
                alpha[here] = came + log_probs[p0 + t * classes + extended[e0 + s]]
        likelihood = log_zero
        if length == 0:
            if end == 0:
                likelihood = 0.0
        else:
            last = a0 + (length - 1) * states
            if 0 <= end - 1 < states:
                likelihood = log_add(likelihood, alpha[last + end - 1])
            if 0 <= end < states:
                likelihood = log_add(likelihood, alpha[last + end])
        loss[b] = np.nan if bad else -likelihood
        possible = likelihood > log_zero / 2 and not bad
        for t in range(length - 1, -1, -1):
            if not possible:
                break
            for s in range(states):
                here = a0 + t * states + s
                if s > end:
                    beta[here] = log_zero
                    continue
                if t == length - 1:
                    ahead = 0.0 if s == end or s == end - 1 else log_zero
                else:
                    ahead = beta[here + states]
                    if s + 1 < states:
                        ahead = log_add(ahead, beta[here + states + 1])
                    if s + 2 < states and (s + 2) % 2 == 1 and \\
                            extended[e0 + s + 2] != extended[e0 + s]:
                        ahead = log_add(ahead, beta[here + states + 2])
                beta[here] = ahead + log_probs[p0 + t * classes + extended[e0 + s]]
        for t in range(frames):
            at = (t * batch + b) * classes
            if bad:
                for k in range(classes):
                    grad[at + k] = np.nan
            elif t >= length or not possible:
                for k in range(classes):
                    grad[at + k] = 0.0
            else:
                for k in range(classes):
                    row[r0 + k] = exp_f64(log_probs[p0 + t * classes + k])
                for s in range(min(end + 1, states)):
                    here = a0 + t * states + s
                    c = extended[e0 + s]
                    row[r0 + c] -= exp_f64(alpha[here] + beta[here]
                                           - log_probs[p0 + t * classes + c] - likelihood)
                for k in range(classes):
                    grad[at + k] = row[r0 + k]
"""


def _key(dtype, labels_dtype):
    out = dtype.name
    types = (("int64",) * 4 + (f"array:{out}",) * 3 + (f"array:{labels_dtype.name}",) * 3
             + ("array:float64",) * 3 + ("array:int64", "array:float64"))
    return ("ctc", _TEXT, types)


class CTCLoss:
    """CTCLossDense: the loss per sequence and its gradient, both from one kernel."""

    outputs_all = True

    def run(self, op, inputs, attrs, shapes, out_dtypes, index):
        logits, labels, label_length, logit_length = inputs
        dtype = out_dtypes[0]
        if dtype.name not in _FLOATS:
            return None
        frames, batch, classes = logits._shape
        width = labels._shape[1]
        states = 2 * width + 1
        loss, grad = device.empty(batch, dtype), device.empty(frames * batch * classes, dtype)
        if batch:
            scratch = device.empty(batch * frames * states, dtypes.float64)
            args = [frames, batch, classes, width, loss, grad] + [
                device.device_array_of(x, index) for x in inputs] + [
                scratch, device.empty(batch * frames * states, dtypes.float64),
                device.empty(batch * frames * classes, dtypes.float64),
                device.empty(batch * states, dtypes.int64),
                device.empty(batch * classes, dtypes.float64)]
            device.launch_as(kernels.kernel(_key(dtype, labels.dtype)),
                             device.launch_shape(batch), *args)
        return (on_device(loss, shapes[0], dtype, index),
                on_device(grad, shapes[1], dtype, index))


def attach(lowers):
    lowers(CTC_LOSS)(CTCLoss())
