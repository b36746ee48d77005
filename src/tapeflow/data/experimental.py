"""`tf.data.experimental`: the names TensorFlow 2 still keeps here."""

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401


def cardinality(dataset):
    """`dataset.cardinality()`."""
    return dataset.cardinality()
