"""tf.switch_case and tf.case: one of several branches, picked by an integer tensor or by
the first true predicate, built of tf.cond (nested If nodes inside tf.function), so
their gradients are cond's."""

from ..errors import InvalidArgumentError
from ..tensor import ValuelessTensor, _Operators
from . import rules
from .checks import assert_at_run_time
from .control import cond
from .elementwise import equal
from .reduce import reduce_any
from .shape import reshape, stack


def _branches(branch_fns):
    """The branch functions in index order, from a list, a tuple, a dict or (index,
    function) pairs whose indices are 0 to n - 1, as TensorFlow accepts them."""
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    elif branch_fns and all(isinstance(item, tuple) and len(item) == 2 for item in branch_fns):
        pairs = list(branch_fns)
    else:
        pairs = list(enumerate(branch_fns or ()))
    if not pairs:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    for key, fn in pairs:
        if not isinstance(key, int):
            raise TypeError(f"branch_index must be an int, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"fn for branch {key} must be callable: {fn}")
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(keys))):
        found = ",".join(str(k) for k in keys)
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to "
                         f"{len(keys)}) but found {{{found}}}")
    return [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]


def switch_case(branch_index, branch_fns, default=None, name=None):
    """branch_fns[branch_index](), or default() when the index is out of range (the last
    branch when no default is given), as tf.switch_case.

    >>> import tapeflow as tf
    >>> tf.switch_case(tf.constant(1), [lambda: tf.constant(10), lambda: tf.constant(20)])
    <tf.Tensor: shape=(), dtype=int32, numpy=20>
    """
    if not isinstance(branch_index, _Operators):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype!r}")
    fns = _branches(branch_fns)
    fallback = fns[-1] if default is None else default
    if not callable(fallback):
        raise TypeError("default must be callable.")

    def from_branch(k):
        if k == len(fns):
            return fallback()
        return cond(equal(branch_index, k), fns[k], lambda: from_branch(k + 1))

    return from_branch(0)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate of `pred_fn_pairs` ((pred, fn) pairs or a
    dict), else `default()`, as tf.case. Without a default the last function serves as
    one, and no predicate being true is an InvalidArgumentError (raised now eagerly, at
    run time inside tf.function). `exclusive` is accepted and, as in TensorFlow 2.21,
    checks nothing.

    >>> import tapeflow as tf
    >>> x = tf.constant(5.0)
    >>> tf.case([(x < 3.0, lambda: tf.constant(1)), (x < 10.0, lambda: tf.constant(2))])
    <tf.Tensor: shape=(), dtype=int32, numpy=2>
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs:
        raise ValueError("pred_fn_pairs must contain at least one (pred, fn) pair")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"Each entry in pred_fn_pairs must be a 2-tuple, got {pair!r}")
        if not callable(pair[1]):
            raise TypeError(f"fn for pred {i} must be callable.")
    preds = [rules.as_tensor(p) for p, _ in pairs]
    fns = [fn for _, fn in pairs]
    if default is None:
        _require_one_true(preds)
        default, fns, preds = fns[-1], fns[:-1], preds[:-1]
    elif not callable(default):
        raise TypeError("default must be callable.")

    def from_pair(k):
        if k == len(fns):
            return default()
        return cond(preds[k], fns[k], lambda: from_pair(k + 1))

    return from_pair(0)


_NONE_TRUE = "Input error: None of conditions evaluated as True:"


def _require_one_true(preds):
    if any(isinstance(p, ValuelessTensor) for p in preds):
        assert_at_run_time(reduce_any(stack([reshape(p, []) for p in preds])), _NONE_TRUE)
        return
    values = [bool(p.numpy()) for p in preds]
    if not any(values):
        raise InvalidArgumentError(
            f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
            f"b'{_NONE_TRUE}'\n" + ", ".join(str(v) for v in values))


__all__ = ["switch_case", "case"]
