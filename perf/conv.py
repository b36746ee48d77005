"""conv2d, float32, NHWC, 3x3 filters, SAME padding, stride 1: a 64x32x32x3 input with 32
filters (a first layer) and an 8x128x128x64 input with 64 filters (a wide layer).

"forward" is the convolution; "gradient" is one training step's convolution work: the
forward pass and the gradients for the input and the filter given the output's
gradient. Tapeflow eagerly (NumPy kernels) and compiled (tf.function: im2col blocks and
the float32 GEMM), against hand-written NumPy (im2col by sliding_window_view, then
tensordot), and JAX jit / PyTorch when installed (PyTorch on NCHW copies, made once)."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

LAYERS = [(64, 32, 32, 3, 32), (8, 128, 128, 64, 64)]


def _windows(x):
    """[N, H, W, C, 3, 3] windows of x padded by one (SAME for 3x3, stride 1)."""
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    return np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))


def numpy_forward(x, w):
    return np.tensordot(_windows(x), w.transpose(2, 0, 1, 3), axes=3)


def numpy_step(x, w, dy):
    """Forward, then the input's gradient (scatter of dy @ W^T) and the filter's."""
    y = numpy_forward(x, w)
    cols = _windows(x)
    dw = np.tensordot(cols, dy, axes=([0, 1, 2], [0, 1, 2])).transpose(1, 2, 0, 3)
    dcols = np.tensordot(dy, w.transpose(3, 2, 0, 1), axes=1)
    n, h, wd, c = x.shape
    dx = np.zeros((n, h + 2, wd + 2, c), x.dtype)
    for i in range(3):
        for j in range(3):
            dx[:, i:i + h, j:j + wd] += dcols[..., i, j]
    return y, dx[:, 1:-1, 1:-1], dw


def _tapeflow_step(x, w, dy):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.nn.conv2d(x, w, 1, "SAME")
    dx, dw = tape.gradient(y, [x, w], output_gradients=dy)
    return y, dx, dw


def _jax_calls(jax, x, w, dy):
    def forward(a, b):
        return jax.lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def step(a, b, g):
        y, pullback = jax.vjp(forward, a, b)
        return (y,) + pullback(g)

    f, s = jax.jit(forward), jax.jit(step)
    a, b, g = (jax.numpy.asarray(v) for v in (x, w, dy))
    return (lambda: jax.block_until_ready(f(a, b)),
            lambda: jax.block_until_ready(s(a, b, g)))


def _torch_calls(torch, x, w, dy):
    a = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    b = torch.from_numpy(np.ascontiguousarray(w.transpose(3, 2, 0, 1)))
    g = torch.from_numpy(np.ascontiguousarray(dy.transpose(0, 3, 1, 2)))

    def forward():
        with torch.no_grad():
            return torch.nn.functional.conv2d(a, b, padding=1)

    def step():
        ar, br = a.detach().requires_grad_(), b.detach().requires_grad_()
        y = torch.nn.functional.conv2d(ar, br, padding=1)
        y.backward(g)
        return y, ar.grad, br.grad
    return forward, step


def _layer_rows(n, h, w_, c, o, peers):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w_, c)).astype(np.float32)
    w = (rng.standard_normal((3, 3, c, o)) / np.sqrt(9 * c)).astype(np.float32)
    dy = rng.standard_normal((n, h, w_, o)).astype(np.float32)
    tx, tw, tdy = tf.constant(x), tf.constant(w), tf.constant(dy)
    compiled_forward = tf.function(lambda a, b: tf.nn.conv2d(a, b, 1, "SAME"))
    compiled_step = tf.function(_tapeflow_step)
    want = numpy_step(x, w, dy)
    for got in (compiled_step(tx, tw, tdy), _tapeflow_step(tx, tw, tdy)):
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-3, atol=2e-3)
    forward = {"numpy": lambda: numpy_forward(x, w),
               "tapeflow eager": lambda: tf.nn.conv2d(tx, tw, 1, "SAME"),
               "tapeflow fn": lambda: compiled_forward(tx, tw)}
    step = {"numpy": lambda: numpy_step(x, w, dy),
            "tapeflow eager": lambda: _tapeflow_step(tx, tw, tdy),
            "tapeflow fn": lambda: compiled_step(tx, tw, tdy)}
    if "jax" in peers:
        forward["jax jit"], step["jax jit"] = _jax_calls(peers["jax"], x, w, dy)
    if "torch" in peers:
        forward["torch"], step["torch"] = _torch_calls(peers["torch"], x, w, dy)
    shape = f"{n}x{h}x{w_}x{c} * 3x3x{c}x{o}"
    rows = []
    for what, calls in (("forward", forward), ("gradient", step)):
        times = best_times(calls, repeat=3, min_time=0.5)
        rows += [Result(f"conv2d {what} {shape}", impl, t, times["numpy"])
                 for impl, t in times.items()]
    return rows


def run(peers):
    rows = []
    for layer in LAYERS:
        rows += _layer_rows(*layer, peers)
    return rows
