"""What convolutions and pooling share: the attrs of a sliding window over the spatial
axes of an NHWC or NCHW tensor (strides, dilations, padding), TensorFlow's output sizes
and paddings for them, and the NumPy view of every window of an NHWC array."""

import numpy as np

from . import rules

SPATIAL_AXES = {"NHWC": (1, 2), "NCHW": (2, 3)}
CHANNEL_AXIS = {"NHWC": 3, "NCHW": 1}


def _c_division(a, b):
    """a / b rounded toward zero, as TensorFlow's C++ computes output sizes."""
    return a // b if a >= 0 else -((-a) // b)


def output_size(op_name, size, window, stride, dilation, padding, explicit=(0, 0)):
    """(output size, padding before, padding after) of one spatial axis, as TensorFlow's
    GetWindowedOutputSizeVerbose: SAME keeps ceil(size / stride) and pads the rest,
    more after than before; VALID pads nothing."""
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = _c_division(size + stride - 1, stride)
        total = max((out - 1) * stride + effective - size, 0)
        before, after = total // 2, total - total // 2
    elif padding == "VALID":
        out = _c_division(size + stride - effective, stride)
        before = after = 0
    else:
        before, after = explicit
        out = _c_division(size + before + after - effective + stride, stride)
    if out < 0:
        raise rules.op_error(op_name, f"Computed output size would be negative: {out} "
                                      f"[input_size: {size}, effective_filter_size: "
                                      f"{effective}, stride: {stride}]")
    return out, before, after


def geometry(op_name, sizes, windows, strides, dilations, padding, explicit):
    """output_size for each spatial axis: a list of (out, before, after)."""
    return [output_size(op_name, s, k, st, d, padding, explicit[i] if explicit else (0, 0))
            for i, (s, k, st, d) in enumerate(zip(sizes, windows, strides, dilations))]


def explicit_pairs(op_name, padding, explicit_paddings, data_format):
    """The (before, after) pairs of the spatial axes for EXPLICIT padding, else None."""
    if padding not in ("SAME", "VALID", "EXPLICIT"):
        raise rules.op_error(op_name, f'Value for attr \'padding\' of "{padding}" is not in '
                                      f'the list of allowed values: "SAME", "VALID", '
                                      f'"EXPLICIT"')
    if padding != "EXPLICIT":
        if explicit_paddings:
            raise rules.op_error(op_name, "explicit_paddings attribute must be empty if the "
                                          "padding attribute is not EXPLICIT")
        return None
    if len(explicit_paddings) != 8:
        raise rules.op_error(op_name, f"explicit_paddings attribute must contain 8 values, "
                                      f"but got: {len(explicit_paddings)}")
    pairs = [tuple(explicit_paddings[2 * i:2 * i + 2]) for i in range(4)]
    if any(p < 0 for p in explicit_paddings):
        raise rules.op_error(op_name, "All elements of explicit_paddings must be "
                                      "nonnegative")
    if pairs[0] != (0, 0) or pairs[CHANNEL_AXIS[data_format]] != (0, 0):
        raise rules.op_error(op_name, "Nonzero explicit padding in the batch or depth "
                                      "dimensions is not supported")
    return spatial(pairs, data_format)


def spatial(values, data_format):
    """The spatial entries (H, W) of a 4-entry attr or shape in `data_format`."""
    h, w = SPATIAL_AXES[data_format]
    return values[h], values[w]


def check_window_attrs(op_name, strides, dilations, data_format):
    """TensorFlow's checks of 4-entry strides and dilations: positive, and 1 along the
    batch and channel axes."""
    if data_format not in SPATIAL_AXES:
        raise rules.op_error(op_name, f"Invalid data format: {data_format}")
    for what, values in (("strides", strides), ("dilations", dilations)):
        if len(values) != 4:
            raise rules.op_error(op_name, f"Sliding window {what} field must specify 4 "
                                          f"dimensions")
        channel = CHANNEL_AXIS[data_format]
        if values[0] != 1 or values[channel] != 1:
            raise rules.op_error(op_name, f"Current implementation does not yet support "
                                          f"{what} in the batch and depth dimensions.")
        for v in spatial(values, data_format):
            if v <= 0:
                name = "Stride" if what == "strides" else "Dilated rate"
                raise rules.op_error(op_name, f"{name} must be > 0, but got {v}")


def numpy_kernel(fn):
    """An eager kernel: float16 inputs computed in float32 (TensorFlow's kernels
    accumulate so), the result in the inputs' dtype, without NumPy's warnings (inf and
    NaN propagate silently, as in TensorFlow)."""
    def kernel(*arrays, **attrs):
        dtype = arrays[0].dtype
        if dtype == np.float16:
            arrays = [a.astype(np.float32) for a in arrays]
        with np.errstate(all="ignore"):
            return np.asarray(fn(*arrays, **attrs)).astype(dtype, copy=False)
    kernel.__name__ = fn.__name__
    return kernel


def to_nhwc(x, data_format):
    return x if data_format == "NHWC" else np.moveaxis(x, 1, 3)


def from_nhwc(x, data_format):
    return x if data_format == "NHWC" else np.moveaxis(x, 3, 1)


def patches(x, windows, strides, dilations, geo, fill=0):
    """Every window of the NHWC array x, as a view [N, OH, OW, C, KH, KW] of x padded
    with `fill` by `geo` (geometry's (out, before, after) per spatial axis)."""
    (oh, top, bottom), (ow, left, right) = geo
    n, _, _, c = x.shape
    kh, kw = windows
    if oh == 0 or ow == 0 or n == 0 or c == 0:
        return np.zeros((n, oh, ow, c, kh, kw), x.dtype)
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    eh, ew = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    view = np.lib.stride_tricks.sliding_window_view(padded, (eh, ew), axis=(1, 2))
    return view[:, :(oh - 1) * strides[0] + 1:strides[0], :(ow - 1) * strides[1] + 1:strides[1],
                :, ::dilations[0], ::dilations[1]]


def scatter_patches(cols, shape, windows, strides, dilations, geo):
    """The adjoint of patches: the NHWC array of `shape` whose every element is the sum
    of the entries of cols ([N, OH, OW, C, KH, KW]) that its windows read."""
    (oh, top, bottom), (ow, left, right) = geo
    n, h, w, c = shape
    padded = np.zeros((n, h + top + bottom, w + left + right, c), cols.dtype)
    if oh == 0 or ow == 0:
        return padded[:, top:top + h, left:left + w]
    for i in range(windows[0]):
        for j in range(windows[1]):
            r, q = i * dilations[0], j * dilations[1]
            padded[:, r:r + (oh - 1) * strides[0] + 1:strides[0],
                   q:q + (ow - 1) * strides[1] + 1:strides[1]] += cols[:, :, :, :, i, j]
    return padded[:, top:top + h, left:left + w]
