"""Convolutions (tf.nn.conv2d and the functions built on it): Conv2D and TensorFlow's two
gradient ops, Conv2DBackpropInput (also tf.nn.conv2d_transpose) and
Conv2DBackpropFilter, each an entry whose gradient is written with the other two, so
derivatives of any order stay convolutions. A filter whose input depth divides the
input's channels convolves in groups, as TensorFlow's Conv2D does; depthwise
convolutions are such groups. conv1d and conv3d are 2-D convolutions on reshaped or
sliced tensors, atrous_conv2d one with dilations."""

import numpy as np

from .. import dtypes
from . import rules
from .registry import OpDef, bind, register
from .windows import CHANNEL_AXIS, check_window_attrs, explicit_pairs, from_nhwc, geometry, \
    numpy_kernel, patches, scatter_patches, spatial, to_nhwc

_CONV_DTYPES = "half, bfloat16, float, double, int32"


def _conv_dtype(d):
    return d in (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32)


def _known(op_name, shape, what):
    if None in shape[1:]:
        raise rules.op_error(op_name, f"the spatial and depth dimensions of the {what} must "
                                      f"be known when the function is traced, got "
                                      f"{rules.kernel_dims(shape)}")


def _geometry(op_name, image_shape, filter_shape, strides, padding, explicit_paddings,
              data_format, dilations):
    """Checks the attrs and the image / filter shapes; (geometry, groups)."""
    check_window_attrs(op_name, strides, dilations, data_format)
    pairs = explicit_pairs(op_name, padding, explicit_paddings, data_format)
    depth = image_shape[CHANNEL_AXIS[data_format]]
    filter_depth, out_depth = filter_shape[2], filter_shape[3]
    if filter_depth == 0 or depth % filter_depth:
        raise rules.op_error(op_name, f"input depth must be evenly divisible by filter "
                                      f"depth: {depth} vs {filter_depth}")
    groups = depth // filter_depth
    if out_depth % groups:
        raise rules.op_error(op_name, f"output depth must be evenly divisible by number of "
                                      f"groups: {out_depth} vs {groups}")
    geo = geometry(op_name, spatial(image_shape, data_format), filter_shape[:2],
                   spatial(strides, data_format), spatial(dilations, data_format),
                   padding, pairs)
    return geo, groups


def _image_shape(batch, geo_sizes, depth, data_format):
    h, w = geo_sizes
    return (batch, h, w, depth) if data_format == "NHWC" else (batch, depth, h, w)


def _check_rank(op_name, x, what):
    if len(x._shape) != 4:
        raise rules.op_error(op_name, f"{what} must be 4-dimensional: "
                                      f"{rules.kernel_dims(x._shape)}")


def _check_dtypes(op_name, xs):
    rules.check_same_dtype(op_name, xs)
    rules.check_dtype_in(op_name, xs[0], _conv_dtype, _CONV_DTYPES)


# -- the NumPy kernels (NHWC; NCHW by moving the channel axis) ------------------------

def _nhwc_attrs(op_name, image_shape, filter_shape, strides, padding, explicit_paddings,
                data_format, dilations):
    geo, groups = _geometry(op_name, image_shape, filter_shape, strides, padding,
                            explicit_paddings, data_format, dilations)
    return geo, groups, spatial(strides, data_format), spatial(dilations, data_format)


def kernel_geometry(op_name, image_shape, filter_shape, attrs):
    """The NHWC window of a convolution as a compiled kernel takes it: (stride h,
    stride w, dilation h, dilation w, padding top, padding left, out h, out w)."""
    geo, _, st, dil = _nhwc_attrs(op_name, image_shape, filter_shape, **_window_attrs(attrs))
    (oh, top, _), (ow, left, _) = geo
    return (*st, *dil, top, left, oh, ow)


