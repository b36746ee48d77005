"""One batching rule per op of the table: how to run the op once on stacked inputs.

A rule receives the op's inputs (some Batched: a leading axis of size `batch` stacked
behind a per-example shape) and returns its outputs, Batched. Most rules move the op's
axes one place to the right; ops that address positions (gather, scatter, segment sums)
get the batch position as one more index coordinate. Each rule is attached to its
OpDefs (`@batches(MATMUL)`: OpDef.batch); elementwise ops and reductions without one
get elementwise_rule and reduction_rule, by their flags.
"""

import numpy as np

from .batching import Batched, NotBatchable, NoVectorizedForm, batches, stacked
from .decompositions import CHOLESKY, LOG_MATRIX_DETERMINANT, QR, SELF_ADJOINT_EIG, SVD
from .convolution import CONVOLUTIONS, batched_convolution
from .creation import CONST_FILL, EYE, FILL, LINSPACE, ONES_LIKE, RANGE, ZEROS_LIKE
from .dynamic import DYNAMIC_BROADCAST_TO, DYNAMIC_RESHAPE, DYNAMIC_STRIDED_SLICE_GRAD
from .elementwise import (ADD, CLIP_BY_VALUE, GREATER, IDENTITY, MUL, NEG, RELU_GRAD, SELECT,
                          conj)
