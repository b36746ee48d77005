"""`tf.linalg`: matrix products, solves, inverses, determinants, diagonals and norms."""

from .ops.creation import eye  # noqa: F401
from .ops.linalg import (  # noqa: F401
    det, diag, diag_part, einsum, global_norm, inv, matmul, matvec, norm, solve, tensordot, trace)
from .ops.nn import l2_normalize  # noqa: F401
