"""TensorFlow's exception classes (`tf.errors`), raised by tapeflow in the same cases."""


class OpError(Exception):
    """Base of the errors an op raises at run time, as in TensorFlow."""

    def __init__(self, message, op=None):
        super().__init__(message)
        self.message = message
        self.op = op


class InvalidArgumentError(OpError):
    """An op got an argument of the wrong dtype, shape or value."""


class UnimplementedError(OpError):
    """An op does not support the given arguments."""


class NotFoundError(OpError):
    """A named entity (a registered gradient, an op) does not exist."""


class DataLossError(OpError):
    """Stored data is truncated or damaged (a checkpoint file)."""


class InternalError(OpError):
    """tapeflow itself failed; please report it."""


class OutOfRangeError(OpError):
    """An index or iteration went past its end."""


class ResourceExhaustedError(OpError):
    """An op could not allocate its output (out of memory)."""


class FailedPreconditionError(OpError):
    """The system is not in a state to run the op (an uninitialized value)."""


class OperatorNotAllowedInGraphError(TypeError):
    """A symbolic Tensor used where Python needs its value (as a `bool`, or iterated)
    while a tf.function is traced. A TypeError, as in TensorFlow, so `except TypeError`
    catches it too."""
