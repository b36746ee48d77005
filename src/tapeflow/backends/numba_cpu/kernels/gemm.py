"""Matrix products for the generated kernels: NumPy's OpenBLAS (numpy_blas.py) called
by symbol, or microgemm (microgemm.py) where it beats OpenBLAS on one thread."""

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import helper_symbols
from . import array_helper as _array_jit
from . import gemm_shape, microgemm, numpy_blas
from . import inlined_helper as _inlined
from .allocation import empty_array
from .views import contiguous, reshaped


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


microgemm_pays = _inlined(gemm_shape.pays)


@_inlined
def _gemm_operands(a, b, transpose_a, transpose_b):
    a = contiguous(a)
    b = contiguous(b)
    m = a.shape[1] if transpose_a else a.shape[0]
    k = a.shape[0] if transpose_a else a.shape[1]
    n = b.shape[0] if transpose_b else b.shape[1]
    return a, b, m, k, n, empty_array((m, n), a.dtype)


@_inlined
def _blas_gemm_into(a, b, transpose_a, transpose_b, out):
    m, n = out.shape
    k = a.shape[0] if transpose_a else a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:  # a sum of nothing
        flat = reshaped(out, out.size)
        for i in range(flat.size):
            flat[i] = 0
        return
    _cblas_gemm(112 if transpose_a else 111, 112 if transpose_b else 111, m, n, k,
                a, max(1, a.shape[1]), b, max(1, b.shape[1]), out, max(1, n))


@_array_jit
def blas_gemm(a, b, transpose_a, transpose_b):
    """op(a) @ op(b) of two matrices of one float dtype (op: transpose when asked), by
    OpenBLAS: the products that microgemm would not take (codegen knows their sizes)."""
    a, b, _, _, _, out = _gemm_operands(a, b, transpose_a, transpose_b)
    _blas_gemm_into(a, b, transpose_a, transpose_b, out)
    return out


@_array_jit
def gemm(a, b, transpose_a, transpose_b):
    """op(a) @ op(b), by microgemm where it pays and OpenBLAS would use one thread (it
    uses all cores by default, and microgemm one), by OpenBLAS otherwise."""
    a, b, m, k, n, out = _gemm_operands(a, b, transpose_a, transpose_b)
    if a.itemsize == 4 and microgemm_pays(m, n, k) and _blas_threads() == 1:  # float32
        _own_gemm(a, b, transpose_a, transpose_b, out)
    else:
        _blas_gemm_into(a, b, transpose_a, transpose_b, out)
    return out


def _product_call(a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    """The signature and code of a call of microgemm's C symbol, for float32 arrays;
    None for other types."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float32 for x in (a, b, out)):
        return None
    microgemm.register()  # before LLVM links this kernel to the symbol
    sig = types.void(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)

    def codegen(context, builder, signature, args):
        # and before a later process loads it from the cache
        helper_symbols.requires(context, microgemm.register)
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


@intrinsic
def _microgemm(typingctx, a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    """microgemm's product (microgemm._product's arguments), called through its C symbol:
    kernels link to its machine code, compiled once, instead of compiling its code in.
    Float32 only: other dtypes fail to type."""
    return _product_call(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)


@intrinsic
def _microgemm_if_float32(typingctx, a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    """_microgemm for float32 arrays, nothing for arrays of other dtypes: gemm calls it
    for float32 only, but Numba types the branch it is in for every dtype (an overload
    choosing by dtype instead was a compile of its own, 0.09 s)."""
    call = _product_call(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)
    if call is not None or not all(isinstance(x, types.Array) for x in (a, b, out)):
        return call
    sig = types.void(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)
    return sig, lambda context, builder, signature, args: context.get_dummy_value()


@_inlined
def _own_gemm(a, b, transpose_a, transpose_b, out):
    """out[...] = op(a) @ op(b) by microgemm, for C-contiguous float32 `a` and `b` (and
    nothing for other dtypes, whose callers take OpenBLAS): a transposed operand is the
    same buffer read with its steps swapped."""
    m, n = out.shape
    depth = a.shape[0] if transpose_a else a.shape[1]
    a_row, a_step = (1, a.shape[1]) if transpose_a else (a.shape[1], 1)
    b_row, b_col = (1, b.shape[1]) if transpose_b else (b.shape[1], 1)
    _microgemm_if_float32(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)
