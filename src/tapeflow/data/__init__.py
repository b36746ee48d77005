"""`tf.data`: `Dataset` input pipelines (from_tensor_slices, map, shuffle, batch, ...),
run eagerly element by element."""

from . import experimental  # noqa: F401
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
