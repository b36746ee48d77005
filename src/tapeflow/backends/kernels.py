"""Numba helpers the generated kernels call: scalar math LLVM can inline and vectorize,
and the array kernels (gather, scans, softmax, ...) of the ops that are not loops over
elements.

The float32 transcendental helpers are short polynomials (Cephes' coefficients) with
branch-free handling of NaN, Inf, zero and denormals, so that a fused loop over them
vectorizes: the pip llvmlite has no SVML, and a libm call per element would make a fused
loop slower than NumPy. They agree with NumPy's float32 results to a few ulps (measured:
relative error <= 3e-7), NaN and Inf included, with one exception: sin, cos and tan reduce
their argument in float64 (Cody-Waite), exact to ~1e-9 for |x| < 2**30 and NaN past 2**50,
where NumPy still gives the (meaningless but exact) value. float64 uses libm (`math.*`),
as NumPy does. The helpers may contract a * b + c into an FMA (more accurate, never less).

This file's text is part of every generated kernel's cache key (backends/cache.py):
editing it invalidates the compiled kernels that call it.
"""

# ruff: noqa: PLR0124, FURB136 - `x != x` is the NaN test, and `a if a >= b else b` is
# not max(a, b) when b is NaN: both are explicit selects, branch-free, which LLVM vectorizes.
import math

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import microgemm, numpy_blas


def _jit(fn):
    """Every helper: nopython, the NumPy error model (x / 0 is inf, not an exception)."""
    return njit(error_model="numpy", nogil=True, fastmath={"contract"})(fn)


# -- bit casts ---------------------------------------------------------------------------

