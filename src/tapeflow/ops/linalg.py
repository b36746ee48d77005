"""Linear algebra: matmul, einsum, solve, inv, det, diag, trace, norms and tensordot."""

import functools
import re
import string

import numpy as np

from .. import dtypes
from ..dtypes import kernel_name
from ..errors import InvalidArgumentError, NotFoundError, UnimplementedError
from ..tensor import Tensor
from . import rules
from .dynamic import input_dims
from .elementwise import abs, cast, conj, equal, maximum, multiply, pow, sqrt, square, where
from .registry import OpDef, bind, register
from .rules import is_float, kernel_dims, unbroadcast


def _wide(fn):
    """A kernel that runs float16 in float32 (as TensorFlow accumulates half products)
    and without NumPy warnings: TensorFlow returns inf/nan silently."""
    def kernel(*arrays, **attrs):
        with np.errstate(all="ignore"):
            if arrays and arrays[0].dtype == np.float16:
                out = fn(*[a.astype(np.float32) for a in arrays], **attrs)
                return np.asarray(out).astype(np.float16)
            return fn(*arrays, **attrs)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


# TensorFlow's CPU product kernels, by op: the dtypes they serve, and those the op
# admits that no CPU kernel serves (NotFoundError, "Could not find device for node");
# any other dtype is the op's InvalidArgumentError.
_PRODUCT_DTYPES = {
    "MatMul": (("float16", "float32", "float64", "int32", "int64", "complex64", "complex128"),
               ("uint8",)),
    "BatchMatMulV2": (("float16", "float32", "float64", "int16", "int32", "int64",
                       "complex64", "complex128"), ("uint8",)),
    "Einsum": (("float16", "float32", "float64", "int32", "int64"),
               ("int8", "int16", "uint8", "bool")),
}


def _check_product_dtypes(op_name, operands):
    first = operands[0]
    if len(operands) > 1 and first.dtype is not operands[1].dtype:
        rules.check_same_dtype(op_name, operands)
    served, kernelless = _PRODUCT_DTYPES[op_name]
    name = first.dtype.name
    if name in served:
        return
    if name in kernelless:
        raise NotFoundError(f"Could not find device for node: {{{{node {op_name}}}}} = "
                            f"{op_name}[T=DT_{name.upper()}] [Op:{op_name}]", op=op_name)
    what = ", ".join(kernel_name(dtypes.as_dtype(d)) for d in served + kernelless)
    rules.check_dtype_in(op_name, first, lambda d: d.name in served, what)


# -- MatMul (2-D) and BatchMatMulV2 (batched, broadcasting batch dims) -----------------

def _matmul_infer(a, b, transpose_a, transpose_b):
    _check_product_dtypes("MatMul", (a, b))
    if len(a._shape) != 2 or len(b._shape) != 2:
        if len(a._shape) == len(b._shape):
            message = f"In[0] and In[1] ndims must be == 2: {len(a._shape)}"
        else:
            message = (f"In[0] and In[1] has different ndims: {kernel_dims(a._shape)} vs. "
                       f"{kernel_dims(b._shape)}")
        raise InvalidArgumentError(f"{message} [Op:MatMul]", op="MatMul")
    m, k = a._shape[::-1] if transpose_a else a._shape
    k2, n = b._shape[::-1] if transpose_b else b._shape
    if k != k2 and None not in (k, k2):  # an unknown one is compared when the graph runs
        raise InvalidArgumentError(
            f"Matrix size-incompatible: In[0]: {kernel_dims(a._shape)}, "
            f"In[1]: {kernel_dims(b._shape)} [Op:MatMul]", op="MatMul")
    return (m, n), a.dtype


def _matmul_kernel(a, b, transpose_a, transpose_b):
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


def _product_grads(product, a, b, dy, ta, tb, needs):
    """Gradients of op(a) @ op(b) (op: the adjoint when ta / tb) as two more products, the
    one table MatMul and BatchMatMulV2 share (TensorFlow's _MatMulGrad). MatMul's flags
    only transpose: its rule passes a and b conjugated, as TensorFlow's does."""
    if not ta and not tb:
        pairs = ((dy, b, False, True), (a, dy, True, False))
    elif not ta:
        pairs = ((dy, b, False, False), (dy, a, True, False))
    elif not tb:
        pairs = ((b, dy, False, True), (a, dy, False, False))
    else:
        pairs = ((b, dy, True, True), (dy, a, True, True))
    return tuple(product(*p) if need else None for p, need in zip(pairs, needs))


def _matmul_grad(ctx, dy):
    return _product_grads(_mm, conj(ctx.a), conj(ctx.b), dy, ctx.attrs["transpose_a"],
                          ctx.attrs["transpose_b"], ctx.needs)


def _mm(a, b, transpose_a, transpose_b):
    return bind(MATMUL, (a, b), {"transpose_a": transpose_a, "transpose_b": transpose_b})


