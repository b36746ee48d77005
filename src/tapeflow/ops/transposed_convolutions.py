"""The transposes of the convolutions and the depthwise gradients, as tf.nn names them:
conv1d_transpose, conv3d_transpose, conv_transpose, atrous_conv2d_transpose,
separable_conv2d and depthwise_conv2d_backprop_input / _filter. Each is written with
the Conv2D entries (as TensorFlow writes most of them in Python), so their gradients of
any order, batching and compiled code are those entries'."""

from . import rules
from .convolution import (CONV2D_BACKPROP_FILTER, CONV2D_BACKPROP_INPUT, conv2d,
                          conv2d_backprop_input, conv2d_transpose, depthwise_conv2d,
                          padding_attrs, window_sequence)
from .registry import bind
from .windows import CHANNEL_AXIS, output_size


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The transpose of conv1d with [K, C_out, C_in] `filters` (tf.nn.conv1d_transpose):
    conv2d_transpose over a height of 1, as TensorFlow computes it."""
    from .shape import expand_dims, squeeze
    if data_format is None:
        data_format = "NWC"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: "
                         f"data_format={data_format}")
    spatial_axis = 1 if data_format == "NWC" else 2
    channel = 2 if data_format == "NWC" else 1
    stride = window_sequence(strides, 1, channel, "stride")[spatial_axis]
    dilation = window_sequence(dilations, 1, channel, "dilations")[spatial_axis]
    sizes = list(rules.int_tuple(output_shape, "output_shape", "Conv2DBackpropInput"))
    sizes.insert(spatial_axis, 1)
    window = (1, 1, stride, 1) if data_format == "NWC" else (1, 1, 1, stride)
    rate = (1, 1, dilation, 1) if data_format == "NWC" else (1, 1, 1, dilation)
    out = conv2d_transpose(expand_dims(rules.as_tensor(input), spatial_axis),
                           expand_dims(rules.as_tensor(filters), 0), sizes, window, padding,
                           "NHWC" if data_format == "NWC" else "NCHW", rate)
    return squeeze(out, [spatial_axis])


def _interleaved(planes, stride):
    """[N, D, ...] planes with stride - 1 zero planes after each: [N, (D-1)*s + 1, ...]."""
    from .shape import expand_dims, pad, reshape
    if stride == 1:
        return planes
    rank = len(planes._shape)
    spread = pad(expand_dims(planes, 2), [[0, 0], [0, 0], [0, stride - 1]] +
                 [[0, 0]] * (rank - 2))
    dims = list(planes._shape)
    merged = reshape(spread, [-1, dims[1] * stride] + dims[2:])
    return merged[:, :(dims[1] - 1) * stride + 1]


def _conv3d_transpose_channels_last(dy, w, sizes, strides, padding, dilations):
    from .shape import pad, reshape
    from .statistics import add_n
    op_name = "Conv3DBackpropInputV2"
    for t, what in ((dy, "out_backprop"), (w, "filter")):
        if len(t._shape) != 5:
            raise rules.op_error(op_name, f"{what} must be 5-dimensional: "
                                          f"{rules.kernel_dims(t._shape)}")
    if len(sizes) != 5:
        raise rules.op_error(op_name, f"input_sizes must have 5 elements, got "
                                      f"{len(sizes)}")
    rules.check_same_dtype(op_name, (w, dy))
    if dy._shape[4] != w._shape[4]:
        raise rules.op_error(op_name, f"out_backprop depth {dy._shape[4]} does not match "
                                      f"the filter's output depth {w._shape[4]}")
    if sizes[4] != w._shape[3]:
        raise rules.op_error(op_name, f"input depth {sizes[4]} does not match the filter's "
                                      f"input depth {w._shape[3]}")
    if padding not in ("SAME", "VALID"):
        raise rules.op_error(op_name, f'Value for attr \'padding\' of "{padding}" is not in '
                                      f'the list of allowed values: "SAME", "VALID"')
    n, depth, h, width, c = sizes
    taps = w._shape[0]
    out_depth, before, after = output_size(op_name, depth, taps, strides[1], dilations[1],
                                           padding)
    if dy._shape[1] not in (None, out_depth):
        raise rules.op_error(op_name, f"Conv3DBackpropInputOp: Size of out_backprop doesn't "
                                      f"match computed: actual = {dy._shape[1]}, computed = "
                                      f"{out_depth} spatial_dim: 1 input: {depth} filter: "
                                      f"{taps} output: {dy._shape[1]} stride: {strides[1]} "
                                      f"dilation: {dilations[1]}")
    plane_attrs = {"strides": (1, strides[2], strides[3], 1), "padding": padding,
                   "explicit_paddings": (), "data_format": "NHWC",
                   "dilations": (1, dilations[2], dilations[3], 1)}
    folded = reshape(dy, (-1,) + tuple(dy._shape[2:]))
    plane_sizes = (None if n is None or out_depth is None else n * out_depth, h, width, c)
    padded_depth = depth + before + after
    span = (out_depth - 1) * strides[1] + 1
    terms = []
    for k in range(taps if out_depth else 0):
        planes = conv2d_backprop_input(w[k], folded, plane_sizes, plane_attrs)
        spread = _interleaved(reshape(planes, (-1, out_depth, h, width, c)), strides[1])
        start = k * dilations[1]
        terms.append(pad(spread, [[0, 0], [start, padded_depth - start - span], [0, 0],
                                  [0, 0], [0, 0]]))
    if not terms:
        from .creation import zeros
        return zeros([n if n is not None else 0, depth, h, width, c], dtype=dy.dtype)
    total = terms[0] if len(terms) == 1 else add_n(terms)
    return total[:, before:before + depth]


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NDHWC", dilations=None, name=None):
    """The transpose (gradient) of conv3d with [KD, KH, KW, C_out, C_in] `filters`
    (tf.nn.conv3d_transpose): for each depth tap, conv2d_transpose of the output's depth
    slices, spread back to the depth positions that tap read and summed."""
    from .shape import transpose
    dy, w = rules.as_tensors(input, filters)
    sizes = rules.int_tuple(output_shape, "output_shape", "Conv3DBackpropInputV2")
    if data_format == "NCDHW":
        strides = window_sequence(strides, 3, 1, "strides")
        dilations = window_sequence(dilations, 3, 1, "dilations")
        moved = [0, 2, 3, 4, 1]
        out = _conv3d_transpose_channels_last(
            transpose(dy, moved), w, [sizes[i] for i in moved],
            [strides[i] for i in moved], padding, [dilations[i] for i in moved])
        return transpose(out, [0, 4, 1, 2, 3])
    if data_format not in ("NDHWC", None):
        raise rules.op_error("Conv3DBackpropInputV2", f"Invalid data format: {data_format}")
    return _conv3d_transpose_channels_last(dy, w, sizes, window_sequence(strides, 3, 4,
                                                                         "strides"),
                                           padding, window_sequence(dilations, 3, 4,
                                                                    "dilations"))


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """conv1d_transpose, conv2d_transpose or conv3d_transpose by the length of
    `output_shape` (tf.nn.conv_transpose)."""
    n = len(rules.int_tuple(output_shape, "output_shape")) - 2
    channels_first = data_format is not None and data_format.startswith("NC")
    if n == 1:
        return conv1d_transpose(input, filters, output_shape, strides, padding,
                                "NCW" if channels_first else "NWC", dilations)
    if n == 2:
        return conv2d_transpose(input, filters, output_shape, strides, padding,
                                "NCHW" if channels_first else "NHWC", dilations)
    if n == 3:
        return conv3d_transpose(input, filters, output_shape, strides, padding,
                                "NCDHW" if channels_first else "NDHWC", dilations)
    raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: "
                     f"output_shape={list(output_shape)} of length {n + 2}.")


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d (tf.nn.atrous_conv2d_transpose): conv2d_transpose
    whose filter taps are `rate` apart."""
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    rate = rules.int_scalar(rate, "Conv2DBackpropInput", "rate")
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    value, filters = rules.as_tensors(value, filters)
    if value._shape[3] is not None and filters._shape[3] is not None and \
            value._shape[3] != filters._shape[3]:
        raise ValueError(f"value's input channels does not match filters' input channels, "
                         f"{value._shape[3]} != {filters._shape[3]}")
    sizes = rules.int_tuple(output_shape, "output_shape", "Conv2DBackpropInput")
    if len(sizes) != 4:
        raise ValueError(f"output_shape must have shape (4,), got ({len(sizes)},)")
    if sizes[3] != filters._shape[2]:
        raise ValueError(f"output_shape does not match filter's output channels, "
                         f"{sizes[3]} != {filters._shape[2]}")
    return conv2d_transpose(value, filters, sizes, 1, padding, "NHWC", rate)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """A depthwise convolution followed by a 1 x 1 convolution mixing its channels
    (tf.nn.separable_conv2d)."""
    x, depthwise, pointwise = rules.as_tensors(input, depthwise_filter, pointwise_filter)
    if len(pointwise._shape) != 4 or pointwise._shape[:2] != (1, 1):
        raise ValueError(f"Shape must be rank 4 with 1 x 1 spatial dimensions for the "
                         f"pointwise filter, got {list(pointwise._shape)}")
    if len(depthwise._shape) == 4 and pointwise._shape[2] is not None and \
            depthwise._shape[2] * depthwise._shape[3] > pointwise._shape[2]:
        raise ValueError(f"Refusing to perform an overparameterized separable convolution: "
                         f"channels_in * channel_multiplier > out_channels: "
                         f"{depthwise._shape[2] * depthwise._shape[3]} > "
                         f"{pointwise._shape[2]}")
    features = depthwise_conv2d(x, depthwise, strides, padding, data_format, dilations)
    return conv2d(features, pointwise, 1, "VALID", data_format or "NHWC")


