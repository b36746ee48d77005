"""Samplers and error cases for ops/convolution.py: tiny images (batch 1-2, sides 3-6,
channels 1-4), both data formats, strides, dilations, the three paddings and groups."""

import numpy as np
from hypothesis import strategies as st

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import convolution
from tapeflow.ops.convolution import CONV2D

from .common import Case, floats, ints
from .common import constant as _c


def _window(draw):
    """(input shape, filter shape, attrs) of a convolution with a nonempty output."""
    data_format = draw(st.sampled_from(["NHWC", "NCHW"]))
    groups = draw(st.integers(1, 2))
    depth = draw(st.integers(1, 2))
    out = groups * draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    explicit = ()
    pairs = [(0, 0), (0, 0)]
    if padding == "EXPLICIT":
        pairs = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(2)]
    h = draw(st.integers(max(3, (kh - 1) * dh + 1), 6))
    w = draw(st.integers(max(3, (kw - 1) * dw + 1), 6))
    n = draw(st.integers(1, 2))
    c = groups * depth
    if data_format == "NHWC":
        image, strides, dilations = (n, h, w, c), (1, sh, sw, 1), (1, dh, dw, 1)
        all_pairs = [(0, 0)] + pairs + [(0, 0)]
    else:
        image, strides, dilations = (n, c, h, w), (1, 1, sh, sw), (1, 1, dh, dw)
        all_pairs = [(0, 0), (0, 0)] + pairs
    if padding == "EXPLICIT":
        explicit = tuple(p for pair in all_pairs for p in pair)
    attrs = {"strides": strides, "padding": padding, "explicit_paddings": explicit,
             "data_format": data_format, "dilations": dilations}
    return image, (kh, kw, depth, out), attrs


def _output_shape(image, filter_shape, attrs):
    return CONV2D.eager(np.zeros(image), np.zeros(filter_shape), **attrs).shape


def _conv2d(draw):
    image, filter_shape, attrs = _window(draw)
    if draw(st.integers(0, 5)) == 0:  # integers: values only
        return Case([ints(draw, image, -3, 3), ints(draw, filter_shape, -3, 3)], attrs, wrt=())
    return Case([floats(draw, image), floats(draw, filter_shape)], attrs)


def _conv2d_backprop_input(draw):
    image, filter_shape, attrs = _window(draw)
    dy = _output_shape(image, filter_shape, attrs)
    return Case([floats(draw, filter_shape), floats(draw, dy)],
                {**attrs, "input_sizes": image})


def _conv2d_backprop_filter(draw):
    image, filter_shape, attrs = _window(draw)
    dy = _output_shape(image, filter_shape, attrs)
    return Case([floats(draw, image), floats(draw, dy)],
                {**attrs, "filter_sizes": filter_shape})


SAMPLES = {"Conv2D": _conv2d, "Conv2DBackpropInput": _conv2d_backprop_input,
           "Conv2DBackpropFilter": _conv2d_backprop_filter}

_X = np.ones((1, 5, 5, 4), np.float32)

ERRORS = [
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 3, 6), np.float32)), 1, "SAME"),
     InvalidArgumentError,
     r"input depth must be evenly divisible by filter depth: 4 vs 3 \[Op:Conv2D\]"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4), np.float32)), 1, "SAME"),
     InvalidArgumentError, r"filter must be 4-dimensional: \[3,3,4\] \[Op:Conv2D\]"),
    (lambda: convolution.conv2d(_c(_X[0]), _c(np.ones((3, 3, 4, 2), np.float32)), 1, "SAME"),
     InvalidArgumentError, r"convolution input must be 4-dimensional: \[5,5,4\]"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2))), 1, "SAME"),
     InvalidArgumentError, r"cannot compute Conv2D as input #1\(zero-based\) was expected to "
                           r"be a float32 tensor but is a float64 tensor \[Op:Conv2D\]"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2), np.float32)), 1, "FOO"),
     InvalidArgumentError, r"Value for attr 'padding' of \"FOO\" is not in the list"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2), np.float32)), 0, "SAME"),
     InvalidArgumentError, r"Stride must be > 0, but got 0 \[Op:Conv2D\]"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2), np.float32)), [2, 1, 1, 1],
                                "SAME"),
     InvalidArgumentError, "does not yet support strides in the batch and depth dimensions"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2), np.float32)), 1,
                                [[1, 1], [1, 1], [1, 1], [0, 0]]),
     InvalidArgumentError, "Nonzero explicit padding in the batch or depth dimensions is not "
                           "supported"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((8, 3, 4, 2), np.float32)), 1, "VALID"),
     InvalidArgumentError, r"Computed output size would be negative: -2 \[input_size: 5, "
                           r"effective_filter_size: 8, stride: 1\]"),
    (lambda: convolution.conv2d(_c(_X), _c(np.ones((3, 3, 4, 2), np.float32)), [1, 2, 3],
                                "SAME"),
     ValueError, "strides should be of length 1, 2 or 4 but was 3"),
    (lambda: convolution.conv2d_transpose(_c(_X), _c(np.ones((3, 3, 2, 4), np.float32)),
                                          [1, 12, 12, 2], 2, "SAME"),
     InvalidArgumentError, r"Conv2DCustomBackpropInput: Size of out_backprop doesn't match "
                           r"computed: actual = 5, computed = 6 spatial_dim: 1 input: 12 "
                           r"filter: 3 output: 5 stride: 2 dilation: 1"),
    (lambda: convolution.conv2d_transpose(_c(_X), _c(np.ones((3, 3, 2, 3), np.float32)),
                                          [1, 10, 10, 2], 2, "SAME"),
     InvalidArgumentError, "Conv2DCustomBackpropInput: filter and out_backprop must have the "
                           "same out_depth"),
    (lambda: convolution.conv3d(_c(np.ones((1, 5, 5, 5, 4), np.float32)),
                                _c(np.ones((3, 3, 3, 2, 2), np.float32)), [1] * 5, "SAME"),
     InvalidArgumentError, r"input and filter must have the same depth: 4 vs 2 \[Op:Conv3D\]"),
]
