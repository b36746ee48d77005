"""GradientTape on GPU tensors: the gradients of elementwise and reduction chains are
computed on the device (no op leaves it) and equal the CPU's; variables stay in device
memory through optimizer updates; a Keras training step (its matrix products through
the GPU's GEMM) gives the CPU's numbers."""

import numpy as np

import tapeflow as tf
from tapeflow.device_tensor import DeviceTensor

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
RNG = np.random.default_rng(3)
X = RNG.uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
Y = RNG.uniform(0.5, 1.5, (4,)).astype(np.float32)


def _gradients(device):
    with tf.device(device):
        x, y = tf.constant(X), tf.constant(Y)
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            z = tf.tanh(x * y) + x ** 2 - tf.sigmoid(y) / (1.0 + tf.exp(x))
            loss = tf.reduce_mean(tf.reduce_max(z, axis=1) + tf.reduce_sum(z * z, axis=1))
        return loss, tape.gradient(loss, [x, y])


def test_elementwise_and_reduction_gradients_stay_on_the_device(notes):
    loss, (dx, dy) = _gradients("/GPU:0")
    assert notes() == []  # no op of the forward or backward pass left the GPU
    assert type(dx) is DeviceTensor and dx.device == GPU0 and dy.device == GPU0
    cpu_loss, (cpu_dx, cpu_dy) = _gradients("/CPU:0")
    np.testing.assert_allclose(float(loss), float(cpu_loss), rtol=1e-6)
    np.testing.assert_allclose(dx.numpy(), cpu_dx.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dy.numpy(), cpu_dy.numpy(), rtol=1e-5, atol=1e-6)


def test_variables_stay_on_the_device_through_updates(notes):
    w = tf.Variable(np.ones(4, np.float32))
    x = tf.constant(Y)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(w * x - 1.0))
        (g,) = tape.gradient(loss, [w])
        w.assign_sub(0.1 * g)
        assert w._host is None  # the update never went through the host
    assert notes() == []
    assert w.device == GPU0 and g.device == GPU0
    want = np.ones(4, np.float32)
    for _ in range(3):
        want = want - 0.1 * (2 * (want * Y - 1.0) * Y)
    np.testing.assert_allclose(w.numpy(), want, rtol=1e-5)


def _train(device):
    with tf.device(device):
        layer = tf.keras.layers.Dense(3, activation="tanh")
        head = tf.keras.layers.Dense(1)
        opt = tf.keras.optimizers.Adam(0.05)
        x = tf.constant(X)
        head(layer(x))
        variables = layer.trainable_variables + head.trainable_variables
        start = np.random.default_rng(1)  # GPU initializers do not draw the CPU's numbers
        for v in variables:
            v.assign(start.uniform(-0.5, 0.5, v.shape).astype(np.float32))
        for _ in range(3):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(head(layer(x)) - 1.0))
            opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return [v.numpy() for v in variables], variables


def test_a_keras_training_step_gives_the_cpus_numbers(notes):
    gpu, variables = _train("/GPU:0")
    assert all(v.device == GPU0 for v in variables)
    assert not any("MatMul" in line for line in notes())  # the products ran on the GPU
    cpu, _ = _train("/CPU:0")
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
