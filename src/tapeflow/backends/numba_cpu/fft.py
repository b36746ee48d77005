"""Lowerings of the Fourier transforms (ops/fft.py): a call of their helper in
kernels/fourier.py, which runs NumPy's FFT in object mode."""

from ...ops.fft import FORWARD, INVERSE, INVERSE_REAL_FFT, REAL_FFT
from .generator import lowers
from .text import tuple_expr


@lowers(*FORWARD.values(), *INVERSE.values())
def _complex_transform(cg, node):
    rank = _rank(node)
    inverse = node.op in INVERSE.values()
    x = cg.contiguous(cg.val(node.inputs[0]))
    cg.output(node, cg.assign(f"complex_transform({x}, {rank}, {inverse})"))


def _rank(node):
    return next(r for table in (FORWARD, INVERSE, REAL_FFT, INVERSE_REAL_FFT)
                for r, op in table.items() if op is node.op)


@lowers(*REAL_FFT.values())
def _real_transform(cg, node):
    x = cg.contiguous(cg.val(node.inputs[0]))
    lengths = tuple_expr(str(n) for n in node.attrs["fft_length"])
    cg.output(node, cg.assign(f"real_transform({x}, {lengths})"))


@lowers(*INVERSE_REAL_FFT.values())
def _inverse_real_transform(cg, node):
    x = cg.contiguous(cg.val(node.inputs[0]))
    lengths = tuple_expr(str(n) for n in node.attrs["fft_length"])
    cg.output(node, cg.assign(f"inverse_real_transform({x}, {lengths})"))
