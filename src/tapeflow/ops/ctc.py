"""Connectionist temporal classification with dense labels: tf.nn.ctc_loss (the forward
algorithm in log space over the label sequence with blanks between, one step per frame),
collapse_repeated and ctc_unique_labels. The loss is a composition of the table's ops, so
its gradient with respect to the logits is the derivative of the log-likelihood,
softmax(logits) minus the posterior of each class at each frame, which is the gradient
TensorFlow's ctc_loss_dense computes by its forward-backward pass; frames past a
sequence's logit_length get none."""

import numpy as np

from .. import dtypes
from . import rules
from .creation import range as arange
from .control import while_loop
from .elementwise import cast, equal, less, logical_and, logical_or, not_equal, where
from .indexing import one_hot, scatter_nd
from .linalg import einsum
from .nn import log_softmax
from .rearrange import boolean_mask, sequence_mask
from .reduce import reduce_logsumexp, reduce_max, reduce_sum
from .shape import concat, expand_dims, reshape, shape, stack, transpose

# The log of a probability of 0: finite, so that a log-sum of impossible paths (and its
# gradient) stays a number instead of NaN; exp of it is 0 in every float dtype.
_LOG_ZERO = -1e30


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


def _extended(labels, max_labels):
    """[B, 2L + 1]: blank (0), label 1, blank, label 2, ..., blank."""
    blanks = labels * 0
    pairs = reshape(stack([blanks, labels], axis=2), [-1, 2 * max_labels])
    return concat([pairs, blanks[:, :1]], axis=1)


def _skips_allowed(extended, states):
    """Whether a path may jump from state s - 2 to s: s holds a label that differs from
    the one two states back (the blank between repeated labels cannot be skipped)."""
    is_label = np.arange(states) % 2 == 1
    differs = concat([extended[:, :2] * 0 == 1,
                      not_equal(extended[:, 2:], extended[:, :-2])], axis=1)
    return logical_and(differs, rules.as_tensor(is_label))


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
    if original == dtypes.float16:
        logits = cast(logits, dtypes.float32)
    if len(logits._shape) != 3 or len(labels._shape) != 2:
        raise ValueError(f"ctc_loss takes logits of rank 3 and labels of rank 2, got shapes "
                         f"{list(logits._shape)} and {list(labels._shape)}")
    if not logits_time_major:
        logits = transpose(logits, [1, 0, 2])
    frames, max_labels = logits._shape[0], labels._shape[1]
    if frames is None or max_labels is None:
        raise ValueError("ctc_loss needs the number of frames and the label length known "
                         "when the function is traced")
    logits, labels = _blank_first(logits, labels, 0 if blank_index is None else
                                  int(blank_index))
    states = 2 * max_labels + 1
    extended = _extended(cast(labels, dtypes.int32), max_labels)
    log_probs = log_softmax(logits)
    emissions = einsum("tbk,bsk->tbs", log_probs,
                       one_hot(extended, logits._shape[2], dtype=logits.dtype))
    skips = _skips_allowed(extended, states)
    log_zero = rules.as_tensor(_LOG_ZERO, logits.dtype)
    lengths = cast(logit_length, dtypes.int32)
    alpha = where(rules.as_tensor(np.arange(states) < 2), emissions[0], log_zero)
    alpha = where(expand_dims(less(0, lengths), 1), alpha,
                  where(rules.as_tensor(np.arange(states) == 0), 0.0 * alpha, log_zero))
    padding = log_zero + 0.0 * alpha[:, :2]

    def step(t, alpha):
        one_back = concat([padding[:, :1], alpha[:, :-1]], axis=1)
        two_back = where(skips, concat([padding, alpha[:, :-2]], axis=1), log_zero)
        stepped = reduce_logsumexp(stack([alpha, one_back, two_back]), axis=0) + emissions[t]
        return t + 1, where(expand_dims(less(t, lengths), 1), stepped, alpha)

    # A tensor loop, as TensorFlow's ctc_loss_dense scans: in a tf.function, one step's
    # ops whatever the number of frames (unrolled, 50 frames took half a minute to compile).
    _, alpha = while_loop(lambda t, alpha: t < frames, step, [1, alpha])
    ends = 2 * cast(label_length, dtypes.int32)
    positions = rules.as_tensor(np.arange(states, dtype=np.int32))
    final = logical_or(equal(positions, expand_dims(ends, 1)),
                       equal(positions, expand_dims(ends - 1, 1)))
    loss = -reduce_logsumexp(where(final, alpha, log_zero), axis=1)
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
