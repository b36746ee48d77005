"""`tf.experimental`: of TensorFlow's experimental namespace, tapeflow has `numpy` (tnp)."""

from . import numpy  # noqa: F401