from .indexing import (
    GATHER,
    GATHER_ND,
    ONE_HOT,
    SCATTER_ND,
    SEGMENT_SUM,
    SLICE,
    SLICE_INDEX,
    STRIDED_SLICE,
    STRIDED_SLICE_GRAD,
    TENSOR_SCATTER_ADD,
    WHERE,
)
from .linalg import (
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
from .lu import LU
from .matrix import CROSS, MATRIX_BAND_PART, MATRIX_SET_DIAG, MATRIX_TRIANGULAR_SOLVE
from .matrix_square_root import MATRIX_SQUARE_ROOT
from .tridiagonal import TRIDIAGONAL_SOLVE
from .pooling import POOLS, batched_pooling
from .lists import TENSOR_LIST_POP_BACK, TENSOR_LIST_PUSH_BACK
from .fft import FFT_OPS
from .nn import BIAS_ADD, L2_LOSS, LOG_SOFTMAX, SOFTMAX, SOFTMAX_XENT, SPARSE_SOFTMAX_XENT
from .random import (
    RANDOM_SHUFFLE,
    RANDOM_STANDARD_NORMAL,
    RANDOM_UNIFORM,
    RANDOM_UNIFORM_INT,
    TRUNCATED_NORMAL,
)
from .reduce import ARG_MAX, ARG_MIN, CUMPROD, CUMSUM, SUM, reduce_all
from .checks import ASSERT, CHECK_NUMERICS
from .ctc import CTC_LOSS
from .segment_reductions import SEGMENT_OPS
from .candidate_sampling import SAMPLERS
from .shaped_draws import RANDOM_GAMMA, RANDOM_POISSON, STATELESS_GAMMA
from .stateless import STATELESS_DRAWS
from .searching import LOWER_BOUND, UNIQUE, UNIQUE_WITH_COUNTS, UPPER_BOUND
from .sorting import TOP_K
from .registry import bind
from .shape import (
    BROADCAST_TO,
    CONCAT,
    EXPAND_DIMS,
    MIRROR_PAD,
    MIRROR_PAD_GRAD,
    PACK,
    PAD,
    PAD_TO,
    RANK,
    RESHAPE,
    REVERSE,
    SHAPE,
    SIZE,
    SPLIT,
    SQUEEZE,
    TILE,
    TRANSPOSE,
    UNPACK,
)


def _bind(op, inputs, **attrs):
    return bind(op, list(inputs), attrs)


def _reshape(x, shape):
    return x if tuple(x._shape) == tuple(shape) else _bind(RESHAPE, [x], shape=tuple(shape))


def _transpose(x, perm):
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else _bind(TRANSPOSE, [x], perm=perm)


def _axis(axis, rank):
    """A per-example axis (negative allowed) as the axis of the stacked array."""
    return (axis % rank if rank else 0) + 1


def _padded(x, rank, batch):
    """x's stack with size-1 axes after the batch axis, so that it has `rank` per-example
    dimensions and broadcasts against per-example values of that rank."""
    inner = x.inner
    for _ in range(rank - len(x._shape)):
        inner = _bind(EXPAND_DIMS, [inner], axis=1)
    return inner


def _full(x, shape, batch):
    """x's stack broadcast to (batch,) + shape."""
    target = (batch,) + tuple(shape)
    if type(x) is not Batched and tuple(x._shape) == tuple(shape):
        return stacked(x, batch)
    if type(x) is Batched:
        inner = _padded(x, len(shape), batch)
    elif None not in x._shape:
        inner = _reshape(x, (1,) * (len(shape) - len(x._shape) + 1) + tuple(x._shape))
    else:
        inner = None
    if inner is not None and inner._shape == target:
        return inner
    if inner is None or None in target:
        raise NotBatchable(f"broadcasting to {list(shape)}, a shape known only at run time")
    return _bind(BROADCAST_TO, [inner], shape=target)


def _out(result, op):
    if op.n_out == 1:
        return Batched(result)
    return [Batched(r) for r in result]


# -- elementwise ----------------------------------------------------------------------------

def elementwise_rule(op, inputs, attrs, batch):
    """Every elementwise op's: per-example values broadcast against the stacks once
    these get size-1 axes after the batch axis."""
    if not op.broadcasts:  # TensorFlow's *Grad helpers: (primal, dy) of one shape
        d = op.args.index("dy")
        primal, dy = inputs[1 - d], inputs[d]
        if type(primal) is not Batched:
            return _helper_on_cotangents(op, primal, dy, d, attrs)
        shape = inputs[0]._shape
        return Batched(bind(op, [_full(x, shape, batch) for x in inputs], attrs))
    if op is CLIP_BY_VALUE:
        # The bounds broadcast against t, never t against them: t is stacked in full.
        t, bounds = inputs[0], inputs[1:]
        rank = len(t._shape)
        return Batched(bind(op, [_full(t, t._shape, batch)] + [
            _padded(x, rank, batch) if type(x) is Batched else x for x in bounds], attrs))
    if op is MUL:
        a, b = inputs
        if type(a) is Batched and type(b) is not Batched and len(b._shape) <= len(a._shape):
            return _scaled(a, b)
        if type(b) is Batched and type(a) is not Batched and len(a._shape) <= len(b._shape):
            return _scaled(b, a)
    rank = max(len(x._shape) for x in inputs)
    args = [_padded(x, rank, batch) if type(x) is Batched else x for x in inputs]
    out = Batched(bind(op, args, attrs))
    if (op is NEG or op is IDENTITY) and inputs[0].diagonal is not None:
        out.diagonal = bind(op, [inputs[0].diagonal], attrs)
    return out


def _helper_on_cotangents(op, primal, dy, d, attrs):
    """A *Grad helper on one primal and a stack of cotangents: dy times the derivative,
    computed once, unbatched (op(primal, 1)), rather than on B copies of the primal.
    ReluGrad selects instead of multiplying, so that an inf or NaN cotangent where the
    primal is not positive still gives 0, as the op does."""
    if op is RELU_GRAD:
        positive = _bind(GREATER, [primal, _zero(primal)])
        return Batched(_bind(SELECT, [positive, dy.inner, _bind(ZEROS_LIKE, [dy.inner])]))
    ones = _bind(ONES_LIKE, [primal])
    return _scaled(dy, bind(op, [primal, ones] if d == 1 else [ones, primal], attrs))


def _scaled(x, factor):
    """x (Batched) times an unbatched factor that broadcasts to x's per-example shape;
    a diagonal stack stays diagonal."""
    out = Batched(_bind(MUL, [x.inner, factor]))
    if x.diagonal is not None and None not in x._shape + factor._shape and (
            np.broadcast_shapes(x._shape, factor._shape) == x._shape):
        out.diagonal = _bind(MUL, [x.diagonal, factor])
    return out


def _zero(x):
    from ..tensor import wrap
    return wrap(np.zeros((), dtype=x.dtype._np))


@batches(ZEROS_LIKE, ONES_LIKE)
def _like(op, inputs, attrs, batch):
    return Batched(bind(op, [inputs[0].inner], attrs))


@batches(FILL)
def _fill(op, inputs, attrs, batch):
    shape = tuple(attrs["shape"])
    return Batched(_full(inputs[0], shape, batch))


# -- shapes ---------------------------------------------------------------------------------

@batches(RESHAPE)
def _reshape_rule(op, inputs, attrs, batch):
    return _reshaped(inputs[0], _reshape(inputs[0].inner, (batch,) + tuple(attrs["shape"])))


def _reshaped(x, inner):
    """Batched(inner), where inner holds x's examples in another shape, same flat order."""
    out = Batched(inner)
    if x.diagonal is not None:
        out.diagonal = _reshape(x.diagonal, inner._shape[1:])
    return out


@batches(TRANSPOSE)
def _transpose_rule(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape)
    return Batched(_transpose(inputs[0].inner, [0] + [_axis(p, rank) for p in attrs["perm"]]))


@batches(EXPAND_DIMS)
def _expand_dims(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape) + 1
    return _reshaped(inputs[0], bind(op, [inputs[0].inner],
                                     {"axis": _axis(attrs["axis"], rank)}))


@batches(SQUEEZE)
def _squeeze(op, inputs, attrs, batch):
    (x,) = inputs
    from .shape import _squeeze_dims
    axes = tuple(a % len(x._shape) + 1 for a in _squeeze_dims(x._shape, attrs["axis"]))
    return _reshaped(x, bind(op, [x.inner], {"axis": axes}))


@batches(BROADCAST_TO)
def _broadcast_to(op, inputs, attrs, batch):
    return Batched(_full(inputs[0], tuple(attrs["shape"]), batch))


@batches(PACK)
def _pack(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape) + 1
    values = [stacked(x, batch) for x in inputs]
    return Batched(bind(op, values, {**attrs, "axis": _axis(attrs["axis"], rank)}))


@batches(CONCAT)
def _concat(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape)
    values = [stacked(x, batch) for x in inputs]
    return Batched(bind(op, values, {**attrs, "axis": _axis(attrs["axis"], rank)}))


@batches(UNPACK, SPLIT, CUMSUM, CUMPROD, SOFTMAX, LOG_SOFTMAX, ARG_MAX, ARG_MIN)
def _one_axis(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape)
    return _out(bind(op, [inputs[0].inner], {**attrs, "axis": _axis(attrs["axis"], rank)}),
                op)


@batches(TILE)
def _tile(op, inputs, attrs, batch):
    return Batched(bind(op, [inputs[0].inner], {"multiples": (1,) + tuple(attrs["multiples"])}))


@batches(PAD)
def _pad(op, inputs, attrs, batch):
    x, constant = inputs
    if type(constant) is Batched:
        raise NotBatchable("PadV2 with a batched padding value")
    paddings = ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])
    return Batched(bind(op, [x.inner, constant], {**attrs, "paddings": paddings}))