def _grouped(cols, groups):
    """[N, OH, OW, C, KH, KW] windows as [N, OH, OW, G, C/G, KH, KW]."""
    n, oh, ow, c, kh, kw = cols.shape
    return cols.reshape(n, oh, ow, groups, c // groups, kh, kw)


def _conv_kernel(input, filter, strides, padding, explicit_paddings, data_format,
                 dilations):
    geo, groups, st, dil = _nhwc_attrs("Conv2D", input.shape, filter.shape, strides, padding,
                                       explicit_paddings, data_format, dilations)
    kh, kw, cg, out_depth = filter.shape
    cols = patches(to_nhwc(input, data_format), (kh, kw), st, dil, geo)
    if groups == 1:
        out = np.tensordot(cols, filter.transpose(2, 0, 1, 3), axes=3)
    else:
        n, oh, ow = cols.shape[:3]
        out = np.einsum("nhwgcij,ijcgo->nhwgo", _grouped(cols, groups),
                        filter.reshape(kh, kw, cg, groups, out_depth // groups),
                        optimize=True).reshape(n, oh, ow, out_depth)
    return np.ascontiguousarray(from_nhwc(out, data_format))


def _input_grad_kernel(filter, out_backprop, input_sizes, strides, padding,
                       explicit_paddings, data_format, dilations):
    sizes = _resolved(input_sizes, out_backprop.shape[0])
    geo, groups, st, dil = _nhwc_attrs("Conv2DBackpropInput", sizes, filter.shape, strides,
                                       padding, explicit_paddings, data_format, dilations)
    kh, kw, cg, out_depth = filter.shape
    dy = to_nhwc(out_backprop, data_format)
    if groups == 1:
        cols = np.tensordot(dy, filter.transpose(3, 2, 0, 1), axes=1)
    else:
        n, oh, ow = dy.shape[:3]
        cols = np.einsum("nhwgo,ijcgo->nhwgcij", dy.reshape(n, oh, ow, groups, -1),
                         filter.reshape(kh, kw, cg, groups, out_depth // groups),
                         optimize=True).reshape(n, oh, ow, groups * cg, kh, kw)
    shape = to_nhwc(np.empty(sizes, np.bool_), data_format).shape
    return np.ascontiguousarray(from_nhwc(scatter_patches(cols, shape, (kh, kw), st, dil, geo),
                                          data_format))


def _filter_grad_kernel(input, out_backprop, filter_sizes, strides, padding,
                        explicit_paddings, data_format, dilations):
    geo, groups, st, dil = _nhwc_attrs("Conv2DBackpropFilter", input.shape, filter_sizes,
                                       strides, padding, explicit_paddings, data_format,
                                       dilations)
    kh, kw, cg, out_depth = filter_sizes
    cols = patches(to_nhwc(input, data_format), (kh, kw), st, dil, geo)
    dy = to_nhwc(out_backprop, data_format)
    if groups == 1:
        out = np.tensordot(cols, dy, axes=([0, 1, 2], [0, 1, 2])).transpose(1, 2, 0, 3)
    else:
        n, oh, ow = dy.shape[:3]
        out = np.einsum("nhwgcij,nhwgo->ijcgo", _grouped(cols, groups),
                        dy.reshape(n, oh, ow, groups, -1), optimize=True)
    return np.ascontiguousarray(out.reshape(filter_sizes))


def _resolved(sizes, batch):
    """A shape attr whose batch dimension was unknown while tracing, given the batch."""
    return (batch,) + tuple(sizes[1:]) if sizes[0] is None else tuple(sizes)


# -- shape rules ---------------------------------------------------------------------------

def _conv_infer(input, filter, strides, padding, explicit_paddings, data_format, dilations):
    op_name = "Conv2D"
    _check_dtypes(op_name, (input, filter))
    _check_rank(op_name, input, "convolution input")
    _check_rank(op_name, filter, "filter")
    _known(op_name, input._shape, "input")
    _known(op_name, (None,) + tuple(filter._shape), "filter")
    geo, _ = _geometry(op_name, input._shape, filter._shape, strides, padding,
                       explicit_paddings, data_format, dilations)
    return (_image_shape(input._shape[0], [g[0] for g in geo], filter._shape[3], data_format),
            input.dtype)


def _check_out_backprop(op_name, geo, image_shape, filter_shape, out_backprop, strides,
                        dilations, data_format):
    """The out_backprop a gradient op is given must have the forward output's shape."""
    kernel = "Conv2DCustomBackpropInput" if op_name.endswith("Input") else \
        "Conv2DCustomBackpropFilter"
    dy = out_backprop._shape
    if len(dy) != 4:
        raise rules.op_error(op_name, f"out_backprop must be 4-dimensional: "
                                      f"{rules.kernel_dims(dy)}")
    if dy[CHANNEL_AXIS[data_format]] != filter_shape[3]:
        raise rules.op_error(op_name, f"{kernel}: filter and out_backprop must have the same "
                                      f"out_depth")
    sizes = spatial(image_shape, data_format)
    for k, (actual, (computed, _, _)) in enumerate(zip(spatial(dy, data_format), geo)):
        if actual != computed:
            raise rules.op_error(
                op_name,
                f"{kernel}: Size of out_backprop doesn't match computed: actual = {actual}, "
                f"computed = {computed} spatial_dim: {k + 1} input: {sizes[k]} filter: "
                f"{filter_shape[k]} output: {actual} stride: "
                f"{spatial(strides, data_format)[k]} dilation: "
                f"{spatial(dilations, data_format)[k]}")
    if None not in (dy[0], image_shape[0]) and dy[0] != image_shape[0]:
        raise rules.op_error(op_name, f"{kernel}: input and out_backprop must have the same "
                                      f"batch size")


def _input_grad_infer(filter, out_backprop, input_sizes, strides, padding, explicit_paddings,
                      data_format, dilations):
    op_name = "Conv2DBackpropInput"
    _check_dtypes(op_name, (filter, out_backprop))
    _check_rank(op_name, filter, "filter")
    if len(input_sizes) != 4:
        raise rules.op_error(op_name, f"input_sizes must be 4-dimensional, got: "
                                      f"{len(input_sizes)}")
    _known(op_name, input_sizes, "input")
    geo, _ = _geometry(op_name, input_sizes, filter._shape, strides, padding,
                       explicit_paddings, data_format, dilations)
    _check_out_backprop(op_name, geo, input_sizes, filter._shape, out_backprop, strides,
                        dilations, data_format)
    sizes = tuple(input_sizes)
    if sizes[0] is None:
        sizes = (out_backprop._shape[0],) + sizes[1:]
    return sizes, filter.dtype


def _filter_grad_infer(input, out_backprop, filter_sizes, strides, padding, explicit_paddings,
                       data_format, dilations):
    op_name = "Conv2DBackpropFilter"
    _check_dtypes(op_name, (input, out_backprop))
    _check_rank(op_name, input, "input")
    if len(filter_sizes) != 4 or None in filter_sizes:
        raise rules.op_error(op_name, f"filter_sizes must be 4 known dimensions, got: "
                                      f"{list(filter_sizes)}")
    _known(op_name, input._shape, "input")
    geo, _ = _geometry(op_name, input._shape, filter_sizes, strides, padding,
                       explicit_paddings, data_format, dilations)
    _check_out_backprop(op_name, geo, input._shape, filter_sizes, out_backprop, strides,
                        dilations, data_format)
    return tuple(filter_sizes), input.dtype


# -- gradients: each op's is the other two -----------------------------------------------

def _window_attrs(attrs):
    return {k: attrs[k] for k in ("strides", "padding", "explicit_paddings", "data_format",
                                  "dilations")}


def conv2d_backprop_input(filter, out_backprop, input_sizes, attrs):
    return bind(CONV2D_BACKPROP_INPUT, (filter, out_backprop),
                {**_window_attrs(attrs), "input_sizes": tuple(input_sizes)})


def conv2d_backprop_filter(input, out_backprop, filter_sizes, attrs):
    return bind(CONV2D_BACKPROP_FILTER, (input, out_backprop),
                {**_window_attrs(attrs), "filter_sizes": tuple(filter_sizes)})


def _conv(input, filter, attrs):
    return bind(CONV2D, (input, filter), _window_attrs(attrs))


def _conv_grad(ctx, dy):
    return (conv2d_backprop_input(ctx.filter, dy, ctx.shapes[0], ctx.attrs)
            if ctx.needs[0] else None,
            conv2d_backprop_filter(ctx.input, dy, ctx.shapes[1], ctx.attrs)
            if ctx.needs[1] else None)


def _input_grad_grad(ctx, g):
    return (conv2d_backprop_filter(g, ctx.out_backprop, ctx.shapes[0], ctx.attrs)
            if ctx.needs[0] else None,
            _conv(g, ctx.filter, ctx.attrs) if ctx.needs[1] else None)


def _filter_grad_grad(ctx, g):
    return (conv2d_backprop_input(g, ctx.out_backprop, ctx.shapes[0], ctx.attrs)
            if ctx.needs[0] else None,
            _conv(ctx.input, g, ctx.attrs) if ctx.needs[1] else None)


CONV2D = register(OpDef(
    name="Conv2D", args=("input", "filter"), infer=_conv_infer,
    eager=numpy_kernel(_conv_kernel), saves=("input", "filter"), grad=_conv_grad))

CONV2D_BACKPROP_INPUT = register(OpDef(
    name="Conv2DBackpropInput", args=("filter", "out_backprop"), infer=_input_grad_infer,
    eager=numpy_kernel(_input_grad_kernel), saves=("filter", "out_backprop"),
    grad=_input_grad_grad))

CONV2D_BACKPROP_FILTER = register(OpDef(
    name="Conv2DBackpropFilter", args=("input", "out_backprop"), infer=_filter_grad_infer,
    eager=numpy_kernel(_filter_grad_kernel), saves=("input", "out_backprop"),
    grad=_filter_grad_grad))

CONVOLUTIONS = (CONV2D, CONV2D_BACKPROP_INPUT, CONV2D_BACKPROP_FILTER)


# -- the public functions --------------------------------------------------------------------

def window_sequence(value, n, channel_index, name):
    """A strides / dilations / ksize argument as its n + 2 entries (tf.nn's
    _get_sequence): an int or 1 entry for every spatial axis, n entries, or n + 2."""
    if value is None:
        return (1,) * (n + 2)
    if isinstance(value, (int, np.integer)):
        value = [int(value)]
    elif hasattr(value, "numpy"):
        value = np.asarray(value.numpy()).reshape(-1).tolist()
    elif not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} should be an int or a list of ints, got {value!r}")
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return tuple(value)
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was {len(value)}")
    return tuple([1, 1] + value if channel_index == 1 else [1] + value + [1])


def padding_attrs(padding, data_format, n=2):
    """(padding, explicit_paddings) from a string or a list of (before, after) pairs."""
    if isinstance(padding, (list, tuple)):
        if len(padding) != n + 2:
            raise ValueError(f"When `padding` is a sequence, it must have length "
                             f"{n + 2}. Received: padding={padding} of length {len(padding)}")
        flat = []
        for pair in padding:
            pair = list(pair)
            if len(pair) != 2:
                raise ValueError(f"When `padding` is a sequence, each element of `padding` "
                                 f"must be a list or tuple of length 2. Received: "
                                 f"padding={padding}")
            flat += [int(p) for p in pair]
        return "EXPLICIT", tuple(flat)
    if padding == "EXPLICIT":
        raise ValueError('"EXPLICIT" is not a valid value for `padding`. To use explicit '
                         'padding, `padding` must be a list.')
    return padding, ()


def _format(data_format, default="NHWC"):
    return default if data_format is None else data_format


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """The 2-D convolution of NHWC (or NCHW) `input` with [KH, KW, C_in, C_out] `filters`
    (tf.nn.conv2d); a filter of C_in dividing the input's channels convolves in groups.

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
    >>> tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="VALID")[0, :, :, 0].numpy()
    array([[ 8., 12.],
           [20., 24.]], dtype=float32)
    """
    x, w = rules.as_tensors(input, filters)
    data_format = _format(data_format)
    channel = CHANNEL_AXIS.get(data_format, 3)
    padding, explicit = padding_attrs(padding, data_format)
    return bind(CONV2D, (x, w), {
        "strides": window_sequence(strides, 2, channel, "strides"), "padding": padding,
        "explicit_paddings": explicit, "data_format": data_format,
        "dilations": window_sequence(dilations, 2, channel, "dilations")})


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",
                     data_format="NHWC", dilations=None, name=None):
    """The transpose (gradient) of conv2d with [KH, KW, C_out, C_in] `filters`, as
    tf.nn.conv2d_transpose: Conv2DBackpropInput producing `output_shape`."""
    dy, w = rules.as_tensors(input, filters)
    data_format = _format(data_format)
    channel = CHANNEL_AXIS.get(data_format, 3)
    padding, explicit = padding_attrs(padding, data_format)
    sizes = rules.int_tuple(output_shape, "output_shape", "Conv2DBackpropInput")
    return bind(CONV2D_BACKPROP_INPUT, (w, dy), {
        "input_sizes": sizes, "strides": window_sequence(strides, 2, channel, "strides"),
        "padding": padding, "explicit_paddings": explicit, "data_format": data_format,
        "dilations": window_sequence(dilations, 2, channel, "dilations")})


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """Each input channel convolved with its own [KH, KW] filters (tf.nn.depthwise_conv2d):
    filter [KH, KW, C, M] gives C * M channels, channel c * M + m from input channel c; a
    grouped Conv2D with one group per channel."""
    x, w = rules.as_tensors(input, filter)
    data_format = _format(data_format)
    if len(w._shape) != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {len(w._shape)} for "
                         f"'depthwise_conv2d' with input shapes: {list(x._shape)}, "
                         f"{list(w._shape)}.")
    from .shape import reshape
    kh, kw, c, m = w._shape
    strides = window_sequence(strides, 2, CHANNEL_AXIS.get(data_format, 3), "strides")
    rate = window_sequence(dilations, 2, 3, "dilations")
    return conv2d(x, reshape(w, (kh, kw, 1, c * m)), strides, padding, data_format,
                  spatial(rate, "NHWC"))


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with holes: the filter's taps `rate` apart (tf.nn.atrous_conv2d)."""
    rate = rules.int_scalar(rate, "Conv2D", "rate")
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d(value, filters, 1, padding, dilations=rate)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """The 1-D convolution of NWC (or NCW) `input` with [K, C_in, C_out] `filters`
    (tf.nn.conv1d): a conv2d over a height of 1, as TensorFlow computes it."""
    from .shape import expand_dims, squeeze
    x, w = rules.as_tensors(input, filters)
    data_format = _format(data_format, "NWC")
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: "
                         f"data_format={data_format}")
    spatial_axis = 1 if data_format == "NWC" else 2
    channel = 2 if data_format == "NWC" else 1
    stride = window_sequence(stride, 1, channel, "stride")
    dilation = window_sequence(dilations, 1, channel, "dilations")
    pad = padding
    if isinstance(padding, (list, tuple)):
        pairs = list(padding)
        pad = pairs[:spatial_axis] + [(0, 0)] + pairs[spatial_axis:]
    out = conv2d(expand_dims(x, spatial_axis), expand_dims(w, 0),
                 (1, 1, stride[spatial_axis], 1) if data_format == "NWC" else
                 (1, 1, 1, stride[spatial_axis]), pad,
                 "NHWC" if data_format == "NWC" else "NCHW",
                 (1, 1, dilation[spatial_axis], 1) if data_format == "NWC" else
                 (1, 1, 1, dilation[spatial_axis]))
    return squeeze(out, [spatial_axis])


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """The 3-D convolution of NDHWC (or NCDHW) `input` with [KD, KH, KW, C_in, C_out]
    `filters` (tf.nn.conv3d): for each depth tap of the filter, one conv2d of the input's
    depth slices that tap reads (the slices stacked into the batch), summed."""
    from .shape import transpose
    x, w = rules.as_tensors(input, filters)
    if data_format == "NCDHW":
        # Strides and dilations are given in NCDHW order too.
        strides = window_sequence(strides, 3, 1, "strides")
        dilations = window_sequence(dilations, 3, 1, "dilations")
        moved = [0, 2, 3, 4, 1]
        out = conv3d(transpose(x, moved), w, [strides[i] for i in moved], padding, "NDHWC",
                     [dilations[i] for i in moved])
        return transpose(out, [0, 4, 1, 2, 3])
    if data_format != "NDHWC":
        raise rules.op_error("Conv3D", f"Invalid data format: {data_format}")
    return _conv3d_channels_last(x, w, strides, padding, dilations)


