"""Variables that live in GPU memory: created under a GPU placement (tf.device, or a
visible GPU by default), a Variable (or a subclass such as tf.keras.Variable) becomes
its class's device variant. Reads share the device array (values are replaced, never
written in place, so a read stays a snapshot); assignments and assign_add/assign_sub
run on the device; the host copy is made only when asked (`.numpy()`, printing, an op
placed on the CPU)."""

from . import context, placement
from .device_tensor import copy_to_host, on_device
from .tensor import wrap

_variants = {}


class _OnDevice:
    """What a device variant adds to a Variable class (mixed in before it)."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        self._device_index = placement.requested_gpu()
        self._device_array = self._host = None
        super().__init__(*args, **kwargs)

    @property
    def _value(self):
        host = self._host
        if host is None:
            host = self._host = copy_to_host(self._device_array, self._shape)
        return host

    @_value.setter
    def _value(self, value):  # a host value (an initial value, a slice assignment)
        self._device_array = placement.to_gpu(wrap(value), self._device_index)._device_array
        self._host = value

    @property
    def device(self):
        return placement.gpu_name(self._device_index)

    def _snapshot(self):
        t = on_device(self._device_array, self._shape, self.dtype, self._device_index)
        t._host = self._host
        t._var = self
        return t

    def _set(self, value):
        if context.current_graph.get() is not None:
            super()._set(value)
            return
        placed = placement.to_gpu(value, self._device_index)
        self._device_array, self._host = placed._device_array, placed._host

    def _update(self, delta, op, op_name):
        if context.current_graph.get() is not None:
            super()._update(delta, op, op_name)
            return
        delta = self._new_value(delta, op_name)
        # As TensorFlow colocates a variable's updates with it: on its device.
        with placement.device(placement.DeviceSpec(device_type="GPU",
                                                   device_index=self._device_index)):
            self._set(op(self._snapshot(), delta))


def placed_class(cls):
    """The class a Variable of class `cls` is created as here: its device variant under
    a GPU placement, `cls` itself otherwise (inside tf.function too)."""
    if (issubclass(cls, _OnDevice) or context.current_graph.get() is not None
            or placement.requested_gpu() is None):
        return cls
    variant = _variants.get(cls)
    if variant is None:
        variant = _variants[cls] = type(cls.__name__, (_OnDevice, cls), {
            "__slots__": ("_device_array", "_host", "_device_index"),
            "__module__": cls.__module__, "__doc__": cls.__doc__})
    return variant

