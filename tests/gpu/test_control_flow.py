"""tf.cond and tf.while_loop inside a tf.function compiled for the GPU: branches and loop
bodies compiled as GPU programs (their elementwise chains fused), loop counters on the
host, loop-carried tensors in device memory, and GPU == CPU for values and gradients."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda import device
from tapeflow.device_tensor import DeviceTensor, transfers

X = np.linspace(-1.0, 1.0, 6).astype(np.float32).reshape(2, 3)


pytestmark = pytest.mark.usefixtures("sync_compiles")


def _loop_and_cond(x, n):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in tf.range(n):  # AutoGraph: a While node counting on the host
            y = tf.tanh(y * 1.5 + 0.1) * x
        z = tf.cond(tf.reduce_sum(y) > 0.0, lambda: tf.exp(y) * 2.0, lambda: tf.sin(y) - 1.0)
        (w,) = tf.while_loop(lambda w: tf.reduce_max(w) < 4.0, lambda w: (w * 1.5 + 0.25,),
                             [tf.abs(z)])
        loss = tf.reduce_sum(w * z)
    return loss, tape.gradient(loss, x)


def _results(device_name, fn, *calls):
    with tf.device(device_name):
        compiled = tf.function(fn)
        return [compiled(*[tf.constant(a) for a in args]) for args in calls]


def test_loops_and_conds_and_their_gradients_match_the_cpu(notes):
    calls = [(X, 2), (X, 5)]
    gpu, cpu = _results("/GPU:0", _loop_and_cond, *calls), _results("/CPU:0", _loop_and_cond, *calls)
    for gpu_call, cpu_call in zip(gpu, cpu):
        assert all(type(t) is DeviceTensor for t in gpu_call)
        for a, b in zip(gpu_call, cpu_call):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=2e-5)
    assert notes() == []  # every op of the loops, branches and backward ran on the GPU


def test_a_tape_around_the_call_differentiates_the_compiled_loop():
    def loop(x):
        return tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x),
                             [0, x])[1]

    grads = []
    for name in ("/GPU:0", "/CPU:0"):
        with tf.device(name):
            x, f = tf.constant(X), tf.function(loop)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            grads.append(tape.gradient(y, x).numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)


def _counted(fn, *args):
    """What a call (after the first) copied and launched."""
    fn(*args)
    before, launched = dict(transfers), device.launches[0]
    fn(*args)
    return {k: transfers[k] - before[k] for k in before}, device.launches[0] - launched


def test_loop_carried_tensors_stay_on_the_device_and_the_body_is_one_kernel():
    def loop(x, n):
        y = x
        for _ in tf.range(n):
            y = tf.tanh(y * 1.5 + 0.1) * x - y / 3.0
        return y

    with tf.device("/GPU:0"):
        f, x = tf.function(loop), tf.constant(X)
        short, long = _counted(f, x, tf.constant(2)), _counted(f, x, tf.constant(6))
    # The counter and its comparison stay on the host: no copy either way, whatever the
    # trip count, and each iteration is the body's one fused kernel.
    assert short[0] == long[0] == {"to_device": 0, "to_host": 0}
    assert long[1] - short[1] == 4


def test_a_device_predicate_is_the_one_read_per_iteration():
    def grow(x):
        return tf.while_loop(lambda y: tf.reduce_sum(y) < 20.0, lambda y: (y * 2.0 + 1.0,),
                             [x])

    with tf.device("/GPU:0"):
        x = tf.constant(np.ones(3, np.float32))
        copies, _ = _counted(tf.function(grow), x)
    # 3 -> 9 -> 21: three evaluations of the condition, each one scalar read back.
    assert copies == {"to_device": 0, "to_host": 3}


def _sequence_gradient(xs):
    with tf.GradientTape() as tape:
        tape.watch(xs)
        h = tf.zeros([3])
        for t in tf.range(tf.shape(xs)[0]):
            h = tf.tanh(h * 0.5 + xs[t])
        loss = tf.reduce_sum(h * h)
    return tape.gradient(loss, xs)


def test_a_loops_gradient_of_the_rows_it_reads_stays_on_the_device():
    # On the CPU the reverse loop keeps the rows in lists (ops/loop_rows.py), which the
    # GPU has no kernels for: there the gradient stays the dense rules', on the device.
    xs = np.linspace(-1.0, 1.0, 12).astype(np.float32).reshape(4, 3)
    (gpu,), (cpu,) = _results("/GPU:0", _sequence_gradient, (xs,)), \
        _results("/CPU:0", _sequence_gradient, (xs,))
    assert type(gpu) is DeviceTensor
    np.testing.assert_allclose(gpu.numpy(), cpu.numpy(), rtol=2e-5, atol=2e-6)
