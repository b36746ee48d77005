"""Array kernels of the ops that are not loops over elements (gather, scatter, scans,
softmax, ...), and the random draws inside compiled loops.

The generated code reshapes its operands to the fixed ranks these kernels take
((outer, axis, inner) and the like), so one kernel serves every rank and axis. Errors
raise with an integer code the caller turns into TensorFlow's error for the node.
"""

import numpy as np
from numba import types
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array

from . import array_helper as _array_jit
from . import helper as _jit
from . import inlined_helper as _inlined
from .allocation import empty_array, full_array, zeros_array
from .gemm import _blas_gemm_into
from .scalar_math import exp_t, log_t, maximum, radd_fast
from .views import c_order, c_view, cast_array, contiguous, copy_elements, reshaped


@_jit
def mirror_index(n, lo, hi, shift):
    """For each position of a mirror-padded axis, the source index (REFLECT: shift 0,
    SYMMETRIC: shift 1)."""
    out = empty_array(lo + n + hi, np.int64)
    for p in range(lo):
        out[p] = lo - p - shift
    for j in range(n):
        out[lo + j] = j
    for j in range(hi):
        out[lo + n + j] = n - 2 + shift - j
    return out


# Kernels copy arrays into parts of others with copy_flat, never `a[k] = b` or
# `a[:n] = b` with an array b: Numba compiles the formatting of that assignment's
# shape-mismatch message (string joins and reprs), seconds in every new process.

@_array_jit
def copy_flat(dst, offset, src):
    """Writes src's elements, in C order, to dst's flat positions from `offset` on (dst
    C-contiguous)."""
    flat = reshaped(dst, dst.size)
    values = c_order(src)
    for i in range(values.size):
        flat[offset + i] = values[i]


# flat_view chooses its code by type, as an overload, and kernels call it through a
# helper: Numba compiles an overload's code again in every process, but a helper's
# machine code is cached.

@_array_jit
def copy_into(dst, src):
    """dst[...] = src for two arrays of one shape, any layouts (a region of a bigger
    array: a part of a concatenation, the inside of a padding), that share no memory."""
    copy_elements(dst, src)


@_jit
def flat_view(a):
    """a's elements in C order as a one-dimensional view (a C-contiguous)."""
    return _flat(a)


def _flat(a):
    return reshaped(a, a.size)


@overload(_flat, jit_options={"error_model": "numpy"})
def _flat_by_type(a):
    if a.layout == "C":
        return lambda a: _c_flat(a)

    def checked(a):  # Numba typed it a view: contiguous when the kernel runs, or no view
        if not a.flags.c_contiguous:
            raise ValueError("flat_view of an array that is not C-contiguous")
        return _c_flat(a)
    return checked


@intrinsic
def _c_flat(typingctx, a):
    """The view itself, built in place: a Numba reshape is a runtime call (~30 ns), which
    a fused loop inside a tensor loop pays at every step."""
    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, value=args[0])
        return c_view(context, builder, src, [src.nitems], sig.return_type)
    return a.copy(ndim=1, layout="C")(a), codegen


@_jit
def reshape_dim(shape, size, i):
    """Dimension i of a reshape of `size` elements to `shape`, whose one -1 is what the
    other dimensions leave."""
    if shape[i] != -1:
        return np.int64(shape[i])
    known = np.int64(1)
    for j in range(shape.shape[0]):
        if j != i:
            known *= np.int64(shape[j])
    return np.int64(size) // known if known else np.int64(0)


@_jit
def check_reshape_target(shape, two_unknowns, negative):
    """Raises (a code, and the positions or value) unless `shape` has at most one -1 and
    no other negative entry, as TensorFlow's Reshape requires."""
    unknown = -1
    for i in range(shape.shape[0]):
        if shape[i] == -1:
            if unknown >= 0:
                raise ValueError(two_unknowns, unknown, i)
            unknown = i
        elif shape[i] < -1:
            raise ValueError(negative, i, shape[i])


