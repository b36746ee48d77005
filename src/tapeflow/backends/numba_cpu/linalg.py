"""Lowerings of the matrix ops: products (OpenBLAS or microgemm, else np.dot or loops),
batched products, inverse, determinant, solve, diagonals, and einsum as nested loops."""

import numpy as np

from ... import dtypes
from ...ops.linalg import (
    BATCH_MATMUL,
    EINSUM,
    MATMUL,
    MATRIX_DETERMINANT,
    MATRIX_DIAG,
    MATRIX_DIAG_PART,
    MATRIX_INVERSE,
    MATRIX_SOLVE,
    UNARY_EINSUM,
)
from .generator import Val, lowers
from .text import literal, np_name, subscript, tuple_expr


def _microgemm_may_pay(node):
    """Whether a product may go to microgemm at run time: float32, and a size that is
    unknown or large enough. The others call OpenBLAS only, so their kernels neither
    wait for microgemm's compile nor link to it."""
    from .kernels import gemm_shape
    y = node.outputs[0]
    if y.dtype._np != np.float32 or not gemm_shape.ENABLED:
        return False
    a = node.inputs[0]
    depth = a._shape[-2] if node.attrs["transpose_a"] else a._shape[-1]
    m, n = y._shape
    if None in (m, n, depth):
        return True
    return gemm_shape.pays(m, n, depth)


@lowers(MATMUL)
def _matmul(cg, node):
    a, b = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    an, bn = cg.contiguous(a), cg.contiguous(b)
    _check_inner_dims(cg, node, a, b, node.attrs["transpose_a"], node.attrs["transpose_b"])
    from .kernels import numpy_blas
    if numpy_blas.LIBRARY and y.dtype._np in numpy_blas.SYMBOLS:
        ta, tb = bool(node.attrs["transpose_a"]), bool(node.attrs["transpose_b"])
        helper = "gemm" if _microgemm_may_pay(node) else "blas_gemm"
        # np.bool_: a literal True or False would compile the helper once per pair
        name = cg.assign(f"{helper}({an}, {bn}, np.bool_({ta}), np.bool_({tb}))")
        cg.define(y, Val(name, y.dtype, y._shape, "C", owner=id(y)))
        return
    an = f"{an}.T" if node.attrs["transpose_a"] else an
    bn = f"{bn}.T" if node.attrs["transpose_b"] else bn
    if y.dtype.is_floating or y.dtype.is_complex:
        cg.output(node, cg.assign(f"np.dot({an}, {bn})"))
    else:
        cg.output(node, cg.assign(f"matmul_loops({an}, {bn})"))


@lowers(BATCH_MATMUL)
def _batch_matmul(cg, node):
    x, y_in = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    _check_batch_dims(cg, node, x, y_in)
    _check_inner_dims(cg, node, x, y_in, node.attrs["adj_x"], node.attrs["adj_y"])
    batch = len(y._shape) - 2
    names = []
    batch_dims = [None] * batch
    for v in (x, y_in):
        dims = cg.dims(v)
        vb = v.rank - 2
        for j in range(vb):
            d = batch - vb + j
            if not (v.shape[j] == 1 and y._shape[d] != 1) and batch_dims[d] is None:
                batch_dims[d] = dims[j]
    batch_dims = [d if d is not None else "1" for d in batch_dims]
    for v in (x, y_in):
        dims = cg.dims(v)
        vb = v.rank - 2
        full = vb == batch and all(not (v.shape[j] == 1 and y._shape[j] != 1)
                                   for j in range(vb))
        name = cg.array(v)
        if not full:
            name = cg.assign(f"contiguous(broadcast_view({name}, "
                               f"{tuple_expr(batch_dims + dims[-2:])}))")
        else:
            name = cg.contiguous(v)
        names.append(cg.assign(f"reshaped({name}, ({cg.product(batch_dims)}, "
                                 f"{dims[-2]}, {dims[-1]}))"))
    if y.dtype.is_complex:  # bmm3 transposes; an adjoint conjugates too
        names = [cg.assign(f"np.conj({n})") if adj else n
                 for n, adj in zip(names, (node.attrs["adj_x"], node.attrs["adj_y"]))]
    out = cg.assign(f"bmm3({names[0]}, {names[1]}, np.bool_({node.attrs['adj_x']}), "
                      f"np.bool_({node.attrs['adj_y']}))")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(batch_dims + [f'{out}.shape[1]', f'{out}.shape[2]'])})"))


def _check_inner_dims(cg, node, a, b, adj_a, adj_b):
    """Matrix products whose inner dimensions were unknown while tracing compare them
    before multiplying: BLAS and the loops would read past the shorter operand."""
    ka = a.shape[-2] if adj_a else a.shape[-1]
    kb = b.shape[-1] if adj_b else b.shape[-2]
    if ka is not None and kb is not None:
        return
    dims_a, dims_b = cg.dims(a), cg.dims(b)
    flags = f" {int(adj_a)} {int(adj_b)}" if node.op is BATCH_MATMUL else ""
    code = cg.error("matmul_size", node, {"split": a.rank, "flags": flags})
    inner_a = dims_a[-2] if adj_a else dims_a[-1]
    inner_b = dims_b[-1] if adj_b else dims_b[-2]
    cg.emit(f"if {inner_a} != {inner_b}: raise ValueError({code}, "
            f"{', '.join(dims_a + dims_b)})")


