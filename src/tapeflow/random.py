"""`tf.random`: seeded normal, uniform, truncated-normal and categorical draws."""

from .ops.random import normal, set_seed, shuffle, truncated_normal, uniform  # noqa: F401
from .ops.sampling import categorical  # noqa: F401
from .ops.stateless import (  # noqa: F401
    fold_in,
    split,
    stateless_normal,
    stateless_truncated_normal,
    stateless_uniform,
)
