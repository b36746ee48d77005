"""tf.linalg's LinearOperator family: the base class (base.py), the operators holding
one tensor (basic.py), structured matrices (structured.py) and operators made of other
operators (combined.py)."""

from .base import LinearOperator  # noqa: F401
from .basic import (  # noqa: F401
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from .circulant import LinearOperatorCirculant, LinearOperatorCirculant2D, LinearOperatorCirculant3D  # noqa: F401
from .combined import (  # noqa: F401
    LinearOperatorAdjoint,
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorComposition,
    LinearOperatorInversion,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
)
from .structured import (  # noqa: F401
    LinearOperatorHouseholder,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
)
