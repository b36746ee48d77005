"""Running a function written for the innermost axis along any axis."""

from .shape import transpose


def along_axis(x, axis, fn):
    """fn(x) with `axis` (non-negative) swapped into the innermost place and swapped back
    in each of fn's results (a tensor or a tuple of tensors)."""
    rank = len(x._shape)
    if axis == rank - 1:
        return fn(x)
    order = list(range(rank))
    order[axis], order[-1] = order[-1], order[axis]
    result = fn(transpose(x, order))
    if isinstance(result, tuple):
        return tuple(transpose(r, order) for r in result)
    return transpose(result, order)
