"""`tf.math`: the elementwise, reduction and segment ops under TensorFlow's names."""

from .ops.elementwise import (  # noqa: F401
    abs, add, ceil, cos, divide, equal, erf, erfc, exp, expm1, floor, floordiv, floormod,
    greater, greater_equal, less, less_equal, log, log1p, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter, not_equal,
    pow, realdiv, reciprocal, round, rsqrt, sigmoid, sign, sin, softplus, sqrt, square,
    squared_difference, subtract, tan, tanh, truediv, xlogy)
from .ops.nonfinite import (  # noqa: F401
    divide_no_nan, is_finite, is_inf, is_nan, multiply_no_nan, reciprocal_no_nan, xdivy,
    xlog1py)
from .ops.sorting import top_k  # noqa: F401
from .ops.approx_top_k import approx_max_k, approx_min_k  # noqa: F401
from .ops.special import (  # noqa: F401
    bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, betainc, digamma, erfcinv, erfinv, igamma,
    igammac, lbeta, lgamma, ndtri, polygamma, zeta)
from .ops.statistics import (  # noqa: F401
    add_n, polyval, reduce_euclidean_norm, reduce_std, reduce_variance)
from .ops.elementwise import rint, scalar_mul  # noqa: F401
from .ops.nn import in_top_k, softsign  # noqa: F401
from .ops.reduce import cumulative_logsumexp  # noqa: F401
from .ops.segments import unsorted_segment_mean, unsorted_segment_sqrt_n  # noqa: F401
from .ops.complex_parts import angle, imag, real  # noqa: F401
from .ops.elementwise import conj  # noqa: F401
from .ops.rearrange import invert_permutation  # noqa: F401
from .ops.segment_reductions import (  # noqa: F401
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, unsorted_segment_max,
    unsorted_segment_min, unsorted_segment_prod)
from .ops.statistics import (  # noqa: F401
    accumulate_n, is_non_decreasing, is_strictly_increasing, zero_fraction)
from .ops.trigonometric import (  # noqa: F401
    acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh)
from .ops.nn import l2_normalize, log_sigmoid, log_softmax, softmax  # noqa: F401
from .ops.reduce import (  # noqa: F401
    argmax, argmin, count_nonzero, cumprod, cumsum, reduce_all, reduce_any, reduce_logsumexp,
    reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum)
from .ops.indexing import unsorted_segment_sum  # noqa: F401
from .ops.counting import bincount, confusion_matrix  # noqa: F401


def _special_namespace():
    """tf.math.special: TensorFlow's module of Bessel functions, one namespace here."""
    import types
    namespace = types.ModuleType(f"{__name__}.special", _special_namespace.__doc__)
    for fn in (bessel_i0, bessel_i0e, bessel_i1, bessel_i1e):
        setattr(namespace, fn.__name__, fn)
    return namespace


special = _special_namespace()
