"""tf.math.approx_max_k, approx_min_k and tf.approx_top_k, composed of TopKV2.

TensorFlow computes ApproxTopK exactly on a CPU (its kernel there is TopK), but
registers that kernel only for the largest k along the last axis: approx_min_k, and any
other reduction_dimension, raise NotFoundError on a CPU and run on XLA devices, whose
result with recall 1 this is (the k smallest in ascending order). recall_target,
reduction_input_size_override and aggregate_to_topk only tune the approximation and are
checked, not used."""

from ..dtypes import kernel_name
from ..errors import InvalidArgumentError
from . import rules
from .axis_moves import along_axis
from .elementwise import negative
from .sorting import top_k

_ALLOWED = ("float16", "float32")  # TensorFlow's half, bfloat16, float


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95,  # noqa: A002
                 is_max_k=True, reduction_input_size_override=-1, aggregate_to_topk=True,
                 name=None):
    """The k largest (is_max_k) or smallest entries along `reduction_dimension` and their
    int32 indices (tf.approx_top_k), exact, equal values in index order."""
    x = rules.as_tensor(input)
    if x.dtype.name not in _ALLOWED:
        raise rules.dtype_error(
            f"Value for attr 'T' of {kernel_name(x.dtype)} is not in the list of allowed values: "
            "half, bfloat16, float [Op:ApproxTopK]", "ApproxTopK")
    k = rules.int_scalar(k, "ApproxTopK", "k")
    rank = len(x._shape)
    axis = rules.int_scalar(reduction_dimension, "ApproxTopK", "reduction_dimension")
    if not -rank <= axis < rank:
        raise InvalidArgumentError(f"reduction_dimension {axis} is out of range for an input "
                                   f"of rank {rank} [Op:ApproxTopK]", op="ApproxTopK")
    axis %= rank
    size = x._shape[axis]
    if size is not None and size < k:
        raise InvalidArgumentError(f"input must have at least k columns. Had {size}, needed "
                                   f"{k} [Op:ApproxTopK]", op="ApproxTopK")
    if not 0 < recall_target <= 1:
        raise InvalidArgumentError(f"recall_target must be in (0, 1], got {recall_target} "
                                   "[Op:ApproxTopK]", op="ApproxTopK")

    def largest(v):
        values, indices = top_k(v, k)
        return values, indices

    def smallest(v):
        values, indices = top_k(negative(v), k)
        return negative(values), indices
    return along_axis(x, axis, largest if is_max_k else smallest)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The k largest entries along `reduction_dimension` and their indices
    (tf.math.approx_max_k; exact)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, True,
                        reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The k smallest entries along `reduction_dimension`, ascending, and their indices
    (tf.math.approx_min_k; exact)."""
    return approx_top_k(operand, k, reduction_dimension, recall_target, False,
                        reduction_input_size_override, aggregate_to_topk)


__all__ = ["approx_max_k", "approx_min_k", "approx_top_k"]
