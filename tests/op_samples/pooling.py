"""Samplers and error cases for ops/pooling.py: tiny images, both data formats, SAME and
VALID windows; max pooling's inputs are distinct (0.1 apart), so no window has a tie
within reach of finite differences."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError, UnimplementedError
from tapeflow.ops import pooling
from tapeflow.ops.pooling import MAX_POOL

from .common import Case, floats, ints
from .common import constant as _c


def _window(draw, explicit=False):
    """(input shape, attrs); max pooling (explicit) also draws EXPLICIT paddings, each
    smaller than the window, as TensorFlow requires."""
    data_format = draw(st.sampled_from(["NHWC", "NCHW"]))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(max(3, kh), 6)), draw(st.integers(max(3, kw), 6))
    if data_format == "NHWC":
        shape, ksize, strides = (n, h, w, c), (1, kh, kw, 1), (1, sh, sw, 1)
    else:
        shape, ksize, strides = (n, c, h, w), (1, 1, kh, kw), (1, 1, sh, sw)
    attrs = {"ksize": ksize, "strides": strides, "data_format": data_format,
             "padding": draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"] if explicit else
                                             ["SAME", "VALID"]))}
    if explicit:
        pairs = [(draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))) if
                 attrs["padding"] == "EXPLICIT" else (0, 0) for k in (kh, kw)]
        flat = (0, 0) + sum(pairs, ()) + (0, 0)
        attrs["explicit_paddings"] = (() if attrs["padding"] != "EXPLICIT" else
                                      flat if data_format == "NHWC" else
                                      (0, 0, 0, 0) + sum(pairs, ()))
    return shape, attrs


def _distinct(draw, shape):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    order = rng.permutation(int(np.prod(shape))).reshape(shape)
    return order * 0.1 + floats(draw, shape, (0.0, 0.04)) - 0.05 * order.size


def _max_pool(draw):
    shape, attrs = _window(draw, explicit=True)
    if draw(st.integers(0, 5)) == 0:  # integers, ties included: values only
        return Case([ints(draw, shape, -3, 3)], attrs, wrt=())
    return Case([_distinct(draw, shape)], attrs)


def _max_pool_grads(pooled_grad):
    def sampler(draw):
        shape, attrs = _window(draw, explicit=True)
        x = _distinct(draw, shape)
        out = MAX_POOL.eager(x, **attrs)
        grad = floats(draw, shape if pooled_grad else out.shape)
        return Case([x, out, grad], attrs, wrt=(2,))
    return sampler


def _avg_pool(draw):
    shape, attrs = _window(draw)
    return Case([floats(draw, shape)], attrs)


def _avg_pool_grad(draw):
    shape, attrs = _window(draw)
    pooled = pooling.AVG_POOL.eager(np.zeros(shape), **attrs).shape
    return Case([floats(draw, pooled)], {**attrs, "orig_input_shape": shape})


SAMPLES = {"MaxPool": _max_pool, "MaxPoolGrad": _max_pool_grads(False),
           "MaxPoolGradGrad": _max_pool_grads(True), "AvgPool": _avg_pool,
           "AvgPoolGrad": _avg_pool_grad}

_X = np.ones((1, 5, 5, 4), np.float32)

ERRORS = [
    (lambda: pooling.max_pool2d(_c(_X[0]), 2, 1, "VALID"), InvalidArgumentError,
     r"tensor_in must be 4-dimensional: \[5,5,4\] \[Op:MaxPool\]"),
    (lambda: pooling.max_pool2d(_c(_X), 0, 1, "VALID"), InvalidArgumentError,
     r"Sliding window ksize must be positive. The specified or inferred ksize is: 1,0,0,1"),
    (lambda: pooling.max_pool2d(_c(_X), 2, 0, "VALID"), InvalidArgumentError,
     r"Stride must be > 0, but got 0 \[Op:MaxPool\]"),
    (lambda: pooling.avg_pool2d(_c(_X), [2, 2, 2, 1], 1, "VALID"), UnimplementedError,
     r"Pooling is not yet supported on the batch dimension. \[Op:AvgPool\]"),
    (lambda: pooling.avg_pool2d(_c(np.ones((1, 5, 5, 4), np.int32)), 2, 1, "VALID"),
     InvalidArgumentError, r"Value for attr 'T' of int32 is not in the list of allowed values"),
    (lambda: pooling.max_pool2d(_c(_X), 2, 1, [[0, 0], [2, 0], [0, 0], [0, 0]]),
     InvalidArgumentError, r"Top padding 2 needs to be smaller than the window size 2"),
    (lambda: pooling.max_pool2d(_c(_X), 2, 1, [[1, 0], [0, 0], [0, 0], [0, 0]]),
     InvalidArgumentError, "Nonzero explicit padding in the batch or depth dimensions"),
    (lambda: pooling.max_pool2d(_c(_X), [1, 2, 2, 2], [1, 2, 2, 2], "VALID"),
     UnimplementedError, "MaxPooling supports exactly one of pooling across depth or pooling "
                         "across width/height."),
    (lambda: pooling.max_pool2d(_c(_X), [1, 1, 1, 3], [1, 1, 1, 3], "VALID"),
     UnimplementedError, "Depthwise max pooling requires the depth window to evenly divide"),
    (lambda: pooling.max_pool2d(_c(_X), [1, 1, 1, 2], [1, 1, 1, 1], "VALID"),
     UnimplementedError, "Depthwise max pooling requires the depth window to equal the depth "
                         "stride"),
    (lambda: pooling.avg_pool2d(_c(_X), 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]]), TypeError,
     "Expected string for argument 'padding'"),
    (lambda: pooling.pool(_c(_X), [2, 2], "MIN", padding="SAME"), ValueError,
     "2-D MIN pooling is not supported."),
    (lambda: pooling.pool(_c(_X), [2, 2], "AVG", padding="SAME", dilations=[2, 2]), ValueError,
     "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1"),
]