@batches(MIRROR_PAD, MIRROR_PAD_GRAD)
def _mirror_pad(op, inputs, attrs, batch):
    paddings = ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])
    return Batched(bind(op, [inputs[0].inner], {**attrs, "paddings": paddings}))


def _leading(vector, value, rows):
    """An int tensor of begin/size (rows=False) or paddings (rows=True) with the batch
    axis's entry in front: the whole batch, unpadded."""
    if type(vector) is Batched:
        raise NotBatchable("slice bounds or paddings that differ between examples")
    from ..tensor import wrap
    front = wrap(np.full((1, 2) if rows else (1,), value, dtype=vector.dtype._np))
    return _bind(CONCAT, [front, vector], axis=0)


@batches(SLICE)
def _slice(op, inputs, attrs, batch):
    x, begin, size = inputs
    return Batched(bind(op, [stacked(x, batch), _leading(begin, 0, False),
                             _leading(size, -1, False)]))


@batches(PAD_TO)
def _pad_with_tensor(op, inputs, attrs, batch):
    x, paddings = inputs
    hint = attrs["hint"]
    return Batched(bind(op, [stacked(x, batch), _leading(paddings, 0, True)],
                        {"hint": None if hint is None else (batch,) + tuple(hint)}))


@batches(SLICE_INDEX)
def _slice_index(op, inputs, attrs, batch):
    x, index = inputs
    if type(index) is Batched:
        raise NotBatchable("a tensor index that differs between examples")
    return bind(op, [stacked(x, batch), index], {"dim": attrs["dim"] + 1})


_ALL = (None, None, None)  # the key of a full slice


