"""Lowerings of the decompositions and matrix-structure ops (ops/decompositions.py,
ops/matrix.py): each input viewed as a stack of matrices (batch, rows, cols) goes
through its kernel in kernels/matrices.py, whose results are viewed back with the
input's batch dimensions."""

from ...ops.decompositions import CHOLESKY, LOG_MATRIX_DETERMINANT, QR, SELF_ADJOINT_EIG, SVD
from ...ops.lu import LU
from ...ops.matrix import CROSS, MATRIX_BAND_PART, MATRIX_SET_DIAG, MATRIX_TRIANGULAR_SOLVE
from ...ops.matrix_square_root import MATRIX_SQUARE_ROOT
from ...ops.tridiagonal import TRIDIAGONAL_SOLVE
from .generator import lowers
from .text import np_name, tuple_expr


def _unstacked(cg, node, result, batch_dims, k=None, trailing=2):
    """Defines output k (the only one: None) as the kernel's result (or its k-th), its
    stack axis split back into the batch dimensions."""
    array = result if k is None else f"{result}[{k}]"
    shape = batch_dims + [f"{array}.shape[{i + 1}]" for i in range(trailing)]
    cg.output(node, cg.assign(f"reshaped({array}, {tuple_expr(shape)})"), k=k or 0)


def _stacked_call(cg, node, kernel, *attrs):
    """The kernel called on the input as a stack of matrices; its name and the batch
    dimensions."""
    x3, dims = cg.batched(cg.val(node.inputs[0]))
    arguments = "".join(f", {node.attrs[a]}" for a in attrs)
    return cg.assign(f"{kernel}({x3}{arguments})"), dims[:-2]


@lowers(CHOLESKY)
def _cholesky(cg, node):
    _unstacked(cg, node, *_stacked_call(cg, node, "cholesky3"))


@lowers(MATRIX_BAND_PART)
def _band_part(cg, node):
    _unstacked(cg, node, *_stacked_call(cg, node, "band_part3", "num_lower", "num_upper"))


@lowers(QR)
def _qr(cg, node):
    found, batch = _stacked_call(cg, node, "qr3", "full_matrices")
    for k in range(2):
        _unstacked(cg, node, found, batch, k)


@lowers(SVD)
def _svd(cg, node):
    found, batch = _stacked_call(cg, node, "svd3", "compute_uv", "full_matrices")
    for k, trailing in enumerate((1, 2, 2)):
        _unstacked(cg, node, found, batch, k, trailing)


@lowers(SELF_ADJOINT_EIG)
def _eigh(cg, node):
    found, batch = _stacked_call(cg, node, "eigh3", "compute_v")
    for k, trailing in enumerate((1, 2)):
        _unstacked(cg, node, found, batch, k, trailing)


@lowers(MATRIX_SQUARE_ROOT)
def _sqrtm(cg, node):
    _unstacked(cg, node, *_stacked_call(cg, node, "sqrtm3"))


@lowers(LU)
def _lu(cg, node):
    found, batch = _stacked_call(cg, node, "lu3")
    _unstacked(cg, node, found, batch, 0)
    perm = cg.assign(f"cast_array({found}[1], {np_name(node.attrs['output_idx_type'])})")
    shape = tuple_expr(batch + [f"{perm}.shape[1]"])
    cg.output(node, cg.assign(f"reshaped({perm}, {shape})"), k=1)


@lowers(TRIDIAGONAL_SOLVE)
def _tridiagonal_solve(cg, node):
    diagonals, dims = cg.batched(cg.val(node.inputs[0]))
    rhs, _ = cg.batched(cg.val(node.inputs[1]))
    solved = cg.assign(f"tridiagonal_solve3({diagonals}, {rhs}, "
                       f"{node.attrs['partial_pivoting']}, {node.attrs['perturb_singular']})")
    _unstacked(cg, node, solved, dims[:-2])


@lowers(LOG_MATRIX_DETERMINANT)
def _slogdet(cg, node):
    found, batch = _stacked_call(cg, node, "slogdet3")
    for k in range(2):
        _unstacked(cg, node, found, batch, k, trailing=0)


@lowers(MATRIX_SET_DIAG)
def _set_diag(cg, node):
    x3, dims = cg.batched(cg.val(node.inputs[0]))
    d2, _ = cg.batched(cg.val(node.inputs[1]), 1)
    k = cg.runtime_ints([node.attrs["k"]])[0]
    _unstacked(cg, node, cg.assign(f"set_diag3({x3}, {d2}, {k})"), dims[:-2])


@lowers(CROSS)
def _cross(cg, node):
    a2, dims = cg.batched(cg.val(node.inputs[0]), 1)
    b2, _ = cg.batched(cg.val(node.inputs[1]), 1)
    _unstacked(cg, node, cg.assign(f"cross3({a2}, {b2})"), dims[:-1], trailing=1)


@lowers(MATRIX_TRIANGULAR_SOLVE)
def _triangular_solve(cg, node):
    y = node.outputs[0]
    operands = [cg.val(x) for x in node.inputs]
    batch = len(y._shape) - 2
    # The output's batch dimensions: known ones as numbers, the others from an operand
    # (the larger, where both have the dimension: a 1 broadcasts).
    batch_dims = []
    for d in range(batch):
        if y._shape[d] is not None:
            batch_dims.append(str(y._shape[d]))
            continue
        found = [cg.dims(v)[v.rank - 2 - batch + d] for v in operands
                 if v.rank - 2 - batch + d >= 0]
        batch_dims.append(found[0] if len(found) == 1 else f"max({', '.join(found)})")
    stacks = []
    for v in operands:
        dims = cg.dims(v)
        name = cg.contiguous(v)
        if tuple(v.shape[:-2]) != tuple(y._shape[:-2]) or None in v.shape[:-2]:
            name = cg.assign(f"contiguous(broadcast_view({name}, "
                             f"{tuple_expr(batch_dims + dims[-2:])}))")
        stacks.append(cg.assign(f"reshaped({name}, ({cg.product(batch_dims)}, "
                                f"{dims[-2]}, {dims[-1]}))"))
    solved = cg.assign(f"triangular_solve3({stacks[0]}, {stacks[1]}, "
                       f"{node.attrs['lower']}, {node.attrs['adjoint']})")
    _unstacked(cg, node, solved, batch_dims)