MATMUL = register(OpDef(
    name="MatMul", args=("a", "b"), infer=_matmul_infer, eager=_wide(_matmul_kernel),
    saves=("a", "b"), grad=_matmul_grad))


def _batch_matmul_infer(x, y, adj_x, adj_y):
    _check_product_dtypes("BatchMatMulV2", (x, y))
    for i, t in enumerate((x, y)):
        if len(t._shape) < 2:
            raise InvalidArgumentError(
                f"In[{i}] ndims must be >= 2: {len(t._shape)} [Op:BatchMatMulV2]",
                op="BatchMatMulV2")
    try:
        batch = rules.broadcast_shapes("BatchMatMulV2", x._shape[:-2], y._shape[:-2])
    except InvalidArgumentError:
        raise InvalidArgumentError(
            f"In[0] and In[1] must have compatible batch dimensions: {kernel_dims(x._shape)} vs. "
            f"{kernel_dims(y._shape)} [Op:BatchMatMulV2]", op="BatchMatMulV2") from None
    m, k = x._shape[-2:][::-1] if adj_x else x._shape[-2:]
    k2, n = y._shape[-2:][::-1] if adj_y else y._shape[-2:]
    if k != k2 and None not in (k, k2):  # an unknown one is compared when the graph runs
        raise InvalidArgumentError(
            f"Matrix size-incompatible: In[0]: {kernel_dims(x._shape)}, "
            f"In[1]: {kernel_dims(y._shape)} {int(adj_x)} {int(adj_y)} [Op:BatchMatMulV2]",
            op="BatchMatMulV2")
    return tuple(batch) + (m, n), x.dtype


def _adjoint_values(x):
    x = np.swapaxes(x, -1, -2)
    return np.conjugate(x) if x.dtype.kind == "c" else x


def _batch_matmul_kernel(x, y, adj_x, adj_y):
    return np.matmul(_adjoint_values(x) if adj_x else x, _adjoint_values(y) if adj_y else y)


def _batch_matmul_grad(ctx, dy):
    gx, gy = _product_grads(_bmm, ctx.x, ctx.y, dy, ctx.attrs["adj_x"], ctx.attrs["adj_y"],
                            ctx.needs)
    # Broadcast batch dimensions are summed back to each input's shape.
    return unbroadcast(gx, ctx.shapes[0]), unbroadcast(gy, ctx.shapes[1])


def _bmm(x, y, adj_x, adj_y):
    if len(x._shape) == 2 and len(y._shape) == 2:  # MatMul transposes, BatchMatMul adjoins
        return _mm(conj(x) if adj_x else x, conj(y) if adj_y else y, adj_x, adj_y)
    return bind(BATCH_MATMUL, (x, y), {"adj_x": adj_x, "adj_y": adj_y})


BATCH_MATMUL = register(OpDef(
    name="BatchMatMulV2", args=("x", "y"), infer=_batch_matmul_infer,
    eager=_wide(_batch_matmul_kernel), saves=("x", "y"),
    grad=_batch_matmul_grad))


