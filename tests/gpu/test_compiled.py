"""tf.function graphs compiled for the GPU: fused groups as single kernels, the compiled
backward the same way, values resident on the device between kernels and calls, nodes
without a GPU kernel on the CPU inside the compiled call (soft placement), and GPU ==
CPU for what they compute."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda import device
from tapeflow.device_tensor import DeviceTensor, transfers

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
RNG = np.random.default_rng(5)
X = RNG.uniform(-1.0, 1.0, (3, 5)).astype(np.float32)
W = RNG.uniform(0.5, 1.5, (5,)).astype(np.float32)


pytestmark = pytest.mark.usefixtures("sync_compiles")


def _launches(fn, *args):
    before = device.launches[0]
    result = fn(*args)
    return result, device.launches[0] - before


def test_the_elementwise_gradient_graph_is_at_most_two_kernels(notes):
    with tf.device("/GPU:0"):
        w = tf.Variable(W)
        x = tf.constant(X)

    @tf.function
    def loss_and_gradient(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.tanh(x) * w)
        return loss, tape.gradient(loss, x)

    loss_and_gradient(x)  # traced and compiled
    (loss, dx), launched = _launches(loss_and_gradient, x)
    assert launched <= 2
    assert notes() == []
    assert type(dx) is DeviceTensor and dx.device == GPU0 and loss.device == GPU0
    t = np.tanh(X)
    np.testing.assert_allclose(float(loss), (t * W).sum(), rtol=1e-5)
    np.testing.assert_allclose(dx.numpy(), (1 - t * t) * W, rtol=1e-5, atol=1e-6)


def _chain(x, y):
    z = tf.nn.relu(x - 0.25) * y + tf.exp(-x * x) / (1.0 + y)
    return (tf.reduce_max(z, axis=0, keepdims=True) - tf.reduce_mean(z, axis=1)[:, None],
            tf.reduce_sum(tf.square(z)), tf.cast(z > 0.5, tf.int32) * 3 // 2)


def _run(device_name, fn):
    with tf.device(device_name):
        x, y = tf.constant(X), tf.constant(W)
        return [t.numpy() for t in tf.function(fn)(x, y)]


def test_fused_chains_and_reductions_match_the_cpu(notes):
    gpu, cpu = _run("/GPU:0", _chain), _run("/CPU:0", _chain)
    for a, b in zip(gpu, cpu):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_a_compiled_backward_matches_the_cpu():
    def gradients(x, y):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            loss = tf.reduce_sum(_chain(x, y)[0]) + tf.reduce_mean(tf.sigmoid(x * y))
        return tape.gradient(loss, [x, y])

    for a, b in zip(_run("/GPU:0", gradients), _run("/CPU:0", gradients)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_node_without_a_gpu_kernel_runs_on_the_cpu_inside_the_call(notes):
    def with_sort(x, y):
        return (tf.sort(tf.tanh(x) * y, axis=1) + 1.0,)

    gpu, cpu = _run("/GPU:0", with_sort), _run("/CPU:0", with_sort)
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-6)
    assert len([line for line in notes() if "Sort" in line or "TopK" in line]) == 1


def test_a_failing_element_raises_the_ops_error_naming_the_line():
    @tf.function
    def divide(a, b):
        return tf.math.floordiv(a + 1, b)

    with tf.device("/GPU:0"):
        a, b = tf.constant([4, 5, 6]), tf.constant([2, 0, 3])
        np.testing.assert_array_equal(divide(a, tf.constant([2, 1, 3])).numpy(), [2, 6, 2])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            divide(a, b)


def test_values_stay_on_the_device_between_calls():
    with tf.device("/GPU:0"):
        v = tf.Variable(np.ones(5, np.float32))
        x = tf.constant(W)

    @tf.function
    def step(x):
        v.assign(v * 0.5 + tf.tanh(x))
        return tf.reduce_sum(v)

    step(x)
    before = dict(transfers)
    for _ in range(3):
        total = step(x)
    assert transfers == before  # neither v nor x went through the host
    want = np.ones(5, np.float32)
    for _ in range(4):
        want = want * 0.5 + np.tanh(W)
    np.testing.assert_allclose(v.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(float(total), want.sum(), rtol=1e-6)


def _training(device_name, steps):
    with tf.device(device_name):
        hidden = tf.keras.layers.Dense(4, activation="tanh")
        head = tf.keras.layers.Dense(1)
        opt = tf.keras.optimizers.Adam(0.05)
        x, y = tf.constant(X), tf.constant(X[:, :1] * 2.0)
        head(hidden(x))
        variables = hidden.trainable_variables + head.trainable_variables
        start = np.random.default_rng(2)  # GPU initializers do not draw the CPU's numbers
        for v in variables:
            v.assign(start.uniform(-0.5, 0.5, v.shape).astype(np.float32))

        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(head(hidden(x)) - y))
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        counts = []
        for _ in range(steps):
            loss = step(x, y)
            counts.append(dict(transfers))
        return variables, float(loss), counts


def test_a_training_loop_copies_nothing_between_host_and_device_after_its_first_step(notes):
    variables, loss, counts = _training("/GPU:0", 20)
    assert counts[-1] == counts[0]
    assert not any("MatMul" in line for line in notes())
    assert all(v.device == GPU0 and v._host is None for v in variables)
    cpu_variables, cpu_loss, _ = _training("/CPU:0", 20)
    np.testing.assert_allclose(loss, cpu_loss, rtol=1e-5)
    for a, b in zip(variables, cpu_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_batched_products_match_the_cpu():
    a = RNG.standard_normal((2, 3, 4))
    b = RNG.standard_normal((4, 2))

    def products(x, y):
        return (tf.matmul(x, y), tf.matmul(x, x, transpose_b=True),
                tf.matmul(tf.reshape(x, (6, 4)), y, transpose_a=False))

    results = {}
    for name in ("/GPU:0", "/CPU:0"):
        with tf.device(name):
            results[name] = [t.numpy() for t in tf.function(products)(tf.constant(a),
                                                                       tf.constant(b))]
    for g, c in zip(results["/GPU:0"], results["/CPU:0"]):
        np.testing.assert_allclose(g, c, rtol=1e-12)
