"""Attributes Keras sets on tensors (`_keras_logits`, `_keras_mask`): tapeflow's tensors
have slots, so they are kept here, each for as long as its tensor lives."""

import weakref

# (id(tensor), attribute) -> (a weak reference to the tensor, the value)
_notes = {}


def attach(tensor, attribute, value):
    """Sets `attribute` of `tensor` to `value`; returns the tensor."""
    key = (id(tensor), attribute)

    def forget(ref):
        if _notes.get(key, (None,))[0] is ref:
            del _notes[key]

    _notes[key] = (weakref.ref(tensor, forget), value)
    return tensor


def read(tensor, attribute):
    """The value attached to `tensor` as `attribute`, or None."""
    entry = _notes.get((id(tensor), attribute))
    return entry[1] if entry is not None and entry[0]() is tensor else None
