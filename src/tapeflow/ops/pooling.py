"""Pooling (tf.nn.max_pool2d, avg_pool2d and the functions built on them): MaxPool and
AvgPool, and their gradient ops as entries of their own, as TensorFlow has them:
MaxPoolGrad (the gradient goes to each window's largest input, the first of equal
ones), MaxPoolGradGrad (its derivative in the gradient) and AvgPoolGrad (each window's
gradient spread over the inputs it averaged; SAME windows average only the inputs
inside the image, as TensorFlow's)."""

import numpy as np

from ..errors import UnimplementedError
from . import rules
from .registry import OpDef, bind, register
from .windows import CHANNEL_AXIS, check_window_attrs, explicit_pairs, from_nhwc, geometry, \
    numpy_kernel, patches, scatter_patches, spatial, to_nhwc

_MAX_DTYPES = "half, bfloat16, float, double, int32, int64, int8, uint8, int16"
_AVG_DTYPES = "half, bfloat16, float, double"


def _window_geometry(op_name, shape, ksize, strides, padding, data_format,
                     explicit_paddings=()):
    """TensorFlow's checks of a pooling window's attrs; (geometry, windows, strides).
    Max pooling also takes EXPLICIT padding (pairs of at most the window less one)."""
    if len(ksize) != 4:
        raise rules.op_error(op_name, "Sliding window ksize field must specify 4 dimensions")
    if min(ksize) <= 0:
        raise rules.op_error(op_name, f"Sliding window ksize must be positive. The specified "
                                      f"or inferred ksize is: {','.join(map(str, ksize))}")
    check_window_attrs(op_name, strides, (1, 1, 1, 1), data_format)
    if ksize[0] != 1:
        raise UnimplementedError(f"Pooling is not yet supported on the batch dimension. "
                                 f"[Op:{op_name}]", op=op_name)
    if ksize[CHANNEL_AXIS[data_format]] != 1:
        raise UnimplementedError(_depth_pooling_refused(op_name, ksize, data_format),
                                 op=op_name)
    allowed = ("SAME", "VALID", "EXPLICIT") if op_name.startswith("Max") else ("SAME", "VALID")
    if padding not in allowed:
        listed = ", ".join(f'"{p}"' for p in allowed)
        raise rules.op_error(op_name, f'Value for attr \'padding\' of "{padding}" is not in '
                                      f'the list of allowed values: {listed}')
    pairs = explicit_pairs(op_name, padding, explicit_paddings, data_format)
    if len(shape) != 4:
        raise rules.op_error(op_name, f"tensor_in must be 4-dimensional: "
                                      f"{rules.kernel_dims(shape)}")
    if None in spatial(shape, data_format):
        raise rules.op_error(op_name, f"the spatial dimensions of {op_name}'s input must be "
                                      f"known when the function is traced, got "
                                      f"{rules.kernel_dims(shape)}")
    windows = spatial(ksize, data_format)
    steps = spatial(strides, data_format)
    for (before, after), window, sides in zip(pairs or (), windows,
                                              (("Top", "Bottom"), ("Left", "Right"))):
        for side, pad in zip(sides, (before, after)):
            if pad >= window:
                raise rules.op_error(op_name, f"{side} padding {pad} needs to be smaller "
                                              f"than the window size {window}")
    geo = geometry(op_name, spatial(shape, data_format), windows, steps, (1, 1), padding,
                   pairs)
    return geo, windows, steps


def _depth_pooling_refused(op_name, ksize, data_format):
    """The op pools spatial windows; tf.nn.max_pool2d computes a window across depth
    alone by a reshape (max_pool2d's _depth_max_pool), as TensorFlow's messages say."""
    spatial_window = any(k != 1 for k in spatial(ksize, data_format))
    reason = ("MaxPooling supports exactly one of pooling across depth or pooling across "
              "width/height." if spatial_window else
              "Pooling across depth is computed by tf.nn.max_pool2d, not by this op.")
    return f"{reason} [Op:{op_name}]"