def _conv3d_channels_last(x, w, strides, padding, dilations):
    from .creation import zeros
    from .shape import pad as pad_, reshape
    from .statistics import add_n
    op_name = "Conv3D"
    for t, what in ((x, "input"), (w, "filter")):
        if len(t._shape) != 5:
            raise rules.op_error(op_name, f"{what} must be 5-dimensional: "
                                          f"{rules.kernel_dims(t._shape)}")
    _check_dtypes(op_name, (x, w))
    if x._shape[4] != w._shape[3]:
        raise rules.op_error(op_name, f"input and filter must have the same depth: "
                                      f"{x._shape[4]} vs {w._shape[3]}")
    strides = window_sequence(strides, 3, 4, "strides")
    dilations = window_sequence(dilations, 3, 4, "dilations")
    if padding not in ("SAME", "VALID"):
        raise rules.op_error(op_name, f'Value for attr \'padding\' of "{padding}" is not in '
                                      f'the list of allowed values: "SAME", "VALID"')
    if min(strides) <= 0:
        raise rules.op_error(op_name, f"Stride must be > 0, but got {min(strides)}")
    from .windows import output_size
    n, depth, h, width, c = x._shape
    taps = w._shape[0]
    out_depth, before, after = output_size(op_name, depth, taps, strides[1], dilations[1],
                                           padding)
    padded = pad_(x, [[0, 0], [before, after], [0, 0], [0, 0], [0, 0]])
    plane_attrs = {"strides": (1, strides[2], strides[3], 1), "padding": padding,
                   "explicit_paddings": (), "data_format": "NHWC",
                   "dilations": (1, dilations[2], dilations[3], 1)}
    terms = []
    for k in range(taps):
        start = k * dilations[1]
        planes = padded[:, start:start + (out_depth - 1) * strides[1] + 1:strides[1]]
        folded = reshape(planes, (-1, h, width, c))
        terms.append(_conv(folded, w[k], plane_attrs))
    if out_depth == 0 or not terms:
        geo = geometry(op_name, (h, width), w._shape[1:3], strides[2:4], dilations[2:4],
                       padding, None)
        return zeros((n, out_depth, geo[0][0], geo[1][0], w._shape[4]), dtype=x.dtype)
    total = terms[0] if len(terms) == 1 else add_n(terms)
    return reshape(total, (-1, out_depth) + tuple(total._shape[1:]))


