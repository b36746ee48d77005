"""Run-time checks as ops: CheckNumerics (tf.debugging.check_numerics) and Assert (what
tf.debugging's assertions become inside tf.function). Both are kept in a traced graph
though nothing reads their output, and raise TensorFlow's InvalidArgumentError when
the values they see are bad, at the call that sees them."""

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .registry import OpDef, bind, register


def _numerics_infer(tensor, message):
    rules.check_dtype_in("CheckNumerics", tensor, rules.is_float, "bfloat16, half, float, double")
    return tensor._shape, tensor.dtype


def numerics_problem(array):
    """'NaN', 'Inf', 'Inf and NaN' (TensorFlow's words for what `array` holds), or None."""
    has_nan, has_inf = bool(np.isnan(array).any()), bool(np.isinf(array).any())
    if has_nan and has_inf:
        return "Inf and NaN"
    return "NaN" if has_nan else ("Inf" if has_inf else None)


def _numerics_kernel(tensor, message):
    problem = numerics_problem(tensor)
    if problem is not None:
        raise InvalidArgumentError(f"{message} : Tensor had {problem} values "
                                   f"[Op:CheckNumerics]", op="CheckNumerics")
    return tensor


_GRADIENT_PROBLEM = ("Not a number (NaN) or infinity (Inf) values detected in gradient. ")

CHECK_NUMERICS = register(OpDef(
    name="CheckNumerics", args=("tensor",), infer=_numerics_infer, eager=_numerics_kernel,
    saves=(), stateful=True, checks=True,
    grad=lambda ctx, dy: (check_numerics(dy, _GRADIENT_PROBLEM + ctx.attrs["message"]),)))


def check_numerics(tensor, message, name=None):
    """`tensor`, after checking it holds no NaN or Inf (InvalidArgumentError naming what
    it found, after `message`). Its gradient is checked the same way.

    >>> import tapeflow as tf
    >>> tf.debugging.check_numerics(tf.constant([1.0, float("nan")]), "x")
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: x : Tensor had NaN values [Op:CheckNumerics]
    """
    return bind(CHECK_NUMERICS, (rules.as_tensor(tensor),), {"message": str(message)})


def _assert_infer(condition, message):
    if not condition.dtype.is_bool or condition._shape not in ((), (1,)):
        raise rules.op_error("Assert", f"In[0] is not a scalar bool: {rules.describe(condition)}")
    return condition._shape, condition.dtype


def _assert_kernel(condition, message):
    if not condition.all():
        raise InvalidArgumentError(f"{message} [Op:Assert]", op="Assert")
    return condition


ASSERT = register(OpDef(
    name="Assert", args=("condition",), infer=_assert_infer, eager=_assert_kernel,
    differentiable=False, stateful=True, checks=True))


def assert_at_run_time(condition, message):
    """An Assert node: raises InvalidArgumentError(message) when a scalar bool
    `condition` is false where it runs."""
    return bind(ASSERT, (rules.as_tensor(condition),), {"message": str(message)})


def ensure_shape(x, shape, name=None):
    """`x`, checked to have `shape` (None: any size; a None shape: any shape), as
    tf.ensure_shape: a known mismatch raises now, a dimension known only when a traced
    function runs is checked then; the result's static shape includes what `shape` says.

    >>> import tapeflow as tf
    >>> tf.ensure_shape(tf.constant([1.0, 2.0]), [3])
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: Shape of tensor input [2] is not compatible with expected shape [3]. [Op:EnsureShape]
    """
    from .dynamic import dynamic_reshape
    from .elementwise import equal
    from .reduce import reduce_all
    from .shape import shape as shape_of
    x = rules.as_tensor(x)
    if shape is None:
        return x
    expected = [None if d is None else int(d) for d in shape]
    actual = list(x._shape)
    problem = (f"Shape of tensor input {rules.kernel_dims(actual)} is not compatible with "
               f"expected shape {rules.kernel_dims(expected)}.")
    if len(expected) != len(actual) or any(
            e is not None and a is not None and e != a for e, a in zip(expected, actual)):
        raise rules.op_error("EnsureShape", problem)
    unchecked = [i for i, (e, a) in enumerate(zip(expected, actual)) if e is not None and a is None]
    if not unchecked:
        return x
    sizes = shape_of(x, out_type=dtypes.int64)
    for i in unchecked:
        assert_at_run_time(reduce_all(equal(sizes[i], expected[i])), problem)
    merged = [e if a is None else a for e, a in zip(expected, actual)]
    return dynamic_reshape(x, sizes, hint=merged)


__all__ = ["check_numerics", "ensure_shape"]