@intrinsic
def f32_as_i32(typingctx, x):
    """The bits of a float32, as an int32."""
    if x != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def i32_as_f32(typingctx, x):
    """The float32 whose bits are the low 32 bits of the integer `x`."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = args[0]
        if x.bitwidth > 32:
            value = builder.trunc(value, ir.IntType(32))
        elif x.bitwidth < 32:
            value = builder.sext(value, ir.IntType(32))
        return builder.bitcast(value, ir.FloatType())
    return types.float32(x), codegen


if config.DISABLE_JIT:  # NUMBA_DISABLE_JIT=1: kernels run as Python, for debugging
    def f32_as_i32(x):
        return np.asarray(x, np.float32).view(np.int32)[()]

    def i32_as_f32(x):
        return np.asarray(int(x) & 0xFFFFFFFF, np.uint32).view(np.float32)[()]

F32 = np.float32
F64 = np.float64


# -- float32 helpers ---------------------------------------------------------------------

@_jit
def pow2_f32(n):
    """2**n for an int32 n in [-126, 127], built from its bits."""
    return i32_as_f32(np.int32((n + np.int32(127)) << np.int32(23)))


@_jit
def exp_f32(x):
    # Cephes expf: x = n ln2 + r, |r| <= ln2 / 2; exp(r) by a degree-6 polynomial.
    xc = x if x < F32(89.0) else F32(89.0)  # not min(): an explicit select, NaN-safe
    xc = xc if xc > F32(-104.0) else F32(-104.0)
    n = np.floor(xc * F32(1.44269504088896341) + F32(0.5))
    r = xc - n * F32(0.693359375) - n * F32(-2.12194440e-4)
    z = r * r
    p = F32(1.9875691500e-4)
    p = p * r + F32(1.3981999507e-3)
    p = p * r + F32(8.3334519073e-3)
    p = p * r + F32(4.1665795894e-2)
    p = p * r + F32(1.6666665459e-1)
    p = p * r + F32(5.0000001201e-1)
    y = p * z + r + F32(1.0)
    # 2**n in two halves, so that overflow (inf) and denormal results come out right.
    k = np.int32(n)
    k1 = k >> np.int32(1)
    y = y * pow2_f32(k1) * pow2_f32(k - k1)
    return x if x != x else y


@_jit
def log_f32(x):
    # Cephes logf: x = m 2**e with m in [sqrt(1/2), sqrt(2)); log(m) by a polynomial.
    tiny = x < F32(1.17549435e-38)
    xs = x * F32(8388608.0) if tiny else x  # denormals: scale by 2**23 first
    bits = f32_as_i32(xs)
    e = ((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(126)
    e = e - np.int32(23) if tiny else e
    m = i32_as_f32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000))  # [0.5, 1)
    low = m < F32(0.707106781186547524)
    e = e - np.int32(1) if low else e
    m = (m + m - F32(1.0)) if low else (m - F32(1.0))
    fe = F32(e)
    z = m * m
    y = F32(7.0376836292e-2)
    y = y * m + F32(-1.1514610310e-1)
    y = y * m + F32(1.1676998740e-1)
    y = y * m + F32(-1.2420140846e-1)
    y = y * m + F32(1.4249322787e-1)
    y = y * m + F32(-1.6668057665e-1)
    y = y * m + F32(2.0000714765e-1)
    y = y * m + F32(-2.4999993993e-1)
    y = y * m + F32(3.3333331174e-1)
    y = y * m * z
    y = y + fe * F32(-2.12194440e-4)
    y = y - F32(0.5) * z
    r = m + y + fe * F32(0.693359375)
    r = F32(-np.inf) if x == F32(0.0) else r
    r = F32(np.nan) if x < F32(0.0) else r
    return x if (x != x) or (x == F32(np.inf)) else r


@_jit
def _reduce_pio2(x):
    """(r, q): x = q pi/2 + r with |r| <= pi/4, in float64 (Cody-Waite, three parts)."""
    xd = F64(x)
    j = np.rint(xd * 0.636619772367581343)
    r = xd - j * 1.57079632673412561417e+00
    r = r - j * 6.07710050650619224932e-11
    r = r - j * 2.02226624879595063154e-21
    # Past 2**50 the three-part reduction has no correct bits left: NaN, not noise.
    r = r if abs(xd) < 1.125899906842624e15 else np.nan
    j = j if abs(xd) < 1.125899906842624e15 else 0.0
    return r, np.int64(j) & 3


@_jit
def _sin_poly(r):
    z = r * r
    p = 2.7557319223985893e-06
    p = p * z - 1.9841269841269841e-04
    p = p * z + 8.3333333333333333e-03
    p = p * z - 1.6666666666666667e-01
    return r + r * z * p


@_jit
def _cos_poly(r):
    z = r * r
    p = -2.7557319223985888e-07
    p = p * z + 2.4801587301587302e-05
    p = p * z - 1.3888888888888889e-03
    p = p * z + 4.1666666666666667e-02
    p = p * z - 0.5
    return 1.0 + z * p


@_jit
def sin_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = s if (q & 1) == 0 else c
    v = -v if q >= 2 else v
    return F32(v)


@_jit
def cos_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = c if (q & 1) == 0 else s
    v = -v if (q == 1 or q == 2) else v
    return F32(v)


@_jit
def tan_f32(x):
    r, q = _reduce_pio2(x)
    s = _sin_poly(r)
    c = _cos_poly(r)
    v = s / c if (q & 1) == 0 else -c / s
    return F32(v)


@_jit
def tanh_f32(x):
    # Cephes tanhf: a polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above.
    ax = abs(x)
    z = x * x
    p = F32(-5.70498872745e-3)
    p = p * z + F32(2.06390887954e-2)
    p = p * z + F32(-5.37397155531e-2)
    p = p * z + F32(1.33314422036e-1)
    p = p * z + F32(-3.33332819422e-1)
    small = p * z * x + x
    t = F32(1.0) - F32(2.0) / (exp_f32(ax + ax) + F32(1.0))
    t = t if x > F32(0.0) else -t
    return small if ax < F32(0.625) else t


@_jit
def sigmoid_f32(x):
    return F32(1.0) / (F32(1.0) + exp_f32(-x))


@_jit
def expm1_f32(x):
    # Taylor terms to x**8 below 0.5 (error < 1e-8), exp(x) - 1 above.
    p = F32(1.0 / 40320.0)
    p = p * x + F32(1.0 / 5040.0)
    p = p * x + F32(1.0 / 720.0)
    p = p * x + F32(1.0 / 120.0)
    p = p * x + F32(1.0 / 24.0)
    p = p * x + F32(1.0 / 6.0)
    p = p * x + F32(0.5)
    small = x + x * x * p
    big = exp_f32(x) - F32(1.0)
    return small if abs(x) < F32(0.5) else big


@_jit
def log1p_f32(x):
    # Goldberg: log(u) * x / (u - 1) with u = 1 + x is accurate near 0.
    u = F32(1.0) + x
    d = u - F32(1.0)
    d = d if d != F32(0.0) else F32(1.0)
    r = log_f32(u) * (x / d)
    r = x if u == F32(1.0) else r
    return x if x == F32(np.inf) else r


@_jit
def softplus_f32(x):
    """NumPy's logaddexp(0, x): max(x, 0) + log1p(exp(-|x|)).

    Generated code calls softplus_tail_f32(x, exp_f32(-abs(x))) instead: LLVM inlines two
    medium helpers into a loop, but not one helper that holds both exp and log."""
    return softplus_tail_f32(x, exp_f32(-abs(x)))


@_jit
def softplus_tail_f32(x, t):
    # log1p(t) for t = exp(-|x|) in (0, 1], by Goldberg's formula as in log1p_f32.
    m = x if x > F32(0.0) else F32(0.0)
    u = F32(1.0) + t
    d = u - F32(1.0)
    d = d if d != F32(0.0) else F32(1.0)
    lp = log_f32(u) * (t / d)
    return m + (t if u == F32(1.0) else lp)


@_jit
def sqrt_f32(x):
    return np.sqrt(x)


# -- float64 helpers: libm, as NumPy ---------------------------------------------------------

@_jit
def exp_f64(x):
    return math.exp(x)


@_jit
def log_f64(x):
    if x > 0.0 or x != x:
        return math.log(x)
    return -np.inf if x == 0.0 else np.nan


@_jit
def sin_f64(x):
    return math.sin(x) if abs(x) != np.inf else np.nan


@_jit
def cos_f64(x):
    return math.cos(x) if abs(x) != np.inf else np.nan


@_jit
def tan_f64(x):
    return math.tan(x) if abs(x) != np.inf else np.nan


@_jit
def tanh_f64(x):
    return math.tanh(x)


@_jit
def sigmoid_f64(x):
    return 1.0 / (1.0 + math.exp(-x))


@_jit
def expm1_f64(x):
    return math.expm1(x)


@_jit
def erf_f32(x):
    return F32(math.erf(x))


@_jit
def erfc_f32(x):
    return F32(math.erfc(x))


@_jit
def erf_f64(x):
    return math.erf(x)


@_jit
def erfc_f64(x):
    return math.erfc(x)


@_jit
def log1p_f64(x):
    if x > -1.0 or x != x:
        return math.log1p(x)
    return -np.inf if x == -1.0 else np.nan


@_jit
def softplus_f64(x):
    m = x if x > 0.0 else 0.0
    return m + math.log1p(math.exp(-abs(x)))


@_jit
def sqrt_f64(x):
    return np.sqrt(x)


# -- helpers for any dtype -------------------------------------------------------------------

@_jit
def maximum(a, b):
    """np.maximum: NaN wins, ties give a. (Not Python's max(), which drops a NaN b.)"""
    r = a if a >= b else b
    return a if a != a else r


@_jit
def minimum(a, b):
    """np.minimum: NaN wins, ties give a."""
    r = a if a <= b else b
    return a if a != a else r


@_jit
def sign(x):
    """np.sign: -1, 0 or 1 (NaN stays NaN), in x's type."""
    one = x - x + 1
    return one if x > 0 else (-one if x < 0 else x)


@_jit
def rint(x):
    return np.rint(x)


@_jit
def floor(x):
    return np.floor(x)


@_jit
def ceil(x):
    return np.ceil(x)


@_jit
def ipow(x, y):
    """Integer power with wrap-around, as np.power on int32/int64 (y >= 0)."""
    result = x - x + 1
    base = x
    e = y
    while e > 0:
        if e & 1:
            result = result * base
        base = base * base
        e >>= 1
    return result


@_jit
def radd(a, b):
    """a + b where reassociation is allowed: only the accumulator of a reduction."""
    return a + b


@_jit
def rmul(a, b):
    return a * b


# Only the accumulation of a sum (or product) may be reassociated: that lets LLVM
# vectorize the loop, while every other operation keeps IEEE semantics (NaN and Inf
# included). The flags live on these two tiny functions; LLVM inlines them.
_REASSOC = njit(error_model="numpy", nogil=True, fastmath={"reassoc", "contract"})
radd_fast = _REASSOC(getattr(radd, "py_func", radd))
rmul_fast = _REASSOC(getattr(rmul, "py_func", rmul))


@_jit
def int_mean(total, n):
    """TensorFlow's integer mean: truncated toward zero."""
    q = abs(total) // max(n, 1)
    return q if total >= 0 else -q


@_jit
def int_mean_array(total, n):
    out = np.empty_like(total)
    flat = total.reshape(total.size)
    o = out.reshape(total.size)
    for i in range(flat.size):
        o[i] = int_mean(flat[i], n)
    return out


# A dtype-generic exp / log for the array kernels below.
def exp_t(x):
    return exp_f32(x) if isinstance(x, np.float32) else math.exp(x)


@overload(exp_t, jit_options={"error_model": "numpy"})
def _exp_t(x):
    if x == types.float32:
        return lambda x: exp_f32(x)
    return lambda x: math.exp(x)


def log_t(x):
    return log_f32(x) if isinstance(x, np.float32) else log_f64(x)


@overload(log_t, jit_options={"error_model": "numpy"})
def _log_t(x):
    if x == types.float32:
        return lambda x: log_f32(x)
    return lambda x: log_f64(x)


# -- array kernels -------------------------------------------------------------------------
# The generated code reshapes its operands to the fixed ranks these kernels take
# ((outer, axis, inner) and the like), so one kernel serves every rank and axis.
# Errors raise with an integer code the caller turns into TensorFlow's error for the node.

@_jit
def mirror_index(n, lo, hi, shift):
    """For each position of a mirror-padded axis, the source index (REFLECT: shift 0,
    SYMMETRIC: shift 1)."""
    out = np.empty(lo + n + hi, np.int64)
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

@_jit
def copy_flat(dst, offset, src):
    """Writes src's elements, in C order, to dst's flat positions from `offset` on (dst
    C-contiguous)."""
    flat = dst.reshape(dst.size)
    values = np.ascontiguousarray(src).reshape(src.size)
    for i in range(values.size):
        flat[offset + i] = values[i]


def copy_into(dst, src):
    """dst[...] = src for two arrays of one shape, any layouts (a region of a bigger
    array: a part of a concatenation, the inside of a padding)."""
    dst[...] = src


@overload(copy_into, jit_options={"error_model": "numpy"})
def _copy_into(dst, src):
    if src.ndim == 0:
        def copy_scalar(dst, src):
            dst[()] = src[()]
        return copy_scalar

    def copy_rows(dst, src):
        if dst.shape != src.shape:
            raise ValueError("the shapes of a copied region differ")
        n = src.shape[-1]
        for index in np.ndindex(src.shape[:-1]):
            d = dst[index]
            s = src[index]
            for j in range(n):
                d[j] = s[j]
    return copy_rows


def flat_view(a):
    """a's elements in C order as a one-dimensional view (a C-contiguous)."""
    return a.reshape(a.size)


@overload(flat_view, jit_options={"error_model": "numpy"})
def _flat_view(a):
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
    from numba.core.imputils import impl_ret_borrowed
    from numba.np.arrayobj import make_array, populate_array

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, value=args[0])
        out = make_array(sig.return_type)(context, builder)
        dims = cgutils.unpack_tuple(builder, src.shape, sig.args[0].ndim)
        size = dims[0]
        for d in dims[1:]:
            size = builder.mul(size, d)
        populate_array(out, data=src.data, shape=cgutils.pack_array(builder, [size]),
                       strides=cgutils.pack_array(builder, [src.itemsize]),
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())
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
    out = np.empty(rank, np.int64)
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


