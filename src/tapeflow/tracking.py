"""Objects whose attributes checkpoints save, and whose attributes set after a restore
get the values that restore left waiting for them."""

# Not a saved value, and not walked: the restorations waiting for attributes to be set.
DEFERRED_ATTRIBUTE = "_deferred_restorations"


class AutoTrackable:
    """Its attributes (and the lists, tuples and dicts they hold) are its checkpoint
    children, as TensorFlow's AutoTrackable."""

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        self._restore_deferred(name, value)

    def _restore_deferred(self, name, value):
        # A checkpoint restored before this attribute existed (a layer not yet built)
        # left its value waiting: the new object gets it now, as in TensorFlow.
        deferred = self.__dict__.get(DEFERRED_ATTRIBUTE)
        if deferred and name in deferred:
            deferred.pop(name)(value)

    def _defer_restoration(self, name, restore):
        """Calls `restore(value)` when attribute `name` is next set."""
        self.__dict__.setdefault(DEFERRED_ATTRIBUTE, {})[name] = restore

    def _checkpoint_children(self):
        """{name: value} of what a checkpoint walks below this object."""
        return {name: value for name, value in vars(self).items()
                if name != DEFERRED_ATTRIBUTE}
