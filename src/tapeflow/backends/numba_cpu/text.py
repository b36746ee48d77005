"""Python source text for typed values: dtype names, typed literals, casts, tuples and
subscripts, and the error a graph raises where this backend cannot compile it."""

import math

import numpy as np

from ...tensor import Symbolic
from .. import compiler


class Unsupported(compiler.Unsupported):
    """The compiled backend has no lowering for a node (the message names the op and the
    user's line); the graph must run another way (the interpreter)."""


SUPPORTED_DTYPES = frozenset({"float32", "float64", "int8", "int16", "int32", "int64",
                              "uint8", "bool", "complex64", "complex128"})
_NP = {"float32": "np.float32", "float64": "np.float64", "int8": "np.int8",
       "int16": "np.int16", "int32": "np.int32", "int64": "np.int64", "uint8": "np.uint8",
       "bool": "np.bool_", "complex64": "np.complex64", "complex128": "np.complex128"}
# The suffix of the scalar-math helpers for a float dtype (exp_f32, exp_f64).
FLOAT_SUFFIX = {"float32": "f32", "float64": "f64"}


def np_name(dtype):
    return _NP[dtype.name]


def check_dtype(dtype, what):
    if dtype.name not in SUPPORTED_DTYPES:
        raise Unsupported(f"the compiled backend does not support {dtype.name} ({what})")


def literal(value, dtype):
    """A typed constant expression: `np.float32(0.5)` (a bare 0.5 would make float32
    arithmetic float64 in Numba)."""
    if dtype.is_bool:
        return "True" if bool(value) else "False"
    if dtype.is_complex:
        return f"{np_name(dtype)}({complex(value)!r})"
    if dtype.is_floating:
        v = float(value)
        if math.isnan(v):
            text = "np.nan"
        elif math.isinf(v):
            text = "np.inf" if v > 0 else "-np.inf"
        else:
            text = repr(v)
        return f"{np_name(dtype)}({text})"
    return f"{np_name(dtype)}({int(value)})"


def cast(expr, dtype):
    """`expr` as `dtype`: `np.float32(expr)`, or `expr` itself where it already is one
    cast to that dtype (a typed literal, a Cast's template), so no cast repeats."""
    head = np_name(dtype) + "("
    if expr.startswith(head) and expr.endswith(")") and _closes_at_end(expr, len(head) - 1):
        return expr
    return f"{head}{expr})"


def _closes_at_end(expr, start):
    """Whether the parenthesis at `start` closes at the last character of `expr`."""
    depth = 0
    for i in range(start, len(expr)):
        depth += {"(": 1, ")": -1}.get(expr[i], 0)
        if depth == 0:
            return i == len(expr) - 1
    return False


def tuple_expr(items):
    items = list(items)
    if not items:
        return "()"
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def shape_tuple(items):
    """tuple_expr of an allocation's shape, its literal sizes as np.int64: Numba types a
    literal 1 in a tuple as Literal[int](1), and the allocation helpers would be compiled
    again for every pattern of literal sizes."""
    return tuple_expr(f"np.int64({x})" if str(x).isdigit() else str(x) for x in items)


def subscript(items):
    """The subscript of an index tuple: `[i, j]`, or `[()]` for a 0-d array."""
    items = list(items)
    return "[" + ", ".join(items) + "]" if items else "[()]"


def colons(n):
    return [":"] * n


def scalar_value(x):
    """The value of a one-element constant (as a float), else None."""
    if isinstance(x, Symbolic):
        return None
    a = np.asarray(x._value)
    if a.size != 1:
        return None
    return float(a.reshape(-1)[0]) if a.dtype.kind in "fiu" else None
