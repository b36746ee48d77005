"""Segment means and partitions composed of the table's ops, as TensorFlow composes them:
tf.math.unsorted_segment_mean, unsorted_segment_sqrt_n and tf.dynamic_partition."""

from .. import dtypes
from ..tensor import ValuelessTensor
from . import rules
from .creation import ones_like
from .elementwise import cast, clip_by_value, equal, floor, maximum, rsqrt
from .indexing import gather, unsorted_segment_sum, where_indices
from .shape import expand_dims, reshape, squeeze


def _counts(data, segment_ids, num_segments):
    """How many rows each segment gets, shaped to broadcast against the segment sums."""
    ones = cast(segment_ids >= 0, data.dtype)
    counts = maximum(unsorted_segment_sum(ones, segment_ids, num_segments), 1.0)
    for _ in range(len(data._shape) - len(segment_ids._shape)):
        counts = expand_dims(counts, -1)
    return counts


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the rows of `data` in each segment (0 for an empty one).

    >>> import tapeflow as tf
    >>> tf.math.unsorted_segment_mean(tf.constant([1., 2., 3., 4.]), [0, 0, 2, 2], 3).numpy()
    array([1.5, 0. , 3.5], dtype=float32)
    """
    data, segment_ids = rules.as_tensor(data), rules.as_tensor(segment_ids)
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    return total / _counts(data, segment_ids, num_segments)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Each segment's sum divided by the square root of its row count (0 for an empty one)."""
    data, segment_ids = rules.as_tensor(data), rules.as_tensor(segment_ids)
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    return total * rsqrt(_counts(data, segment_ids, num_segments))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """`data`'s rows split into `num_partitions` tensors by `partitions` (which covers the
    leading dimensions of data), in order (tf.dynamic_partition).

    >>> import tapeflow as tf
    >>> [p.numpy().tolist() for p in tf.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 2], 3)]
    [[10, 30], [20], [40]]
    """
    data, partitions = rules.as_tensor(data), rules.as_tensor(partitions)
    num_partitions = rules.int_scalar(num_partitions, "DynamicPartition", "num_partitions")
    if not partitions.dtype.is_integer:
        rules.check_int_dtype("DynamicPartition", partitions, "partitions")
    covered = len(partitions._shape)
    if data._shape[:covered] != partitions._shape:
        raise rules.op_error("DynamicPartition", f"data.shape must start with partitions.shape, "
                                                 f"got data.shape = {list(data._shape)}, "
                                                 f"partitions.shape = "
                                                 f"{list(partitions._shape)}")
    if not isinstance(partitions, ValuelessTensor):  # a traced value is known only later
        values = partitions.numpy().reshape(-1)
        outside = (values < 0) | (values >= num_partitions)
        if outside.any():
            bad = int(outside.argmax())
            raise rules.op_error("DynamicPartition", f"partitions[{bad}] = {int(values[bad])} "
                                                     f"is not in [0, {num_partitions})")
    rows = reshape(data, [-1] + [-1 if d is None else d for d in data._shape[covered:]]) \
        if covered != 1 else data
    flat = reshape(partitions, [-1])
    return [gather(rows, squeeze(where_indices(equal(flat, k)), axis=[1]))
            for k in range(num_partitions)]


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """How many of `values` fall in each of `nbins` equal bins over value_range = [lo, hi]
    (values outside count in the first or last bin), as tf.histogram_fixed_width.

    >>> import tapeflow as tf
    >>> tf.histogram_fixed_width(tf.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]), [0.0, 5.0], 5).numpy()
    array([2, 1, 1, 0, 2], dtype=int32)
    """
    values = rules.as_tensor(values)
    value_range = rules.as_tensor(value_range, values.dtype)
    nbins = rules.int_scalar(nbins, "HistogramFixedWidth", "nbins")
    if nbins <= 0:
        raise rules.op_error("HistogramFixedWidth", f"nbins should be a positive number, but "
                                                    f"got '{nbins}'")
    low, high = value_range[0], value_range[1]
    flat = reshape(values, [-1])
    position = floor((flat - low) / (high - low) * float(nbins))
    bins = cast(clip_by_value(position, 0.0, float(nbins - 1)), dtypes.int32)
    counts = unsorted_segment_sum(cast(ones_like(flat), dtypes.as_dtype(dtype)), bins, nbins)
    return counts


__all__ = ["unsorted_segment_mean", "unsorted_segment_sqrt_n", "dynamic_partition",
           "histogram_fixed_width"]
