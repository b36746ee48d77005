"""tf.saved_model: save a module's variables and traced functions, load them back."""

from .load import load
from .options import LoadOptions, SaveOptions
from .save import save

__all__ = ["LoadOptions", "SaveOptions", "load", "save"]
