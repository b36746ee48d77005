"""Lowerings of variable reads and assignments, and of a custom gradient's IdentityN: no
code of their own, they rebind the kernel's values."""

from ...graph.identity_n import IDENTITY_N
from ...graph.variables import ASSIGN_VARIABLE, READ_VARIABLE
from . import names
from .generator import Param, Val, lowers
from .text import Unsupported, check_dtype


@lowers(READ_VARIABLE)
def _read_variable(cg, node):
    index = node.attrs["index"]
    v = cg.variables.get(index)
    if v is None:
        var = cg.graph.variables[index]
        check_dtype(var.dtype, "a variable")
        name = f"v{index}"
        if not any(p.name == name for p in cg.params):
            cg.params.append(Param(name, "variable", index, var.dtype._np, len(var._shape)))
        v = Val(name, var.dtype, var._shape, "C")
        cg.readable.setdefault(name, names.identifier(var.name))
        cg.variables[index] = v
    cg.used.add(v.name)
    cg.define(node.outputs[0], v)


@lowers(IDENTITY_N)
def _identity_n(cg, node):
    # A custom gradient in a loaded function (graph/identity_n.py): its outputs are its
    # inputs; only its gradient differs.
    for x, y in zip(node.inputs, node.outputs):
        cg.define(y, cg.val(x))


@lowers(ASSIGN_VARIABLE)
def _assign_variable(cg, node):
    index = node.attrs["index"]
    v = cg.val(node.inputs[0])
    var = cg.graph.variables[index]
    if v.dtype is not var.dtype:
        raise Unsupported(f"assigning {v.dtype.name} to a {var.dtype.name} variable at "
                          f"{node.where()}")
    cg.variables[index] = Val(cg.array(v), v.dtype, v.shape, v.layout)
    if index not in cg.assigned:
        cg.assigned.append(index)