@_jit
def slice_sizes(shape, begin, size, wrong_rank, empty, bad_begin, bad_size):
    """The extents of TensorFlow's Slice of an array of `shape` (each -1 resolved to the
    rest of its dimension), after its checks, each raising its code and the values
    its message names: begin and size of the array's rank, 0 <= begin[i] <= dim and
    0 <= size[i] <= dim - begin[i] (both 0 where the dimension is)."""
    rank = len(shape)
    if begin.shape[0] != rank or size.shape[0] != rank:
        raise ValueError(wrong_rank, begin.shape[0], size.shape[0], rank)
    out = empty_array(rank, np.int64)
    for i in range(rank):
        n = np.int64(shape[i])
        b = np.int64(begin[i])
        s = np.int64(size[i])
        if s == -1:
            s = n - b
        if n == 0 and (b != 0 or s != 0):
            raise ValueError(empty, i, b, s)
        if b < 0 or b > n:
            raise ValueError(bad_begin, i, b, n)
        if s < 0 or s > n - b:
            raise ValueError(bad_size, i, s, n - b)
        out[i] = s
    return out


@_jit
def check_paddings(paddings, rank, negative):
    """Raises (a code, and the pair) unless every padding is non-negative."""
    for i in range(rank):
        if paddings[i, 0] < 0 or paddings[i, 1] < 0:
            raise ValueError(negative, paddings[i, 0], paddings[i, 1])


@_jit
def check_reshape_size(size, shape, mismatch, multiple):
    """Raises (a code, the element count and the requested one) unless `size` elements
    fit `shape` (whose one -1, if any, takes what the others leave), as TensorFlow's
    Reshape words it."""
    known = np.int64(1)
    unknown = False
    for d in shape:
        if d == -1:
            unknown = True
        else:
            known *= d
    if unknown:
        if known > 0 and size % known != 0:
            raise ValueError(multiple, size, known)
    elif known != size:
        raise ValueError(mismatch, size, known)


# copy_flat's code inside grow_rows: called, it was a second function to compile for
# every history's dtype and rank (0.06-0.08 s each).
_copy_flat_inlined = _inlined(copy_flat.py_func)


@_array_jit
def grow_rows(h):
    """h with twice the rows (the first ones copied): a loop's history buffer."""
    out = empty_array((2 * h.shape[0],) + h.shape[1:], h.dtype)
    _copy_flat_inlined(out, 0, h)
    return out


@_array_jit
def gather4(params, indices, out, code):
    batch, outer, n, inner = params.shape
    m = indices.shape[1]
    for b in range(batch):
        for j in range(m):
            k = indices[b, j]
            if k < 0 or k >= n:
                raise IndexError(code, k, n, b * m + j)
    for b in range(batch):
        for a in range(outer):
            for j in range(m):
                k = indices[b, j]
                for c in range(inner):
                    out[b, a, j, c] = params[b, a, k, c]


@_array_jit
def segment_sum(data, ids, out, code):
    n = out.shape[0]
    for j in range(ids.shape[0]):
        if ids[j] >= n:
            raise IndexError(code, ids[j], n, j)
    for j in range(ids.shape[0]):
        k = ids[j]
        if k >= 0:
            for c in range(data.shape[1]):
                out[k, c] += data[j, c]


@_jit
def nd_bad_row(indices, dims, last):
    """The first (or, with `last`, the last) row of `indices` that is not a position
    inside `dims`, else -1: checked before gather_nd2 and scatter_nd2 read or write."""
    bad = -1
    for j in range(indices.shape[0]):
        for d in range(len(dims)):
            k = indices[j, d]
            if k < 0 or k >= dims[d]:
                if not last:
                    return j
                bad = j
                break
    return bad


@_jit
def _nd_offset(indices, j, dims):
    offset = 0
    for d in range(len(dims)):
        offset = offset * dims[d] + indices[j, d]
    return offset


@_array_jit
def gather_nd2(params, indices, dims, out):
    for j in range(indices.shape[0]):
        offset = _nd_offset(indices, j, dims)
        for c in range(params.shape[1]):
            out[j, c] = params[offset, c]


@_array_jit
def scatter_nd2(indices, updates, dims, out):
    for j in range(indices.shape[0]):
        offset = _nd_offset(indices, j, dims)
        for c in range(updates.shape[1]):
            out[offset, c] += updates[j, c]


@_array_jit
def argwhere_flat(flat, dims):
    count = 0
    for i in range(flat.size):
        if flat[i]:
            count += 1
    rank = len(dims)
    out = empty_array((count, rank), np.int64)
    row = 0
    for i in range(flat.size):
        if flat[i]:
            rest = i
            for d in range(rank - 1, -1, -1):
                out[row, d] = rest % dims[d]
                rest //= dims[d]
            row += 1
    return out


