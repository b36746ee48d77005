"""Lists grown in tensor loops: TensorListPushBack appends a row to a stacked buffer.

AutoGraph turns `outputs.append(x)` inside a tensor-dependent loop into this op (the role
TensorFlow's TensorArray / TensorList plays), so the list a loop builds is one Tensor of
shape [n, *element_shape]. Values stay immutable: a push returns a new Tensor. The kernel
keeps room to grow, so a loop of n pushes copies O(n) rows, not O(n^2).
"""

import weakref

import numpy as np

from ..errors import InvalidArgumentError
from . import rules
from .registry import OpDef, bind, register

# A pushed result is a view of the first rows of a larger base array. Pushing onto a view
# that covers every row in use writes the next row in place; any other input is copied.
# No readable value ever changes: rows past the newest view are seen by nobody.
_ROWS_IN_USE = {}  # id(base array) -> rows of it covered by its newest view


def _grow(base, rows):
    _ROWS_IN_USE[id(base)] = rows
    return base[:rows]


def _push_back_kernel(buffer, item):
    n = buffer.shape[0]
    if buffer.shape[1:] != np.shape(item):
        if n:
            raise InvalidArgumentError(
                f"TensorListPushBack: cannot append an element of shape {list(np.shape(item))} "
                f"to a list of elements of shape {list(buffer.shape[1:])} "
                f"[Op:TensorListPushBack]", op="TensorListPushBack")
        # An empty list started before its elements' unknown dimensions were known.
        buffer = np.empty((0,) + np.shape(item), dtype=buffer.dtype)
    base = buffer.base
    if (isinstance(base, np.ndarray) and _ROWS_IN_USE.get(id(base)) == n
            and n < base.shape[0] and buffer.ctypes.data == base.ctypes.data
            and buffer.strides == base.strides and buffer.shape[1:] == base.shape[1:]):
        base[n] = item
        return _grow(base, n + 1)
    base = np.empty((max(4, 2 * (n + 1)),) + buffer.shape[1:], dtype=buffer.dtype)
    base[:n] = buffer
    base[n] = item
    weakref.finalize(base, _ROWS_IN_USE.pop, id(base), None)
    return _grow(base, n + 1)


def _element_shape(op_name, buffer):
    if not buffer._shape:
        raise InvalidArgumentError(
            f"{op_name} needs a list buffer of rank >= 1, got {rules.describe(buffer)} "
            f"[Op:{op_name}]", op=op_name)
    return buffer._shape[1:]


def _push_back_infer(buffer, item):
    rules.check_same_dtype("TensorListPushBack", (buffer, item))
    element = _element_shape("TensorListPushBack", buffer)
    n = buffer._shape[0]
    if n == 0 and len(element) == len(item._shape):
        # No rows yet: the elements' shape is the item's (an empty list of elements with
        # unknown dimensions starts as rows of size 0).
        return (1,) + tuple(item._shape), buffer.dtype
    if len(element) != len(item._shape) or any(
            a is not None and b is not None and a != b for a, b in zip(element, item._shape)):
        raise InvalidArgumentError(
            f"TensorListPushBack: cannot append an element of shape {list(item._shape)} to "
            f"a list of elements of shape {list(element)} [Op:TensorListPushBack]",
            op="TensorListPushBack")
    merged = tuple(a if a is not None else b for a, b in zip(element, item._shape))
    return (None if n is None else n + 1,) + merged, buffer.dtype


def _pop_back_infer(input):
    element = _element_shape("TensorListPopBack", input)
    n = input._shape[0]
    if n == 0:
        raise InvalidArgumentError("TensorListPopBack: trying to pop from an empty list "
                                   "[Op:TensorListPopBack]", op="TensorListPopBack")
    head = (None if n is None else n - 1,) + element
    return [(head, input.dtype), (element, input.dtype)]


def _pop_back_grad(ctx, d_head, d_tail):
    from .creation import zeros_like
    if d_head is None:
        d_head = zeros_like(ctx.out0)
    if d_tail is None:
        d_tail = zeros_like(ctx.out1)
    return (list_push_back(d_head, d_tail),)


TENSOR_LIST_PUSH_BACK = register(OpDef(
    name="TensorListPushBack", args=("buffer", "item"), infer=_push_back_infer,
    eager=_push_back_kernel,
    grad=lambda ctx, dy: tuple(list_pop_back(dy))))

TENSOR_LIST_POP_BACK = register(OpDef(
    name="TensorListPopBack", args=("input",), infer=_pop_back_infer, n_out=2,
    eager=lambda input: (input[:-1], input[-1]),
    saves=("out0", "out1"), grad=_pop_back_grad))


def list_push_back(buffer, item, name=None):
    """`buffer` ([n, *shape]) with `item` ([*shape]) appended as row n.

    >>> import tapeflow as tf
    >>> from tapeflow.ops.lists import list_push_back
    >>> list_push_back(tf.constant([[1.0, 2.0]]), tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 2.],
           [3., 4.]], dtype=float32)>
    """
    buffer, item = rules.as_tensors(buffer, item)
    return bind(TENSOR_LIST_PUSH_BACK, (buffer, item))


def list_pop_back(input, name=None):
    """(input[:-1], input[-1]): the list without its last row, and that row.

    >>> import tapeflow as tf
    >>> from tapeflow.ops.lists import list_pop_back
    >>> head, last = list_pop_back(tf.constant([1, 2, 3]))
    >>> head.numpy(), last.numpy()
    (array([1, 2], dtype=int32), np.int32(3))
    """
    return tuple(bind(TENSOR_LIST_POP_BACK, (rules.as_tensor(input),)))


__all__ = ["list_pop_back", "list_push_back"]
