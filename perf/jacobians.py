"""Jacobians, float32, eager tape and compiled tf.function vs hand-written NumPy (and JAX
jit, PyTorch torch.func when installed):
- tape.jacobian of y = tanh(A@x), A (256, 256): a (256, 256) result;
- tape.batch_jacobian of y = tanh(x@W), x (64, 32), W (32, 32): (64, 32, 32) (peers:
  "jax jit(vmap)" is jit(vmap(jacrev)) and "torch vmap" is torch.func.vmap(jacrev) of
  one example);
- the Hessian of f(x) = logsumexp(A@x) + 0.5*sum(x*x), A (200, 100), by nested tapes:
  the jacobian of a gradient, (100, 100)."""

import time

import numpy as np

import tapeflow as tf

from common import Result, best_time

JAC_N = 256
BATCH, FEATURES = 64, 32
HESS_M, HESS_N = 200, 100
RTOL, ATOL = 1e-4, 1e-5


def timed(fn):
    """best_time, with fewer rounds when one call is slow (over 50 ms)."""
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    return best_time(fn, repeat=7 if once < 0.05 else 3)


def check(got, want, what):
    np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL, atol=ATOL, err_msg=what)


# --- jacobian of tanh(A@x) ---------------------------------------------------------------

def jacobian_data(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1 / np.sqrt(JAC_N), (JAC_N, JAC_N)).astype(np.float32)
    x = rng.normal(size=JAC_N).astype(np.float32)
    return a, x


def tapeflow_jacobian(a, x):
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.tanh(tf.linalg.matvec(a, x))
    return t.jacobian(y, x)


def numpy_jacobian(a, x):
    y = np.tanh(a @ x)
    return (1 - y ** 2)[:, None] * a


# --- batch_jacobian of tanh(x@W) ---------------------------------------------------------

def batch_data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(BATCH, FEATURES)).astype(np.float32)
    w = rng.normal(0, 1 / np.sqrt(FEATURES), (FEATURES, FEATURES)).astype(np.float32)
    return x, w


def tapeflow_batch_jacobian(x, w):
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.tanh(x @ w)
    return t.batch_jacobian(y, x)


def numpy_batch_jacobian(x, w):
    y = np.tanh(x @ w)
    return (1 - y ** 2)[:, :, None] * w.T[None]


# --- Hessian of logsumexp(A@x) + 0.5*sum(x*x) --------------------------------------------

def hessian_data(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1 / np.sqrt(HESS_N), (HESS_M, HESS_N)).astype(np.float32)
    x = rng.normal(size=HESS_N).astype(np.float32)
    return a, x


def tapeflow_hessian(a, x):
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            f = tf.reduce_logsumexp(tf.linalg.matvec(a, x)) + 0.5 * tf.reduce_sum(x * x)
        g = t1.gradient(f, x)
    return t2.jacobian(g, x)


def numpy_hessian(a, x):
    z = a @ x
    e = np.exp(z - z.max())
    p = e / e.sum()
    return a.T @ (np.diag(p) - np.outer(p, p)) @ a + np.eye(HESS_N, dtype=np.float32)


# --- the table ---------------------------------------------------------------------------

def _tapeflow_rows(name, body, args, want, t_np, fn_note, eager_note=""):
    """Checks the eager body and its tf.function against `want`, then times both."""
    compiled = tf.function(body)
    check(body(*args).numpy(), want, f"{name}: tapeflow eager")
    check(compiled(*args).numpy(), want, f"{name}: tapeflow fn")
    return [Result(name, "tapeflow fn", timed(lambda: compiled(*args)), t_np, fn_note),
            Result(name, "tapeflow eager", timed(lambda: body(*args)), t_np, eager_note)]


def _numpy_rows(name, numpy_fn, *arrays):
    """The reference: (its result, its time, the table's first row)."""
    want = numpy_fn(*arrays)
    t_np = timed(lambda: numpy_fn(*arrays))
    return want, t_np, [Result(name, "numpy", t_np, t_np)]