@batches(STRIDED_SLICE)
def _strided_slice(op, inputs, attrs, batch):
    return Batched(bind(op, [inputs[0].inner], {"key": (_ALL,) + tuple(attrs["key"])}))


@batches(STRIDED_SLICE_GRAD)
def _strided_slice_grad(op, inputs, attrs, batch):
    return Batched(bind(op, [inputs[0].inner], {"shape": (batch,) + tuple(attrs["shape"]),
                                                "key": (_ALL,) + tuple(attrs["key"])}))


def _batched_shape(shape, batch):
    """The int shape vector of a dynamic-shape op, with the batch dimension in front."""
    if type(shape) is Batched:
        raise NotBatchable("a shape that differs between examples")
    from ..tensor import convert_to_tensor
    from .shape import concat
    return concat([convert_to_tensor([batch], dtype=shape.dtype), shape], 0)


def _batched_hint(hint, rank, batch):
    return (batch,) + (tuple(hint) if hint is not None else (None,) * rank)


@batches(DYNAMIC_RESHAPE)
def _dynamic_reshape(op, inputs, attrs, batch):
    x, shape = inputs
    return _reshaped(x, bind(op, [x.inner, _batched_shape(shape, batch)],
                             {"hint": _batched_hint(attrs["hint"], shape._shape[0], batch)}))


@batches(DYNAMIC_BROADCAST_TO)
def _dynamic_broadcast_to(op, inputs, attrs, batch):
    x, shape = inputs
    rank = shape._shape[0]
    return Batched(bind(op, [_padded(x, rank, batch), _batched_shape(shape, batch)],
                        {"hint": _batched_hint(attrs["hint"], rank, batch)}))


@batches(DYNAMIC_STRIDED_SLICE_GRAD)
def _dynamic_strided_slice_grad(op, inputs, attrs, batch):
    dy, shape = inputs
    return Batched(bind(op, [dy.inner, _batched_shape(shape, batch)],
                        {"key": (_ALL,) + tuple(attrs["key"]),
                         "hint": _batched_hint(attrs["hint"], shape._shape[0], batch)}))


@batches(REVERSE)
def _reverse(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape)
    return Batched(bind(op, [inputs[0].inner],
                        {"axis": tuple(_axis(a, rank) for a in attrs["axis"])}))


@batches(SHAPE, SIZE, RANK)
def _shape_of(op, inputs, attrs, batch):
    # The same for every example: computed from the per-example shape, unbatched.
    from ..tensor import wrap
    shape = inputs[0]._shape
    if None in shape:
        raise NotBatchable(f"{op.name} of a value whose shape is known only at run time")
    value = (shape if op is SHAPE else int(np.prod(shape, dtype=np.int64)) if op is SIZE
             else len(shape))
    return wrap(np.asarray(value, dtype=attrs["out_type"]._np))


@batches(ONE_HOT)
def _one_hot(op, inputs, attrs, batch):
    rank = len(inputs[0]._shape) + 1
    axis = attrs["axis"]
    axis = -1 if axis == -1 else _axis(axis, rank)
    return Batched(bind(op, [inputs[0].inner], {**attrs, "axis": axis}))


# -- positions: the batch index becomes one more coordinate ---------------------------------

@batches(GATHER)
def _gather(op, inputs, attrs, batch):
    params, indices = inputs
    rank = len(params._shape)
    axis = attrs["axis"] % rank
    batch_dims = attrs["batch_dims"]
    if batch_dims < 0:
        batch_dims += len(indices._shape)
    if type(indices) is not Batched and batch_dims == 0:
        return Batched(bind(op, [params.inner, indices], {"axis": axis + 1, "batch_dims": 0}))
    return Batched(bind(op, [stacked(params, batch), stacked(indices, batch)],
                        {"axis": axis + 1, "batch_dims": batch_dims + 1}))


def _with_batch_coordinate(indices, batch):
    """indices (..., k) of one example as indices (batch, ..., k + 1) into the stack."""
    full = stacked(indices, batch)
    lead = tuple(full._shape[:-1])
    column = np.arange(batch, dtype=indices.dtype._np).reshape((batch,) + (1,) * len(lead))
    from ..tensor import wrap
    column = _bind(BROADCAST_TO, [wrap(column)], shape=lead + (1,))
    return _bind(CONCAT, [column, full], axis=len(lead))