def kernel_geometry(op_name, image_shape, attrs):
    """The NHWC window of a pool as a compiled kernel takes it: (window h, window w,
    stride h, stride w, padding top, padding left, out h, out w)."""
    geo, windows, steps = _window_geometry(op_name, image_shape, attrs["ksize"],
                                           attrs["strides"], attrs["padding"],
                                           attrs["data_format"],
                                           attrs.get("explicit_paddings", ()))
    (oh, top, _), (ow, left, _) = geo
    return (*windows, *steps, top, left, oh, ow)


def _output_shape(shape, geo, data_format):
    (oh, _, _), (ow, _, _) = geo
    return ((shape[0], oh, ow, shape[3]) if data_format == "NHWC" else
            (shape[0], shape[1], oh, ow))


def _pool_infer(op_name, allowed, what):
    def infer(input, ksize, strides, padding, data_format, explicit_paddings=()):
        rules.check_dtype_in(op_name, input, allowed, what)
        geo, _, _ = _window_geometry(op_name, input._shape, ksize, strides, padding,
                                     data_format, explicit_paddings)
        return _output_shape(input._shape, geo, data_format), input.dtype
    return infer


def _is_max_dtype(d):
    return d.is_floating or (d.is_integer and d.name != "uint64")


def _is_avg_dtype(d):
    return d.is_floating


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _nhwc_windows(x, ksize, strides, padding, data_format, explicit_paddings, fill):
    geo, windows, steps = _window_geometry("MaxPool", x.shape, ksize, strides, padding,
                                           data_format, explicit_paddings)
    cols = patches(to_nhwc(x, data_format), windows, steps, (1, 1), geo, fill)
    n, oh, ow, c = cols.shape[:4]
    return cols.reshape(n, oh, ow, c, -1), geo, windows, steps


def _max_pool_kernel(input, ksize, strides, padding, data_format, explicit_paddings=()):
    cols, _, _, _ = _nhwc_windows(input, ksize, strides, padding, data_format,
                                  explicit_paddings, _lowest(input.dtype))
    out = cols.max(axis=-1) if cols.shape[-1] else cols[..., 0]
    return np.ascontiguousarray(from_nhwc(out, data_format))


def _argmax_windows(orig_input, ksize, strides, padding, data_format, explicit_paddings):
    """Where in each window its largest input is (the first of equal ones)."""
    cols, geo, windows, steps = _nhwc_windows(orig_input, ksize, strides, padding,
                                              data_format, explicit_paddings,
                                              _lowest(orig_input.dtype))
    return np.argmax(cols, axis=-1), geo, windows, steps


def _max_pool_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding,
                          data_format, explicit_paddings=()):
    where, geo, windows, steps = _argmax_windows(orig_input, ksize, strides, padding,
                                                 data_format, explicit_paddings)
    dy = to_nhwc(grad, data_format)
    cols = np.zeros(where.shape + (windows[0] * windows[1],), grad.dtype)
    np.put_along_axis(cols, where[..., None], dy[..., None], axis=-1)
    shape = to_nhwc(orig_input, data_format).shape
    dx = scatter_patches(cols.reshape(where.shape + tuple(windows)), shape, windows, steps,
                         (1, 1), geo)
    return np.ascontiguousarray(from_nhwc(dx, data_format))


def _max_pool_grad_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding,
                               data_format, explicit_paddings=()):
    where, geo, windows, steps = _argmax_windows(orig_input, ksize, strides, padding,
                                                 data_format, explicit_paddings)
    cols = patches(to_nhwc(grad, data_format), windows, steps, (1, 1), geo)
    cols = cols.reshape(where.shape + (-1,))
    out = np.take_along_axis(cols, where[..., None], axis=-1)[..., 0]
    return np.ascontiguousarray(from_nhwc(out, data_format))


def _counts(shape, windows, steps, geo):
    """How many inputs inside the image each window covers, [1, OH, OW, 1, 1]."""
    ones = np.ones((1, shape[1], shape[2], 1))
    cols = patches(ones, windows, steps, (1, 1), geo)
    return cols.reshape(cols.shape[:4] + (-1,)).sum(axis=-1)[..., None]