@_jit
def grow_rows(h):
    """h with twice the rows (the first ones copied): a loop's history buffer."""
    out = np.empty((2 * h.shape[0],) + h.shape[1:], h.dtype)
    copy_flat(out, 0, h)
    return out


@_jit
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


@_jit
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


@_jit
def gather_nd2(params, indices, dims, out):
    for j in range(indices.shape[0]):
        offset = _nd_offset(indices, j, dims)
        for c in range(params.shape[1]):
            out[j, c] = params[offset, c]


@_jit
def scatter_nd2(indices, updates, dims, out):
    for j in range(indices.shape[0]):
        offset = _nd_offset(indices, j, dims)
        for c in range(updates.shape[1]):
            out[offset, c] += updates[j, c]


@_jit
def argwhere_flat(flat, dims):
    count = 0
    for i in range(flat.size):
        if flat[i]:
            count += 1
    rank = len(dims)
    out = np.empty((count, rank), np.int64)
    row = 0
    for i in range(flat.size):
        if flat[i]:
            rest = i
            for d in range(rank - 1, -1, -1):
                out[row, d] = rest % dims[d]
                rest //= dims[d]
            row += 1
    return out


@_jit
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

@_jit
def argmax3(x):
    outer, n, inner = x.shape
    out = np.zeros((outer, inner), np.int64)
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


