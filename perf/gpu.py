"""GPU benchmarks (`make perf-gpu`), for a machine with an NVIDIA GPU: runs tests/gpu on
the real device (no simulator), then prints tapeflow's times beside PyTorch CUDA and JAX
GPU where they are installed. Exits with an error when no GPU is visible.

Rows: the gradient of a 4M-element elementwise chain; a 64M-element fused chain against
the device's copy bandwidth; reduce_sum and softmax over 4096x4096; a 4096^3 float32
matmul; an MLP training step at batch 4096; the T=100 RNN gradient; launch overhead per
kernel; the first call of a tf.function with an empty and with a warm kernel cache.

Usage: python perf/gpu.py [--no-tests]
"""

import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)  # the real device, never the simulator
os.environ.setdefault("TAPEFLOW_COMPILE", "sync")  # steady state: compile before timing


def _require_gpu():
    from numba import cuda
    if not cuda.is_available() or not len(cuda.gpus):
        sys.exit("perf/gpu.py: no NVIDIA GPU is visible (numba.cuda.is_available() is "
                 "False): run it on a machine with a GPU and its driver")
    import tapeflow as tf
    if not tf.config.list_physical_devices("GPU"):
        sys.exit("perf/gpu.py: numba-cuda sees a GPU but tapeflow lists none")
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def _run_tests():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["TAPEFLOW_GPU_TESTS_ON_DEVICE"] = "1"
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/gpu", "-q", "-x",
                           "-p", "no:cacheprovider"], cwd=ROOT, env=env)
    if done.returncode:
        sys.exit(f"tests/gpu failed on the GPU (exit {done.returncode})")


# -- timing -----------------------------------------------------------------------------------

def _best(fn, sync, repeat=20, warmup=3):
    """The best time of `fn` over `repeat` runs, the device synchronized around each."""
    for _ in range(warmup):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def _tapeflow_sync():
    from numba import cuda
    cuda.synchronize()


def _peers():
    found = {}
    try:
        import torch
        if torch.cuda.is_available():
            found["torch"] = torch
    except ImportError:
        pass
    try:
        import jax
        if any(d.platform == "gpu" for d in jax.devices()):
            found["jax"] = jax
    except (ImportError, RuntimeError):
        pass
    return found


# -- the workloads, one function per row: {framework: seconds} --------------------------------

def _elementwise_gradient(tf, peers, n=1 << 22):
    x = tf.constant(np.random.default_rng(0).standard_normal(n).astype(np.float32))
    w = tf.Variable(np.ones(n, np.float32))

    @tf.function
    def grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.tanh(x) * w)
        return tape.gradient(loss, x)

    times = {"tapeflow": _best(lambda: grad(x), _tapeflow_sync)}
    if "torch" in peers:
        torch = peers["torch"]
        tx = torch.randn(n, device="cuda", requires_grad=True)
        tw = torch.ones(n, device="cuda")

        def step():
            (g,) = torch.autograd.grad((torch.tanh(tx) * tw).sum(), tx)
            return g
        times["torch"] = _best(step, torch.cuda.synchronize)
    if "jax" in peers:
        jax = peers["jax"]
        jx, jw = jax.numpy.asarray(x.numpy()), jax.numpy.ones(n, np.float32)
        g = jax.jit(jax.grad(lambda a: (jax.numpy.tanh(a) * jw).sum()))
        times["jax"] = _best(lambda: g(jx).block_until_ready(), lambda: None)
    return times


def _fused_chain(tf, peers, n=1 << 26):
    x = tf.constant(np.random.default_rng(1).standard_normal(n).astype(np.float32))

    @tf.function
    def chain(x):
        return tf.sigmoid(x * 1.5 + 0.5) * tf.tanh(x) - 0.25 * x

    @tf.function
    def copy(x):
        return x + 0.0  # one read and one write: the copy-bandwidth reference

    times = {"tapeflow": _best(lambda: chain(x), _tapeflow_sync),
             "copy (x + 0)": _best(lambda: copy(x), _tapeflow_sync)}
    if "torch" in peers:
        torch = peers["torch"]
        tx = torch.randn(n, device="cuda")
        compiled = torch.compile(lambda a: torch.sigmoid(a * 1.5 + 0.5) * torch.tanh(a)
                                 - 0.25 * a)
        times["torch.compile"] = _best(lambda: compiled(tx), torch.cuda.synchronize)
        times["torch copy"] = _best(lambda: tx.clone(), torch.cuda.synchronize)
    return times


