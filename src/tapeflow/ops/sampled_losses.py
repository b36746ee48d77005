"""`tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss`: TensorFlow's compositions
(nn_impl.py, _compute_sampled_logits) over the candidate samplers, embedding lookups,
products and the cross-entropy losses, so their gradients come from those ops."""

from .. import dtypes
from . import rules
from .candidate_sampling import HIT_WEIGHT, compute_accidental_hits, log_uniform_candidate_sampler
from .creation import ones_like, zeros_like
from .elementwise import cast, greater, log, stop_gradient, where
from .indexing import scatter_nd
from .linalg import matmul
from .nn import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits
from .nn_compositions import embedding_lookup
from .reduce import reduce_sum
from .shape import concat, expand_dims, reshape, stack


def _lookup(params, ids, dtype):
    rows = embedding_lookup(params, ids)
    return rows if rows.dtype == dtype else cast(rows, dtype)


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, subtract_log_q, remove_accidental_hits, seed):
    """The logits of the true and the sampled classes (true first) and their labels, as
    TensorFlow's _compute_sampled_logits."""
    inputs = rules.as_tensor(inputs)
    labels = rules.as_tensor(labels)
    if labels.dtype != dtypes.int64:
        labels = cast(labels, dtypes.int64)
    labels_flat = reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                       num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (stop_gradient(rules.as_tensor(s))
                                                for s in sampled_values)
    sampled = cast(sampled, dtypes.int64)
    n_true = labels_flat.shape[0]
    all_ids = concat([labels_flat, sampled], 0)
    all_w = _lookup(weights, all_ids, inputs.dtype)
    true_w, sampled_w = all_w[:n_true], all_w[n_true:]
    sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
    all_b = _lookup(biases, all_ids, inputs.dtype)
    true_b, sampled_b = all_b[:n_true], all_b[n_true:]
    dim = true_w.shape[1]
    row_wise_dots = expand_dims(inputs, 1) * reshape(true_w, [-1, num_true, dim])
    true_logits = reduce_sum(row_wise_dots, axis=-1) + reshape(true_b, [-1, num_true])
    sampled_logits = sampled_logits + sampled_b
    if remove_accidental_hits:
        rows, ids, _ = compute_accidental_hits(labels, sampled, num_true)
        indices = stack([rows, cast(ids, dtypes.int32)], axis=1)
        shape = [labels.shape[0], num_sampled]
        # TensorFlow writes the weights densely (sparse_to_dense): a true class repeated
        # in a row hits once, so the hits are marked, not summed.
        hit = greater(scatter_nd(indices, ones_like(rows), shape), 0)
        lowest = rules.as_tensor(HIT_WEIGHT, sampled_logits.dtype)
        sampled_logits = sampled_logits + where(hit, lowest, zeros_like(sampled_logits))
    if subtract_log_q:  # the logits of the true distribution, not the sampled one
        true_logits = true_logits - log(cast(true_expected, true_logits.dtype))
        sampled_logits = sampled_logits - log(cast(sampled_expected, sampled_logits.dtype))
    out_logits = concat([true_logits, sampled_logits], 1)
    out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
    return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, name="nce_loss"):
    """The noise-contrastive estimation loss of each example, as `tf.nn.nce_loss`: a
    logistic loss telling the true classes from `num_sampled` sampled ones (by default
    from `tf.random.log_uniform_candidate_sampler`).

    >>> import tapeflow as tf
    >>> w, b = tf.ones([10, 3]), tf.zeros([10])
    >>> tf.nn.nce_loss(w, b, [[1], [2]], tf.ones([2, 3]), 4, 10).shape
    TensorShape([2])
    """
    logits, labels = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                     num_classes, num_true, sampled_values, True,
                                     remove_accidental_hits, None)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    return reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         seed=None, name="sampled_softmax_loss"):
    """The softmax cross-entropy of each example over its true classes and
    `num_sampled` sampled ones, as `tf.nn.sampled_softmax_loss`."""
    logits, labels = _sampled_logits(weights, biases, labels, inputs, num_sampled,
                                     num_classes, num_true, sampled_values, True,
                                     remove_accidental_hits, seed)
    return softmax_cross_entropy_with_logits(labels=stop_gradient(labels), logits=logits)


__all__ = ["nce_loss", "sampled_softmax_loss"]
