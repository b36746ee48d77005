"""The two large products of the MLP benchmark alone, compiled: x @ W (128x784 @ 784x256)
and x.T @ dy (784x128 @ 128x256), float32, against NumPy's np.dot (OpenBLAS), and JAX jit /
PyTorch when installed. With one BLAS thread on an AVX-512 CPU, tapeflow's kernels run
its own matrix product (backends/microgemm.py); elsewhere they call OpenBLAS."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

BATCH, INPUT, HIDDEN = 128, 784, 256


def _rows(name, fn, numpy_fn, jax_fn, torch_fn, operands, peers):
    tensors = [tf.constant(a) for a in operands]
    compiled = tf.function(fn)
    np.testing.assert_allclose(compiled(*tensors).numpy(), numpy_fn(*operands),
                               rtol=1e-4, atol=1e-3)
    calls = {"numpy": lambda: numpy_fn(*operands), "tapeflow fn": lambda: compiled(*tensors)}
    if "jax" in peers:
        jax = peers["jax"]
        jitted = jax.jit(jax_fn)
        arrays = [jax.numpy.asarray(a) for a in operands]
        calls["jax jit"] = lambda: jax.block_until_ready(jitted(*arrays))
    if "torch" in peers:
        torch = peers["torch"]
        torch_arrays = [torch.from_numpy(a) for a in operands]
        calls["torch"] = lambda: torch_fn(*torch_arrays)
    times = best_times(calls)
    return [Result(name, impl, t, times["numpy"]) for impl, t in times.items()]


def run(peers):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, INPUT)).astype(np.float32)
    w = rng.normal(size=(INPUT, HIDDEN)).astype(np.float32)
    dy = rng.normal(size=(BATCH, HIDDEN)).astype(np.float32)
    forward = _rows(f"matmul x@W ({BATCH}x{INPUT}@{INPUT}x{HIDDEN})",
                    lambda a, b: tf.matmul(a, b), np.dot, lambda a, b: a @ b,
                    lambda a, b: a @ b, (x, w), peers)
    backward = _rows(f"matmul x.T@dy ({INPUT}x{BATCH}@{BATCH}x{HIDDEN})",
                     lambda a, b: tf.matmul(a, b, transpose_a=True),
                     lambda a, b: np.dot(a.T, b), lambda a, b: a.T @ b,
                     lambda a, b: a.T @ b, (x, dy), peers)
    return forward + backward