def _peer_row(name, impl, call, want, t_np):
    check(call(), want, f"{name}: {impl}")
    return Result(name, impl, timed(call), t_np)


def run_jacobian(peers):
    a, x = jacobian_data()
    name = f"jacobian tanh(A@x), {JAC_N}x{JAC_N}"
    want, t_np, results = _numpy_rows(name, numpy_jacobian, a, x)
    results += _tapeflow_rows(name, tapeflow_jacobian, (tf.constant(a), tf.constant(x)),
                              want, t_np, "target <= 1.0x jax jit(jacrev)",
                              "target <= 1.0x torch.func.jacrev")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        jac = jax.jit(jax.jacrev(lambda x, a: jnp.tanh(a @ x)))
        ja, jx = jnp.asarray(a), jnp.asarray(x)
        results.append(_peer_row(name, "jax jit(jacrev)",
                                 lambda: jax.block_until_ready(jac(jx, ja)), want, t_np))
    if "torch" in peers:
        torch = peers["torch"]
        ta, tx = torch.from_numpy(a), torch.from_numpy(x)
        jac = torch.func.jacrev(lambda x: torch.tanh(ta @ x))
        results.append(_peer_row(name, "torch jacrev", lambda: jac(tx).numpy(), want, t_np))
    return results


def run_batch_jacobian(peers):
    x, w = batch_data()
    name = f"batch_jacobian tanh(x@W), {BATCH}x{FEATURES}x{FEATURES}"
    want, t_np, results = _numpy_rows(name, numpy_batch_jacobian, x, w)
    results += _tapeflow_rows(name, tapeflow_batch_jacobian, (tf.constant(x), tf.constant(w)),
                              want, t_np, "target <= 1.0x jax jit(vmap(jacrev))")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        jac = jax.jit(jax.vmap(jax.jacrev(lambda xi, w: jnp.tanh(xi @ w)), in_axes=(0, None)))
        jx, jw = jnp.asarray(x), jnp.asarray(w)
        results.append(_peer_row(name, "jax jit(vmap)",
                                 lambda: jax.block_until_ready(jac(jx, jw)), want, t_np))
    if "torch" in peers:
        torch = peers["torch"]
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        jac = torch.func.vmap(torch.func.jacrev(lambda xi: torch.tanh(xi @ tw)))
        results.append(_peer_row(name, "torch vmap", lambda: jac(tx).numpy(), want, t_np))
    return results


def run_hessian(peers):
    a, x = hessian_data()
    name = f"hessian lse(A@x)+x.x/2, {HESS_M}x{HESS_N}"
    want, t_np, results = _numpy_rows(name, numpy_hessian, a, x)
    results += _tapeflow_rows(name, tapeflow_hessian, (tf.constant(a), tf.constant(x)),
                              want, t_np, "target <= 1.0x jax jit(hessian)",
                              "target <= 1.0x torch hessian")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        hess = jax.jit(jax.hessian(
            lambda x, a: jax.nn.logsumexp(a @ x) + 0.5 * jnp.sum(x * x)))
        ja, jx = jnp.asarray(a), jnp.asarray(x)
        results.append(_peer_row(name, "jax jit(hessian)",
                                 lambda: jax.block_until_ready(hess(jx, ja)), want, t_np))
    if "torch" in peers:
        torch = peers["torch"]
        ta, tx = torch.from_numpy(a), torch.from_numpy(x)

        def f(x):
            return torch.logsumexp(ta @ x, 0) + 0.5 * torch.sum(x * x)
        results.append(_peer_row(name, "torch hessian",
                                 lambda: torch.autograd.functional.hessian(f, tx).numpy(),
                                 want, t_np))
    return results


def run(peers):
    return run_jacobian(peers) + run_batch_jacobian(peers) + run_hessian(peers)
