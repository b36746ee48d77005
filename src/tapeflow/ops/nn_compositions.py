"""tf.nn functions composed of the table's ops, as TensorFlow writes them in Python, so
their gradients, batching and compiled code are those ops': gelu, crelu,
batch_normalization, normalize_moments, embedding_lookup, weighted and Poisson losses,
depth_to_space / space_to_depth, compute_average_loss, scale_regularization_loss."""

import math

from .. import nest
from . import rules
from .creation import zeros_like
from .elementwise import (abs, cast, erf, exp, greater, log, log1p, maximum, relu,
                          rsqrt, square, tanh, where)
from .indexing import gather
from .linalg import clip_by_norm
from .reduce import reduce_sum
from .shape import concat, reshape, shape, transpose


def gelu(features, approximate=False, name=None):
    """x * P(X <= x) for a standard normal X (tf.nn.gelu), or its tanh approximation."""
    x = rules.as_tensor(features)
    if approximate:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + tanh(inner))
    return 0.5 * x * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))


def crelu(features, name=None, axis=-1):
    """relu(x) and relu(-x) concatenated along `axis` (tf.nn.crelu)."""
    x = rules.as_tensor(features)
    return concat([relu(x), relu(-x)], axis=axis)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, by TensorFlow's formula
    (tf.nn.batch_normalization); offset and scale may be None."""
    x = rules.as_tensor(x)
    inv = rsqrt(rules.as_tensor(variance, x.dtype) + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -rules.as_tensor(mean, x.dtype) * inv
    return x * inv + (shift if offset is None else shift + offset)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """The mean and variance from sufficient statistics (tf.nn.normalize_moments)."""
    divisor = 1.0 / rules.as_tensor(counts)
    shifted_mean = rules.as_tensor(mean_ss) * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    variance = rules.as_tensor(variance_ss) * divisor - square(shifted_mean)
    return mean, variance


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of `params` picked by `ids` (tf.nn.embedding_lookup). A list of tables is one
    table split in contiguous parts, TensorFlow 2's "div" strategy: their rows in order.
    With max_norm, rows longer than it are scaled down to it."""
    ids = rules.as_tensor(ids)
    tables = [rules.as_tensor(p) for p in nest.flatten(params)]
    rows = gather(tables[0] if len(tables) == 1 else concat(tables, axis=0), ids)
    if max_norm is not None:
        axes = list(range(len(ids._shape), len(rows._shape)))
        rows = clip_by_norm(rows, max_norm, axes=axes)
    return rows


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """Sigmoid cross-entropy with the positive term weighted by pos_weight, computed
    stably as TensorFlow does."""
    logits = rules.as_tensor(logits)
    labels = rules.as_tensor(labels, logits.dtype)
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    return (1.0 - labels) * logits + log_weight * (log1p(exp(-abs(logits))) + relu(-logits))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets; with compute_full_loss, plus Stirling's
    approximation of log(targets!) where targets > 1 (tf.nn.log_poisson_loss)."""
    log_input = rules.as_tensor(log_input)
    targets = rules.as_tensor(targets, log_input.dtype)
    loss = exp(log_input) - log_input * targets
    if not compute_full_loss:
        return loss
    safe = maximum(targets, 1.0)
    stirling = safe * log(safe) - safe + 0.5 * log(2.0 * math.pi * safe)
    return loss + where(greater(targets, 1.0), stirling, zeros_like(stirling))


def _data_format(data_format, op_name):
    if data_format not in ("NHWC", None):
        raise rules.op_error(op_name, f"{op_name} supports NHWC here, got {data_format}")


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Channels moved into blocks of block_size x block_size pixels (NHWC)."""
    _data_format(data_format, "DepthToSpace")
    x = rules.as_tensor(input)
    n, h, w, c = x._shape
    b = int(block_size)
    if c is not None and c % (b * b):
        raise rules.op_error("DepthToSpace", f"Input depth dimension {c} should be divisible "
                                             f"by: {b * b}")
    dims = shape(x)
    blocks = reshape(x, [dims[0], dims[1], dims[2], b, b, dims[3] // (b * b)])
    moved = transpose(blocks, [0, 1, 3, 2, 4, 5])
    return reshape(moved, [dims[0], dims[1] * b, dims[2] * b, dims[3] // (b * b)])


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Blocks of block_size x block_size pixels moved into the channels (NHWC)."""
    _data_format(data_format, "SpaceToDepth")
    x = rules.as_tensor(input)
    n, h, w, c = x._shape
    b = int(block_size)
    for size, what in ((h, "height"), (w, "width")):
        if size is not None and size % b:
            raise rules.op_error("SpaceToDepth", f"Image {what} {size} and block_size {b} "
                                                 f"should be divisible")
    dims = shape(x)
    blocks = reshape(x, [dims[0], dims[1] // b, b, dims[2] // b, b, dims[3]])
    moved = transpose(blocks, [0, 1, 3, 2, 4, 5])
    return reshape(moved, [dims[0], dims[1] // b, dims[2] // b, dims[3] * (b * b)])


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses over the global batch size (the first
    dimension's size by default; one replica), as tf.nn.compute_average_loss."""
    loss = rules.as_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * rules.as_tensor(sample_weight, loss.dtype)
    size = shape(loss)[0] if global_batch_size is None else global_batch_size
    return reduce_sum(loss) / cast(size, loss.dtype)


def scale_regularization_loss(regularization_loss):
    """The regularization losses summed, for one replica (tf.nn.scale_regularization_loss)."""
    return reduce_sum(rules.as_tensor(regularization_loss))


__all__ = ["gelu", "crelu", "batch_normalization", "normalize_moments", "embedding_lookup",
           "weighted_cross_entropy_with_logits", "log_poisson_loss", "depth_to_space",
           "space_to_depth", "compute_average_loss", "scale_regularization_loss"]