def convolution(input, filters, strides=None, padding="VALID", data_format=None,
                dilations=None, name=None):
    """conv1d, conv2d or conv3d by the input's rank (tf.nn.convolution)."""
    x = rules.as_tensor(input)
    rank = len(x._shape)
    if rank == 3:
        return conv1d(x, filters, 1 if strides is None else strides, padding,
                      data_format or "NWC", dilations)
    if rank == 4:
        return conv2d(x, filters, 1 if strides is None else strides, padding,
                      data_format or "NHWC", dilations)
    if rank == 5:
        return conv3d(x, filters, [1, 1, 1, 1, 1] if strides is None else strides, padding,
                      data_format or "NDHWC", dilations)
    raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape="
                     f"{list(x._shape)} of rank {rank}")


__all__ = ["conv1d", "conv2d", "conv2d_transpose", "conv3d", "convolution",
           "depthwise_conv2d", "atrous_conv2d"]


# -- batching: the examples of a stack join the batch axis, or the channels in groups ------

def _fold_image(x, batch, channel):
    """A stack [B, ...image] as one image whose channels are the examples' side by side."""
    from .shape import reshape, transpose
    perm = (1, 2, 3, 0, 4) if channel == 3 else (1, 0, 2, 3, 4)
    dims = [-1] + list(x._shape[1:])
    dims[channel] = batch * dims[channel]
    from .batching import stacked
    return reshape(transpose(stacked(x, batch), perm), dims)


