"""An elementwise entry's `emit` template as a device expression. The expansion is the
CPU backend's (numba_cpu/templates.py: operands substituted, numbers typed as the
computation's dtype, `*_f` helpers named for the dtype); the names it produces are
device_math's functions. Numeric attrs are left to kernel parameters (`attr_alpha`), so
one kernel serves every alpha."""

import re
from types import SimpleNamespace

from ..numba_cpu import templates as cpu_templates
from ..numba_cpu.text import np_name
from .. import compiler


class NoDeviceLowering(Exception):
    """The template needs something the device helpers do not have for this dtype."""


def numeric_attrs(attrs):
    """The attrs a template reads as numbers, in a fixed order (kernel parameters)."""
    return tuple(sorted(k for k, v in attrs.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)))


def expand(template, dtypes, out_dtype, operands, attr_names):
    """The device expression of `template` over `operands` (of `dtypes`)."""
    node = SimpleNamespace(op=SimpleNamespace(emit=template), attrs={},
                           inputs=[SimpleNamespace(dtype=d) for d in dtypes],
                           outputs=[SimpleNamespace(dtype=out_dtype)])
    try:
        text = cpu_templates.expand(node, operands, None)
    except compiler.Unsupported as e:
        raise NoDeviceLowering(str(e)) from None
    for name in attr_names:
        text = re.sub(rf"\b{re.escape(name)}\b", f"attr_{name}", text)
    return text


def compute_dtype(dtypes, out_dtype):
    """The dtype a template computes in: its first non-bool operand's."""
    return next((d for d in dtypes if not d.is_bool), out_dtype)


def np_cast(dtype):
    return np_name(dtype)
