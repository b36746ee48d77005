"""`tf.debugging`: check_numerics and the assertions, with TensorFlow's messages.

Eagerly an assertion checks at once and raises InvalidArgumentError with the values
involved; inside tf.function it becomes an Assert node (ops/checks.py) that raises at
every call whose values break it, naming the user's line. Static facts (rank, dtype,
shape) are checked while tracing, as TensorFlow does, with its ValueError or TypeError.
"""

import numpy as np

from . import dtypes, nest
from .check_numerics import disable_check_numerics, enable_check_numerics  # noqa: F401
from .errors import InvalidArgumentError
from .ops import rules
from .ops.checks import assert_at_run_time, check_numerics  # noqa: F401
from .ops.elementwise import (abs, equal, greater, greater_equal, less, less_equal, not_equal,
                              zeros_like)
from .ops.reduce import reduce_all
from .placement import set_log_device_placement  # noqa: F401 - tf.debugging's name
from .tensor import Symbolic, _Operators


def _traced(*tensors):
    return any(isinstance(t, Symbolic) for t in tensors)


def _shape_text(x):
    return f"shape={tuple(x.shape)} dtype={x.dtype.name}"


def _described(name, x):
    return f"{name} ({_shape_text(x)})"


def _prefix(message, separator):
    return f"{message}{separator}" if message else ""


def _check(holds, message_now, message_in_graph, tensors):
    """Raises (eagerly) or adds an Assert node (traced) for the bool tensor `holds`."""
    if _traced(holds, *tensors):
        assert_at_run_time(reduce_all(holds), message_in_graph)
        return None
    if not bool(np.all(holds.numpy())):
        raise InvalidArgumentError(message_now())
    return None


def _first(x, n=3):
    flat = np.asarray(x).reshape(-1)
    return flat[:n]


def _compare(op, symbol, x, y, message, show_indices):
    x, y = rules.as_tensors(x, y)
    holds = op(x, y)

    def message_now():
        lines = [f"Condition x {symbol} y did not hold."]
        xs, ys = x.numpy(), y.numpy()
        if show_indices:
            bad = np.argwhere(~np.broadcast_to(holds.numpy(), np.broadcast(xs, ys).shape))
            xb, yb = np.broadcast_arrays(xs, ys)
            lines += [f"Indices of first {len(bad[:3])} different values:", str(bad[:3]),
                      "Corresponding x values:", str(xb[tuple(bad[:3].T)]),
                      "Corresponding y values:", str(yb[tuple(bad[:3].T)])]
        lines += [f"First {min(xs.size, 3)} elements of x:", str(_first(xs)),
                  f"First {min(ys.size, 3)} elements of y:", str(_first(ys))]
        return _prefix(message, "\n") + "\n".join(lines)

    in_graph = (_prefix(message, "\n") + f"Condition x {symbol} y did not hold element-wise: "
                f"{_described('x', x)}, {_described('y', y)}")
    return _check(holds, message_now, in_graph, (x, y))


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Checks x == y elementwise (broadcasting).

    >>> import tapeflow as tf
    >>> tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
    Traceback (most recent call last):
    ...
    tapeflow.errors.InvalidArgumentError: Condition x == y did not hold.
    ...
    """
    return _compare(equal, "==", x, y, message, show_indices=True)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    return _compare(not_equal, "!=", x, y, message, show_indices=True)


def assert_less(x, y, message=None, summarize=None, name=None):
    return _compare(less, "<", x, y, message, show_indices=False)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    return _compare(less_equal, "<=", x, y, message, show_indices=False)


def assert_greater(x, y, message=None, summarize=None, name=None):
    return _compare(greater, ">", x, y, message, show_indices=True)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    return _compare(greater_equal, ">=", x, y, message, show_indices=False)


def _sign_check(op, symbol, x, message):
    x = rules.as_tensor(x)
    holds = op(x, zeros_like(x))

    def message_now():
        values = [str(v) for v in np.asarray(x.numpy()).reshape(-1).tolist()]
        return (_prefix(message, ".  ") + f"\nCondition x {symbol} 0 did not hold element-wise:"
                f"\nx (shape={tuple(x.shape)} dtype={x.dtype.name}) = \n{values}")

    in_graph = (_prefix(message, ".  ") + f"Condition x {symbol} 0 did not hold element-wise: "
                f"{_described('x', x)}")
    return _check(holds, message_now, in_graph, (x,))


def assert_positive(x, message=None, summarize=None, name=None):
    return _sign_check(greater, ">", x, message)


def assert_negative(x, message=None, summarize=None, name=None):
    return _sign_check(less, "<", x, message)


def assert_non_negative(x, message=None, summarize=None, name=None):
    return _sign_check(greater_equal, ">=", x, message)


def assert_non_positive(x, message=None, summarize=None, name=None):
    return _sign_check(less_equal, "<=", x, message)


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Checks |x - y| <= atol + rtol * |y| elementwise; the tolerances default to 10 eps
    of the dtype (float32: 1.19e-06), as TensorFlow's."""
    x, y = rules.as_tensors(x, y)
    eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    holds = less_equal(abs(x - y), atol + rtol * abs(y))
    text = (_prefix(message, "\n") + f"x and y not equal to tolerance rtol = {rtol:g}, "
            f"atol = {atol:g}\n")

    def message_now():
        return (text + f"{_described('x', x)} = {x.numpy()}\n"
                f"{_described('y', y)} = {y.numpy()}")

    return _check(holds, message_now, text + f"{_described('x', x)}, {_described('y', y)}",
                  (x, y))