def _reductions(tf, peers, n=4096):
    x = tf.constant(np.random.default_rng(2).standard_normal((n, n)).astype(np.float32))
    total = tf.function(lambda x: tf.reduce_sum(x))
    softmax = tf.function(lambda x: tf.nn.softmax(x, axis=-1))
    rows = {"reduce_sum": {"tapeflow": _best(lambda: total(x), _tapeflow_sync)},
            "softmax": {"tapeflow": _best(lambda: softmax(x), _tapeflow_sync)}}
    if "torch" in peers:
        torch = peers["torch"]
        tx = torch.randn(n, n, device="cuda")
        rows["reduce_sum"]["torch"] = _best(lambda: tx.sum(), torch.cuda.synchronize)
        rows["softmax"]["torch"] = _best(lambda: torch.softmax(tx, -1), torch.cuda.synchronize)
    if "jax" in peers:
        jax = peers["jax"]
        jx = jax.numpy.asarray(x.numpy())
        s, sm = jax.jit(jax.numpy.sum), jax.jit(lambda a: jax.nn.softmax(a, axis=-1))
        rows["reduce_sum"]["jax"] = _best(lambda: s(jx).block_until_ready(), lambda: None)
        rows["softmax"]["jax"] = _best(lambda: sm(jx).block_until_ready(), lambda: None)
    return rows


def _matmul(tf, peers, n=4096):
    rng = np.random.default_rng(3)
    a = tf.constant(rng.standard_normal((n, n)).astype(np.float32))
    b = tf.constant(rng.standard_normal((n, n)).astype(np.float32))
    product = tf.function(lambda a, b: tf.matmul(a, b))
    times = {"tapeflow": _best(lambda: product(a, b), _tapeflow_sync, repeat=10)}
    if "torch" in peers:
        torch = peers["torch"]
        ta, tb = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        times["torch"] = _best(lambda: ta @ tb, torch.cuda.synchronize, repeat=10)
    if "jax" in peers:
        jax = peers["jax"]
        ja, jb = jax.numpy.asarray(a.numpy()), jax.numpy.asarray(b.numpy())
        mm = jax.jit(jax.numpy.matmul)
        times["jax"] = _best(lambda: mm(ja, jb).block_until_ready(), lambda: None, repeat=10)
    return times


def _mlp_step(tf, peers, batch=4096, width=1024):
    rng = np.random.default_rng(4)
    x = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
    y = tf.constant(rng.standard_normal((batch, 1)).astype(np.float32))
    layers = [tf.keras.layers.Dense(width, activation="relu"),
              tf.keras.layers.Dense(width, activation="relu"), tf.keras.layers.Dense(1)]
    opt = tf.keras.optimizers.Adam(1e-3)
    h = x
    for layer in layers:
        h = layer(h)
    variables = [v for layer in layers for v in layer.trainable_variables]

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            h = x
            for layer in layers:
                h = layer(h)
            loss = tf.reduce_mean(tf.square(h - y))
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    times = {"tapeflow": _best(lambda: step(x, y), _tapeflow_sync, repeat=10)}
    if "torch" in peers:
        torch = peers["torch"]
        model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                                    torch.nn.Linear(width, width), torch.nn.ReLU(),
                                    torch.nn.Linear(width, 1)).cuda()
        topt = torch.optim.Adam(model.parameters(), 1e-3)
        tx, ty = torch.randn(batch, width, device="cuda"), torch.randn(batch, 1, device="cuda")

        def torch_step():
            topt.zero_grad()
            loss = ((model(tx) - ty) ** 2).mean()
            loss.backward()
            topt.step()
        times["torch eager"] = _best(torch_step, torch.cuda.synchronize, repeat=10)
    return times


def _rnn_gradient(tf, peers, steps=100, batch=64, width=256):
    rng = np.random.default_rng(5)
    xs = tf.constant(rng.standard_normal((steps, batch, width)).astype(np.float32) * 0.1)
    w = tf.Variable(rng.standard_normal((width, width)).astype(np.float32) * 0.05)

    @tf.function
    def grad(xs):
        with tf.GradientTape() as tape:
            h = tf.zeros((batch, width))
            for t in range(steps):
                h = tf.tanh(tf.matmul(h, w) + xs[t])
            loss = tf.reduce_sum(h)
        return tape.gradient(loss, w)

    times = {"tapeflow": _best(lambda: grad(xs), _tapeflow_sync, repeat=5)}
    if "torch" in peers:
        torch = peers["torch"]
        txs = torch.randn(steps, batch, width, device="cuda") * 0.1
        tw = (torch.randn(width, width, device="cuda") * 0.05).requires_grad_()

        def torch_grad():
            h = torch.zeros(batch, width, device="cuda")
            for t in range(steps):
                h = torch.tanh(h @ tw + txs[t])
            (g,) = torch.autograd.grad(h.sum(), tw)
            return g
        times["torch"] = _best(torch_grad, torch.cuda.synchronize, repeat=5)
    return times


