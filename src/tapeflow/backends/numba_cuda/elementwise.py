"""Elementwise ops on the device: every `elementwise` entry by its `emit` template (no
per-op code), Cast, Pow and the integer divisions by their own element expressions, and
the entries that copy their input broadcast to their output (BroadcastTo) or fill it
(ZerosLike, OnesLike, and ConstFill: tf.zeros and tf.ones of a known shape). One "map"
kernel (kernels.py) per op, dtypes, rank and the way each input is broadcast."""

import math
import re

import numpy as np

from ...device_tensor import host_array, on_device
from ...ops.creation import CONST_FILL, ONES_LIKE, ZEROS_LIKE
from ...ops.elementwise import CAST, FLOOR_DIV, FLOOR_MOD, POW
from ...ops.shape import BROADCAST_TO
from ...tensor import wrap
from . import device, kernels, templates
from .templates import NoDeviceLowering

SUPPORTED = frozenset({"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"})
_OPERAND = re.compile(r"\{(\d+)\}")


def _template_element(template):
    def element(dtypes, out_dtype, operands, attr_names):
        return templates.expand(template, dtypes, out_dtype, operands, attr_names), None
    return element


def _cast_element(dtypes, out_dtype, operands, attr_names):
    if out_dtype.is_bool:
        return f"{operands[0]} != 0", None
    return f"{templates.np_cast(out_dtype)}({operands[0]})", None


def _pow_element(dtypes, out_dtype, operands, attr_names):
    x, y = operands
    if out_dtype.is_floating:
        return templates.expand("pow_f({0}, {1})", dtypes, out_dtype, operands, ()), None
    return f"ipow({x}, {y})", f"{y} < 0"  # TensorFlow refuses negative integer powers


def _fill_element(dtypes, out_dtype, operands, attr_names):
    if "value" not in attr_names:  # a boolean fill: not a kernel parameter
        raise NoDeviceLowering("a boolean fill value")
    return "attr_value", None


def _division_element(integer_template, float_template):
    def element(dtypes, out_dtype, operands, attr_names):
        if out_dtype.is_floating:
            return templates.expand(float_template, dtypes, out_dtype, operands, ()), None
        check = f"{operands[1]} == 0" if out_dtype.is_integer else None
        return templates.expand(integer_template, dtypes, out_dtype, operands, ()), check
    return element


_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(")
_BUILTINS = frozenset({"abs", "bool", "int", "float"})


def _check_helpers(expression):
    """A template naming a scalar helper the device lacks (an entry added with a new CPU
    helper) runs on the CPU, not as a kernel that fails to compile."""
    from .device_math import HELPERS
    missing = set(_CALL.findall(expression)) - _BUILTINS - HELPERS.keys()
    if missing:
        raise NoDeviceLowering(f"no device function {', '.join(sorted(missing))}")


def _strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def _mode(shape, out_shape):
    """How an input of `shape` is read for each output element, and its strides."""
    if tuple(shape) == tuple(out_shape):
        return "same", None
    if math.prod(shape) == 1:
        return "one", None
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides = _strides(padded)
    return "strided", tuple(0 if d == 1 else s for d, s in zip(padded, strides))


class Map:
    """An op computed element by element over its inputs broadcast to its output.

    `element(dtypes, out_dtype, operands, attr_names) -> (expression, check)` gives the
    element's device expression; by default the entry's template. `template` stands in
    for an entry that has none (BroadcastTo's "{0}")."""

    def __init__(self, element=None, template=None):
        self.element = element
        self.template = template
        self._plans = {}  # (op, dtypes, out dtype, attrs) -> (operand indices, expr, check)

    def used(self, op, n_inputs):
        """The indices of the inputs the element reads (a template may skip some)."""
        if self.element is not None:
            return tuple(range(n_inputs))
        return tuple(sorted({int(i) for i in _OPERAND.findall(self.template or op.emit)}))

    def expression(self, op, dtypes, out_dtype, operands, attr_names):
        """(expression, check) of one element over `operands` (any expressions; None for
        the inputs not read), numeric attrs as `attr_<name>`; (None, None) when the
        device has no helper the element needs."""
        element = self.element or _template_element(self.template or op.emit)
        try:
            expression, check = element(dtypes, out_dtype, operands, attr_names)
            _check_helpers(expression)
        except NoDeviceLowering:
            return None, None
        return expression, check

    def _plan(self, op, dtypes, out_dtype, attr_names):
        key = (op.name, dtypes, out_dtype, attr_names)
        plan = self._plans.get(key)
        if plan is None:
            used = self.used(op, len(dtypes))
            operands = [f"x{used.index(i)}" if i in used else None for i in range(len(dtypes))]
            expression, check = self.expression(op, dtypes, out_dtype, operands, attr_names)
            plan = self._plans[key] = (used, expression, check)
        return plan

    def run(self, op, inputs, attrs, shape, dtype, index):
        dtypes = tuple(x.dtype for x in inputs)
        if dtype.name not in SUPPORTED or any(d.name not in SUPPORTED for d in dtypes):
            return None
        attr_names = templates.numeric_attrs(attrs)
        used, expression, check = self._plan(op, dtypes, dtype, attr_names)
        if expression is None:
            return None
        compute = templates.compute_dtype([dtypes[i] for i in used], dtype)
        modes, args = [], []
        for i in used:
            mode, strides = _mode(inputs[i]._shape, shape)
            modes.append((dtypes[i].name, mode))
            args.append(device.device_array_of(inputs[i], index))
            if strides is not None:
                args.append(strides)
        args += [compute._np.type(attrs[name]) for name in attr_names]
        key = ("map", dtype.name, len(shape), tuple(modes),
               tuple((name, compute.name) for name in attr_names), expression, check)
        n = math.prod(shape)
        out = device.empty(n, dtype)
        flag = device.to_device(np.zeros(1, np.int32)) if check is not None else None
        if n:
            strided = any(mode == "strided" for _, mode in modes)
            head = [out, n] + ([tuple(shape)] if strided else [])
            device.launch(kernels.kernel(key), n, *head, *args,
                          *([flag] if flag is not None else []))
        if flag is not None and flag.copy_to_host()[0]:
            # The op fails: its NumPy kernel, on the host values, raises TensorFlow's error.
            return wrap(np.asarray(op.eager(*[host_array(x) for x in inputs], **attrs)))
        return on_device(out, shape, dtype, index)


# The lowering of every elementwise entry without one of its own: its template.
DEFAULT = Map()
_ZEROS = Map(template="0")


def zeros(n, dtype):
    """A flat device array of `n` zeros of `dtype`: ZerosLike's map kernel, which reads no
    input."""
    _, expression, _ = _ZEROS._plan(ZEROS_LIKE, (dtype,), dtype, ())
    out = device.empty(n, dtype)
    if n:
        device.launch(kernels.kernel(("map", dtype.name, 1, (), (), expression, None)), n,
                      out, n)
    return out


def attach(lowers):
    lowers(CAST)(Map(_cast_element))
    lowers(POW)(Map(_pow_element))
    lowers(FLOOR_DIV)(Map(_division_element("{0} // {1}", "floordiv_f({0}, {1})")))
    lowers(FLOOR_MOD)(Map(_division_element("{0} % {1}", "floormod_f({0}, {1})")))
    lowers(BROADCAST_TO)(Map(template="{0}"))
    lowers(ZEROS_LIKE)(_ZEROS)
    lowers(ONES_LIKE)(Map(template="1"))
    lowers(CONST_FILL)(Map(_fill_element))