def assert_all_finite(t, msg, name=None, x=None, message=None):
    """Raises if `t` holds NaN or Inf (tf.debugging.assert_all_finite); returns `t`."""
    return check_numerics(t if x is None else x, msg if message is None else message)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """Raises InvalidArgumentError, with `data` summarized, when scalar `condition` is
    false (tf.debugging.Assert)."""
    condition = rules.as_tensor(condition)
    items = nest.flatten(data)
    shown = []
    for item in items:
        if isinstance(item, _Operators) and not isinstance(item, Symbolic):
            shown.append(", ".join(str(v) for v in _first(item.numpy(), summarize or 3)))
        elif not isinstance(item, _Operators):
            shown.append(str(item))
        else:
            shown.append(_described("data", item))
    text = f"Expected '{condition!r}' to be true. Summarized data: " + "\n".join(shown)
    return _check(condition, lambda: text,
                  "assertion failed: " + "\n".join(shown), (condition,))


# -- static facts, checked while tracing -------------------------------------------------------

def _static_fail(error, message, text):
    raise error(_prefix(message, ".  ") + text)


def assert_rank(x, rank, message=None, name=None):
    x = rules.as_tensor(x)
    if len(x.shape) != int(rank):
        _static_fail(ValueError, message, f"Tensor  must have rank {int(rank)}.  Received rank "
                                          f"{len(x.shape)}, shape {tuple(x.shape)}")


def assert_rank_at_least(x, rank, message=None, name=None):
    x = rules.as_tensor(x)
    if len(x.shape) < int(rank):
        _static_fail(ValueError, message, f"Tensor  must have rank at least {int(rank)}.  "
                                          f"Received rank {len(x.shape)}, shape "
                                          f"{tuple(x.shape)}")


def assert_scalar(tensor, message=None, name=None):
    tensor = rules.as_tensor(tensor)
    if tensor.shape:
        _static_fail(ValueError, message, f"Expected scalar shape, saw shape: "
                                          f"{tuple(tensor.shape)}.")
    return tensor


def assert_type(tensor, tf_type, message=None, name=None):
    tensor, tf_type = rules.as_tensor(tensor), dtypes.as_dtype(tf_type)
    if tensor.dtype is not tf_type:
        _static_fail(TypeError, message, f"tensor must be of type {tf_type!r}; got "
                                         f"{tensor.dtype!r}")


def assert_integer(x, message=None, name=None):
    x = rules.as_tensor(x)
    if not x.dtype.is_integer:
        _static_fail(TypeError, message, f'Expected "x" to be integer type.  Found: tensor of '
                                         f"dtype {x.dtype!r}")


def is_numeric_tensor(tensor):
    """Whether `tensor` is a Tensor of a numeric (not bool) dtype."""
    return isinstance(tensor, _Operators) and (tensor.dtype.is_floating
                                               or tensor.dtype.is_integer)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks each tensor's shape against its spec: an int is that size, a string names a
    size all its uses must share, None or '.' is any size, and a leading '*' any number
    of leading dimensions (tf.debugging.assert_shapes)."""
    pairs = shapes.items() if isinstance(shapes, dict) else shapes
    sizes = {}  # symbol -> (size, the tensor and dimension that fixed it)
    for tensor, spec in pairs:
        tensor = rules.as_tensor(tensor)
        spec = list(spec)
        shape = list(tensor.shape)
        if spec and spec[0] == "*":
            spec = spec[1:]
            shape = shape[len(shape) - len(spec):] if len(shape) >= len(spec) else shape
        elif len(shape) != len(spec):
            _static_fail(ValueError, message, f"Specified explicitly.  Tensor "
                                              f"{_shape_text(tensor)} must have rank "
                                              f"{len(spec)}.  Received rank {len(shape)}, "
                                              f"shape {tuple(tensor.shape)}")
        offset = len(tensor.shape) - len(shape)
        for k, (want, got) in enumerate(zip(spec, shape)):
            where = f"Tensor {_shape_text(tensor)} dimension {k + offset}"
            if want is None or want == "." or got is None:
                continue
            if isinstance(want, str):
                if want not in sizes:
                    sizes[want] = (got, f"Specified by tensor {_shape_text(tensor)} "
                                        f"dimension {k + offset}")
                    continue
                want_size, origin = sizes[want]
            else:
                want_size, origin = int(want), "Specified explicitly"
            if got != want_size:
                _static_fail(ValueError, message, f"{origin}.  {where} must have size "
                                                  f"{want_size}.  Received size {got}, shape "
                                                  f"{tuple(tensor.shape)}")


__all__ = [name for name in dir() if name.startswith("assert_")] + [
    "Assert", "check_numerics", "disable_check_numerics", "enable_check_numerics",
    "is_numeric_tensor"]
