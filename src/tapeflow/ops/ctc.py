"""Connectionist temporal classification with dense labels: tf.nn.ctc_loss, with
collapse_repeated and ctc_unique_labels.

The loss is one op, CTCLossDense, whose second output is the loss's gradient with respect
to the logits, computed with the loss by the forward-backward algorithm in log space
over the label sequence with blanks between, as TensorFlow's ctc_loss_dense computes
it: softmax(logits) minus the posterior of each class at each frame, none for the
frames past a sequence's logit_length. The op's gradient scales that output, so that
a function's compiled gradient calls one helper instead of differentiating a loop over
the frames (TensorFlow's own gradient is this output too: its second derivative
treats it as a constant, and so does tapeflow's).
"""

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .creation import range as arange
from .elementwise import cast, equal, less, logical_and, not_equal, where
from .indexing import scatter_nd
from .nn import log_softmax_kernel
from .rearrange import boolean_mask, sequence_mask
from .reduce import reduce_max, reduce_sum
from .registry import OpDef, bind, register
from .shape import concat, expand_dims, reshape, shape, transpose

# The log of a probability of 0: finite, so that sums of impossible paths stay numbers
# instead of NaN; exp of it is 0 in every float dtype.
LOG_ZERO = -1e30
_OP_NAME = "CTCLossDense"


def _blank_first(logits, labels, blank_index):
    """Logits with the blank class moved to index 0 and labels renumbered to match, as
    TensorFlow's ctc_loss_dense does for another blank_index."""
    if blank_index < 0:
        blank_index += logits._shape[2]
    if blank_index == 0:
        return logits, labels
    logits = concat([logits[:, :, blank_index:blank_index + 1], logits[:, :, :blank_index],
                     logits[:, :, blank_index + 1:]], axis=2)
    return logits, where(less(labels, blank_index), labels + 1, labels)


def _ctc_infer(logits, labels, label_length, logit_length):
    rules.check_dtype_in(_OP_NAME, logits, lambda d: d in (dtypes.float32, dtypes.float64),
                         "float, double")
    for t, what in ((labels, "labels"), (label_length, "label_length"),
                    (logit_length, "logit_length")):
        if t.dtype != dtypes.int32:
            raise InvalidArgumentError(f"{what} must be int32, got {t.dtype.name} "
                                       f"[Op:{_OP_NAME}]", op=_OP_NAME)
    if len(logits._shape) != 3 or len(labels._shape) != 2 or len(label_length._shape) != 1 \
            or len(logit_length._shape) != 1:
        raise ValueError(
            f"ctc_loss takes logits of rank 3, labels of rank 2 and lengths of rank 1, got "
            f"shapes {list(logits._shape)}, {list(labels._shape)}, "
            f"{list(label_length._shape)} and {list(logit_length._shape)}")
    batch = logits._shape[1]
    for t, what in ((labels, "labels"), (label_length, "label_length"),
                    (logit_length, "logit_length")):
        if None not in (batch, t._shape[0]) and t._shape[0] != batch:
            raise InvalidArgumentError(
                f"{what} has {t._shape[0]} sequences and logits {batch}: shapes "
                f"{list(t._shape)} and {list(logits._shape)} [Op:{_OP_NAME}]", op=_OP_NAME)
    return [((batch,), logits.dtype), (logits._shape, logits.dtype)]


