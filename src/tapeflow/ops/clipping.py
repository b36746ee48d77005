"""Clipping a list of tensors by their joint norm (linalg.global_norm), as TensorFlow's
training loops do it: tf.clip_by_global_norm."""

from ..tensor import _Operators
from . import rules
from .elementwise import cast, minimum
from .linalg import global_norm


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Every tensor of t_list scaled by clip_norm / max(global_norm, clip_norm), and the
    global norm (tf.clip_by_global_norm). A non-finite norm gives NaN tensors, as in
    TensorFlow; None entries stay None.

    >>> import tapeflow as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), tf.constant([0.0, 12.0])], 6.5)
    >>> [t.numpy().tolist() for t in clipped], float(norm)
    ([[1.5, 2.0], [0.0, 6.0]], 13.0)
    """
    if isinstance(t_list, _Operators) or not hasattr(t_list, "__iter__"):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else rules.as_tensor(use_norm)
    clip = cast(rules.as_tensor(clip_norm), norm.dtype)
    scale = clip * minimum(1.0 / norm, 1.0 / clip)
    clipped = [None if t is None else rules.as_tensor(t) * cast(scale, rules.as_tensor(t).dtype)
               for t in t_list]
    return clipped, norm


__all__ = ["clip_by_global_norm"]
