"""`tf.linalg`: matrix products, solves, inverses, determinants, diagonals and norms."""

from .ops.creation import eye  # noqa: F401
from .ops.linalg import (  # noqa: F401
    det, diag, diag_part, einsum, global_norm, inv, matmul, matvec, norm, solve, tensordot, trace)
from .ops.nn import l2_normalize  # noqa: F401
from .ops.decompositions import (  # noqa: F401
    cholesky, eigh, eigvalsh, logdet, lstsq, pinv, qr, slogdet, svd)
from .ops.matrix import (  # noqa: F401
    adjoint, band_part, cholesky_solve, cross, matrix_transpose, set_diag, triangular_solve)
from .ops.linalg_compositions import (  # noqa: F401
    banded_triangular_solve, matrix_rank, normalize, tensor_diag, tensor_diag_part)
from .ops.lu import lu, lu_matrix_inverse, lu_reconstruct, lu_solve  # noqa: F401
from .ops.matrix_exponential import expm  # noqa: F401
from .ops.matrix_square_root import sqrtm  # noqa: F401
from .ops.tridiagonal import (  # noqa: F401
    eigh_tridiagonal, tridiagonal_matmul, tridiagonal_solve)
from .ops.linear_operator import (  # noqa: F401
    LinearOperator, LinearOperatorAdjoint, LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular, LinearOperatorComposition, LinearOperatorDiag,
    LinearOperatorFullMatrix, LinearOperatorHouseholder, LinearOperatorIdentity,
    LinearOperatorInversion, LinearOperatorKronecker, LinearOperatorLowerTriangular,
    LinearOperatorLowRankUpdate, LinearOperatorPermutation, LinearOperatorScaledIdentity,
    LinearOperatorTridiag, LinearOperatorToeplitz, LinearOperatorZeros)
from .ops.linear_operator import (  # noqa: F401
    LinearOperatorCirculant, LinearOperatorCirculant2D, LinearOperatorCirculant3D)


class experimental:  # noqa: N801 - TensorFlow's namespace name
    """`tf.linalg.experimental`."""

    from .ops.linear_operator.conjugate_gradient import conjugate_gradient
