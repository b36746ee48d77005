"""Checks on keyword arguments, so that none Keras would use is dropped silently."""


def reject_unimplemented(owner, **arguments):
    """Raises NotImplementedError naming the first of `arguments` (each `name=(value,
    keras_default)`, arguments Keras implements and tapeflow does not) set to anything but
    its default. Left at the default, Keras computes what tapeflow does."""
    for name, (value, default) in arguments.items():
        if not (value is default or value == default):
            raise NotImplementedError(
                f"{owner}: tapeflow does not implement Keras' `{name}` argument (received "
                f"{name}={value!r}); leave it at its default, {name}={default!r}.")