def _depthwise_attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NHWC"
    channel = CHANNEL_AXIS.get(data_format, 3)
    padding, explicit = padding_attrs(padding, data_format)
    return {"strides": window_sequence(strides, 2, channel, "strides"), "padding": padding,
            "explicit_paddings": explicit, "data_format": data_format,
            "dilations": window_sequence(dilations, 2, channel, "dilations")}


def _depthwise_filter_shape(shape, op_name):
    if len(shape) != 4:
        raise rules.op_error(op_name, f"filter must be 4-dimensional: "
                                      f"{rules.kernel_dims(shape)}")
    kh, kw, c, m = shape
    return kh, kw, 1, c * m


def depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides,  # noqa: A002
                                    padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                    name=None):
    """The gradient of depthwise_conv2d with respect to its input, of shape `input_sizes`
    (tf.nn.depthwise_conv2d_backprop_input): the grouped Conv2DBackpropInput."""
    from .shape import reshape
    op_name = "DepthwiseConv2dNativeBackpropInput"
    w, dy = rules.as_tensors(filter, out_backprop)
    grouped = reshape(w, _depthwise_filter_shape(w._shape, op_name))
    sizes = rules.int_tuple(input_sizes, "input_sizes", op_name)
    return bind(CONV2D_BACKPROP_INPUT, (grouped, dy),
                {**_depthwise_attrs(strides, padding, data_format, dilations),
                 "input_sizes": sizes})


def depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides,  # noqa: A002
                                     padding, data_format="NHWC", dilations=(1, 1, 1, 1),
                                     name=None):
    """The gradient of depthwise_conv2d with respect to its filter, of shape
    `filter_sizes` [KH, KW, C, M] (tf.nn.depthwise_conv2d_backprop_filter): the grouped
    Conv2DBackpropFilter."""
    from .shape import reshape
    op_name = "DepthwiseConv2dNativeBackpropFilter"
    x, dy = rules.as_tensors(input, out_backprop)
    sizes = rules.int_tuple(filter_sizes, "filter_sizes", op_name)
    grads = bind(CONV2D_BACKPROP_FILTER, (x, dy),
                 {**_depthwise_attrs(strides, padding, data_format, dilations),
                  "filter_sizes": _depthwise_filter_shape(sizes, op_name)})
    return reshape(grads, sizes)


__all__ = ["atrous_conv2d_transpose", "conv1d_transpose", "conv3d_transpose",
           "conv_transpose", "depthwise_conv2d_backprop_filter",
           "depthwise_conv2d_backprop_input", "separable_conv2d"]