def _avg_pool_kernel(value, ksize, strides, padding, data_format):
    geo, windows, steps = _window_geometry("AvgPool", value.shape, ksize, strides, padding,
                                           data_format)
    x = to_nhwc(value, data_format)
    cols = patches(x, windows, steps, (1, 1), geo)
    cols = cols.reshape(cols.shape[:4] + (-1,))
    out = cols.sum(axis=-1) / _counts(x.shape, windows, steps, geo)[..., 0]
    return np.ascontiguousarray(from_nhwc(out, data_format))


def _avg_pool_grad_kernel(grad, orig_input_shape, ksize, strides, padding, data_format):
    shape = (grad.shape[0],) + tuple(orig_input_shape[1:])
    geo, windows, steps = _window_geometry("AvgPoolGrad", shape, ksize, strides, padding,
                                           data_format)
    dy = to_nhwc(grad, data_format)
    nhwc = to_nhwc(np.empty(shape, np.bool_), data_format).shape
    share = dy / _counts(nhwc, windows, steps, geo)[..., 0]
    cols = np.broadcast_to(share[..., None, None], share.shape + tuple(windows))
    dx = scatter_patches(cols, nhwc, windows, steps, (1, 1), geo)
    return np.ascontiguousarray(from_nhwc(dx, data_format))


# -- shape rules of the gradient ops -------------------------------------------------------

def _max_grad_infer(op_name, grad_is_pooled):
    """MaxPoolGrad takes the pooled shape's gradient and gives the image's;
    MaxPoolGradGrad the other way round."""
    def infer(orig_input, orig_output, grad, ksize, strides, padding, data_format,
              explicit_paddings=()):
        rules.check_same_dtype(op_name, (orig_input, orig_output, grad))
        rules.check_dtype_in(op_name, orig_input, _is_max_dtype, _MAX_DTYPES)
        geo, _, _ = _window_geometry(op_name, orig_input._shape, ksize, strides, padding,
                                     data_format, explicit_paddings)
        pooled = _output_shape(orig_input._shape, geo, data_format)
        image = tuple(orig_input._shape)
        want = {"orig_output": pooled, "grad": pooled if grad_is_pooled else image}
        for name, x in (("orig_output", orig_output), ("grad", grad)):
            if not _compatible(x._shape, want[name]):
                raise rules.op_error(op_name, f"Expected {name} shape to be "
                                              f"{rules.kernel_dims(want[name])}, but got "
                                              f"{rules.kernel_dims(x._shape)}")
        return (image if grad_is_pooled else pooled), orig_input.dtype
    return infer


def _compatible(shape, want):
    return len(shape) == len(want) and all(a is None or b is None or a == b
                                           for a, b in zip(shape, want))


def _avg_grad_infer(grad, orig_input_shape, ksize, strides, padding, data_format):
    op_name = "AvgPoolGrad"
    rules.check_dtype_in(op_name, grad, _is_avg_dtype, _AVG_DTYPES)
    if len(orig_input_shape) != 4:
        raise rules.op_error(op_name, f"orig_input_shape must be 1-dimensional and 4 "
                                      f"elements, got {len(orig_input_shape)} elements")
    geo, _, _ = _window_geometry(op_name, orig_input_shape, ksize, strides, padding,
                                 data_format)
    pooled = _output_shape(orig_input_shape, geo, data_format)
    if not _compatible(grad._shape, pooled):
        raise rules.op_error(op_name, f"Expected grad shape to be {rules.kernel_dims(pooled)}, "
                                      f"but got {rules.kernel_dims(grad._shape)}")
    return (grad._shape[0],) + tuple(orig_input_shape[1:]), grad.dtype


# -- gradients -------------------------------------------------------------------------------

def _pool_attrs(attrs):
    return {k: attrs[k] for k in ("ksize", "strides", "padding", "data_format",
                                  "explicit_paddings") if k in attrs}


