"""tf.linalg.expm: the matrix exponential by scaling and squaring of a Padé approximant
(Higham 2005), composed of products, one solve, a cond and a while loop exactly as
TensorFlow writes it in Python (tensorflow/python/ops/linalg/linalg_impl.py), so its
values, its gradient (through the loop) and its compiled code come from those ops."""

import numpy as np

from . import rules
from .control import cond, while_loop
from .creation import eye, fill
from .elementwise import abs, cast, floor, less, log, maximum, pow, where
from .linalg import matmul, solve
from .nonfinite import is_finite
from .reduce import reduce_max, reduce_sum
from .shape import concat, reshape, shape

# Numerator coefficients b of the Padé approximants of order 3 ... 13 (Eigen's).
_PADE = {
    3: (120.0, 60.0, 12.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
         1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
         33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0),
}

# Per precision: the largest 1-norm each lower order serves, the norm the top order
# serves (above it the matrix is scaled by a power of two), and the orders.
_SCHEDULES = {
    "single": ((4.258730016922831e-001, 1.880152677804762e+000), 3.925724783138660,
               (3, 5, 7)),
    "double": ((1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                2.097847961257068e+000), 5.371920351148152, (3, 5, 7, 9, 13)),
}


def _pade(matrix, order):
    """(u, v), the odd and even parts of the order-`order` approximant: exp(A) is about
    (v - u)^-1 (v + u)."""
    b = _PADE[order]
    ident = eye(matrix._shape[-1], dtype=matrix.dtype)
    powers = [ident, matmul(matrix, matrix)]  # A^0, A^2, A^4, A^6 ...
    top = 3 if order == 13 else order // 2
    while len(powers) <= top:
        powers.append(matmul(powers[-1], powers[1]))
    if order == 13:
        a2, a4, a6 = powers[1], powers[2], powers[3]
        tmp_u = (matmul(a6, a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v = (matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
             + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
        return matmul(matrix, tmp_u), v
    tmp_u = powers[top]
    for k in range(top - 1, -1, -1):
        tmp_u = tmp_u + b[2 * k + 1] * powers[k]
    v = b[order - 1] * powers[top]
    for k in range(top - 1, -1, -1):
        v = v + b[2 * k] * powers[k]
    return matmul(matrix, tmp_u), v


def expm(input, name=None):
    """The matrix exponential of each innermost square matrix (tf.linalg.expm):
    TensorFlow's Padé approximant of order 3 to 7 (half and single precision) or 3 to 13
    (double), chosen by the matrix's 1-norm, with scaling and squaring; a non-finite
    input gives NaN.

    >>> import tapeflow as tf
    >>> tf.linalg.expm(tf.constant([[0., 1.], [0., 0.]])).numpy()
    array([[1., 1.],
           [0., 1.]], dtype=float32)
    """
    matrix = rules.as_tensor(input)
    if not rules.is_float(matrix.dtype):
        raise ValueError(f"tf.linalg.expm does not support matrices of type "
                         f"{matrix.dtype!r}")
    if len(matrix._shape) < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {len(matrix._shape)} "
                         f"for 'tf.linalg.expm'")
    if tuple(matrix._shape[-2:]) == (0, 0):
        return matrix
    batch_shape, inner = matrix._shape[:-2], matrix._shape[-2:]
    if None in matrix._shape:
        batch_shape, inner = shape(matrix)[:-2], shape(matrix)[-2:]
    matrix = reshape(matrix, [-1] + list(matrix._shape[-2:]))
    l1_norm = reduce_max(reduce_sum(abs(matrix), axis=1), axis=-1)[:, None, None]

    def const(x):
        return np.array(x, matrix.dtype._np)

    bounds, maxnorm, orders = _SCHEDULES["double" if matrix.dtype._np == np.float64
                                         else "single"]
    squarings = maximum(floor(log(l1_norm / const(maxnorm)) / log(const(2.0))), const(0))
    scaled = matrix / cast(pow(const(2.0), squarings), matrix.dtype)
    approximants = [_pade(matrix, order) for order in orders[:-1]]
    approximants.append(_pade(scaled, orders[-1]))

    def chosen(part):
        result = approximants[-1][part]
        for bound, lower in zip(bounds[::-1], approximants[-2::-1]):
            result = where(less(l1_norm, const(bound)), lower[part], result)
        return result

    u, v = chosen(0), chosen(1)
    finite = is_finite(reduce_max(l1_norm))
    result = cond(finite, lambda: solve(-u + v, u + v),
                  lambda: fill(shape(matrix), const(np.nan)))
    max_squarings = reduce_max(squarings)

    def more(i, _):
        return cond(finite, lambda: less(i, max_squarings), lambda: False)

    def square_once(i, r):
        return i + 1, where(less(i, squarings), matmul(r, r), r)

    _, result = while_loop(more, square_once, [const(0.0), result])
    if isinstance(batch_shape, tuple):  # the loop may have relaxed result's shape
        return reshape(result, batch_shape + inner)
    return reshape(result, concat([batch_shape, inner], axis=0))


__all__ = ["expm"]