def _pair(a, b):
    if type(a) is Tensor and type(b) is Tensor:
        return a, b
    return rules.as_tensors(a, b)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False,
           grad_b=False, name=None):
    """Matrix product `a @ b` of the two innermost dimensions, as `tf.linalg.matmul`.

    Inputs of rank > 2 are batches of matrices whose batch dimensions broadcast; the
    dtypes must match. `transpose_*` transpose an operand first, `adjoint_*` transpose
    and conjugate it (the same thing for real dtypes).

    Raises:
      InvalidArgumentError: ranks below 2, mismatched inner dimensions or dtypes.

    >>> import tapeflow as tf
    >>> tf.matmul([[1., 2., 3.]], tf.ones((3, 2)))
    <tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[6., 6.]], dtype=float32)>
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of `transpose_a` and `adjoint_a` can be True. "
                         f"Received `transpose_a`={transpose_a}, `adjoint_a`={adjoint_a}.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of `transpose_b` and `adjoint_b` can be True. "
                         f"Received `transpose_b`={transpose_b}, `adjoint_b`={adjoint_b}.")
    a, b = _pair(a, b)
    if output_type is not None:
        a, b = cast(a, output_type), cast(b, output_type)
    ta, tb = bool(transpose_a or adjoint_a), bool(transpose_b or adjoint_b)
    if len(a._shape) > 2 or len(b._shape) > 2:
        # BatchMatMulV2 has adjoints only: a complex operand transposed is conjugated
        # twice, as TensorFlow does.
        a = conj(a) if transpose_a else a
        b = conj(b) if transpose_b else b
        return bind(BATCH_MATMUL, (a, b), {"adj_x": ta, "adj_y": tb})
    a = conj(a) if adjoint_a else a
    b = conj(b) if adjoint_b else b
    return bind(MATMUL, (a, b), {"transpose_a": ta, "transpose_b": tb})


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """Matrix-vector product of the innermost dimensions, as `tf.linalg.matvec`.

    >>> import tapeflow as tf
    >>> tf.linalg.matvec([[1., 2.], [3., 4.]], [1., 1.])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 7.], dtype=float32)>
    """
    from .shape import expand_dims, squeeze
    a, b = _pair(a, b)
    if len(b._shape) < 1:
        raise InvalidArgumentError(f"matvec needs a vector, got shape {list(b._shape)} "
                                   f"[Op:MatMul]", op="MatMul")
    product = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return squeeze(product, -1)


# -- Einsum ------------------------------------------------------------------------------

_EQUATION = re.compile(r"^([a-zA-Z,.]+)(->[a-zA-Z.]*)?$")


@functools.lru_cache(maxsize=512)
def _split(equation):
    """'ij,jk->ik' -> (('ij', 'jk'), 'ik') for a resolved (explicit, no '...') equation."""
    lhs, out = equation.split("->")
    return tuple(lhs.split(",")), out


def _einsum_infer(*operands, equation, broadcast):
    op_name = "Einsum"
    _check_product_dtypes(op_name, operands)
    ins, out = _split(equation)
    size = {}
    for i, (labels, x) in enumerate(zip(ins, operands)):
        if len(labels) != len(x._shape):
            raise InvalidArgumentError(
                f"Expected input {i} to have rank {len(labels)} but got: {len(x._shape)} "
                f"(equation {equation!r}) [Op:{op_name}]", op=op_name)
        for axis, (label, d) in enumerate(zip(labels, x._shape)):
            old = size.get(label)
            if old is None or old == d:
                size[label] = d
            elif label in broadcast and (old == 1 or d == 1):
                size[label] = max(old, d)
            else:
                raise InvalidArgumentError(
                    f"Expected dimension {old} at axis {axis} of the input shaped "
                    f"{kernel_dims(x._shape)} but got dimension {d} [Op:{op_name}]", op=op_name)
    return tuple(size[label] for label in out), operands[0].dtype


def _einsum_kernel(*arrays, equation, broadcast):
    big = sum(a.size for a in arrays) > 4096 and len(arrays) > 1
    return np.einsum(equation, *arrays, optimize=big)


def _einsum_bind(equation, operands, broadcast=""):
    op = EINSUM if len(operands) == 2 else UNARY_EINSUM
    return bind(op, tuple(operands), {"equation": equation, "broadcast": broadcast})


def _fresh_labels(used, n):
    free = [c for c in string.ascii_letters if c not in used]
    if len(free) < n:
        raise ValueError("einsum: too many distinct labels (at most 52)")
    return free[:n]


def _operand_grad(ctx, i, dy, out, others):
    """Gradient of einsum operand i: dy contracted with the other operands, broadcast
    over the labels only this operand has, and put back on the diagonal for labels this
    operand repeats ('ii->i'). Its dimensions are ints, or int32 scalars read when the
    graph runs (input_dims), which broadcast_to and range take alike."""
    x_labels = _split(ctx.attrs["equation"])[0][i]
    unique = "".join(dict.fromkeys(x_labels))
    present = set(out).union(*[set(labels) for labels, _ in others])
    kept = "".join(label for label in unique if label in present)
    lhs = ",".join([out] + [labels for labels, _ in others])
    if lhs == kept:
        g = dy
    else:
        g = _einsum_bind(f"{lhs}->{kept}", [dy] + [t for _, t in others],
                         ctx.attrs["broadcast"])
    # Labels broadcast from size 1 in this operand: sum them back.
    ones = {label for label, d in zip(x_labels, ctx.shapes[i]) if d == 1}
    axes = [k for k, label in enumerate(kept) if label in ones and g._shape[k] != 1]
    if axes:
        from .reduce import reduce_sum
        g = reduce_sum(g, axis=axes, keepdims=True)
    if kept == x_labels:
        return g
    size = dict(zip(x_labels, input_dims(ctx, i)))
    if len(kept) < len(unique):  # labels summed away in the forward: broadcast back
        from .shape import broadcast_to, expand_dims
        for k, label in enumerate(unique):
            if label not in kept:
                g = expand_dims(g, k)
        g = broadcast_to(g, [size[label] for label in unique])
    if len(unique) < len(x_labels):  # repeated labels: embed on the diagonal
        fresh = iter(_fresh_labels(set(x_labels) | present, len(x_labels)))
        current, target, seen = unique, "", set()
        for label in x_labels:
            if label in seen:
                new = next(fresh)
                g = _einsum_bind(f"{current},{label}{new}->{current}{new}",
                                 [g, _identity(size[label], dy.dtype)])
                current += new
                target += new
            else:
                seen.add(label)
                target += label
        if current != target:
            g = _einsum_bind(f"{current}->{target}", [g])
    return g


def _identity(n, dtype):
    """The n x n identity matrix, for n an int or an int32 scalar (tf.eye takes ints)."""
    from .creation import range as range_
    from .shape import expand_dims
    indices = range_(n)
    return cast(equal(expand_dims(indices, 1), indices), dtype)


def _einsum_grad(ctx, dy):
    (la, lb), out = _split(ctx.attrs["equation"])
    return (_operand_grad(ctx, 0, dy, out, [(lb, ctx.b)]) if ctx.needs[0] else None,
            _operand_grad(ctx, 1, dy, out, [(la, ctx.a)]) if ctx.needs[1] else None)


def _unary_einsum_grad(ctx, dy):
    return (_operand_grad(ctx, 0, dy, _split(ctx.attrs["equation"])[1], []),)


EINSUM = register(OpDef(
    name="Einsum", args=("a", "b"), infer=_einsum_infer, eager=_wide(_einsum_kernel),
    saves=("a", "b"), grad=_einsum_grad, variadic=True))
# A one-operand einsum (trace, diagonal, transpose, sum): its gradient needs no saved
# value, and the table keeps a fixed arity per op, hence a separate entry.
UNARY_EINSUM = register(OpDef(
    name="UnaryEinsum", args=("a",), infer=_einsum_infer, eager=_wide(_einsum_kernel),
    saves=(), grad=_unary_einsum_grad))


@functools.lru_cache(maxsize=512)
def _resolve_equation(equation, ranks):
    """An explicit equation without '...' for operands of `ranks`, and the labels that
    stand for ellipsis dimensions (which broadcast)."""
    equation = equation.replace(" ", "")
    match = _EQUATION.match(equation)
    if not match:
        raise ValueError(f"Indices have incorrect format. Received: {equation}.")
    ins = match.group(1).split(",")
    out = match.group(2)[2:] if match.group(2) else None
    if len(ins) != len(ranks):
        raise ValueError(f'Got {len(ranks)} arguments for equation "{equation}", expecting '
                         f"{len(ins)}.")
    for labels in ins + ([out] if out is not None else []):
        if labels.count(".") not in (0, 3) or "." in labels.replace("...", ""):
            raise ValueError(f"Indices have incorrect format. Received: {equation}.")
    n_ellipsis = 0
    for labels, rank in zip(ins, ranks):
        if "..." in labels:
            n = rank - (len(labels) - 3)
            if n < 0:
                raise InvalidArgumentError(
                    f"Input has rank {rank}, fewer than the {len(labels) - 3} labels of "
                    f"'{labels}' [Op:Einsum]", op="Einsum")
            n_ellipsis = max(n_ellipsis, n)
    used = set(equation)
    ell = "".join(_fresh_labels(used, n_ellipsis))
    resolved = []
    for labels, rank in zip(ins, ranks):
        if "..." in labels:
            n = rank - (len(labels) - 3)
            labels = labels.replace("...", ell[len(ell) - n:] if n else "")
        resolved.append(labels)
    if out is None:
        counts = {}
        for labels in ins:
            for c in labels.replace(".", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    else:
        if ell and "..." not in out:
            raise ValueError(f"Output subscripts of {equation!r} must contain '...' when "
                             "the inputs do.")
        out = out.replace("...", ell)
        if len(set(out)) != len(out):
            raise ValueError(f"Output subscripts of {equation!r} repeat a label.")
        missing = set(out) - set("".join(resolved))
        if missing:  # TensorFlow checks the equation in Python: ValueError
            raise ValueError(
                f"Einsum: output subscripts contain the label {''.join(sorted(missing))} not "
                f"present in the input subscripts of {equation!r}")
    return tuple(resolved), out, ell


def einsum(equation, *inputs, **kwargs):
    """Tensor contraction over the Einstein-summation `equation`, as `tf.einsum`.

    Supports any number of operands (contracted pairwise, left to right), '...',
    implicit output ('ij,jk'), and repeated labels ('ii->i' takes a diagonal,
    'bxby->bxy' too); the gradient of a repeated label lands on the diagonal.

    >>> import tapeflow as tf
    >>> tf.einsum('ij,jk->ik', tf.ones((2, 3)), tf.ones((3, 2)))
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[3., 3.],
           [3., 3.]], dtype=float32)>
    """
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for this function: "
                        f"{', '.join(sorted(kwargs))}. Expected: name, optimize")
    if not inputs:
        raise ValueError("einsum needs at least one operand")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    operands = rules.as_tensors(*inputs)
    ins, out, ell = _resolve_equation(equation, tuple(len(x._shape) for x in operands))
    if len(operands) <= 2:
        return _einsum_bind(",".join(ins) + "->" + out, operands, ell)
    # Pairwise, left to right: keep the labels that later operands or the output need.
    current, labels = operands[0], ins[0]
    for k in range(1, len(operands)):
        later = set(out).union(*[set(s) for s in ins[k + 1:]])
        both = labels + ins[k]
        keep = "".join(c for c in dict.fromkeys(both) if c in later)
        target = out if k == len(operands) - 1 else keep
        current = _einsum_bind(f"{labels},{ins[k]}->{target}", [current, operands[k]], ell)
        labels = target
    return current


def tensordot(a, b, axes, name=None):
    """Sums the products of `a` and `b` over `axes`, as `tf.tensordot`.

    `axes` is an int N (the last N axes of `a` with the first N of `b`) or a pair of
    axis lists.
    """
    a, b = _pair(a, b)
    ra, rb = len(a._shape), len(b._shape)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"'axes' must be at least 0, got {n}.")
        if n > ra or n > rb:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a if n > ra else b}, got {n}.")
        axes_a, axes_b = list(range(ra - n, ra)), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"'axes' must be an integer or have length 2, got {axes}.") from None
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', "
                             f"{len(axes_a)} != {len(axes_b)}.")
    letters = string.ascii_letters
    if ra + rb > len(letters):
        raise ValueError("tensordot: too many dimensions")
    la = list(letters[:ra])
    lb = list(letters[ra:ra + rb])
    for i, j in zip(axes_a, axes_b):
        i, j = int(i), int(j)
        if not (-ra <= i < ra and -rb <= j < rb):
            raise ValueError(f"tensordot axes out of range: {axes}")
        if a._shape[i] != b._shape[j] and None not in (a._shape[i], b._shape[j]):
            raise InvalidArgumentError(
                f"Matrix size-incompatible: tensordot contracts axis {i} of "
                f"{kernel_dims(a._shape)} "
                f"(size {a._shape[i]}) with axis {j} of {kernel_dims(b._shape)} (size "
                f"{b._shape[j]}) [Op:MatMul]", op="MatMul")
        lb[j % rb] = la[i % ra]
    contracted = {la[int(i) % ra] for i in axes_a}
    out = "".join(c for c in la if c not in contracted) + "".join(
        c for c in lb if c not in contracted)
    return _einsum_bind(f"{''.join(la)},{''.join(lb)}->{out}", [a, b])


# -- matrix inverse, determinant, solve ----------------------------------------------

def _check_square(op_name, x, index=0, message="Input matrix must be square."):
    if len(x._shape) < 2:
        raise InvalidArgumentError(f"Input tensor {index} must have rank >= 2, got "
                                   f"{kernel_dims(x._shape)} [Op:{op_name}]", op=op_name)
    if x._shape[-1] != x._shape[-2]:
        raise InvalidArgumentError(f"{message} Got {kernel_dims(x._shape)} [Op:{op_name}]",
                                   op=op_name)


def _float_matrix(op_name, x):
    if not is_float(x.dtype):
        rules.check_dtype_in(op_name, x, is_float, "half, float, double")


def _inverse_infer(input, adjoint):
    _float_matrix("MatrixInverse", input)
    _check_square("MatrixInverse", input)
    return input._shape, input.dtype


# TensorFlow's words for a singular matrix, by op (the compiled kernels' too).
NOT_INVERTIBLE = {"MatrixInverse": "Input is not invertible.",
                  "MatrixSolve": "Input matrix is not invertible.",
                  "Lu": "Input is not invertible."}


def _inverse_kernel(input, adjoint):
    a = np.swapaxes(input, -1, -2) if adjoint else input
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(f"{NOT_INVERTIBLE['MatrixInverse']} [Op:MatrixInverse]",
                                   op="MatrixInverse") from None


def _inverse_grad(ctx, dy):
    # d(A^-1) = -A^-1 dA A^-1 (TensorFlow's _MatrixInverseGrad).
    ainv = ctx.out
    if ctx.attrs["adjoint"]:
        return (-_bmm(ainv, _bmm(dy, ainv, True, False), False, False),)
    return (-_bmm(ainv, _bmm(dy, ainv, False, True), True, False),)


MATRIX_INVERSE = register(OpDef(
    name="MatrixInverse", args=("input",), infer=_inverse_infer,
    eager=_wide(_inverse_kernel), saves=("out",), grad=_inverse_grad,
    domain=(-1.0, 1.0)))


def _det_infer(input):
    _float_matrix("MatrixDeterminant", input)
    _check_square("MatrixDeterminant", input)
    return input._shape[:-2], input.dtype


def _det_grad(ctx, dy):
    # d det(A) = det(A) * A^-T (TensorFlow's _MatrixDeterminantGrad).
    from .shape import reshape
    multipliers = reshape(dy * ctx.out, tuple(ctx.out._shape) + (1, 1))
    return (multipliers * bind(MATRIX_INVERSE, (ctx.input,), {"adjoint": True}),)


MATRIX_DETERMINANT = register(OpDef(
    name="MatrixDeterminant", args=("input",), infer=_det_infer,
    eager=_wide(lambda input: np.asarray(np.linalg.det(input))),
    saves=("input", "out"), grad=_det_grad, domain=(-1.0, 1.0)))


def _compatible(dims, others):
    """Whether two shapes of one rank may agree (an unknown dimension matches any)."""
    return all(a is None or b is None or a == b for a, b in zip(dims, others))


def _solve_infer(matrix, rhs, adjoint):
    op_name = "MatrixSolve"
    _float_matrix(op_name, matrix)
    rules.check_same_dtype(op_name, (matrix, rhs))
    for i, x in enumerate((matrix, rhs)):
        if len(x._shape) < 2:
            raise InvalidArgumentError(f"Input tensor {i} must have rank >= 2, got "
                                       f"{kernel_dims(x._shape)} [Op:{op_name}]", op=op_name)
    if len(matrix._shape) != len(rhs._shape):
        raise InvalidArgumentError(
            f"All input tensors must have the same rank: {kernel_dims(matrix._shape)} vs. "
            f"{kernel_dims(rhs._shape)} [Op:{op_name}]", op=op_name)
    if not _compatible(matrix._shape[:-2], rhs._shape[:-2]):
        raise InvalidArgumentError(
            f"All input tensors must have the same outer dimensions: {kernel_dims(matrix._shape)} "
            f"vs. {kernel_dims(rhs._shape)} [Op:{op_name}]", op=op_name)
    _check_square(op_name, matrix, 0, "First input (lhs) must be a square matrix.")
    if not _compatible(matrix._shape[-2:-1], rhs._shape[-2:-1]):
        raise InvalidArgumentError(
            "Input matrix and right-hand side must have the same number of rows: "
            f"{kernel_dims(matrix._shape)} vs. {kernel_dims(rhs._shape)} [Op:{op_name}]",
            op=op_name)
    return rhs._shape, rhs.dtype


def _solve_kernel(matrix, rhs, adjoint):
    a = np.swapaxes(matrix, -1, -2) if adjoint else matrix
    try:
        return np.linalg.solve(a, rhs)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(f"{NOT_INVERTIBLE['MatrixSolve']} [Op:MatrixSolve]",
                                   op="MatrixSolve") from None


def _solve_grad(ctx, dy):
    adjoint = ctx.attrs["adjoint"]
    grad_rhs = bind(MATRIX_SOLVE, (ctx.matrix, dy), {"adjoint": not adjoint})
    if not ctx.needs[0]:
        return None, grad_rhs
    if adjoint:
        grad_matrix = -_bmm(ctx.out, grad_rhs, False, True)
    else:
        grad_matrix = -_bmm(grad_rhs, ctx.out, False, True)
    return grad_matrix, grad_rhs


MATRIX_SOLVE = register(OpDef(
    name="MatrixSolve", args=("matrix", "rhs"), infer=_solve_infer,
    eager=_wide(_solve_kernel), saves=("matrix", "out"),
    grad=_solve_grad, domain=(-1.0, 1.0)))


def inv(input, adjoint=False, name=None):
    """The inverse of each square matrix in `input`, as `tf.linalg.inv`.

    Raises:
      InvalidArgumentError: non-float, non-square or singular input.
    """
    return bind(MATRIX_INVERSE, (rules.as_tensor(input),), {"adjoint": bool(adjoint)})


def det(input, name=None):
    """The determinant of each square matrix in `input`, as `tf.linalg.det`."""
    return bind(MATRIX_DETERMINANT, (rules.as_tensor(input),))


def solve(matrix, rhs, adjoint=False, name=None):
    """Solves `matrix @ x = rhs` for x (batch dimensions must match), as `tf.linalg.solve`.

    >>> import tapeflow as tf
    >>> tf.linalg.solve(tf.constant([[2., 0.], [0., 4.]]), tf.constant([[2.], [2.]]))
    <tf.Tensor: shape=(2, 1), dtype=float32, numpy=
    array([[1. ],
           [0.5]], dtype=float32)>
    """
    matrix, rhs = _pair(matrix, rhs)
    return bind(MATRIX_SOLVE, (matrix, rhs), {"adjoint": bool(adjoint)})


# -- diagonals and trace ------------------------------------------------------------------

def _diag_len(rows, cols, k):
    return max(0, min(rows + min(k, 0), cols - max(k, 0)))


def _diag_infer(diagonal, k, num_rows, num_cols, padding_value):
    op_name = "MatrixDiagV3"
    if not diagonal._shape:
        raise InvalidArgumentError("diagonal must be at least 1-dim, received shape: [] "
                                   f"[Op:{op_name}]", op=op_name)
    n = diagonal._shape[-1]
    min_rows, min_cols = n + max(-k, 0), n + max(k, 0)
    rows, cols = num_rows, num_cols
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if _diag_len(rows, cols, k) != n:
        raise InvalidArgumentError(
            f"The number of rows or columns is not consistent with the specified k={k} and "
            f"diagonal shape {kernel_dims(diagonal._shape)}: num_rows={rows}, num_cols={cols} "
            f"[Op:{op_name}]", op=op_name)
    return diagonal._shape[:-1] + (rows, cols), diagonal.dtype


def _diag_kernel(diagonal, k, num_rows, num_cols, padding_value):
    shape, _ = _diag_infer(_Aval(diagonal), k, num_rows, num_cols, padding_value)
    out = np.full(shape, padding_value, dtype=diagonal.dtype)
    n = diagonal.shape[-1]
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[..., rows, cols] = diagonal
    return out


class _Aval:
    """Just the shape and dtype of an array, for calling infer from a kernel."""

    def __init__(self, array):
        self._shape = array.shape
        from ..dtypes import from_numpy
        self.dtype = from_numpy(array.dtype)


def _diag_part_infer(input, k, padding_value):
    op_name = "MatrixDiagPartV3"
    if len(input._shape) < 2:
        raise InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {kernel_dims(input._shape)} "
            f"[Op:{op_name}]", op=op_name)
    rows, cols = input._shape[-2:]
    if (rows or cols) and not -rows < k < cols:
        raise InvalidArgumentError(
            f"Diagonal index k={k} is out of bounds for a {rows}x{cols} matrix "
            f"[Op:{op_name}]", op=op_name)
    return input._shape[:-2] + (_diag_len(rows, cols, k),), input.dtype


def _diag_part_kernel(input, k, padding_value):
    return np.ascontiguousarray(np.diagonal(input, offset=k, axis1=-2, axis2=-1))


MATRIX_DIAG = register(OpDef(
    name="MatrixDiagV3", args=("diagonal",), infer=_diag_infer, eager=_wide(_diag_kernel),
    saves=(),
    grad=lambda ctx, dy: (bind(MATRIX_DIAG_PART, (dy,), {"k": ctx.attrs["k"],
                                                         "padding_value": 0}),)))
MATRIX_DIAG_PART = register(OpDef(
    name="MatrixDiagPartV3", args=("input",), infer=_diag_part_infer,
    eager=_diag_part_kernel, saves=(),
    grad=lambda ctx, dy: (bind(MATRIX_DIAG, (dy,), {
        "k": ctx.attrs["k"], "num_rows": ctx.shapes[0][-2], "num_cols": ctx.shapes[0][-1],
        "padding_value": 0}),)))


def _diag_index(k):
    if isinstance(k, (list, tuple)):
        if len(k) == 2 and k[0] == k[1]:
            k = k[0]
        else:
            raise UnimplementedError("tapeflow supports one diagonal (an int k), not a band "
                                     f"of diagonals: k={k}")
    return int(k)


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Batched diagonal matrices with `diagonal`'s last axis on diagonal `k`, as
    `tf.linalg.diag`.

    >>> import tapeflow as tf
    >>> tf.linalg.diag([1, 2])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 0],
           [0, 2]], dtype=int32)>
    """
    x = rules.as_tensor(diagonal)
    return bind(MATRIX_DIAG, (x,), {"k": _diag_index(k), "num_rows": int(num_rows),
                                    "num_cols": int(num_cols),
                                    "padding_value": _python_scalar(padding_value)})


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):
    """The `k`-th diagonal of each innermost matrix, as `tf.linalg.diag_part`."""
    x = rules.as_tensor(input)
    return bind(MATRIX_DIAG_PART, (x,), {"k": _diag_index(k),
                                         "padding_value": _python_scalar(padding_value)})


