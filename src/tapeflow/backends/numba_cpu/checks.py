"""Lowerings of the run-time checks (ops/checks.py): CheckNumerics scans its input and
passes it on; Assert tests its condition. Each raises its node's error code, which
runtime.py turns into the InvalidArgumentError the NumPy kernel raises, with the user's
line."""

from ...ops.checks import ASSERT, CHECK_NUMERICS
from .generator import lowers

_PROBLEMS = {1: "NaN", 2: "Inf", 3: "Inf and NaN"}


def _flat(cg, x):
    if x.rank == 0:
        return cg.assign(f"reshaped(scalar_array({cg.scalar(x)}), 1)")
    return cg.assign(f"reshaped({cg.contiguous(x)}, {cg.product(cg.dims(x))})")


@lowers(CHECK_NUMERICS)
def _check_numerics(cg, node):
    x = cg.val(node.inputs[0])
    kind = cg.assign(f"nonfinite_kind({_flat(cg, x)})")
    message = node.attrs["message"]
    for value, problem in _PROBLEMS.items():
        code = cg.error("check", node, f"{message} : Tensor had {problem} values")
        cg.emit(f"if {kind} == {value}: raise ValueError({code})")
    cg.define(node.outputs[0], x)


@lowers(ASSERT)
def _assert(cg, node):
    condition = cg.val(node.inputs[0])
    code = cg.error("check", node, node.attrs["message"])
    cg.emit(f"if not all_true({_flat(cg, condition)}): raise ValueError({code})")
    cg.define(node.outputs[0], condition)
