"""Jacobians, float32, eager tape and compiled tf.function vs hand-written NumPy (and JAX
jit, PyTorch torch.func when installed):
- tape.jacobian of y = tanh(A@x), A (256, 256): a (256, 256) result;
- tape.batch_jacobian of y = tanh(x@W), x (64, 32), W (32, 32): (64, 32, 32) (peers:
  "jax jit(vmap)" is jit(vmap(jacrev)) and "torch vmap" is torch.func.vmap(jacrev) of
  one example);
- the Hessian of f(x) = logsumexp(A@x) + 0.5*sum(x*x), A (200, 100), by nested tapes:
  the jacobian of a gradient, (100, 100)."""

import numpy as np

import tapeflow as tf

from common import Result, best_times

JAC_N = 256
BATCH, FEATURES = 64, 32
HESS_M, HESS_N = 200, 100
RTOL, ATOL = 1e-4, 1e-5


def check(got, want, what):
    np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL, atol=ATOL, err_msg=what)


# --- jacobian of tanh(A@x) ---------------------------------------------------------------

def matrix_and_vector(rows, cols, seed=0):
    """A (rows, cols) matrix scaled by 1/sqrt(cols) and a standard normal vector of cols."""
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1 / np.sqrt(cols), (rows, cols)).astype(np.float32)
    x = rng.normal(size=cols).astype(np.float32)
    return a, x


def jacobian_data(seed=0):
    return matrix_and_vector(JAC_N, JAC_N, seed)


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
    return matrix_and_vector(HESS_M, HESS_N, seed)


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

def _table(name, want, rows):
    """rows: (impl, call, note), the NumPy reference first. Checks every call's result
    against `want`, then times them all, interleaved."""
    for impl, call, _ in rows:
        check(call(), want, f"{name}: {impl}")
    times = best_times({impl: call for impl, call, _ in rows})
    t_np = times["numpy"]
    return [Result(name, impl, times[impl], t_np, note) for impl, _, note in rows]


def _tapeflow_rows(body, args, fn_note, eager_note=""):
    compiled = tf.function(body)
    return [("tapeflow fn", lambda: compiled(*args).numpy(), fn_note),
            ("tapeflow eager", lambda: body(*args).numpy(), eager_note)]


def run_jacobian(peers):
    a, x = jacobian_data()
    rows = [("numpy", lambda: numpy_jacobian(a, x), "")]
    rows += _tapeflow_rows(tapeflow_jacobian, (tf.constant(a), tf.constant(x)),
                           "target <= 1.0x jax jit(jacrev)", "target <= 1.0x torch.func.jacrev")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        jac = jax.jit(jax.jacrev(lambda x, a: jnp.tanh(a @ x)))
        ja, jx = jnp.asarray(a), jnp.asarray(x)
        rows.append(("jax jit(jacrev)", lambda: jax.block_until_ready(jac(jx, ja)), ""))
    if "torch" in peers:
        torch = peers["torch"]
        ta, tx = torch.from_numpy(a), torch.from_numpy(x)
        torch_jac = torch.func.jacrev(lambda x: torch.tanh(ta @ x))
        rows.append(("torch jacrev", lambda: torch_jac(tx).numpy(), ""))
    return _table(f"jacobian tanh(A@x), {JAC_N}x{JAC_N}", numpy_jacobian(a, x), rows)


def run_batch_jacobian(peers):
    x, w = batch_data()
    rows = [("numpy", lambda: numpy_batch_jacobian(x, w), "")]
    rows += _tapeflow_rows(tapeflow_batch_jacobian, (tf.constant(x), tf.constant(w)),
                           "target <= 1.0x jax jit(vmap(jacrev))")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        jac = jax.jit(jax.vmap(jax.jacrev(lambda xi, w: jnp.tanh(xi @ w)), in_axes=(0, None)))
        jx, jw = jnp.asarray(x), jnp.asarray(w)
        rows.append(("jax jit(vmap)", lambda: jax.block_until_ready(jac(jx, jw)), ""))
    if "torch" in peers:
        torch = peers["torch"]
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        torch_jac = torch.func.vmap(torch.func.jacrev(lambda xi: torch.tanh(xi @ tw)))
        rows.append(("torch vmap", lambda: torch_jac(tx).numpy(), ""))
    return _table(f"batch_jacobian tanh(x@W), {BATCH}x{FEATURES}x{FEATURES}",
                  numpy_batch_jacobian(x, w), rows)


def run_hessian(peers):
    a, x = hessian_data()
    rows = [("numpy", lambda: numpy_hessian(a, x), "")]
    rows += _tapeflow_rows(tapeflow_hessian, (tf.constant(a), tf.constant(x)),
                           "target <= 1.0x jax jit(hessian)", "target <= 1.0x torch hessian")
    if "jax" in peers:
        jax = peers["jax"]
        jnp = jax.numpy
        hess = jax.jit(jax.hessian(
            lambda x, a: jax.nn.logsumexp(a @ x) + 0.5 * jnp.sum(x * x)))
        ja, jx = jnp.asarray(a), jnp.asarray(x)
        rows.append(("jax jit(hessian)", lambda: jax.block_until_ready(hess(jx, ja)), ""))
    if "torch" in peers:
        torch = peers["torch"]
        ta, tx = torch.from_numpy(a), torch.from_numpy(x)

        def f(x):
            return torch.logsumexp(ta @ x, 0) + 0.5 * torch.sum(x * x)
        rows.append(("torch hessian",
                     lambda: torch.autograd.functional.hessian(f, tx).numpy(), ""))
    return _table(f"hessian lse(A@x)+x.x/2, {HESS_M}x{HESS_N}", numpy_hessian(a, x), rows)


def run(peers):
    return run_jacobian(peers) + run_batch_jacobian(peers) + run_hessian(peers)
