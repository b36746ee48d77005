"""`tf.keras`: the layers, optimizers, initializers, activations, losses and metrics the
tutorials use."""

from . import activations, initializers, layers, losses, metrics, optimizers  # noqa: F401
from .variables import KerasVariable as Variable