@_array_jit
def one_hot3(indices, out, on, off):
    outer, depth, inner = out.shape
    for a in range(outer):
        for b in range(depth):
            for c in range(inner):
                out[a, b, c] = on if indices[a, c] == b else off


def lowest(a):
    """The smallest finite value of a's dtype (False for bool)."""
    return _dtype_bounds(a.dtype)[0]


def highest(a):
    """The largest finite value of a's dtype (True for bool)."""
    return _dtype_bounds(a.dtype)[1]


def _dtype_bounds(dtype):
    if dtype.kind == "f":
        info = np.finfo(dtype)
    elif dtype.kind == "b":
        return False, True
    else:
        info = np.iinfo(dtype)
    return info.min, info.max


@overload(lowest, jit_options={"error_model": "numpy"})
def _lowest(a):
    if isinstance(a.dtype, types.Float):
        return lambda a: np.finfo(a.dtype).min
    if isinstance(a.dtype, types.Integer):
        return lambda a: np.iinfo(a.dtype).min
    return lambda a: False


@overload(highest, jit_options={"error_model": "numpy"})
def _highest(a):
    if isinstance(a.dtype, types.Float):
        return lambda a: np.finfo(a.dtype).max
    if isinstance(a.dtype, types.Integer):
        return lambda a: np.iinfo(a.dtype).max
    return lambda a: True


# TensorFlow's argmax (Eigen's) starts from the dtype's lowest finite value at index 0
# and moves on only to a strictly larger value: a NaN never wins, and a row of NaN and
# -inf gives 0. argmin mirrors it from the highest value.

@_array_jit
def argmax3(x):
    outer, n, inner = x.shape
    out = zeros_array((outer, inner), np.int64)
    start = lowest(x)
    for a in range(outer):
        for c in range(inner):
            best = start
            k = 0
            for b in range(n):
                v = x[a, b, c]
                if v > best:
                    best = v
                    k = b
            out[a, c] = k
    return out


@_array_jit
def argmin3(x):
    outer, n, inner = x.shape
    out = zeros_array((outer, inner), np.int64)
    start = highest(x)
    for a in range(outer):
        for c in range(inner):
            best = start
            k = 0
            for b in range(n):
                v = x[a, b, c]
                if v < best:
                    best = v
                    k = b
            out[a, c] = k
    return out


@_array_jit
def scan3(x, prod, exclusive, reverse):
    """Cumulative sum or product along axis 1, in x's dtype (as NumPy's cumsum)."""
    outer, n, inner = x.shape
    out = empty_array(x.shape, x.dtype)
    start = full_array(1, 1, x.dtype)[0] if prod else zeros_array(1, x.dtype)[0]
    for a in range(outer):
        for c in range(inner):
            acc = start
            for j in range(n):
                b = n - 1 - j if reverse else j
                v = x[a, b, c]
                if exclusive:
                    out[a, b, c] = acc
                    acc = acc * v if prod else acc + v
                else:
                    acc = acc * v if prod else acc + v
                    out[a, b, c] = acc
    return out


@_jit
def matmul_loops(a, b):
    """Integer matrix product with wrap-around (BLAS has no integer gemm)."""
    m, k = a.shape
    n = b.shape[1]
    out = zeros_array((m, n), a.dtype)
    for i in range(m):
        for p in range(k):
            v = a[i, p]
            for j in range(n):
                out[i, j] += v * b[p, j]
    return out


@_array_jit
def bmm3(x, y, adj_x, adj_y):
    batch = x.shape[0]
    m = x.shape[2] if adj_x else x.shape[1]
    n = y.shape[1] if adj_y else y.shape[2]
    out = empty_array((batch, m, n), x.dtype)
    for i in range(batch):
        _product_into(x[i], y[i], adj_x, adj_y, out[i])
    return out


def _product_into(a, b, adj_a, adj_b, out):
    out[...] = (a.T if adj_a else a) @ (b.T if adj_b else b)


@overload(_product_into)
def _product_into_impl(a, b, adj_a, adj_b, out):
    if a.dtype in (types.float32, types.float64):
        # NumPy's OpenBLAS, as eager matmul, not Numba's np.dot: that one compiles its own
        # allocation and checks in each helper that calls it (0.3-0.7 s per layout).
        def blas(a, b, adj_a, adj_b, out):
            _blas_gemm_into(contiguous(a), contiguous(b), adj_a, adj_b, out)
        return blas

    def loops(a, b, adj_a, adj_b, out):  # one branch per case: each keeps its layouts
        if adj_a and adj_b:
            product = matmul_loops(a.T, b.T)
        elif adj_a:
            product = matmul_loops(a.T, b)
        elif adj_b:
            product = matmul_loops(a, b.T)
        else:
            product = matmul_loops(a, b)
        copy_elements(out, product)
    return loops


