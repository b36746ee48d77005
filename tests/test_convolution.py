"""tf.nn's convolutions and pooling against their definitions written as plain loops (the
op-table entries' own gradients, batching and compiled parity are the generated tests'),
a few values TensorFlow 2.21 gives, the adjoint identity of conv2d_transpose, and one
compiled training step with a batch size unknown while tracing."""

import itertools

import numpy as np
import pytest

import tapeflow as tf
from tests.compiled_parity import assert_compiled_matches_eager

RNG = np.random.default_rng(0)


def _same_pads(size, window, stride, dilation):
    out = -(-size // stride)
    total = max((out - 1) * stride + (window - 1) * dilation + 1 - size, 0)
    return out, total // 2


def reference_conv(x, w, strides, dilations, padding):
    """Channels-last convolution of any rank by its definition: every output position,
    every tap of the filter. `padding`: "SAME", "VALID" or (before, after) pairs."""
    spatial = x.shape[1:-1]
    windows = w.shape[:-2]
    groups = x.shape[-1] // w.shape[-2]
    befores, outs = [], []
    for k, (size, window) in enumerate(zip(spatial, windows)):
        effective = (window - 1) * dilations[k] + 1
        if padding == "SAME":
            out, before = _same_pads(size, window, strides[k], dilations[k])
        elif padding == "VALID":
            out, before = (size - effective) // strides[k] + 1, 0
        else:
            before, after = padding[k]
            out = (size + before + after - effective) // strides[k] + 1
        befores.append(before)
        outs.append(out)
    depth, per_group = w.shape[-2], w.shape[-1] // groups
    y = np.zeros((x.shape[0], *outs, w.shape[-1]))
    for position in itertools.product(*[range(o) for o in outs]):
        for tap in itertools.product(*[range(k) for k in windows]):
            at = [p * s - b + t * d for p, s, b, t, d in
                  zip(position, strides, befores, tap, dilations)]
            if all(0 <= a < size for a, size in zip(at, spatial)):
                pixel = x[(slice(None), *at)]
                for g in range(groups):
                    cols = slice(g * per_group, (g + 1) * per_group)
                    y[(slice(None), *position, cols)] += (
                        pixel[:, g * depth:(g + 1) * depth] @ w[tap][:, cols])
    return y


def reference_pool(x, windows, strides, padding, kind, dilations=None):
    """Channels-last max or average pooling by its definition (SAME averages only the
    inputs inside the image)."""
    spatial = x.shape[1:-1]
    dilations = dilations or [1] * len(windows)
    geometry = [_same_pads(s, k, st, d) if padding == "SAME" else
                ((s - (k - 1) * d - 1) // st + 1, 0)
                for s, k, st, d in zip(spatial, windows, strides, dilations)]
    y = np.zeros((x.shape[0], *[g[0] for g in geometry], x.shape[-1]))
    for position in itertools.product(*[range(g[0]) for g in geometry]):
        values = []
        for tap in itertools.product(*[range(k) for k in windows]):
            at = [p * s - g[1] + t * d for p, s, g, t, d in
                  zip(position, strides, geometry, tap, dilations)]
            if all(0 <= a < size for a, size in zip(at, spatial)):
                values.append(x[(slice(None), *at)])
        values = np.stack(values)
        y[(slice(None), *position)] = values.max(0) if kind == "MAX" else values.mean(0)
    return y


def _data(*shape):
    return RNG.standard_normal(shape)


CONV2D_CASES = [  # input shape, filter shape, strides, dilations, padding
    ((2, 6, 5, 3), (3, 2, 3, 4), (1, 1), (1, 1), "SAME"),
    ((1, 7, 6, 4), (3, 3, 2, 6), (2, 1), (1, 1), "SAME"),
    ((2, 7, 7, 2), (2, 3, 2, 3), (1, 2), (2, 1), "VALID"),
    ((1, 6, 6, 3), (3, 3, 3, 2), (2, 2), (1, 1), ((1, 2), (0, 1))),
    ((1, 5, 6, 4), (2, 2, 1, 8), (1, 1), (2, 2), "SAME"),
]


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape, w_shape, strides, dilations, padding", CONV2D_CASES)
def test_conv2d_matches_its_definition(x_shape, w_shape, strides, dilations, padding,
                                       data_format):
    x, w = _data(*x_shape), _data(*w_shape)
    want = reference_conv(x, w, strides, dilations, padding)
    pads = padding if isinstance(padding, str) else [(0, 0), *padding, (0, 0)]
    if data_format == "NCHW":
        x = x.transpose(0, 3, 1, 2)
        pads = pads if isinstance(pads, str) else [pads[0], pads[3], pads[1], pads[2]]
    got = tf.nn.conv2d(tf.constant(x), tf.constant(w), list(strides), pads, data_format,
                       list(dilations)).numpy()
    if data_format == "NCHW":
        got = got.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_conv1d_conv3d_depthwise_and_atrous_match_their_definitions():
    x1, w1 = _data(2, 9, 3), _data(3, 3, 2)
    np.testing.assert_allclose(tf.nn.conv1d(x1, w1, 2, "SAME", dilations=1).numpy(),
                               reference_conv(x1, w1, [2], [1], "SAME"), atol=1e-10)
    np.testing.assert_allclose(
        tf.nn.conv1d(x1.transpose(0, 2, 1), w1, 1, "VALID", "NCW", 2).numpy(),
        reference_conv(x1, w1, [1], [2], "VALID").transpose(0, 2, 1), atol=1e-10)
    x3, w3 = _data(1, 5, 4, 5, 2), _data(2, 3, 2, 2, 3)
    for strides, padding in (([1, 2, 1, 1, 1], "SAME"), ([1, 1, 1, 2, 1], "VALID")):
        np.testing.assert_allclose(tf.nn.conv3d(x3, w3, strides, padding).numpy(),
                                   reference_conv(x3, w3, strides[1:4], [1] * 3, padding),
                                   atol=1e-10)
    np.testing.assert_allclose(
        tf.nn.conv3d(x3.transpose(0, 4, 1, 2, 3), w3, [1, 1, 2, 1, 1], "SAME", "NCDHW",
                     [1, 1, 1, 1, 2]).numpy(),
        reference_conv(x3, w3, [2, 1, 1], [1, 1, 2], "SAME").transpose(0, 4, 1, 2, 3),
        atol=1e-10)
    x, w = _data(2, 6, 5, 3), _data(3, 3, 3, 2)
    # Depthwise: channel c * 2 + m is input channel c convolved with w[..., c, m].
    np.testing.assert_allclose(
        tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME").numpy(),
        reference_conv(x, w.reshape(3, 3, 1, 6), [2, 2], [1, 1], "SAME"), atol=1e-10)
    np.testing.assert_allclose(tf.nn.atrous_conv2d(x, w[:, :, :, :1], 2, "VALID").numpy(),
                               reference_conv(x, w[:, :, :, :1], [1, 1], [2, 2], "VALID"),
                               atol=1e-10)
    np.testing.assert_allclose(tf.nn.convolution(x, w[..., :1], padding="SAME").numpy(),
                               reference_conv(x, w[..., :1], [1, 1], [1, 1], "SAME"),
                               atol=1e-10)


def test_values_tensorflow_gives():
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    np.testing.assert_array_equal(tf.nn.avg_pool2d(x, 3, 2, "SAME")[0, :, :, 0].numpy(),
                                  [[5.0, 6.5], [11.0, 12.5]])
    np.testing.assert_array_equal(tf.nn.max_pool2d(x, 3, 2, "SAME")[0, :, :, 0].numpy(),
                                  [[10.0, 11.0], [14.0, 15.0]])
    y = tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=2, padding="SAME")
    np.testing.assert_array_equal(y[0, :, :, 0].numpy(), [[10.0, 18.0], [42.0, 50.0]])
    assert tf.nn.conv2d(tf.zeros([1, 5, 5, 4]), tf.zeros([6, 3, 4, 2]), 1, "VALID").shape \
        == (1, 0, 3, 2)


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    x, w = _data(2, 7, 6, 3), _data(3, 3, 3, 4)
    y = _data(2, 4, 3, 4)
    forward = tf.nn.conv2d(x, w, 2, "SAME").numpy()
    back = tf.nn.conv2d_transpose(y, w, [2, 7, 6, 3], 2, "SAME").numpy()
    np.testing.assert_allclose(np.sum(forward * y), np.sum(x * back), rtol=1e-10)


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pooling_matches_its_definition(kind):
    x = _data(2, 7, 6, 3)
    max_or_avg = {"MAX": (tf.nn.max_pool2d, tf.nn.max_pool), "AVG": (tf.nn.avg_pool2d,
                                                                    tf.nn.avg_pool)}[kind]
    pool2d, pool_nd = max_or_avg
    for window, strides, padding in (((3, 2), (2, 2), "SAME"), ((2, 3), (1, 2), "VALID")):
        want = reference_pool(x, window, strides, padding, kind)
        np.testing.assert_allclose(pool2d(x, list(window), list(strides), padding).numpy(),
                                   want, atol=1e-12)
        nchw = pool2d(x.transpose(0, 3, 1, 2), list(window), list(strides), padding, "NCHW")
        np.testing.assert_allclose(nchw.numpy().transpose(0, 2, 3, 1), want, atol=1e-12)
    x1, x3 = _data(2, 9, 3), _data(1, 5, 4, 6, 2)
    np.testing.assert_allclose(pool_nd(x1, 3, 2, "SAME").numpy(),
                               reference_pool(x1, [3], [2], "SAME", kind), atol=1e-12)
    np.testing.assert_allclose(pool_nd(x3, [3, 2, 2], [2, 1, 2], "SAME").numpy(),
                               reference_pool(x3, [3, 2, 2], [2, 1, 2], "SAME", kind),
                               atol=1e-12)
    np.testing.assert_allclose(
        tf.nn.pool(x, [2, 3], kind, padding="VALID", dilations=[2, 1]).numpy(),
        reference_pool(x, [2, 3], [1, 1], "VALID", kind, dilations=[2, 1]), atol=1e-12)


def test_compiled_training_step_with_unknown_batch(monkeypatch):
    w = tf.constant(_data(3, 3, 2, 4).astype(np.float32))

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch([x, w])
            hidden = tf.nn.relu(tf.nn.conv2d(x, w, 2, "SAME"))
            pooled = tf.nn.avg_pool2d(tf.nn.max_pool2d(hidden, 2, 1, "SAME"), 2, 1, "VALID")
            loss = tf.reduce_sum(pooled * pooled)
        return (loss,) + tuple(tape.gradient(loss, [x, w]))

    x = tf.constant(_data(3, 6, 5, 2).astype(np.float32))
    assert_compiled_matches_eager(monkeypatch, step, x, rtol=1e-5)
    unknown = tf.function(step, input_signature=[tf.TensorSpec([None, 6, 5, 2], tf.float32)])
    for got, want in zip(unknown(x), step(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