@batches(GATHER_ND)
def _gather_nd(op, inputs, attrs, batch):
    params, indices = inputs
    return Batched(bind(op, [stacked(params, batch), _with_batch_coordinate(indices, batch)],
                        attrs))


@batches(SCATTER_ND)
def _scatter_nd(op, inputs, attrs, batch):
    indices, updates = inputs
    return Batched(bind(op, [_with_batch_coordinate(indices, batch), stacked(updates, batch)],
                        {"shape": (batch,) + tuple(attrs["shape"])}))


@batches(TENSOR_SCATTER_ADD)
def _tensor_scatter_add(op, inputs, attrs, batch):
    tensor, indices, updates = inputs
    return Batched(bind(op, [stacked(tensor, batch), _with_batch_coordinate(indices, batch),
                             stacked(updates, batch)], attrs))


@batches(SEGMENT_SUM, *(SEGMENT_OPS[(kind, False)] for kind in ("max", "min", "prod")))
def _segment_sum(op, inputs, attrs, batch):
    # Example b's segment s becomes segment b * num_segments + s of one flat sum.
    data, ids = inputs
    segments = attrs["num_segments"]
    from ..tensor import wrap
    offsets = np.arange(batch, dtype=ids.dtype._np).reshape((batch,) + (1,) * len(ids._shape))
    stacked_ids = stacked(ids, batch)
    shifted = _bind(ADD, [stacked_ids, wrap(offsets * segments)])
    # A negative id drops its row, as TensorFlow does; shifted, it would land in the
    # previous example's last segment.
    kept = _bind(GREATER, [stacked_ids, wrap(np.asarray(-1, dtype=ids.dtype._np))])
    flat_ids = _bind(SELECT, [kept, shifted, stacked_ids])
    out = bind(op, [stacked(data, batch), flat_ids], {"num_segments": batch * segments})
    return Batched(_reshape(out, (batch, segments) + tuple(data._shape[len(ids._shape):])))


@batches(*(SEGMENT_OPS[(kind, True)] for kind in ("sum", "mean", "max", "min", "prod")))
def _sorted_segments(op, inputs, attrs, batch):
    # Every example shares the ids: the examples ride along as a trailing axis of rows.
    data, ids = inputs
    if type(ids) is Batched:
        raise NotBatchable(f"{op.name} with a stack of segment ids")
    rank = len(data._shape) + 1
    swap = [1, 0] + list(range(2, rank))
    out = bind(op, [_transpose(stacked(data, batch), swap), ids], attrs)
    return Batched(_transpose(out, swap))


# -- reductions -----------------------------------------------------------------------------

def reduction_rule(op, inputs, attrs, batch):
    """Every reduction over `axis` (OpDef.reduction): the same axes, one place right."""
    return Batched(bind(op, [inputs[0].inner],
                        {**attrs, "axis": tuple(a + 1 for a in attrs["axis"])}))


@batches(L2_LOSS)
def _l2_loss(op, inputs, attrs, batch):
    inner = inputs[0].inner
    axes = tuple(range(1, len(inner._shape)))
    squares = _bind(MUL, [inner, inner])
    total = _bind(SUM, [squares], axis=axes, keepdims=False)
    from ..tensor import wrap
    return Batched(_bind(MUL, [total, wrap(np.asarray(0.5, dtype=inner.dtype._np))]))


# -- matrices -------------------------------------------------------------------------------

