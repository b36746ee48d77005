"""Window operations written tap by tap: for each position of a window over an NHWC
image, the strided slice of the (zero-padded) image that tap reads at every output
position. tf.nn.dilation2d and erosion2d are the running maximum of those slices plus
the filter's tap, and tf.nn.max_pool_with_argmax the running maximum with the flat index
of where it was found. The running maximum keeps the first of equal values, so its
gradient (Maximum's) goes where TensorFlow's Dilation2DBackprop and MaxPoolGradWithArgmax
send it: the first largest value in row-major window order."""

import numpy as np

from .. import dtypes
from . import rules
from .convolution import window_sequence
from .windows import output_size


def _taps(op_name, x, window, strides, rates, padding):
    """[(slice [N, OH, OW, C], rows, cols)] for each tap of the window in row-major
    order, rows and cols the image positions (NumPy, -1 or past the end where padding)
    it reads, and the output size (OH, OW)."""
    from .shape import pad
    if len(x._shape) != 4:
        raise rules.op_error(op_name, f"input must be 4-dimensional: "
                                      f"{rules.kernel_dims(x._shape)}")
    if padding not in ("SAME", "VALID"):
        raise rules.op_error(op_name, f'Value for attr \'padding\' of "{padding}" is not in '
                                      f'the list of allowed values: "SAME", "VALID"')
    h, w = x._shape[1:3]
    if None in (h, w):
        raise rules.op_error(op_name, "the image's height and width must be known when the "
                                      "function is traced")
    (oh, top, bottom), (ow, left, right) = (
        output_size(op_name, size, k, s, r, padding)
        for size, k, s, r in zip((h, w), window, strides, rates))
    padded = pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]]) if top + bottom + \
        left + right else x
    taps = []
    for i in range(window[0]):
        for j in range(window[1]):
            r0, c0 = i * rates[0], j * rates[1]
            piece = padded[:, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                           c0:c0 + (ow - 1) * strides[1] + 1:strides[1]]
            taps.append((piece, r0 - top + np.arange(oh) * strides[0],
                         c0 - left + np.arange(ow) * strides[1]))
    return taps, (oh, ow)


def _inside(rows, cols, h, w):
    """Whether each output position's tap lies in the image: [1, OH, OW, 1], or None
    where all do."""
    inside = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < w))[None, :]
    return None if inside.all() else inside[None, :, :, None]


def _lowest(dtype):
    return -np.inf if dtype.is_floating else np.iinfo(dtype._np).min


def _running_max(op_name, x, window, strides, rates, padding, filters=None, index=None):
    """The largest value of each window (of x plus the filter's tap) and, given a
    [1, H, W, C] index image, the index where it was first found."""
    from .elementwise import greater, maximum, where
    from .shape import broadcast_to, shape
    taps, (oh, ow) = _taps(op_name, x, window, strides, rates, padding)
    h, w = x._shape[1:3]
    best = best_index = None
    for k, (piece, rows, cols) in enumerate(taps):
        if filters is not None:
            piece = piece + filters[k // window[1], k % window[1]]
        inside = _inside(rows, cols, h, w)
        if inside is not None:
            piece = where(rules.as_tensor(inside), piece,
                          rules.as_tensor(_lowest(x.dtype), x.dtype))
        if index is not None:
            r, c = np.clip(rows, 0, h - 1), np.clip(cols, 0, w - 1)
            here = rules.as_tensor(index[:, r][:, :, c])
            best_index = here if best is None else where(greater(piece, best), here,
                                                         best_index)
        best = piece if best is None else maximum(best, piece)
    if best_index is not None:
        best_index = broadcast_to(best_index, shape(best))
    return best, best_index


def _nhwc_only(data_format, op_name):
    if data_format not in ("NHWC", None):
        raise ValueError(f"Data formats other than NHWC are not yet supported for "
                         f"{op_name}, got {data_format}")


def dilation2d(input, filters, strides, padding, data_format, dilations,  # noqa: A002
               name=None):
    """Grayscale morphological dilation (tf.nn.dilation2d): the largest input + filter
    over each window, with [KH, KW, C] `filters`."""
    op_name = "Dilation2D"
    _nhwc_only(data_format, "dilation2d")
    x, f = rules.as_tensors(input, filters)
    rules.check_same_dtype(op_name, (x, f))
    rules.check_dtype_in(op_name, x, rules.is_numeric, "real number types")
    if len(f._shape) != 3:
        raise rules.op_error(op_name, f"filter must be 3-dimensional: "
                                      f"{rules.kernel_dims(f._shape)}")
    if len(x._shape) == 4 and x._shape[3] is not None and x._shape[3] != f._shape[2]:
        raise rules.op_error(op_name, f"input and filter must have the same depth: "
                                      f"{x._shape[3]} vs {f._shape[2]}")
    st = window_sequence(strides, 2, 3, "strides")
    rate = window_sequence(dilations, 2, 3, "dilations")
    if st[0] != 1 or st[3] != 1 or rate[0] != 1 or rate[3] != 1:
        raise rules.op_error(op_name, "Stride and rate are only supported across spatial "
                                      "dimensions.")
    out, _ = _running_max(op_name, x, f._shape[:2], st[1:3], rate[1:3], padding, filters=f)
    return out


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None):
    """Grayscale morphological erosion (tf.nn.erosion2d): the dilation of -value by the
    reflected filter, negated, as TensorFlow computes it."""
    from .shape import reverse
    f = rules.as_tensor(filters)
    return -dilation2d(-rules.as_tensor(value), reverse(f, [0, 1]), strides, padding,
                       data_format, dilations)


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
                         output_dtype=dtypes.int64, include_batch_in_index=False, name=None):
    """Max pooling and the flat index of each window's (first) largest value
    (tf.nn.max_pool_with_argmax): (y * width + x) * channels + c, plus batch * height *
    width * channels with include_batch_in_index."""
    from .creation import range as arange
    from .shape import reshape, shape
    op_name = "MaxPoolWithArgmax"
    if data_format != "NHWC":
        raise ValueError(f"Data formats other than 'NHWC' are not yet supported, got "
                         f"{data_format}")
    output_dtype = dtypes.as_dtype(output_dtype)
    if output_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'Targmax' has DataType "
                        f"{output_dtype.name} not in list of allowed values: int32, int64")
    x = rules.as_tensor(input)
    ks = window_sequence(ksize, 2, 3, "ksize")
    st = window_sequence(strides, 2, 3, "strides")
    if ks[0] != 1 or ks[3] != 1 or st[0] != 1 or st[3] != 1:
        raise rules.op_error(op_name, "Pooling is not yet supported on the batch nor depth "
                                      "dimensions.")
    rules.check_dtype_in(op_name, x, rules.is_numeric, "real number types")
    h, w, c = x._shape[1:]
    if c is None:
        raise rules.op_error(op_name, "the depth must be known when the function is traced")
    index = np.arange(h * w * c, dtype=output_dtype._np).reshape(1, h, w, c)
    pooled, argmax = _running_max(op_name, x, ks[1:3], st[1:3], (1, 1), padding, index=index)
    if include_batch_in_index:
        batch = arange(shape(x, out_type=output_dtype)[0])
        argmax = argmax + reshape(batch * (h * w * c), (-1, 1, 1, 1))
    return pooled, argmax


__all__ = ["dilation2d", "erosion2d", "max_pool_with_argmax"]
