"""Lowerings of the gamma and Poisson draws (ops/shaped_draws.py): drawn in the kernel
from a Generator argument (random.stream: per call at top level, the call's stream inside
branches and loops), element by element as NumPy's array draws (kernels/draws.py)."""

import math

from ...ops.shaped_draws import (
    RANDOM_GAMMA,
    RANDOM_POISSON,
    STATELESS_GAMMA,
    integer_limit,
    poisson_overflow_message,
)
from ...tensor import Symbolic
from .generator import Param, lowers
from .random import stream
from .text import np_name, tuple_expr


def _shaped(cg, node, flat, dims):
    """Defines node's output as the flat draws `flat` cast to its dtype, shaped `dims`."""
    dtype = np_name(node.outputs[0].dtype)
    cg.output(node, cg.assign(f"reshaped(cast_array({flat}, {dtype}), {tuple_expr(dims)})"))


@lowers(RANDOM_GAMMA, RANDOM_POISSON)
def _parameterized(cg, node):
    helper = "gamma_draws" if node.op is RANDOM_GAMMA else "poisson_draws"
    parameter = cg.val(node.inputs[0])
    shape = node.attrs["shape"]
    flat = cg.assign(
        f"{helper}({stream(cg, node)}, {cg.contiguous(parameter)}, {math.prod(shape)})")
    dtype = node.outputs[0].dtype
    if dtype.is_integer:  # NaN, or a draw the dtype cannot hold: the NumPy kernel's error
        code = cg.error("check", node, poisson_overflow_message(dtype))
        cg.emit(f"if not all_true({flat} < {integer_limit(dtype)!r}): raise ValueError({code})")
    _shaped(cg, node, flat, [str(d) for d in shape] + cg.dims(parameter))


@lowers(STATELESS_GAMMA)
def _stateless_gamma(cg, node):
    seed, alpha = node.inputs
    dims = [str(d) for d in node.attrs["shape"]]
    alpha_array = cg.contiguous(cg.val(alpha))
    if alpha._shape != tuple(node.attrs["shape"]):
        alpha_array = cg.assign(
            f"contiguous(broadcast_view({alpha_array}, {tuple_expr(dims)}))")
    if isinstance(seed, Symbolic) or cg.nesting:
        # A seed known only when the kernel runs, or a draw that runs many times per call,
        # each from the seed's own generator: NumPy's kernel in object mode.
        values = f"cast_array({cg.contiguous(cg.val(seed))}, np.int64)"
        flat = f"stateless_gamma_draws({values}, {alpha_array}, {tuple_expr(dims)})"
    else:  # a constant seed: the caller makes its generator afresh at every call
        name = cg.fresh("S")
        cg.params.append(Param(name, "seeded", tuple(int(v) for v in seed.numpy().reshape(-1)),
                               None, 0))
        cg.used.add(name)
        flat = f"gamma_draws({name}, {alpha_array}, 1)"
    _shaped(cg, node, flat, dims)