def ctc_forward_backward(logits, labels, label_length, logit_length):
    """(loss [B], gradient [T, B, K]) in float64 for time-major logits whose class 0 is
    the blank: the NumPy kernel of CTCLossDense. A label within label_length outside
    [0, K) is an InvalidArgumentError; labels past it are never read."""
    frames, batch, classes = logits.shape
    states = 2 * labels.shape[1] + 1
    lengths = np.clip(logit_length, 0, frames)
    ends = 2 * label_length.astype(np.int64)
    used = np.arange(labels.shape[1]) < label_length[:, None]
    bad = used & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise InvalidArgumentError(
            f"Received a label value of {labels[bad][0]} which is outside the valid range "
            f"of [0, {classes}) [Op:{_OP_NAME}]", op=_OP_NAME)
    extended = np.zeros((batch, states), np.int64)
    extended[:, 1::2] = np.where(used, labels, 0)
    log_probs = log_softmax_kernel(logits.astype(np.float64), axis=2)
    emissions = log_probs[:, np.arange(batch)[:, None], extended]  # [T, B, S]
    position = np.arange(states)
    # A path may jump over the blank from s - 2 to s where s holds a label that differs
    # from the one two states back; states past a sequence's end are never reached.
    skips = np.zeros((batch, states), bool)
    skips[:, 2:] = (extended[:, 2:] != extended[:, :-2]) & (position[2:] % 2 == 1)
    live = position <= ends[:, None]
    alpha = np.full((frames, batch, states), LOG_ZERO)
    beta = np.full((frames, batch, states), LOG_ZERO)
    start = np.where(position < 2, 0.0, LOG_ZERO)
    previous = np.where((lengths > 0)[:, None], start, np.where(position == 0, 0.0, LOG_ZERO))
    with np.errstate(all="ignore"):
        for t in range(frames):
            if t == 0:
                here = start + emissions[0]
            else:
                one = np.concatenate([np.full((batch, 1), LOG_ZERO), previous[:, :-1]], 1)
                two = np.concatenate([np.full((batch, 2), LOG_ZERO), previous], 1)[:, :states]
                here = np.logaddexp(np.logaddexp(previous, one),
                                    np.where(skips, two, LOG_ZERO)) + emissions[t]
            here = np.where(live, here, LOG_ZERO)
            previous = np.where((t < lengths)[:, None], here, previous)
            alpha[t] = here
        final = (position == ends[:, None]) | (position == ends[:, None] - 1)
        log_likelihood = np.logaddexp.reduce(np.where(final, previous, LOG_ZERO), axis=1)
        following = np.full((batch, states), LOG_ZERO)
        for t in range(frames - 1, -1, -1):
            one = np.concatenate([following[:, 1:], np.full((batch, 1), LOG_ZERO)], 1)
            two = np.concatenate([np.where(skips[:, 2:], following[:, 2:], LOG_ZERO),
                                  np.full((batch, 2), LOG_ZERO)], 1)[:, :states]
            later = np.logaddexp(np.logaddexp(following, one), two)
            here = np.where((t == lengths - 1)[:, None], np.where(final, 0.0, LOG_ZERO), later)
            here = np.where(live, here + emissions[t], LOG_ZERO)
            following = np.where((t < lengths)[:, None], here, LOG_ZERO)
            beta[t] = following
        occupancy = np.exp(alpha + beta - emissions - log_likelihood[:, None])
    # Impossible labelings (more labels than frames allow) get no gradient, as
    # ignore_longer_outputs_than_inputs gives in TensorFlow's sparse ctc_loss.
    possible = log_likelihood > LOG_ZERO / 2
    posterior = np.zeros((frames, batch, classes))
    for b in range(batch):
        np.add.at(posterior[:, b], (slice(None), extended[b]), occupancy[:, b])
    in_sequence = (np.arange(frames)[:, None] < lengths) & possible
    with np.errstate(all="ignore"):  # an impossible sequence's occupancy overflows
        gradient = np.where(in_sequence[:, :, None], np.exp(log_probs) - posterior, 0.0)
    return -log_likelihood, gradient


def _ctc_kernel(logits, labels, label_length, logit_length):
    loss, gradient = ctc_forward_backward(logits, labels, label_length, logit_length)
    return loss.astype(logits.dtype), gradient.astype(logits.dtype)


def _ctc_grad(ctx, grad_loss, grad_gradient):
    # grad_gradient (a second derivative) is dropped: the gradient output is a constant
    # to its own derivative, as TensorFlow's ctc_loss_dense computes it without a tape.
    if grad_loss is None:
        return None, None, None, None
    return reshape(grad_loss, [1, -1, 1]) * ctx.out1, None, None, None


