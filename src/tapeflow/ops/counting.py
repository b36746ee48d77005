"""Counting by value: tf.histogram_fixed_width_bins, tf.math.bincount and
tf.math.confusion_matrix, as TensorFlow writes them, over segment sums and scatters."""


from .. import dtypes
from . import rules
from .creation import ones_like
from .creation import range as arange
from .elementwise import cast, clip_by_value, floor, less, minimum, where
from .indexing import scatter_nd, unsorted_segment_sum
from .reduce import reduce_max
from .shape import reshape, shape, stack


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32,
                               name=None):
    """The bin of each value among `nbins` equal bins over value_range = [lo, hi], values
    outside in the first or last bin (tf.histogram_fixed_width_bins); int32, of
    values' shape."""
    values = rules.as_tensor(values)
    value_range = rules.as_tensor(value_range, values.dtype)
    nbins = rules.int_scalar(nbins, "HistogramFixedWidthBins", "nbins")
    flat = reshape(values, [-1])
    scaled = (flat - value_range[0]) / (value_range[1] - value_range[0])
    index = floor(float(nbins) * scaled)
    bins = cast(clip_by_value(index, 0.0, float(nbins - 1)), dtypes.int32)
    return reshape(bins, shape(values))


def _check_non_negative(arr, op_name):
    static = rules.known_value(arr)
    if static is not None and static.size and static.min() < 0:
        raise rules.op_error(op_name, "Input arr must be non-negative!")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32,
             name=None, axis=None, binary_output=False):
    """How often each value 0, 1, ... occurs in `arr` (tf.math.bincount): max(arr) + 1
    bins, at least minlength and at most maxlength (larger values are not counted);
    with `weights`, their sums; with binary_output, 1 where a value occurs; with axis=-1,
    one count per row of a matrix."""
    op_name = "DenseBincount"
    arr = rules.as_tensor(arr)
    rules.check_int_dtype(op_name, arr, "arr")
    _check_non_negative(arr, op_name)
    if axis not in (None, 0, -1):
        raise ValueError(f"Unsupported axis value {axis}. Only 0 and -1 are currently "
                         f"supported.")
    if weights is not None and binary_output:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. "
                         "Please specify only one.")
    ids = cast(arr, dtypes.int32)
    size = reduce_max(ids) + 1 if arr._shape != (0,) else rules.as_tensor(0)
    size = size if minlength is None else where(less(size, int(minlength)), int(minlength),
                                               size)
    if maxlength is not None:
        size = minimum(size, int(maxlength))
    counted = less(ids, size)
    if weights is None:
        ones = ones_like(ids, dtype=dtypes.as_dtype(dtype))
    else:
        ones = rules.as_tensor(weights)
    data = where(counted, ones, ones * 0)
    if axis == -1 and len(arr._shape) == 2:
        rows = shape(ids)[0]
        row_index = reshape(arange(rows), [-1, 1])
        flat_ids = reshape(where(counted, ids, 0) + row_index * size, [-1])
        counts = reshape(unsorted_segment_sum(reshape(data, [-1]), flat_ids, rows * size),
                         stack([rows, size]))
    else:
        counts = unsorted_segment_sum(reshape(data, [-1]),
                                      reshape(where(counted, ids, 0), [-1]), size)
    if binary_output:
        counts = minimum(counts, 1)
    return counts


def confusion_matrix(labels, predictions, num_classes=None, weights=None,
                     dtype=dtypes.int32, name=None):
    """[num_classes, num_classes] counts (or summed weights) of each (label, prediction)
    pair (tf.math.confusion_matrix); num_classes defaults to the largest class + 1."""
    from .elementwise import maximum
    labels, predictions = rules.as_tensors(labels, predictions)
    for t, what in ((labels, "labels"), (predictions, "predictions")):
        rules.check_int_dtype("confusion_matrix", t, what)
        _check_non_negative(t, "confusion_matrix")
    labels, predictions = cast(labels, dtypes.int64), cast(predictions, dtypes.int64)
    if num_classes is None:
        n = maximum(reduce_max(labels), reduce_max(predictions)) + 1
    else:
        n = cast(rules.as_tensor(num_classes), dtypes.int64)
        _check_below(labels, n, "labels")
        _check_below(predictions, n, "predictions")
    values = ones_like(labels, dtype=dtypes.as_dtype(dtype)) if weights is None else \
        cast(rules.as_tensor(weights), dtypes.as_dtype(dtype))
    return scatter_nd(stack([labels, predictions], axis=1), values, stack([n, n]))


def _check_below(x, n, what):
    static, bound = rules.known_value(x), rules.known_value(n)
    if static is not None and bound is not None and static.size and static.max() >= bound:
        raise rules.op_error("confusion_matrix", f"`{what}` out of bound: Condition x < y "
                                                 f"did not hold.")


__all__ = ["bincount", "confusion_matrix", "histogram_fixed_width_bins"]