@_jit
def argmin3(x):
    outer, n, inner = x.shape
    out = np.zeros((outer, inner), np.int64)
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


@_jit
def scan3(x, prod, exclusive, reverse):
    """Cumulative sum or product along axis 1, in x's dtype (as NumPy's cumsum)."""
    outer, n, inner = x.shape
    out = np.empty_like(x)
    start = np.ones(1, x.dtype)[0] if prod else np.zeros(1, x.dtype)[0]
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
    out = np.zeros((m, n), a.dtype)
    for i in range(m):
        for p in range(k):
            v = a[i, p]
            for j in range(n):
                out[i, j] += v * b[p, j]
    return out


@_jit
def bmm3(x, y, adj_x, adj_y):
    batch = x.shape[0]
    m = x.shape[2] if adj_x else x.shape[1]
    n = y.shape[1] if adj_y else y.shape[2]
    out = np.empty((batch, m, n), x.dtype)
    step = m * n
    for i in range(batch):  # one branch per case: each keeps its operands' layouts
        if adj_x and adj_y:
            copy_flat(out, i * step, _product(x[i].T, y[i].T))
        elif adj_x:
            copy_flat(out, i * step, _product(x[i].T, y[i]))
        elif adj_y:
            copy_flat(out, i * step, _product(x[i], y[i].T))
        else:
            copy_flat(out, i * step, _product(x[i], y[i]))
    return out