def _python_scalar(value):
    value = np.asarray(value)
    if value.shape:
        raise ValueError(f"padding_value must be a scalar, got shape {list(value.shape)}")
    return value.item()


def trace(x, name=None):
    """Sum of the main diagonal of each innermost matrix, as `tf.linalg.trace`."""
    from .reduce import reduce_sum
    return reduce_sum(diag_part(x), axis=-1)


# -- norms ----------------------------------------------------------------------------------

def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector and matrix norms, as `tf.norm` (TensorFlow's formulas, so its gradients:
    the euclidean norm's gradient at exactly zero is nan, as in TensorFlow).

    ord: 'euclidean' (default), 'fro', 1, 2, np.inf or any p > 0 for vectors; 'euclidean',
    'fro', 1 or np.inf for matrices (axis a pair).

    >>> import tapeflow as tf
    >>> tf.norm(tf.constant([3.0, 4.0]))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>
    """
    from .reduce import reduce_max, reduce_sum
    from .shape import reshape
    keepdims = bool(keepdims)
    is_matrix_norm = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix_norm:
        axis = tuple(axis)
        if (not isinstance(axis[0], (int, np.integer)) or not isinstance(axis[1], (int, np.integer))
                or axis[0] == axis[1]):
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if not any(_same_ord(ord, s) for s in supported):
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
    else:
        if not (isinstance(axis, (int, np.integer)) or axis is None):
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        supported = ["euclidean", 1, 2, np.inf]
        if not any(_same_ord(ord, s) for s in supported) and (
                isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (int(axis),)
    x = rules.as_tensor(tensor)
    rank = len(x._shape)
    if axis is not None:
        for a in axis:
            if not -rank <= a < rank:
                raise InvalidArgumentError(
                    f"Invalid reduction dimension {a} for input with {rank} dimensions. "
                    "[Op:Sum]", op="Sum")
        axis = tuple(int(a) % rank for a in axis)
    if _same_ord(ord, "fro") or _same_ord(ord, "euclidean") or _same_ord(ord, 2):
        if is_matrix_norm and _same_ord(ord, 2):
            result = _spectral_norm(x, axis)
        else:
            result = sqrt(reduce_sum(x * x, axis, keepdims=True))
    else:
        result = abs(x)
        if _same_ord(ord, 1):
            result = reduce_sum(result, None if axis is None else axis[0], keepdims=True)
            if is_matrix_norm:
                result = reduce_max(result, axis[-1], keepdims=True)
        elif _same_ord(ord, np.inf):
            if is_matrix_norm:
                result = reduce_sum(result, axis[1], keepdims=True)
            result = reduce_max(result, None if axis is None else axis[0], keepdims=True)
        else:
            p = float(ord)
            result = pow(reduce_sum(pow(result, p), axis, keepdims=True), 1.0 / p)
    if not keepdims:
        dropped = range(rank) if axis is None else axis
        result = reshape(result, [d for i, d in enumerate(result._shape) if i not in dropped])
    return result


def _spectral_norm(x, axis):
    """The largest singular value of the matrices on `axis` (a pair), keeping both axes
    as size 1, as TensorFlow computes the matrix 2-norm."""
    from .decompositions import svd
    from .reduce import reduce_max
    from .shape import expand_dims, transpose
    rank = len(x._shape)
    perm = [i for i in range(rank) if i not in axis] + list(axis)
    largest = reduce_max(abs(svd(transpose(x, perm), compute_uv=False)), axis=-1)
    return transpose(expand_dims(expand_dims(largest, -1), -1), list(np.argsort(perm)))


def _same_ord(ord, value):
    if isinstance(ord, str) or isinstance(value, str):
        return ord == value
    try:
        return float(ord) == float(value)
    except (TypeError, ValueError):
        return False


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescales `t` so that its L2 norm over `axes` is at most `clip_norm`:
    `t * clip_norm / max(l2norm(t), clip_norm)`, TensorFlow's formula (and gradient,
    including its NaN-free handling of an all-zero `t`).

    >>> import tapeflow as tf
    >>> tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0.6, 0.8], dtype=float32)>
    """
    from .creation import ones_like
    from .elementwise import identity
    from .reduce import reduce_sum
    values = rules.as_tensor(t)
    if not is_float(values.dtype):  # TensorFlow fails in the Sqrt of the squared sum
        rules.check_dtype_in("Sqrt", values, is_float, "half, bfloat16, float, double")
    if isinstance(clip_norm, (int, float, np.integer, np.floating)):
        clip_norm = max(float(clip_norm), 0.0)
    else:
        clip_norm = cast(maximum(clip_norm, 0), values.dtype)
    l2sum = reduce_sum(values * values, axes, keepdims=True)
    pred = l2sum > 0
    # The two-where trick: no NaN gradient when t is all zeros.
    l2sum_safe = where(pred, l2sum, ones_like(l2sum))
    l2norm = where(pred, sqrt(l2sum_safe), l2sum)
    intermediate = multiply(values, clip_norm)
    if intermediate._shape != values._shape:
        raise ValueError(f"clip_norm of shape {list(rules.as_tensor(clip_norm)._shape)} "
                         f"would broadcast t of shape {list(values._shape)}")
    return identity(intermediate / maximum(l2norm, clip_norm))


def global_norm(t_list, name=None):
    """sqrt(sum of squares of every element of every tensor in `t_list`)."""
    from .reduce import reduce_sum
    from .shape import stack
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("t_list should be a sequence")
    sums = [reduce_sum(square(rules.as_tensor(t))) for t in t_list if t is not None]
    return sqrt(reduce_sum(stack(sums)))


__all__ = [
    "clip_by_norm",
    "det",
    "diag",
    "diag_part",
    "einsum",
    "global_norm",
    "inv",
    "matmul",
    "matvec",
    "norm",
    "solve",
    "tensordot",
    "trace",
]
