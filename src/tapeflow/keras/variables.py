"""`tf.keras.Variable`: a Variable named as Keras 3 names it, with a `path`."""

from .. import dtypes
from ..variable import Variable
from . import naming


class KerasVariable(Variable):
    """A Variable whose `name` is its own short name (`kernel`, no `:0`) and whose `path`
    names the Keras scopes it was created in (`dense/kernel`), as Keras 3's variables.

    tf.name_scope does not change either, as in Keras 3.

    >>> import tapeflow as tf
    >>> v = tf.keras.Variable(0.5, name="scale")
    >>> v.name, v.path
    ('scale', 'scale')
    >>> v
    <Variable path=scale, shape=(), dtype=float32, value=0.5>
    """

    __slots__ = ("path",)

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, name=None,
                 **kwargs):
        # Keras' other arguments (autocast, aggregation, synchronization) change nothing
        # without mixed precision or distribution, which tapeflow has not.
        name = name or naming.auto_name("Variable")
        naming.check_name(name)
        if callable(initializer):  # a Keras initializer: called with the shape
            if shape is None:
                raise ValueError(f"When creating a Variable from an initializer, the "
                                 f"`shape` argument should be specified. Received: "
                                 f"initializer={initializer} and shape={shape}")
            init, dtype = initializer, dtypes.as_dtype(dtype or dtypes.float32)
            initializer = lambda: init(tuple(shape), dtype=dtype)  # noqa: E731
        super().__init__(initializer, trainable=trainable, dtype=dtype)
        if shape is not None and tuple(shape) != tuple(self.shape):
            raise ValueError(f"Initializer value has shape {tuple(self.shape)}, but "
                             f"`shape` is {tuple(shape)}")
        self._name = name
        self.path = naming.variable_path(name)

    @property
    def name(self):
        return self._name

    def __repr__(self):
        return (f"<Variable path={self.path}, shape={tuple(self.shape)}, "
                f"dtype={self.dtype.name}, value={self.numpy()}>")