def _max_pool_grad(ctx, dy):
    return bind(MAX_POOL_GRAD, (ctx.input, ctx.out, dy), _pool_attrs(ctx.attrs))


def _max_pool_grad_grad(ctx, g):
    # Piecewise constant in the pooled values: only the gradient input carries one.
    return None, None, bind(MAX_POOL_GRAD_GRAD, (ctx.orig_input, ctx.orig_output, g),
                            _pool_attrs(ctx.attrs))


def _max_pool_grad_grad_grad(ctx, g):
    return None, None, bind(MAX_POOL_GRAD, (ctx.orig_input, ctx.orig_output, g),
                            _pool_attrs(ctx.attrs))


def _avg_pool_grad(ctx, dy):
    return bind(AVG_POOL_GRAD, (dy,), {**_pool_attrs(ctx.attrs),
                                       "orig_input_shape": tuple(ctx.shapes[0])})


def _avg_pool_grad_grad(ctx, g):
    return bind(AVG_POOL, (g,), _pool_attrs(ctx.attrs))


MAX_POOL = register(OpDef(
    name="MaxPool", args=("input",), infer=_pool_infer("MaxPool", _is_max_dtype, _MAX_DTYPES),
    eager=numpy_kernel(_max_pool_kernel), saves=("input", "out"), grad=_max_pool_grad))

MAX_POOL_GRAD = register(OpDef(
    name="MaxPoolGrad", args=("orig_input", "orig_output", "grad"),
    infer=_max_grad_infer("MaxPoolGrad", grad_is_pooled=True),
    eager=numpy_kernel(_max_pool_grad_kernel), saves=("orig_input", "orig_output"),
    grad=_max_pool_grad_grad))

MAX_POOL_GRAD_GRAD = register(OpDef(
    name="MaxPoolGradGrad", args=("orig_input", "orig_output", "grad"),
    infer=_max_grad_infer("MaxPoolGradGrad", grad_is_pooled=False),
    eager=numpy_kernel(_max_pool_grad_grad_kernel), saves=("orig_input", "orig_output"),
    grad=_max_pool_grad_grad_grad))

AVG_POOL = register(OpDef(
    name="AvgPool", args=("value",), infer=_pool_infer("AvgPool", _is_avg_dtype, _AVG_DTYPES),
    eager=numpy_kernel(_avg_pool_kernel), grad=_avg_pool_grad))

AVG_POOL_GRAD = register(OpDef(
    name="AvgPoolGrad", args=("grad",), infer=_avg_grad_infer,
    eager=numpy_kernel(_avg_pool_grad_kernel),
    grad=_avg_pool_grad_grad))

POOLS = (MAX_POOL, MAX_POOL_GRAD, MAX_POOL_GRAD_GRAD, AVG_POOL, AVG_POOL_GRAD)


# -- the public functions --------------------------------------------------------------------

def _pool2d(op, input, ksize, strides, padding, data_format):
    from .convolution import padding_attrs, window_sequence
    x = rules.as_tensor(input)
    data_format = "NHWC" if data_format is None else data_format
    channel = CHANNEL_AXIS.get(data_format, 3)
    attrs = {"ksize": window_sequence(ksize, 2, channel, "ksize"),
             "strides": window_sequence(strides, 2, channel, "strides"),
             "padding": padding, "data_format": data_format}
    if op is MAX_POOL:
        attrs["padding"], attrs["explicit_paddings"] = padding_attrs(padding, data_format)
        if attrs["ksize"][channel] != 1 and data_format == "NHWC":
            return _depth_max_pool(x, attrs)
    elif isinstance(padding, (list, tuple)):
        raise TypeError(f"Expected string for argument 'padding' not {padding}.")
    return bind(op, (x,), attrs)