@_array_jit
def inv3(x, adjoint):
    out = empty_array(x.shape, x.dtype)
    step = x.shape[1] * x.shape[2]
    for i in range(x.shape[0]):
        if adjoint:
            copy_flat(out, i * step, np.linalg.inv(contiguous(x[i].T)))
        else:
            copy_flat(out, i * step, np.linalg.inv(x[i]))
    return out


@_array_jit
def det3(x):
    out = empty_array(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        out[i] = np.linalg.det(x[i])
    return out


@_array_jit
def diag3(d, k, num_rows, num_cols, padding):
    batch, n = d.shape
    min_rows, min_cols = n + max(-k, 0), n + max(k, 0)
    rows, cols = num_rows, num_cols
    if rows == -1 and cols == -1:
        rows = max(min_rows, min_cols)
        cols = rows
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    out = full_array((batch, rows, cols), padding, d.dtype)
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(batch):
        for j in range(n):
            out[b, r0 + j, c0 + j] = d[b, j]
    return out


@_array_jit
def diag_part3(x, k):
    batch, rows, cols = x.shape
    n = max(0, min(rows + min(k, 0), cols - max(k, 0)))
    out = empty_array((batch, n), x.dtype)
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(batch):
        for j in range(n):
            out[b, j] = x[b, r0 + j, c0 + j]
    return out


# The softmax family runs in passes over the whole block (shift by the maximum, one flat
# exp, sums, logs) instead of row by row: the flat exp vectorizes and each exp is computed
# once. A reduction along axis 1 keeps its accumulator in a register when there is one
# class row per (outer) index (inner == 1, the usual last axis): accumulating through
# memory would chain every addition to the previous store. The passes are inlined into
# the three helpers that call them, and allocate and reshape with allocation.py and
# views.py: each compile of a function of its own, and of Numba's np.empty, reshape or
# astype, was 0.05-0.15 s of an empty cache's first softmax or cross-entropy.

@_inlined
def shift_by_max3(x, shifted):
    """shifted = x - max(x) along axis 1 (NaN wins); returns the maxima (outer, inner)."""
    outer, n, inner = x.shape
    m = empty_array((outer, inner), x.dtype)
    if inner == 1:
        x2, s2 = reshaped(x, (outer, n)), reshaped(shifted, (outer, n))
        for a in range(outer):
            mx = x2[a, 0]
            for b in range(1, n):
                mx = maximum(mx, x2[a, b])
            m[a, 0] = mx
            for b in range(n):
                s2[a, b] = x2[a, b] - mx
        return m
    for a in range(outer):
        for c in range(inner):
            m[a, c] = x[a, 0, c]
        for b in range(1, n):
            for c in range(inner):
                m[a, c] = maximum(m[a, c], x[a, b, c])
        for b in range(n):
            for c in range(inner):
                shifted[a, b, c] = x[a, b, c] - m[a, c]
    return m


@_inlined
def exp_in_place(v):
    flat = reshaped(v, v.size)
    for i in range(flat.size):
        flat[i] = exp_t(flat[i])


@_inlined
def sum_axis1(x):
    """Sums along axis 1 of (outer, n, inner), accumulated in float64, in x's dtype."""
    outer, n, inner = x.shape
    if inner == 1:
        x2 = reshaped(x, (outer, n))
        out = empty_array((outer, 1), x.dtype)
        for a in range(outer):
            s = 0.0
            for b in range(n):
                s += np.float64(x2[a, b])
            out[a, 0] = s
        return out
    acc = zeros_array((outer, inner), np.float64)
    for a in range(outer):
        for b in range(n):
            for c in range(inner):
                acc[a, c] += np.float64(x[a, b, c])
    return cast_array(acc, x.dtype)


@_inlined
def log_of(x):
    out = empty_array(x.shape, x.dtype)
    flat_out, flat_x = reshaped(out, out.size), reshaped(x, x.size)
    for i in range(flat_x.size):
        flat_out[i] = log_t(flat_x[i])
    return out


@_array_jit
def softmax3(x, log):
    """Softmax (or log-softmax) along axis 1, shifted by the maximum (NaN-propagating)."""
    outer, n, inner = x.shape
    out = empty_array(x.shape, x.dtype)
    shift_by_max3(x, out)
    if log:
        e = cast_array(out, out.dtype)  # a copy
        exp_in_place(e)
        ls = log_of(sum_axis1(e))
        for a in range(outer):
            for b in range(n):
                for c in range(inner):
                    out[a, b, c] -= ls[a, c]
    else:
        exp_in_place(out)
        s = sum_axis1(out)
        for a in range(outer):
            for b in range(n):
                for c in range(inner):
                    out[a, b, c] /= s[a, c]
    return out


@_array_jit
def xent3(features, labels):
    """Softmax cross-entropy along axis 1: (loss (outer, inner), backprop)."""
    outer, n, inner = features.shape
    back = empty_array(features.shape, features.dtype)
    m = shift_by_max3(features, back)
    exp_in_place(back)
    s = sum_axis1(back)
    ls = log_of(s)
    if inner == 1:
        f2, l2, b2 = (reshaped(features, (outer, n)), reshaped(labels, (outer, n)),
                      reshaped(back, (outer, n)))
        loss = empty_array((outer, 1), features.dtype)
        for a in range(outer):
            total = 0.0
            for b in range(n):
                label = l2[a, b]
                total += np.float64(label * (ls[a, 0] - (f2[a, b] - m[a, 0])))
                b2[a, b] = b2[a, b] / s[a, 0] - label
            loss[a, 0] = total
        return loss, back
    totals = zeros_array((outer, inner), np.float64)
    for a in range(outer):
        for b in range(n):
            for c in range(inner):
                label = labels[a, b, c]
                totals[a, c] += np.float64(label * (ls[a, c] - (features[a, b, c] - m[a, c])))
                back[a, b, c] = back[a, b, c] / s[a, c] - label
    return cast_array(totals, features.dtype), back


# The last axis, by far the usual one, has helpers of its own: one pass per row, with
# xent3's and softmax3's arithmetic (float64 sums, stored in the input's dtype before the
# log and the division), and without the code for a middle axis, which made three
# quarters of their first compile.

@_inlined
def _row_exps(x, a, out, sums):
    """out[a] = exp(x[a] - max(x[a])) (NaN wins), and sums[a] their sum (in float64,
    stored in sums' dtype); returns (the maximum, sums[a])."""
    n = x.shape[1]
    mx = x[a, 0]
    for b in range(1, n):
        mx = maximum(mx, x[a, b])
    total = 0.0
    for b in range(n):
        e = exp_t(x[a, b] - mx)
        out[a, b] = e
        total += np.float64(e)
    sums[a] = total
    return mx, sums[a]


@_array_jit
def softmax_rows(x, log):
    """softmax3 along the last axis of (rows, n)."""
    out = empty_array(x.shape, x.dtype)
    sums = empty_array(x.shape[0], x.dtype)
    for a in range(x.shape[0]):
        mx, s = _row_exps(x, a, out, sums)
        if log:
            ls = log_t(s)
            for b in range(x.shape[1]):
                out[a, b] = (x[a, b] - mx) - ls
        else:
            for b in range(x.shape[1]):
                out[a, b] /= s
    return out


@_array_jit
def xent_rows(features, labels):
    """xent3 along the last axis of (rows, n): (loss (rows,), backprop)."""
    back = empty_array(features.shape, features.dtype)
    loss = empty_array(features.shape[0], features.dtype)
    for a in range(features.shape[0]):
        mx, s = _row_exps(features, a, back, loss)
        ls = log_t(s)
        total = 0.0
        for b in range(features.shape[1]):
            label = labels[a, b]
            total += np.float64(label * (ls - (features[a, b] - mx)))
            back[a, b] = back[a, b] / s - label
        loss[a] = total
    return loss, back


@_array_jit
def sparse_xent2(features, labels, code):
    rows, n = features.shape
    for r in range(rows):
        if labels[r] < 0 or labels[r] >= n:
            raise IndexError(code, labels[r])
    back = empty_array(features.shape, features.dtype)
    loss = empty_array(rows, features.dtype)
    for r in range(rows):
        mx, s = _row_exps(features, r, back, loss)
        for b in range(n):
            back[r, b] /= s
        k = labels[r]
        back[r, k] -= 1
        loss[r] = log_t(s) - (features[r, k] - mx)
    return loss, back


@_array_jit
def l2_loss1(t):
    s = 0.0
    for i in range(t.size):
        v = np.float64(t[i])
        s = radd_fast(s, v * v)
    return s / 2.0


# -- draws inside tensor loops (ops/random.py: the NumPy kernels draw the same numbers) ---

@_array_jit
def truncated_normal(gen, shape, dtype):
    """Standard normal values, those beyond two standard deviations redrawn (in C order,
    all at once, until none is left), as the NumPy kernel of TruncatedNormal."""
    out = gen.standard_normal(shape, dtype)
    flat = reshaped(out, -1)
    while True:
        count = 0
        for i in range(flat.size):
            if abs(flat[i]) > 2:
                count += 1
        if count == 0:
            return out
        redrawn = gen.standard_normal(count, dtype)
        k = 0
        for i in range(flat.size):
            if abs(flat[i]) > 2:
                flat[i] = redrawn[k]
                k += 1


# -- TopKV2: the k largest of each row (ops/sorting.py: largest first, equal values by
# lower index, NaN last) ------------------------------------------------------------------

def descending_key(row):
    """An array whose ascending order is row's descending one: -row, or ~row for integers
    (which cannot overflow)."""
    return -row if row.dtype.kind == "f" else ~row


@overload(descending_key, jit_options={"error_model": "numpy"})
def _descending_key(row):
    if isinstance(row.dtype, types.Float):
        return lambda row: -row
    return lambda row: ~row


@_array_jit
def top_k_rows(x, k):
    """x: (rows, n). Each row's k largest and their indices: its key sorted ascending
    and stably (mergesort is Numba's stable sort; NaN goes last)."""
    rows = x.shape[0]
    values = empty_array((rows, k), x.dtype)
    indices = empty_array((rows, k), np.int64)
    for r in range(rows):
        order = np.argsort(descending_key(x[r]), kind="mergesort")
        for j in range(k):
            indices[r, j] = order[j]
            values[r, j] = x[r, order[j]]
    return values, indices


# -- LowerBound / UpperBound and Unique (ops/searching.py) -----------------------------------

@_array_jit
def searchsorted_rows(sorted_rows, value_rows, right):
    """For each row pair, where each value goes in the sorted row: before equal entries,
    or after them when `right`."""
    out = empty_array(value_rows.shape, np.int64)
    for r in range(value_rows.shape[0]):
        if right:
            copy_elements(out[r], np.searchsorted(sorted_rows[r], value_rows[r], side="right"))
        else:
            copy_elements(out[r], np.searchsorted(sorted_rows[r], value_rows[r], side="left"))
    return out


@_array_jit
def unique_first(x):
    """x's distinct values in order of first appearance (every NaN its own), each
    element's index among them, and their counts: ops/searching.py's algorithm (a stable
    sort, then runs of equal values)."""
    n = x.size
    order = np.argsort(x, kind="mergesort")
    run_of_sorted = empty_array(n, np.int64)
    firsts = empty_array(n, np.int64)
    runs = 0
    for j in range(n):
        if j == 0 or x[order[j]] != x[order[j - 1]]:
            firsts[runs] = order[j]
            runs += 1
        run_of_sorted[j] = runs - 1
    firsts = firsts[:runs]
    by_first = np.argsort(firsts, kind="mergesort")
    rank_of_run = empty_array(runs, np.int64)
    for r in range(runs):
        rank_of_run[by_first[r]] = r
    index = empty_array(n, np.int64)
    counts = zeros_array(runs, np.int64)
    for j in range(n):
        k = rank_of_run[run_of_sorted[j]]
        index[order[j]] = k
        counts[k] += 1
    values = empty_array(runs, x.dtype)
    for r in range(runs):
        values[r] = x[firsts[by_first[r]]]
    return values, index, counts


# -- CheckNumerics and Assert (ops/checks.py) -----------------------------------------------------

@_array_jit
def all_true(flat):
    """Whether every element of the 1-D `flat` is true (nonzero): Numba's .all() is a
    function it compiles in every process."""
    for i in range(flat.size):
        if not flat[i]:
            return False
    return True


@_array_jit
def nonfinite_kind(flat):
    """0: all finite; 1: some NaN; 2: some Inf; 3: both."""
    kind = 0
    for i in range(flat.size):
        v = flat[i]
        if v != v:
            kind |= 1
        elif v - v != 0:  # only Inf gives NaN here
            kind |= 2
    return kind
