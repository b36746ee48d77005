"""Draws built of the table's ops: tf.random.categorical, by the Gumbel-max trick (the
argmax of logits plus Gumbel noise from tf.random.uniform is a draw from softmax(logits)),
so it runs eagerly, traced and compiled like the uniform draw it is made of."""

from .. import dtypes
from ..errors import InvalidArgumentError
from . import rules
from .elementwise import log, negative
from .random import uniform
from .reduce import argmax
from .shape import expand_dims


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """num_samples class indices per row of `logits` ([batch, classes], unnormalized log
    probabilities), as tf.random.categorical; a class of logit -inf is never drawn.

    >>> import tapeflow as tf
    >>> tf.random.categorical(tf.math.log([[0.5, 0.5]]), 4).shape
    TensorShape([1, 4])
    """
    return gumbel_max(logits, num_samples, dtype, lambda shape, dtype: uniform(
        shape, minval=1e-20, maxval=1.0, dtype=dtype, seed=seed))


def gumbel_max(logits, num_samples, dtype, uniform_in_open_unit):
    """The Gumbel-max draw of `num_samples` classes per row of `logits`, from
    `uniform_in_open_unit(shape, dtype)`: uniforms in (0, 1), so that log(0) never
    appears (tf.random.categorical and stateless_categorical differ only in those)."""
    logits = rules.as_tensor(logits)
    if len(logits._shape) != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                   f"{rules.kernel_dims(logits._shape)} [Op:Multinomial]",
                                   op="Multinomial")
    out_dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    if out_dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"dtype must be int32 or int64, got {out_dtype!r}")
    num_samples = rules.int_scalar(num_samples, "Multinomial", "num_samples")
    batch, classes = logits._shape
    if not logits.dtype.is_floating:
        rules.check_dtype_in("Multinomial", logits, rules.is_float, "float types")
    u = uniform_in_open_unit([batch, num_samples, classes], logits.dtype)
    gumbel = negative(log(negative(log(u))))
    return argmax(expand_dims(logits, 1) + gumbel, axis=-1, output_type=out_dtype)


__all__ = ["categorical"]
