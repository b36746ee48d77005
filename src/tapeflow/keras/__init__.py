"""`tf.keras`: the layers, optimizers, initializers and activations the tutorials use."""

from . import activations, initializers, layers, optimizers  # noqa: F401
from .variables import KerasVariable as Variable
