"""tf.switch_case: one of several branches picked by an integer tensor, built of tf.cond
(nested If nodes inside tf.function), so its gradients are cond's."""

from ..tensor import _Operators
from .control import cond
from .elementwise import equal


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


__all__ = ["switch_case"]