def _launch_overhead(tf, peers, kernels=100):
    x = tf.constant(np.ones(32, np.float32))

    def chain(x):
        for _ in range(kernels):
            x = tf.math.floordiv(x, 1.0)  # not fused across: each op its own launch
        return x

    eager = _best(lambda: chain(x), _tapeflow_sync, repeat=5) / kernels
    times = {"tapeflow eager op": eager}
    if "torch" in peers:
        torch = peers["torch"]
        tx = torch.ones(32, device="cuda")

        def torch_chain():
            y = tx
            for _ in range(kernels):
                y = torch.floor_divide(y, 1.0)
            return y
        times["torch"] = _best(torch_chain, torch.cuda.synchronize, repeat=5) / kernels
    return times


_FIRST_CALL = """
import time, numpy as np
start = time.perf_counter()
import tapeflow as tf
x = tf.constant(np.ones((256, 256), np.float32))
w = tf.Variable(np.ones((256, 256), np.float32))
@tf.function
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * 0.5)
    return tape.gradient(loss, w)
step(x).numpy()
print(time.perf_counter() - start)
"""


def _first_call(tf, peers):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache,
                   TAPEFLOW_COMPILE="sync")
        run = [sys.executable, "-c", _FIRST_CALL]
        cold = float(subprocess.run(run, env=env, capture_output=True, text=True,
                                    check=True).stdout.split()[-1])
        warm = float(subprocess.run(run, env=env, capture_output=True, text=True,
                                    check=True).stdout.split()[-1])
    return {"empty cache": cold, "warm cache": warm}


def _fmt(seconds):
    if seconds >= 1:
        return f"{seconds:8.2f} s "
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds * 1e6:8.1f} us"


def _measured(name, workload, tf, peers):
    """{row name: times} of one workload, printed as soon as it is measured. A row that
    fails prints its error and the table goes on: a GPU is often lent for minutes only."""
    try:
        result = workload(tf, peers)
    except Exception:  # noqa: BLE001 -- reported, and the exit status says so
        traceback.print_exc()
        print(f"{name:32s} failed: {traceback.format_exc().splitlines()[-1]}", flush=True)
        return None
    rows = result if isinstance(next(iter(result.values())), dict) else {name: result}
    for row, times in rows.items():
        columns = "  ".join(f"{k}: {_fmt(v)}" for k, v in times.items())
        print(f"{row:32s} {columns}", flush=True)
    return rows


def _reduction_rows(tf, peers):
    return {f"{name}, 4096x4096": times for name, times in _reductions(tf, peers).items()}


def main():
    card = _require_gpu()
    if "--no-tests" not in sys.argv:
        _run_tests()
    import tapeflow as tf
    peers = _peers()
    print(f"\nGPU: {card}; peers: {', '.join(peers) or 'none'}; {time.strftime('%Y-%m-%d')}",
          flush=True)
    # The unrolled RNN compiles the most kernels: it goes last.
    workloads = [("elementwise gradient, 4M", _elementwise_gradient),
                 ("fused chain, 64M", _fused_chain), ("reductions", _reduction_rows),
                 ("matmul 4096^3 float32", _matmul), ("MLP step, batch 4096", _mlp_step),
                 ("launch overhead per kernel", _launch_overhead),
                 ("first call", _first_call), ("RNN gradient, T=100", _rnn_gradient)]
    measured = [_measured(name, workload, tf, peers) for name, workload in workloads]
    chain = measured[1] and measured[1]["fused chain, 64M"]
    if chain:
        n_bytes = 2 * 4 * (1 << 26)  # one read and one write per element
        copies = [chain["copy (x + 0)"]] + ([chain["torch copy"]] if "torch copy" in chain
                                             else [])
        print(f"\nfused chain: {n_bytes / chain['tapeflow'] / 1e9:.0f} GB/s, "
              f"{min(copies) / chain['tapeflow']:.0%} of the fastest copy's bandwidth "
              f"({n_bytes / min(copies) / 1e9:.0f} GB/s)")
    if None in measured:
        sys.exit("perf/gpu.py: some rows failed (above)")


if __name__ == "__main__":
    main()