def _depth_max_pool(x, attrs):
    """Max pooling across channels alone (a window and a stride of k channels, as
    TensorFlow requires): each pixel's channels as a row of 1 x k windows."""
    from .shape import reshape
    op_name = "MaxPool"
    k = attrs["ksize"][3]
    if any(d != 1 for d in attrs["ksize"][1:3]):
        raise UnimplementedError(_depth_pooling_refused(op_name, attrs["ksize"], "NHWC"),
                                 op=op_name)
    depth = x._shape[3]
    if depth is None or depth % k:
        raise UnimplementedError(f"Depthwise max pooling requires the depth window to evenly "
                                 f"divide the input depth [Op:{op_name}]", op=op_name)
    if attrs["strides"][3] != k:
        raise UnimplementedError(f"Depthwise max pooling requires the depth window to equal "
                                 f"the depth stride [Op:{op_name}]", op=op_name)
    rows = reshape(x, (-1, 1, depth, 1))
    pooled = bind(MAX_POOL, (rows,), {**attrs, "ksize": (1, 1, k, 1),
                                      "strides": (1, 1, k, 1), "padding": "VALID",
                                      "explicit_paddings": ()})
    return reshape(pooled, (-1,) + tuple(x._shape[1:3]) + (depth // k,))


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The largest value of each window (tf.nn.max_pool2d).

    >>> import tapeflow as tf
    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.max_pool2d(x, 2, 2, "VALID")[0, :, :, 0].numpy()
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    return _pool2d(MAX_POOL, input, ksize, strides, padding, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """The mean of each window (tf.nn.avg_pool2d); SAME windows at the border average
    only the inputs inside the image."""
    return _pool2d(AVG_POOL, input, ksize, strides, padding, data_format)


def _pool_nd(op, input, ksize, strides, padding, data_format, name):
    """max_pool / avg_pool of rank 3 (a 2-D pool over a height of 1), 4, or 5 (a 2-D
    pool over height and width, then a 1 x k pool over depth)."""
    from .convolution import window_sequence
    from .shape import expand_dims, reshape, squeeze
    x = rules.as_tensor(input)
    rank = len(x._shape)
    n = rank - 2
    if n not in (1, 2, 3):
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: "
                         f"input.shape={list(x._shape)} of rank {rank}")
    fmt = data_format or {1: "NWC", 2: "NHWC", 3: "NDHWC"}[n]
    if n != 2 and fmt not in ("NWC", "NDHWC"):
        raise ValueError(f"{name} here supports channels-last data formats for rank "
                         f"{rank}, got data_format={fmt}")
    if n == 2:
        return _pool2d(op, x, ksize, strides, padding, fmt)
    channel = n + 1
    ks = window_sequence(ksize, n, channel, "ksize")
    st = window_sequence(strides, n, channel, "strides")
    if n == 1:
        if isinstance(padding, (list, tuple)) and len(padding) == 3:
            padding = [padding[0], (0, 0), padding[1], padding[2]]
        out = _pool2d(op, expand_dims(x, 1), (1, 1, ks[1], 1), (1, 1, st[1], 1), padding,
                      "NHWC")
        return squeeze(out, [1])
    batch, depth, h, w, c = x._shape
    planes = _pool2d(op, reshape(x, (-1, h, w, c)), (1, ks[2], ks[3], 1),
                     (1, st[2], st[3], 1), padding, "NHWC")
    oh, ow = planes._shape[1:3]
    # The pool along depth: depth as the height of a 2-D pool whose width is 1.
    columns = reshape(planes, (-1, depth, oh * ow, c))
    pooled = _pool2d(op, columns, (1, ks[1], 1, 1), (1, st[1], 1, 1), padding, "NHWC")
    return reshape(pooled, (-1, pooled._shape[1], oh, ow, c))


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """max pooling over 1, 2 or 3 spatial axes by the input's rank (tf.nn.max_pool)."""
    return _pool_nd(MAX_POOL, input, ksize, strides, padding, data_format, "max_pool")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """average pooling over 1, 2 or 3 spatial axes by the input's rank (tf.nn.avg_pool)."""
    return _pool_nd(AVG_POOL, input, ksize, strides, padding, data_format, "avg_pool")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    return _pool_nd(MAX_POOL, input, ksize, strides, padding, data_format, "max_pool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    return _pool_nd(AVG_POOL, input, ksize, strides, padding, data_format, "avg_pool1d")


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    return _pool_nd(MAX_POOL, input, ksize, strides, padding, data_format, "max_pool3d")


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    return _pool_nd(AVG_POOL, input, ksize, strides, padding, data_format, "avg_pool3d")


def _dilated(op, x, window, rate, padding):
    """A VALID pool of stride 1 whose taps are `rate` apart: the input split into rate x rate
    interleaved grids (stacked into the batch), each pooled densely, interleaved back."""
    from .shape import pad as pad_, reshape, transpose
    n, h, w, c = x._shape
    rh, rw = rate
    oh, ow = h - (window[0] - 1) * rh, w - (window[1] - 1) * rw
    hp, wp = -(-h // rh) * rh, -(-w // rw) * rw
    grid = reshape(pad_(x, [[0, 0], [0, hp - h], [0, wp - w], [0, 0]]),
                   (-1, hp // rh, rh, wp // rw, rw, c))
    grid = reshape(transpose(grid, (2, 4, 0, 1, 3, 5)), (-1, hp // rh, wp // rw, c))
    pooled = _pool2d(op, grid, window, 1, padding, "NHWC")
    ph, pw = pooled._shape[1:3]
    back = transpose(reshape(pooled, (rh, rw, -1, ph, pw, c)), (2, 3, 0, 4, 1, 5))
    return reshape(back, (-1, ph * rh, pw * rw, c))[:, :oh, :ow]


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,
         dilations=None, name=None):
    """max or average pooling of any supported rank (tf.nn.pool), with dilations for VALID
    windows of stride 1, as TensorFlow allows."""
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"{len(list(window_shape))}-D {pooling_type} pooling is not "
                         f"supported.")
    window = [int(k) for k in window_shape]
    n = len(window)
    op = MAX_POOL if pooling_type == "MAX" else AVG_POOL
    rate = [1] * n if dilations is None else [int(d) for d in np.reshape(dilations, [-1])]
    steps = [1] * n if strides is None else [int(s) for s in np.reshape(strides, [-1])]
    if any(r > 1 for r in rate):
        if padding == "SAME":
            raise ValueError(f"pooling with 'SAME' padding is not implemented for "
                             f"`dilation_rate` > 1. Received: padding={padding} and "
                             f"dilation_rate={np.asarray(rate)}")
        if any(s > 1 for s in steps):
            raise ValueError(f"`strides` > 1 not supported in conjunction with "
                             f"`dilation_rate` > 1. Received: strides={steps} and "
                             f"dilation_rate={rate}")
        x = rules.as_tensor(input)
        if n == 1:
            from .shape import expand_dims, squeeze
            return squeeze(_dilated(op, expand_dims(x, 1), [1, window[0]], [1, rate[0]],
                                    padding), [1])
        if n != 2:
            raise ValueError("dilated pooling here takes 1 or 2 spatial dimensions")
        return _dilated(op, x, window, rate, padding)
    return _pool_nd(op, input, window, steps, padding, data_format, "pool")


__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool", "max_pool1d",
           "max_pool2d", "max_pool3d", "pool"]


def batched_pooling(op, inputs, attrs, batch):
    """A pooling op run once on inputs stacked along a leading axis of `batch` examples:
    windows never cross examples, so the stack's examples join the images' batch."""
    from .batching import stacked
    from .shape import reshape
    args = [reshape(stacked(x, batch), (-1,) + tuple(x._shape[1:])) for x in inputs]
    if "orig_input_shape" in attrs:
        sizes = attrs["orig_input_shape"]
        attrs = {**attrs, "orig_input_shape": (None if sizes[0] is None else
                                               sizes[0] * batch,) + tuple(sizes[1:])}
    out = bind(op, args, attrs)
    return reshape(out, (batch, -1) + tuple(out._shape[1:]))
