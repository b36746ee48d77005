"""NumPy scalar constants made before Numba types them.

`np.float32(0.5)`, `np.bool_(False)` and `np.int64(3)` are how the helpers of kernels/
and the generated kernels write typed constants: a polynomial's coefficients, a flag
passed to a helper, a site number. Numba types and lowers each such call as a call:
it resolves the constructor's function type for its argument and emits the conversion.
The rewrite below replaces the call of a NumPy scalar type on one literal number or
bool with the constant it makes, as NumPy makes it, before type inference: Numba types a
NumPy scalar constant directly, and LLVM receives the same value it computed from the
call. Only tapeflow's own functions are rewritten. A scalar helper holds dozens
(`tanh_f32`, its inlined `exp_f32` included, thirty): `perf/helper_compiles.py` compiles
them with the rewrite and without.
"""

import warnings

import numpy as np
from numba.core import ir
from numba.core.rewrites import Rewrite, register_rewrite

_SCALAR_TYPES = {getattr(np, name) for name in (
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128")}  # (no float16: not a kernel dtype)
_PREFIXES = ("tapeflow.", "tapeflow_kernel_")


def _ours(state):
    # (some of Numba's callers pass a state without the function: left alone)
    func = getattr(getattr(state, "func_id", None), "func", None)
    return (getattr(func, "__module__", None) or "").startswith(_PREFIXES)


@register_rewrite("before-inference")
class TypedConstants(Rewrite):
    """`np.float32(<literal>)` (or F32 = np.float32, np.int64, ...) -> the constant."""

    def __init__(self, state=None):
        super().__init__(state)
        self._enabled = _ours(state)
        self._found = []
        self._block = None

    def match(self, func_ir, block, typemap, calltypes):
        self._found = []
        self._block = block
        if not self._enabled:
            return False
        for inst in block.body:
            if not isinstance(inst, ir.Assign):
                continue
            expr = inst.value
            if not (isinstance(expr, ir.Expr) and expr.op == "call" and len(expr.args) == 1
                    and not expr.kws and expr.vararg is None
                    and getattr(expr, "varkwarg", None) is None):
                continue
            scalar_type = _scalar_type(func_ir, expr.func)
            if scalar_type is None:
                continue
            argument = _definition(func_ir, expr.args[0])
            if not isinstance(argument, ir.Const) or type(argument.value) not in (
                    bool, int, float):
                continue
            value = _converted(scalar_type, argument.value)
            if value is not None:
                self._found.append((inst, value))
        return bool(self._found)

    def apply(self):
        for inst, value in self._found:
            inst.value = ir.Const(value, inst.value.loc)
        return self._block


def _definition(func_ir, var):
    try:
        return func_ir.get_definition(var)
    except KeyError:  # defined more than once, or not at all: not a constant
        return None


def _scalar_type(func_ir, var):
    """The NumPy scalar type `var` holds: a global (np.float32, or a name bound to it), or
    an attribute of the global NumPy module."""
    definition = _definition(func_ir, var)
    if isinstance(definition, (ir.Global, ir.FreeVar)):
        value = definition.value
    elif isinstance(definition, ir.Expr) and definition.op == "getattr":
        owner = _definition(func_ir, definition.value)
        if not (isinstance(owner, (ir.Global, ir.FreeVar)) and owner.value is np):
            return None
        value = getattr(np, definition.attr, None)
    else:
        return None
    try:
        return value if value in _SCALAR_TYPES else None
    except TypeError:  # unhashable
        return None


def _converted(scalar_type, value):
    """`scalar_type(value)` as NumPy makes it, or None where NumPy refuses or warns (an
    int out of range: Numba's conversion wraps it instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            converted = scalar_type(value)
        except (OverflowError, ValueError, RuntimeWarning, DeprecationWarning):
            return None
    if isinstance(value, int) and not isinstance(value, bool) and \
            np.issubdtype(scalar_type, np.integer) and int(converted) != value:
        return None
    return converted
