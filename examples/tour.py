"""A short tour of tapeflow: train a small MLP eagerly and with tf.function, then take a
second derivative and a Hessian, and time the compiled step on a GPU when one is visible.
Exits non-zero if training did not reduce the loss."""

import sys
import time

import numpy as np

import tapeflow as tf


def make_data(n=512, features=8, classes=3, seed=0):
    """Points around `classes` random centres; the label is the centre's index."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 2.0, size=(classes, features))
    labels = rng.integers(0, classes, size=n)
    x = centres[labels] + rng.normal(0.0, 1.0, size=(n, features))
    return x.astype(np.float32), np.eye(classes, dtype=np.float32)[labels]


def progress(epoch, epochs, loss, width=24):
    filled = int(width * (epoch + 1) / epochs)
    bar = "#" * filled + "." * (width - filled)
    print(f"  epoch {epoch + 1:2d}/{epochs} [{bar}] loss {loss:.4f}")


def train(step, x, y, epochs, batch):
    losses = []
    for epoch in range(epochs):
        epoch_losses = []
        for start in range(0, len(x), batch):
            epoch_losses.append(float(step(x[start:start + batch], y[start:start + batch])))
        losses.append(float(np.mean(epoch_losses)))
        progress(epoch, epochs, losses[-1])
    return losses


def model_and_step():
    tf.random.set_seed(1)
    hidden = tf.keras.layers.Dense(32, activation="relu")
    out = tf.keras.layers.Dense(3)
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = out(hidden(x))
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
        variables = hidden.trainable_variables + out.trainable_variables
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    return step


def time_step(step, x, y, repeat=30):
    step(x, y)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        step(x, y)
        best = min(best, time.perf_counter() - start)
    return best


def gpu_timing(x, y, repeat=30):
    """The compiled training step on the CPU and, when one is visible, on the GPU."""
    print("\n6. The compiled step on the GPU")
    if not tf.config.list_physical_devices("GPU"):
        print("   no NVIDIA GPU visible: everything above ran on the CPU (on a machine with "
              "one,\n   pip install '.[cuda]' and this prints the GPU's time beside the CPU's)")
        return
    times = {}
    for device in ("/CPU:0", "/GPU:0"):
        with tf.device(device):
            step = tf.function(model_and_step())
            xs, ys = tf.constant(x[:64]), tf.constant(y[:64])
            step(xs, ys)
            step.get_concrete_function(xs, ys).wait_compiled()
            times[device] = time_step(step, xs, ys, repeat)
    print(f"   one training step: CPU {times['/CPU:0'] * 1e3:.3f} ms, "
          f"GPU {times['/GPU:0'] * 1e3:.3f} ms")


def main():
    x, y = make_data()
    print("1. Training a 8-32-3 MLP with GradientTape + Adam, eagerly")
    eager_step = model_and_step()
    eager_losses = train(eager_step, x, y, epochs=5, batch=64)

    print("\n2. The same training step under @tf.function")
    compiled_step = tf.function(model_and_step())
    compiled_losses = train(compiled_step, x, y, epochs=5, batch=64)

    xb, yb = tf.constant(x[:64]), tf.constant(y[:64])
    concrete = compiled_step.get_concrete_function(xb, yb)
    print("   (the first calls ran NumPy kernels while Numba compiled the step in the "
          "background)")
    compiled = concrete.wait_compiled()
    print(f"   compiled kernel ready: {compiled}")
    t_eager = time_step(eager_step, xb, yb)
    t_function = time_step(compiled_step, xb, yb)
    print(f"\n   one training step: eager {t_eager * 1e3:.2f} ms, "
          f"tf.function {t_function * 1e3:.2f} ms ({t_eager / t_function:.1f}x)")

    print("\n3. Higher derivatives")
    v = tf.constant(1.5)
    with tf.GradientTape() as outer:
        outer.watch(v)
        with tf.GradientTape() as inner:
            inner.watch(v)
            f = tf.math.sin(v) * v ** 2
        df = inner.gradient(f, v)
    d2f = outer.gradient(df, v)
    print(f"   f(v) = sin(v) * v^2 at v = 1.5: f' = {float(df):.5f}, f'' = {float(d2f):.5f}")

    w = tf.constant([0.5, -1.0, 2.0])
    with tf.GradientTape() as outer:
        outer.watch(w)
        with tf.GradientTape() as inner:
            inner.watch(w)
            energy = tf.reduce_sum(w ** 3) + tf.reduce_prod(w)
        grad = inner.gradient(energy, w)
    hessian = outer.jacobian(grad, w)
    print("   Hessian of sum(w^3) + prod(w) at w = [0.5, -1, 2]:")
    for row in hessian.numpy():
        print("     " + "  ".join(f"{value:7.3f}" for value in row))

    print("\n4. A Jacobian is one vectorized backward pass")
    a = tf.constant(np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32))
    x0 = tf.constant(np.linspace(-1, 1, 256, dtype=np.float32))

    def jacobian(a, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(a, x))
        return tape.jacobian(y, x)

    compiled_jacobian = tf.function(jacobian)
    compiled_jacobian(a, x0)
    compiled_jacobian.get_concrete_function(a, x0).wait_compiled()
    eager_time = time_step(jacobian, a, x0)
    compiled_time = time_step(compiled_jacobian, a, x0)
    print(f"   d tanh(A @ x) / dx, 256 x 256: eager {eager_time * 1e3:.2f} ms, "
          f"tf.function {compiled_time * 1e3:.3f} ms")

    print(f"\n5. Compiled kernels are cached in {tf.config.settings.cache_dir}")

    gpu_timing(x, y)

    fell = eager_losses[-1] < eager_losses[0] and compiled_losses[-1] < compiled_losses[0]
    print("\nloss fell in both modes" if fell else "\nERROR: the loss did not fall")
    return 0 if fell else 1


if __name__ == "__main__":
    sys.exit(main())