def _product(a, b):
    return np.dot(a, b) if a.dtype.kind == "f" else matmul_loops(a, b)


@overload(_product)
def _product_impl(a, b):
    if isinstance(a.dtype, types.Float):
        return lambda a, b: np.dot(a, b)
    return lambda a, b: matmul_loops(a, b)


@_jit
def inv3(x, adjoint):
    out = np.empty_like(x)
    step = x.shape[1] * x.shape[2]
    for i in range(x.shape[0]):
        if adjoint:
            copy_flat(out, i * step, np.linalg.inv(np.ascontiguousarray(x[i].T)))
        else:
            copy_flat(out, i * step, np.linalg.inv(x[i]))
    return out


@_jit
def det3(x):
    out = np.empty(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        out[i] = np.linalg.det(x[i])
    return out


@_jit
def solve3(a, b, adjoint):
    out = np.empty_like(b)
    step = b.shape[1] * b.shape[2]
    for i in range(a.shape[0]):
        if adjoint:
            copy_flat(out, i * step, np.linalg.solve(np.ascontiguousarray(a[i].T), b[i]))
        else:
            copy_flat(out, i * step, np.linalg.solve(a[i], b[i]))
    return out


@_jit
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
    out = np.full((batch, rows, cols), padding, d.dtype)
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(batch):
        for j in range(n):
            out[b, r0 + j, c0 + j] = d[b, j]
    return out


@_jit
def diag_part3(x, k):
    batch, rows, cols = x.shape
    n = max(0, min(rows + min(k, 0), cols - max(k, 0)))
    out = np.empty((batch, n), x.dtype)
    r0, c0 = max(-k, 0), max(k, 0)
    for b in range(batch):
        for j in range(n):
            out[b, j] = x[b, r0 + j, c0 + j]
    return out


# The softmax family runs in passes over the whole block (shift by the maximum, one flat
# exp, sums, logs) instead of row by row: the flat exp vectorizes and each exp is computed
# once. A reduction along axis 1 keeps its accumulator in a register when there is one
# class row per (outer) index (inner == 1, the usual last axis): accumulating through
# memory would chain every addition to the previous store.

@_jit
def shift_by_max3(x, shifted):
    """shifted = x - max(x) along axis 1 (NaN wins); returns the maxima (outer, inner)."""
    outer, n, inner = x.shape
    m = np.empty((outer, inner), x.dtype)
    if inner == 1:
        x2, s2 = x.reshape((outer, n)), shifted.reshape((outer, n))
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


@_jit
def exp_in_place(v):
    flat = v.reshape(v.size)
    for i in range(flat.size):
        flat[i] = exp_t(flat[i])


@_jit
def sum_axis1(x):
    """Sums along axis 1 of (outer, n, inner), accumulated in float64, in x's dtype."""
    outer, n, inner = x.shape
    if inner == 1:
        x2 = x.reshape((outer, n))
        out = np.empty((outer, 1), x.dtype)
        for a in range(outer):
            s = 0.0
            for b in range(n):
                s += np.float64(x2[a, b])
            out[a, 0] = s
        return out
    acc = np.zeros((outer, inner), np.float64)
    for a in range(outer):
        for b in range(n):
            for c in range(inner):
                acc[a, c] += np.float64(x[a, b, c])
    return acc.astype(x.dtype)


@_jit
def log_of(x):
    out = np.empty_like(x)
    flat_out, flat_x = out.reshape(out.size), x.reshape(x.size)
    for i in range(flat_x.size):
        flat_out[i] = log_t(flat_x[i])
    return out


@_jit
def softmax3(x, log):
    """Softmax (or log-softmax) along axis 1, shifted by the maximum (NaN-propagating)."""
    outer, n, inner = x.shape
    out = np.empty_like(x)
    shift_by_max3(x, out)
    if log:
        e = out.copy()
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


@_jit
def xent3(features, labels):
    """Softmax cross-entropy along axis 1: (loss (outer, inner), backprop)."""
    outer, n, inner = features.shape
    back = np.empty_like(features)
    m = shift_by_max3(features, back)
    exp_in_place(back)
    s = sum_axis1(back)
    ls = log_of(s)
    if inner == 1:
        f2, l2, b2 = (features.reshape((outer, n)), labels.reshape((outer, n)),
                      back.reshape((outer, n)))
        loss = np.empty((outer, 1), features.dtype)
        for a in range(outer):
            total = 0.0
            for b in range(n):
                label = l2[a, b]
                total += np.float64(label * (ls[a, 0] - (f2[a, b] - m[a, 0])))
                b2[a, b] = b2[a, b] / s[a, 0] - label
            loss[a, 0] = total
        return loss, back
    totals = np.zeros((outer, inner), np.float64)
    for a in range(outer):
        for b in range(n):
            for c in range(inner):
                label = labels[a, b, c]
                totals[a, c] += np.float64(label * (ls[a, c] - (features[a, b, c] - m[a, c])))
                back[a, b, c] = back[a, b, c] / s[a, c] - label
    return totals.astype(features.dtype), back


@_jit
def sparse_xent2(features, labels, code):
    rows, n = features.shape
    for r in range(rows):
        if labels[r] < 0 or labels[r] >= n:
            raise IndexError(code, labels[r])
    back = np.empty_like(features)
    f3, b3 = features.reshape((rows, n, 1)), back.reshape((rows, n, 1))
    m = shift_by_max3(f3, b3)
    exp_in_place(back)
    s = sum_axis1(b3)
    ls = log_of(s)
    loss = np.empty(rows, features.dtype)
    for r in range(rows):
        for b in range(n):
            back[r, b] /= s[r, 0]
        k = labels[r]
        back[r, k] -= 1
        loss[r] = ls[r, 0] - (features[r, k] - m[r, 0])
    return loss, back


@_jit
def l2_loss1(t):
    s = 0.0
    for i in range(t.size):
        v = np.float64(t[i])
        s = radd_fast(s, v * v)
    return s / 2.0


# -- matrix products through NumPy's OpenBLAS (backends/numpy_blas.py) ------------------

@intrinsic
def _cblas_gemm(typingctx, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
    """c = op(a) @ op(b) for C-contiguous float32/float64 matrices (cblas, row major)."""
    if not isinstance(c, types.Array) or np.dtype(str(c.dtype)) not in numpy_blas.SYMBOLS:
        return None
    symbol = numpy_blas.SYMBOLS[np.dtype(str(c.dtype))]
    sig = types.void(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)

    def codegen(context, builder, signature, args):
        i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
        real = ir.FloatType() if symbol.startswith("scipy_cblas_s") else ir.DoubleType()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, real, ptr, i64,
                                               ptr, i64, real, ptr, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
        ta, tb, m_, n_, k_, a_, lda_, b_, ldb_, c_, ldc_ = args
        data = [builder.bitcast(microgemm.array_data(context, builder, t, v), ptr)
                for t, v in ((signature.args[5], a_), (signature.args[7], b_),
                             (signature.args[9], c_))]

        def as_i64(v):
            return builder.sext(v, i64) if v.type.width < 64 else v

        def as_i32(v):
            return builder.trunc(v, i32) if v.type.width > 32 else v

        builder.call(fn, [ir.Constant(i32, 101), as_i32(ta), as_i32(tb), as_i64(m_),
                          as_i64(n_), as_i64(k_), ir.Constant(real, 1.0), data[0],
                          as_i64(lda_), data[1], as_i64(ldb_), ir.Constant(real, 0.0),
                          data[2], as_i64(ldc_)])
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def _blas_threads(typingctx):
    """How many threads NumPy's OpenBLAS would use for a large product."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), numpy_blas.THREADS_SYMBOL)
        return builder.sext(builder.call(fn, []), ir.IntType(64))
    return types.intp(), codegen


if config.DISABLE_JIT:  # _cblas_gemm as Python (microgemm is off: microgemm.ENABLED)
    def _cblas_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
        c[...] = (a.T if trans_a == 112 else a) @ (b.T if trans_b == 112 else b)


@_jit
def microgemm_pays(m, n, k):
    """Whether microgemm beats OpenBLAS (on one thread) on a float32 product of this size:
    its tiles must be mostly full (measured: it loses below about 64 x 64 x 64, and on
    products fewer than two tiles wide)."""
    return (microgemm.ENABLED and m >= 4 * microgemm.ROWS and n >= 2 * microgemm.WIDTH
            and m * n * k >= 1 << 20)


@_jit
def _gemm_operands(a, b, transpose_a, transpose_b):
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    m = a.shape[1] if transpose_a else a.shape[0]
    k = a.shape[0] if transpose_a else a.shape[1]
    n = b.shape[0] if transpose_b else b.shape[1]
    return a, b, m, k, n, np.empty((m, n), a.dtype)


@_jit
def _blas_gemm_into(a, b, transpose_a, transpose_b, out):
    m, n = out.shape
    k = a.shape[0] if transpose_a else a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:  # a sum of nothing
        out[:] = 0
        return
    _cblas_gemm(112 if transpose_a else 111, 112 if transpose_b else 111, m, n, k,
                a, max(1, a.shape[1]), b, max(1, b.shape[1]), out, max(1, n))


@_jit
def blas_gemm(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) of two matrices of one float dtype (op: transpose when asked), by
    OpenBLAS: the products that microgemm would not take (codegen knows their sizes)."""
    a, b, _, _, _, out = _gemm_operands(a, b, transpose_a, transpose_b)
    _blas_gemm_into(a, b, transpose_a, transpose_b, out)
    return out


@_jit
def gemm(a, b, transpose_a, transpose_b):
    """op(a) @ op(b), by microgemm where it pays and OpenBLAS would use one thread (it
    uses all cores by default, and microgemm one), by OpenBLAS otherwise."""
    a, b, m, k, n, out = _gemm_operands(a, b, transpose_a, transpose_b)
    if a.itemsize == 4 and microgemm_pays(m, n, k) and _blas_threads() == 1:  # float32
        _own_gemm(a, b, transpose_a, transpose_b, out)
    else:
        _blas_gemm_into(a, b, transpose_a, transpose_b, out)
    return out


@intrinsic
def _microgemm(typingctx, a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    """microgemm's product (microgemm._product's arguments), called through its C symbol:
    kernels link to its machine code, compiled once, instead of compiling its code in."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float32 for x in (a, b, out)):
        return None
    microgemm.register()  # before LLVM links this kernel to the symbol
    sig = types.void(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)

    def codegen(context, builder, signature, args):
        i64, pointer = ir.IntType(64), ir.FloatType().as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [pointer, i64, i64, pointer, i64, i64, pointer,
                                               i64, i64, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, microgemm.SYMBOL)
        values = []
        for ty, value in zip(signature.args, args):
            if isinstance(ty, types.Array):
                values.append(microgemm.array_data(context, builder, ty, value))
            else:
                values.append(context.cast(builder, value, ty, types.int64))
        builder.call(fn, values)
        return context.get_dummy_value()
    return sig, codegen


def _own_gemm(a, b, transpose_a, transpose_b, out):
    """out[...] = op(a) @ op(b) by microgemm, for C-contiguous float32 `a` and `b`: a
    transposed operand is the same buffer read with its steps swapped."""
    m, n = out.shape
    depth = a.shape[0] if transpose_a else a.shape[1]
    a_row, a_step = (1, a.shape[1]) if transpose_a else (a.shape[1], 1)
    b_row, b_col = (1, b.shape[1]) if transpose_b else (b.shape[1], 1)
    _microgemm(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)


@overload(_own_gemm)
def _own_gemm_impl(a, b, transpose_a, transpose_b, out):
    if a.dtype == types.float32:
        return _own_gemm
    return lambda a, b, transpose_a, transpose_b, out: None  # own_gemm_pays said no


# -- draws inside tensor loops (ops/random.py: the NumPy kernels draw the same numbers) ---

@_jit
def truncated_normal(gen, shape, dtype):
    """Standard normal values, those beyond two standard deviations redrawn (in C order,
    all at once, until none is left), as the NumPy kernel of TruncatedNormal."""
    out = gen.standard_normal(shape, dtype)
    flat = out.reshape(-1)
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
