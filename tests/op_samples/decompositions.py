"""Samplers and error cases for ops/decompositions.py. Inputs are well conditioned, so
that finite differences are meaningful: symmetric positive definite matrices for
Cholesky, well separated eigenvalues and singular values for eigh and svd, a dominant
diagonal (full rank, pivots far from 0) for qr and slogdet."""

import numpy as np
from hypothesis import strategies as st

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import decompositions as dec

from .common import Case, floats, seed
from .common import constant as _c


def _batch(draw):
    return tuple(draw(st.lists(st.integers(1, 2), max_size=2)))


def _side(draw):
    return draw(st.integers(1, 4))


def _orthogonal(rng, batch, n):
    q, r = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def _spread(rng, batch, k, low):
    """k values per matrix, at least 0.3 apart, from `low` on, in random order."""
    steps = 0.3 + rng.uniform(0.0, 0.5, batch + (k,))
    return rng.permutation(low + np.cumsum(steps, axis=-1), axis=-1)


def _cholesky(draw):
    batch, n = _batch(draw), _side(draw)
    b = floats(draw, batch + (n, n), (-1.0, 1.0))
    spd = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
    return Case([spd], symmetric=(0,))


def _qr(draw):
    m, n = _side(draw), _side(draw)
    full = draw(st.booleans())
    a = floats(draw, _batch(draw) + (m, n), (-0.5, 0.5)) + 2.0 * np.eye(m, n)
    # TensorFlow has no gradient for the complete Q of a tall matrix (not unique).
    return Case([a], {"full_matrices": full}, wrt=() if full and m > n else None)


def _svd(draw):
    rng = np.random.default_rng(seed(draw))
    batch, m, n = _batch(draw), _side(draw), _side(draw)
    k = min(m, n)
    s = _spread(rng, batch, k, 0.5)
    u = _orthogonal(rng, batch, m)[..., :k]
    v = _orthogonal(rng, batch, n)[..., :k]
    a = (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)
    full, compute_uv = draw(st.booleans()), draw(st.booleans())
    attrs = {"compute_uv": compute_uv, "full_matrices": full}
    # TensorFlow's gradient of full u and v covers |m - n| <= 1 only.
    return Case([a], attrs, wrt=() if compute_uv and full and abs(m - n) > 1 else None)


def _eigh(draw):
    """Symmetric matrices with separated eigenvalues, and noise above the diagonal that
    the op must not read."""
    rng = np.random.default_rng(seed(draw))
    batch, n = _batch(draw), _side(draw)
    q = _orthogonal(rng, batch, n)
    a = (q * _spread(rng, batch, n, -1.0)[..., None, :]) @ np.swapaxes(q, -1, -2)
    a = a + np.triu(rng.uniform(-1.0, 1.0, batch + (n, n)), 1)
    return Case([a], {"compute_v": draw(st.booleans())})


def _slogdet(draw):
    batch, n = _batch(draw), _side(draw)
    a = floats(draw, batch + (n, n), (-1.0, 1.0))
    return Case([a + (n + 1.0) * np.eye(n) * draw(st.sampled_from([1.0, -1.0]))])


SAMPLES = {
    "Cholesky": _cholesky,
    "Qr": _qr,
    "Svd": _svd,
    "SelfAdjointEigV2": _eigh,
    "LogMatrixDeterminant": _slogdet,
}

ERRORS = [
    (lambda: dec.cholesky(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square. \[Op:Cholesky\]"),
    (lambda: dec.cholesky(tf.ones([3])), InvalidArgumentError,
     r"Input tensor 0 must have rank >= 2, got 1 \[Op:Cholesky\]"),
    (lambda: dec.cholesky(_c([[1]])), InvalidArgumentError, r"int32.*\[Op:Cholesky\]"),
    (lambda: dec.qr(tf.ones([3])), InvalidArgumentError,
     r"Input tensor 0 must have rank >= 2, got 1 \[Op:Qr\]"),
    (lambda: dec.qr(_c([[1, 2], [3, 4]])), InvalidArgumentError, r"int32.*\[Op:Qr\]"),
    (lambda: dec.svd(tf.ones([3])), InvalidArgumentError,
     r"Input tensor 0 must have rank >= 2, got 1 \[Op:Svd\]"),
    (lambda: dec.svd(_c([[1, 2], [3, 4]])), InvalidArgumentError, r"int32.*\[Op:Svd\]"),
    (lambda: dec.eigh(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square. \[Op:SelfAdjointEigV2\]"),
    (lambda: dec.eigvalsh(tf.ones([3])), InvalidArgumentError,
     r"Input tensor 0 must have rank >= 2, got 1 \[Op:SelfAdjointEigV2\]"),
    (lambda: dec.eigvalsh(_c([[1, 2], [3, 4]])), InvalidArgumentError,
     r"int32.*\[Op:SelfAdjointEigV2\]"),
    (lambda: dec.slogdet(tf.ones([2, 3])), InvalidArgumentError,
     r"Input matrix must be square. \[Op:LogMatrixDeterminant\]"),
    (lambda: dec.slogdet(_c([[1]])), InvalidArgumentError,
     r"int32.*\[Op:LogMatrixDeterminant\]"),
    (lambda: dec.pinv(_c([[1, 2], [2, 4]])), TypeError,
     r"Input `a` must have `float`-like `dtype` \(saw int32\)."),
    (lambda: dec.lstsq(tf.ones([3, 2]), tf.ones([2, 1])), InvalidArgumentError,
     r"Matrix size-incompatible: In\[0\]: \[3,2\], In\[1\]: \[2,1\] \[Op:MatMul\]"),
    (lambda: dec.lstsq(_c([[1, 2]]), _c([[1]])), InvalidArgumentError,
     r"int32.*\[Op:Cholesky\]"),
]