def _unfold_image(y, batch, channel):
    from .shape import reshape, transpose
    dims = [-1] + list(y._shape[1:])
    dims[channel:channel + 1] = [batch, y._shape[channel] // batch]
    perm = (3, 0, 1, 2, 4) if channel == 3 else (1, 0, 2, 3, 4)
    return transpose(reshape(y, dims), perm)


def _fold_filter(w, batch):
    from .batching import stacked
    from .shape import reshape, transpose
    kh, kw, cg, out = w._shape
    return reshape(transpose(stacked(w, batch), (1, 2, 3, 0, 4)), (kh, kw, cg, batch * out))


def _unfold_filter(w, batch):
    from .shape import reshape, transpose
    kh, kw, cg, out = w._shape
    return transpose(reshape(w, (kh, kw, cg, batch, out // batch)), (3, 0, 1, 2, 4))


def _scaled_dim(sizes, axis, batch):
    sizes = list(sizes)
    sizes[axis] = None if sizes[axis] is None else sizes[axis] * batch
    return tuple(sizes)


def batched_convolution(op, inputs, attrs, batch):
    """Conv2D, Conv2DBackpropInput or Conv2DBackpropFilter run once on inputs stacked
    along a leading axis of `batch` examples (some only broadcast): the stack's result."""
    from .batching import Batched
    from .shape import reshape
    channel = CHANNEL_AXIS[attrs["data_format"]]
    filter_batched = any(type(x) is Batched for a, x in zip(op.args, inputs) if a == "filter")
    if op is not CONV2D_BACKPROP_FILTER and not filter_batched:
        # Windows never cross examples: the stack's examples join the images' batch.
        args = [reshape(x.inner, (-1,) + tuple(x._shape[1:])) if type(x) is Batched else x
                for x in inputs]
        if op is CONV2D_BACKPROP_INPUT:
            attrs = {**attrs, "input_sizes": _scaled_dim(attrs["input_sizes"], 0, batch)}
        out = bind(op, args, attrs)
        return reshape(out, (batch, -1) + tuple(out._shape[1:]))
    # Each example its own groups: channels (and the filter's outputs) side by side.
    args = [_fold_filter(x, batch) if a == "filter" else _fold_image(x, batch, channel)
            for a, x in zip(op.args, inputs)]
    if op is CONV2D_BACKPROP_INPUT:
        attrs = {**attrs, "input_sizes": _scaled_dim(attrs["input_sizes"], channel, batch)}
    elif op is CONV2D_BACKPROP_FILTER:
        attrs = {**attrs, "filter_sizes": _scaled_dim(attrs["filter_sizes"], 3, batch)}
    out = bind(op, args, attrs)
    if op is CONV2D_BACKPROP_FILTER:
        return _unfold_filter(out, batch)
    return _unfold_image(out, batch, channel)