def _check_batch_dims(cg, node, x, y):
    """Batch dimensions unknown while tracing must broadcast when the kernel runs."""
    dims_x, dims_y = cg.dims(x), cg.dims(y)
    code = cg.error("batch_dims", node, {"split": x.rank})
    for k in range(1, min(x.rank, y.rank) - 1):
        a, b = x.shape[-2 - k], y.shape[-2 - k]
        if a is None or b is None:
            da, db = dims_x[-2 - k], dims_y[-2 - k]
            cg.emit(f"if {da} != {db} and {da} != 1 and {db} != 1: "
                    f"raise ValueError({code}, {', '.join(dims_x + dims_y)})")


@lowers(MATRIX_INVERSE)
def _inverse(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = cg.batched(x)
    out = cg.assign(f"inv3({x3}, {node.attrs['adjoint']})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims)})"))


@lowers(MATRIX_DETERMINANT)
def _det(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = cg.batched(x)
    out = cg.assign(f"det3({x3})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims[:-2])})"))


@lowers(MATRIX_SOLVE)
def _solve(cg, node):
    a, b = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    a3, _ = cg.batched(a)
    b3, dims = cg.batched(b)
    out = cg.assign(f"solve3({a3}, {b3}, {node.attrs['adjoint']})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims)})"))


@lowers(MATRIX_DIAG)
def _diag(cg, node):
    d = cg.val(node.inputs[0])
    y = node.outputs[0]
    a = node.attrs
    d2, dims = cg.batched(d, 1)
    rows, cols = cg.runtime_ints([a["num_rows"], a["num_cols"]])
    k = cg.runtime_ints([a["k"]])[0]
    out = cg.assign(f"diag3({d2}, {k}, {rows}, {cols}, "
                      f"{literal(a['padding_value'], y.dtype)})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims[:-1] + [f'{out}.shape[1]', f'{out}.shape[2]'])})"))


@lowers(MATRIX_DIAG_PART)
def _diag_part(cg, node):
    x = cg.val(node.inputs[0])
    x3, dims = cg.batched(x)
    k = cg.runtime_ints([node.attrs["k"]])[0]
    out = cg.assign(f"diag_part3({x3}, {k})")
    cg.output(node, cg.assign(f"reshaped({out}, {tuple_expr(dims[:-2] + [f'{out}.shape[1]'])})"))
# -- einsum: nested loops over every label -------------------------------------------------------

@lowers(EINSUM, UNARY_EINSUM)
def _einsum(cg, node):
    from ...ops.linalg import _split
    operands = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    ins, out_labels = _split(node.attrs["equation"])
    broadcast = set(node.attrs["broadcast"])
    names = [cg.array(v) for v in operands]
    size = {}
    stride = {}  # (operand, axis) -> 0/1 multiplier for broadcast labels
    unknown = {label for v, labels in zip(operands, ins)
               for label, d in zip(labels, v.shape) if d is None}
    for k, (labels, name) in enumerate(zip(ins, names)):
        for axis, label in enumerate(labels):
            dim = f"{name}.shape[{axis}]"
            if label in broadcast:
                m = cg.fresh("s")
                cg.emit(f"{m} = 0 if {dim} == 1 else 1")
                stride[(k, axis)] = m
                size[label] = dim if label not in size else f"max({size[label]}, {dim})"
            elif label not in size:
                size[label] = dim
            elif label in unknown:
                # Unknown while tracing: the loops below would index past the shorter.
                code = cg.error("einsum_dim", node, axis)
                cg.emit(f"if {dim} != {size[label]}: raise ValueError({code}, {size[label]}, "
                        f"{dim}, {', '.join(cg.dims(operands[k]))})")
    sizes = {}
    for label, expr in size.items():
        sizes[label] = cg.fresh("n")
        cg.emit(f"{sizes[label]} = {expr}")
    acc_dt = dtypes.float64 if y.dtype.is_floating else (
        dtypes.int64 if y.dtype.is_integer else y.dtype)
    out = cg.new_array(y, [sizes[label] for label in out_labels])
    index = {label: cg.fresh("i") for label in size}
    for label in out_labels:
        cg.emit(f"for {index[label]} in range({sizes[label]}):")
        cg.depth += 1
    acc = cg.fresh("p")
    cg.emit(f"{acc} = {literal(0, acc_dt)}")
    summed = [label for label in size if label not in out_labels]
    for label in summed:
        cg.emit(f"for {index[label]} in range({sizes[label]}):")
        cg.depth += 1
    factors = []
    for k, (labels, name) in enumerate(zip(ins, names)):
        idx = [index[label] if (k, axis) not in stride else
               f"{index[label]} * {stride[(k, axis)]}" for axis, label in enumerate(labels)]
        factors.append(f"{np_name(acc_dt)}({name}{subscript(idx)})")
    cg.emit(f"{acc} += {' * '.join(factors)}")
    cg.depth -= len(summed)
    cg.emit(f"{out}{subscript([index[label] for label in out_labels])} = "
            f"{np_name(y.dtype)}({acc})")
    cg.depth -= len(out_labels)
    cg.output(node, out)


# Fused loops, and the lowerings of lists, conds and loops, live in their own modules
# (each imports the names above).