CTC_LOSS = register(OpDef(
    name=_OP_NAME, args=("logits", "labels", "label_length", "logit_length"),
    infer=_ctc_infer, eager=_ctc_kernel, n_out=2, saves=("out1",), grad=_ctc_grad,
    none_dys=True, smooth=False))


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True,
             unique=None, blank_index=None, name=None):
    """The negative log-probability of each label sequence under the logits' per-frame
    class distributions, summed over every alignment (tf.nn.ctc_loss with dense labels
    [B, L] padded past label_length, logits [T, B, K], or [B, T, K] when not
    logits_time_major). The blank class is blank_index (0 by default). `unique`, a
    speed-up in TensorFlow, changes nothing here and is accepted for compatibility."""
    if hasattr(labels, "indices"):
        raise TypeError("tapeflow's ctc_loss takes dense labels")
    logits = rules.as_tensor(logits)
    labels, label_length, logit_length = rules.as_tensors(labels, label_length, logit_length)
    op_name = "ctc_loss_dense"
    rules.check_dtype_in(op_name, logits, rules.is_float, "half, bfloat16, float, double")
    for t, what in ((labels, "labels"), (label_length, "label_length"),
                    (logit_length, "logit_length")):
        rules.check_int_dtype(op_name, t, what)
    original = logits.dtype
    if original not in (dtypes.float32, dtypes.float64):
        logits = cast(logits, dtypes.float32)
    if len(logits._shape) != 3 or len(labels._shape) != 2:
        raise ValueError(f"ctc_loss takes logits of rank 3 and labels of rank 2, got shapes "
                         f"{list(logits._shape)} and {list(labels._shape)}")
    if not logits_time_major:
        logits = transpose(logits, [1, 0, 2])
    logits, labels = _blank_first(logits, labels, 0 if blank_index is None else
                                  int(blank_index))
    loss = bind(CTC_LOSS, (logits, cast(labels, dtypes.int32),
                           cast(label_length, dtypes.int32),
                           cast(logit_length, dtypes.int32)), {})[0]
    return cast(loss, original) if original != loss.dtype else loss


def collapse_repeated(labels, seq_length, name=None):
    """Runs of a repeated label merged into one, padded with 0 to the longest result:
    (collapsed labels [B, new max length], new lengths) (tf.nn.collapse_repeated)."""
    from .creation import ones_like
    labels, seq_length = rules.as_tensors(labels, seq_length)
    starts = concat([equal(ones_like(labels[:, :1]), 1),
                     not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
    dims = shape(labels)
    keep = logical_and(starts, sequence_mask(seq_length, maxlen=dims[1]))
    new_lengths = reduce_sum(cast(keep, dtypes.int32), axis=1)
    new_max = reduce_max(new_lengths)
    slots = reshape(sequence_mask(new_lengths, maxlen=new_max), [-1])
    flat_index = arange(shape(slots)[0])
    collapsed = scatter_nd(expand_dims(boolean_mask(flat_index, slots), 1),
                           boolean_mask(reshape(labels, [-1]), reshape(keep, [-1])),
                           shape(slots))
    return reshape(collapsed, [dims[0], new_max]), cast(new_lengths, seq_length.dtype)


def ctc_unique_labels(labels, name=None):
    """Each row's distinct labels in order of appearance, padded with 0 (int64), and the
    index of each label among them (int32) (tf.nn.ctc_unique_labels)."""
    from .functional import map_fn
    from .searching import unique
    from .shape import pad

    def row(x):
        values, index = unique(x)
        padded = pad(values, [[0, shape(index)[0] - shape(values)[0]]])
        return [cast(padded, dtypes.int64), index]

    return map_fn(row, rules.as_tensor(labels), dtype=[dtypes.int64, dtypes.int32])


__all__ = ["collapse_repeated", "ctc_loss", "ctc_unique_labels"]