@batches(MATMUL)
def _matmul(op, inputs, attrs, batch):
    a, b = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if type(b) is not Batched and not ta:
        m, k = a._shape
        if a.diagonal is not None and k == batch:
            # Example j is zero outside column j (v's column j): its product is the
            # outer product of that column with row j of op(b).
            rows = _transpose(b, (1, 0)) if tb else b
            columns = _reshape(_transpose(a.diagonal, (1, 0)), (batch, m, 1))
            return Batched(_bind(MUL, [columns, _reshape(rows, (batch, 1, rows._shape[1]))]))
        # One product: the examples' rows stacked on top of each other.
        product = bind(op, [_reshape(a.inner, (batch * m, k)), b], attrs)
        return Batched(_reshape(product, (batch, m, product._shape[-1])))
    if type(a) is not Batched and not tb and b._shape[1] == 1:
        if b.diagonal is not None and b._shape[0] == batch:
            # Example j is v_j e_j: its product is v_j times column j of op(a).
            rows = a if ta else _transpose(a, (1, 0))
            product = _bind(MUL, [rows, _reshape(b.diagonal, (b._shape[0], 1))])
            return Batched(_reshape(product, (batch, product._shape[1], 1)))
        # Matrix-vector products: the examples' vectors as the rows of one product.
        vectors = _reshape(b.inner, (batch, b._shape[0]))
        product = _bind(MATMUL, [vectors, a], transpose_a=False, transpose_b=not ta)
        return Batched(_reshape(product, (batch, product._shape[1], 1)))
    if type(a) is not Batched and not tb:
        # One product: the examples' columns side by side.
        k, n = b._shape
        columns = _reshape(_transpose(b.inner, (1, 0, 2)), (k, batch * n))
        product = bind(op, [a, columns], attrs)
        m = product._shape[0]
        return Batched(_transpose(_reshape(product, (m, batch, n)), (1, 0, 2)))
    args = [a.inner if type(a) is Batched else a, b.inner if type(b) is Batched else b]
    # BatchMatMulV2 takes adjoints where MatMul transposes: complex operands conjugated
    # first come out transposed only.
    args = [conj(v) if t else v for v, t in zip(args, (ta, tb))]
    return Batched(_bind(BATCH_MATMUL, args, adj_x=ta, adj_y=tb))


@batches(BATCH_MATMUL)
def _batch_matmul(op, inputs, attrs, batch):
    x, y = inputs
    rank = max(len(x._shape), len(y._shape))
    if type(y) is not Batched and len(y._shape) == 2 and not attrs["adj_x"]:
        k = x._shape[-1]
        flat = _reshape(x.inner, (-1, k))
        y = conj(y) if attrs["adj_y"] else y  # MatMul transposes, BatchMatMulV2 adjoins
        product = _bind(MATMUL, [flat, y], transpose_a=False, transpose_b=attrs["adj_y"])
        return Batched(_reshape(product, (batch,) + tuple(x._shape[:-1]) +
                                (product._shape[-1],)))
    args = [_padded(v, rank, batch) if type(v) is Batched else v for v in (x, y)]
    return Batched(bind(op, args, attrs))


def _fresh_label(equation):
    for label in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba":
        if label not in equation:
            return label
    raise NotBatchable("einsum equation uses every label")


@batches(EINSUM, UNARY_EINSUM)
def _einsum(op, inputs, attrs, batch):
    equation = attrs["equation"]
    label = _fresh_label(equation)
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    terms = [label + t if type(x) is Batched else t for t, x in zip(terms, inputs)]
    args = [x.inner if type(x) is Batched else x for x in inputs]
    return Batched(bind(op, args, {**attrs, "equation": f"{','.join(terms)}->{label}{out}"}))


@batches(MATRIX_INVERSE, MATRIX_DETERMINANT, MATRIX_DIAG, MATRIX_DIAG_PART, TOP_K, CHECK_NUMERICS)
@batches(CHOLESKY, QR, SVD, SELF_ADJOINT_EIG, LOG_MATRIX_DETERMINANT, MATRIX_BAND_PART)
@batches(LU, MATRIX_SQUARE_ROOT)
def _leading_batch(op, inputs, attrs, batch):
    # These ops already treat leading axes as a batch.
    return _out(bind(op, [inputs[0].inner], attrs), op)


@batches(ASSERT)
def _assert_all(op, inputs, attrs, batch):
    # One check of every example's condition; the stack passes on unchanged.
    condition = inputs[0]
    bind(op, [reduce_all(condition.inner)], attrs)
    return condition


@batches(MATRIX_SOLVE, LOWER_BOUND, UPPER_BOUND, MATRIX_SET_DIAG, CROSS, TRIDIAGONAL_SOLVE)
def _both_stacked(op, inputs, attrs, batch):
    # Ops that treat leading axes as a batch, of two inputs that must share it.
    first, second = inputs
    return Batched(bind(op, [stacked(first, batch), stacked(second, batch)], attrs))


@batches(MATRIX_TRIANGULAR_SOLVE)
def _broadcast_batch(op, inputs, attrs, batch):
    # Batch dimensions broadcast: a stack gets size-1 axes after its batch axis up to
    # the other operand's rank, so that its batch axis lines up with nothing else.
    rank = max(len(x._shape) for x in inputs)
    return Batched(bind(op, [_padded(x, rank, batch) if type(x) is Batched else x
                             for x in inputs], attrs))


