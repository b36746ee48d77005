"""MatrixSquareRoot (tf.linalg.sqrtm): the principal square root of each innermost
square matrix by the Schur method, as TensorFlow's Eigen kernel, with TensorFlow's
gradient (the Sylvester equation R dR + dR R = dA solved as a Kronecker system)."""

import warnings

import numpy as np

from . import rules
from .creation import eye, zeros_like
from .decompositions import _square_float_matrix, no_half_kernel
from .dynamic import input_dims, reshaped
from .linalg import _wide, solve
from .matrix import matrix_transpose
from .registry import OpDef, bind, register


def _sqrtm_infer(input):
    _square_float_matrix("MatrixSquareRoot", input)
    no_half_kernel("MatrixSquareRoot", input)
    return input._shape, input.dtype


def _sqrtm_kernel(input):
    """A real matrix with a negative real eigenvalue has no real principal root:
    TensorFlow's real Schur kernel gives NaN throughout, and so does this one."""
    from scipy.linalg import sqrtm as schur_sqrtm  # here: scipy.linalg is slow to import
    n = input.shape[-1]
    flat = input.reshape((-1, n, n))
    out = np.empty_like(flat)
    for b, a in enumerate(flat):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root = schur_sqrtm(a) if n else a
        out[b] = np.nan if np.iscomplexobj(root) or not np.all(np.isfinite(root)) else root
    return out.reshape(input.shape)


def _kronecker(b1, b2, batch, n):
    """The Kronecker products of two stacks of n x n matrices (batch: their dimensions)."""
    product = reshaped(b1, batch + (n, 1, n, 1)) * reshaped(b2, batch + (1, n, 1, n))
    return reshaped(product, batch + (n * n, n * n))


def _sqrtm_grad(ctx, grad):
    # With R = sqrtm(A): dA = R dR + dR R, so vec(dR^T) solves (I (x) R^T + R (x) I)
    # vec(dR^T) = vec(dA^T) (TensorFlow's _MatrixSquareRootGrad).
    root = ctx.out
    dims = input_dims(ctx, 0)
    batch, n = dims[:-2], dims[-1]
    ident = eye(n, dtype=root.dtype)
    system = (_kronecker(ident + zeros_like(root), matrix_transpose(root), batch, n)
              + _kronecker(root, ident + zeros_like(root), batch, n))
    solved = solve(system, reshaped(matrix_transpose(grad), batch + (n * n, 1)))
    return (matrix_transpose(reshaped(solved, dims)),)


MATRIX_SQUARE_ROOT = register(OpDef(
    name="MatrixSquareRoot", args=("input",), infer=_sqrtm_infer, eager=_wide(_sqrtm_kernel),
    saves=("out",), grad=_sqrtm_grad))


def sqrtm(input, name=None):
    """The principal square root of each innermost square matrix
    (tf.linalg.sqrtm, tf.linalg.matrix_square_root); NaN where a real matrix has a
    negative real eigenvalue, as TensorFlow gives.

    >>> import tapeflow as tf
    >>> tf.linalg.sqrtm(tf.constant([[4., 0.], [0., 9.]])).numpy()
    array([[2., 0.],
           [0., 3.]], dtype=float32)
    """
    return bind(MATRIX_SQUARE_ROOT, (rules.as_tensor(input),))


__all__ = ["sqrtm"]