# -- nn -------------------------------------------------------------------------------------

@batches(*FFT_OPS)
def _innermost_dims(op, inputs, attrs, batch):
    """Ops over their input's innermost dimensions: a leading stack axis is one more
    outer dimension."""
    return Batched(bind(op, [inputs[0].inner], attrs))


@batches(SOFTMAX_XENT)
def _xent(op, inputs, attrs, batch):
    features, labels = inputs
    rank = len(features._shape)
    return _out(bind(op, [stacked(features, batch), stacked(labels, batch)],
                     {**attrs, "axis": _axis(attrs["axis"], rank)}), op)


@batches(SPARSE_SOFTMAX_XENT)
def _sparse_xent(op, inputs, attrs, batch):
    features, labels = inputs
    classes = features._shape[-1]
    flat_features = _reshape(stacked(features, batch), (-1, classes))
    flat_labels = _reshape(stacked(labels, batch), (-1,))
    loss, backprop = bind(op, [flat_features, flat_labels], attrs)
    return [Batched(_reshape(loss, (batch,) + tuple(labels._shape))),
            Batched(_reshape(backprop, (batch,) + tuple(features._shape)))]


@batches(CTC_LOSS)
def _ctc_loss(op, inputs, attrs, batch):
    # The examples' sequences side by side: one batch of batch * B sequences.
    logits, labels, label_length, logit_length = inputs
    (frames, sequences, classes), width = logits._shape, labels._shape[1]
    if None in (frames, sequences, classes, width):
        raise NotBatchable("CTCLossDense with an unknown number of frames, sequences or "
                           "classes")
    rows = batch * sequences
    flat = _reshape(_transpose(stacked(logits, batch), (1, 0, 2, 3)), (frames, rows, classes))
    loss, grad = bind(op, [flat, _reshape(stacked(labels, batch), (rows, width)),
                           _reshape(stacked(label_length, batch), (rows,)),
                           _reshape(stacked(logit_length, batch), (rows,))], attrs)
    return [Batched(_reshape(loss, (batch, sequences))),
            Batched(_transpose(_reshape(grad, (frames, batch, sequences, classes)),
                               (1, 0, 2, 3)))]


@batches(BIAS_ADD)
def _bias_add(op, inputs, attrs, batch):
    value, bias = inputs
    from .nn import _channel_axis
    rank = len(value._shape)
    axis = _channel_axis(attrs["data_format"], rank)
    if type(bias) is not Batched and axis == rank - 1:
        return Batched(bind(op, [value.inner, bias], attrs))
    shape = [1] * rank
    shape[axis] = bias._shape[0]
    if type(bias) is Batched:
        bias = _reshape(bias.inner, [batch] + shape)
    else:
        bias = _reshape(bias, shape)
    return Batched(_bind(ADD, [stacked(value, batch), bias]))


@batches(*CONVOLUTIONS)
def _convolution(op, inputs, attrs, batch):
    return Batched(batched_convolution(op, inputs, attrs, batch))


@batches(*POOLS)
def _pooling(op, inputs, attrs, batch):
    return Batched(batched_pooling(op, inputs, attrs, batch))


# Ops without a vectorized form, and why: met in a vectorized walk, they raise
# NotBatchable, and the jacobian runs its per-row loop instead.
batches(WHERE, RANGE, LINSPACE, UNIQUE, UNIQUE_WITH_COUNTS)(
    NoVectorizedForm("its output's length depends on the values"))
batches(RANDOM_SHUFFLE, RANDOM_GAMMA, RANDOM_POISSON, *SAMPLERS)(
    NoVectorizedForm("stateful: one draw per call"))
batches(TENSOR_LIST_PUSH_BACK)(NoVectorizedForm("a list grows by one item per call"))
batches(*STATELESS_DRAWS, STATELESS_GAMMA)(NoVectorizedForm("integer seeds and states: nothing a jacobian "
                                           "differentiates flows through them"))
batches(TENSOR_LIST_POP_BACK)(NoVectorizedForm("a list shrinks by one item per call"))
# No tensor inputs, so never handed a Batched value:
batches(EYE, CONST_FILL, RANDOM_STANDARD_NORMAL, RANDOM_UNIFORM, TRUNCATED_NORMAL,
        RANDOM_UNIFORM_INT)(NoVectorizedForm("no tensor inputs"))
