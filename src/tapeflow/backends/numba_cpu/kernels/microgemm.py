"""A single-threaded float32 matrix product for the generated kernels, faster than
OpenBLAS's.

The layout is the classic one (Goto, BLIS): for each block of DEPTH rows of `b`, each
panel of `b` (DEPTH rows by one tile width) is copied into a small contiguous buffer
that stays in L1, and a register-blocked micro-kernel computes one ROWS x width tile of
the product from it and from `a` read in place, at any strides. The micro-kernel is
LLVM vector IR (a Numba intrinsic): ROWS x VECTORS accumulator vectors live in
registers across the loop over the depth, and each step is VECTORS loads of the panel,
ROWS broadcasts of `a` and ROWS x VECTORS fused multiply-adds. Numba's own loop
vectorizer does not find this schedule (it vectorizes the reduction over the depth).

Measured on one AVX-512 core (perf/run.py matmul, against NumPy's np.dot in the same
run): a compiled (128, 784) @ (784, 256) in float32 about 10% faster than the OpenBLAS
in NumPy's wheels, and x.T @ dy of the same sizes at about the same speed. OpenBLAS
stays the product wherever it can use several threads, for small or narrow products,
where a tile would be mostly padding, and for float64, where this kernel did not beat it
(gemm.gemm and the MatMul lowering choose). Tiles that overhang the matrix run on zero-padded
copies, so every shape is exact.

Kernels do not compile this code in: they call one C function by its symbol (see
`register`), compiled once and cached like a kernel.
"""

import ctypes

import numpy as np
from llvmlite import binding, ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.extending import intrinsic

from ..helper_symbols import symbol_provider
from .allocation import empty_array, zeros_array
from .gemm_shape import DEPTH, ENABLED, LANES, ROWS, VECTOR_BYTES, VECTORS, WIDTH  # noqa: F401

_VEC = ir.VectorType(ir.FloatType(), LANES)


def array_data(context, builder, array_type, array):
    """The data pointer of a Numba array value, in an intrinsic's code generation."""
    return context.make_array(array_type)(context, builder, array).data


def _vector_pointer(builder, base, offset, vec):
    return builder.bitcast(builder.gep(base, [offset]), vec.as_pointer())


def _counted_loop(builder, count, initial, step):
    """The values that `for k in range(count): values = step(k, values)` leaves, from
    `initial` (lists of LLVM values)."""
    i64 = ir.IntType(64)
    before = builder.basic_block
    loop = builder.append_basic_block("loop")
    after = builder.append_basic_block("after")
    builder.cbranch(builder.icmp_signed(">", count, ir.Constant(i64, 0)), loop, after)
    builder.position_at_end(loop)
    k = builder.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), before)
    carried = [builder.phi(value.type) for value in initial]
    for phi, value in zip(carried, initial):
        phi.add_incoming(value, before)
    updated = step(k, carried)
    following = builder.add(k, ir.Constant(i64, 1))
    end = builder.basic_block
    k.add_incoming(following, end)
    for phi, value in zip(carried, updated):
        phi.add_incoming(value, end)
    builder.cbranch(builder.icmp_signed("<", following, count), loop, after)
    builder.position_at_end(after)
    results = []
    for first, last in zip(initial, updated):
        result = builder.phi(first.type)
        result.add_incoming(first, before)
        result.add_incoming(last, end)
        results.append(result)
    return results


@intrinsic
def micro_tile(typingctx, a, a_offset, a_row_step, a_depth_step, panel, depth, out,
               out_offset, out_row_step, accumulate):
    """out[out_offset + r*out_row_step + j] (+)= sum over k < depth of
    a[a_offset + r*a_row_step + k*a_depth_step] * panel[k*width + j], for r < ROWS and
    j < width = VECTORS * lanes (offsets and steps count elements)."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float32
               for x in (a, panel, out)):
        return None
    lanes, width, vec = LANES, WIDTH, _VEC
    intp = types.intp
    sig = types.void(a, intp, intp, intp, panel, intp, out, intp, intp, types.boolean)

    def codegen(context, builder, signature, args):
        (a_, a_off, a_row, a_step, panel_, depth_, out_, out_off, out_row, acc) = args
        i64 = ir.IntType(64)
        a_ptr = builder.gep(array_data(context, builder, signature.args[0], a_), [a_off])
        p_ptr = array_data(context, builder, signature.args[4], panel_)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]),
            f"llvm.fma.v{lanes}f32")
        splat = ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes)

        def step(k, sums):
            row_k = builder.gep(p_ptr, [builder.mul(k, ir.Constant(i64, width))])
            columns = [builder.load(_vector_pointer(builder, row_k,
                                                    ir.Constant(i64, v * lanes), vec), align=1)
                       for v in range(VECTORS)]
            a_k = builder.gep(a_ptr, [builder.mul(k, a_step)])
            updated = []
            for r in range(ROWS):
                scalar = builder.load(builder.gep(a_k, [builder.mul(a_row,
                                                                    ir.Constant(i64, r))]))
                broadcast = builder.shuffle_vector(
                    builder.insert_element(ir.Constant(vec, ir.Undefined), scalar,
                                           ir.Constant(ir.IntType(32), 0)),
                    ir.Constant(vec, ir.Undefined), splat)
                updated.extend(builder.call(fma, [broadcast, columns[v],
                                                  sums[r * VECTORS + v]])
                               for v in range(VECTORS))
            return updated
        results = _counted_loop(builder, depth_, [ir.Constant(vec, None)] * (ROWS * VECTORS),
                                step)
        o_ptr = builder.gep(array_data(context, builder, signature.args[6], out_), [out_off])
        with builder.if_else(acc) as (adding, storing):
            for add in (True, False):
                with adding if add else storing:
                    for r in range(ROWS):
                        row = builder.gep(o_ptr, [builder.mul(out_row, ir.Constant(i64, r))])
                        for v in range(VECTORS):
                            target = _vector_pointer(builder, row, ir.Constant(i64, v * lanes),
                                                     vec)
                            value = results[r * VECTORS + v]
                            if add:
                                value = builder.fadd(builder.load(target, align=1), value)
                            builder.store(value, target, align=1)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def copy_panel(typingctx, b, b_offset, b_row_step, depth, panel):
    """panel[k*width + j] = b[b_offset + k*b_row_step + j] for k < depth, j < width: the
    panel of a matrix whose rows are contiguous."""
    if not all(isinstance(x, types.Array) and x.dtype == types.float32 for x in (b, panel)):
        return None
    lanes, width, vec = LANES, WIDTH, _VEC
    sig = types.void(b, types.intp, types.intp, types.intp, panel)

    def codegen(context, builder, signature, args):
        b_, b_off, b_row, depth_, panel_ = args
        i64 = ir.IntType(64)
        b_ptr = builder.gep(array_data(context, builder, signature.args[0], b_), [b_off])
        p_ptr = array_data(context, builder, signature.args[4], panel_)

        def copy_row(k, nothing):
            source = builder.gep(b_ptr, [builder.mul(k, b_row)])
            target = builder.gep(p_ptr, [builder.mul(k, ir.Constant(i64, width))])
            for v in range(VECTORS):
                at = ir.Constant(i64, v * lanes)
                builder.store(builder.load(_vector_pointer(builder, source, at, vec), align=1),
                              _vector_pointer(builder, target, at, vec), align=1)
            return nothing
        _counted_loop(builder, depth_, [], copy_row)
        return context.get_dummy_value()
    return sig, codegen


# _product and its buffers are inlined into entry_body, and entry_body into the C
# function, the one function compiled: as functions of their own, each was compiled,
# then its code optimized again inside its caller's (a third of the first compile, and
# entry_body's own compile 0.16 s of the 1.41 s the C function took). The buffers come
# from allocation.py, which compiles nothing, instead of Numba's np.empty and np.zeros.
@njit(error_model="numpy", nogil=True, inline="always")
def _product(a, a_row, a_step, b, b_row, b_col, out, m, depth_total, n):
    """out[i*n + j] = sum over k of a[i*a_row + k*a_step] * b[k*b_row + j*b_col], for
    i < m, j < n: a product of two float32 matrices at any non-negative strides, given as
    flat buffers."""
    if m == 0 or n == 0:
        return
    if depth_total == 0:
        for i in range(out.size):
            out[i] = 0
        return
    width = WIDTH
    panel = _aligned_empty(min(DEPTH, depth_total) * width)
    tile = empty_array(ROWS * width, np.float32)
    edge_rows = zeros_array(ROWS * min(DEPTH, depth_total), np.float32)
    full_rows = m - m % ROWS
    for k0 in range(0, depth_total, DEPTH):
        depth = min(DEPTH, depth_total - k0)
        later = k0 > 0
        if full_rows < m:  # the last rows, zero-padded, laid out (depth, ROWS)
            for r in range(m - full_rows):
                for k in range(depth):
                    edge_rows[k * ROWS + r] = a[(full_rows + r) * a_row + (k0 + k) * a_step]
        for j0 in range(0, n, width):
            columns = min(width, n - j0)
            if columns == width and b_col == 1:
                copy_panel(b, k0 * b_row + j0, b_row, depth, panel)
            else:
                for k in range(depth):
                    for j in range(columns):
                        panel[k * width + j] = b[(k0 + k) * b_row + (j0 + j) * b_col]
                    for j in range(columns, width):
                        panel[k * width + j] = 0
            for i0 in range(0, m, ROWS):  # one call site: the tile code is inlined once
                whole_rows = i0 < full_rows
                if whole_rows:
                    rows, row_start, row_step, depth_step = (a, i0 * a_row + k0 * a_step,
                                                             a_row, a_step)
                else:
                    rows, row_start, row_step, depth_step = edge_rows, 0, 1, ROWS
                direct = whole_rows and columns == width
                if direct:
                    target, target_start, target_step = out, i0 * n + j0, n
                else:
                    target, target_start, target_step = tile, 0, width
                micro_tile(rows, row_start, row_step, depth_step, panel, depth,
                           target, target_start, target_step, later and direct)
                if not direct:
                    _store_tile(tile, width, out, n, i0, j0, min(ROWS, m - i0), columns,
                                later)


@njit(error_model="numpy", nogil=True, inline="always")
def entry_body(a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    """_product on raw pointers (the C function's arguments)."""
    if m <= 0 or n <= 0:
        return
    a_size = (m - 1) * a_row + (depth - 1) * a_step + 1 if depth > 0 else 0
    b_size = (depth - 1) * b_row + (n - 1) * b_col + 1 if depth > 0 else 0
    _product(carray(a, a_size), a_row, a_step, carray(b, b_size), b_row, b_col,
             carray(out, m * n), m, depth, n)


_POINTER = types.CPointer(types.float32)
SIGNATURE = types.void(_POINTER, types.intp, types.intp, _POINTER, types.intp, types.intp,
                       _POINTER, types.intp, types.intp, types.intp)
SYMBOL = "tapeflow_microgemm_f32"
# The C function's Python body lives in a generated module in tapeflow's cache
# directory, as kernels do, so that its machine code is cached there (signed), under the
# same key rules.
_ENTRY_SOURCE = '''"""Generated by tapeflow (backends/numba_cpu/kernels/microgemm.py); do not edit."""
from tapeflow.backends.numba_cpu.kernels.microgemm import entry_body


def entry(a, a_row, a_step, b, b_row, b_col, out, m, depth, n):
    entry_body(a, a_row, a_step, b, b_row, b_col, out, m, depth, n)
'''
_entry_point = None


@symbol_provider(SYMBOL)
def register():
    """Compiles the product as a C function (or loads it from the cache) and gives LLVM
    its address under SYMBOL. Kernels call it by that name, so they link to it instead of
    compiling (and optimizing again) its code each: that would add seconds to every
    kernel with a matrix product. Returns the compiled function."""
    global _entry_point
    # Numba's own lock, not one of ours: a thread compiling a kernel holds it when it
    # gets here, and a second lock taken in the other order could deadlock.
    with global_compiler_lock:
        if _entry_point is None:
            from .. import cache, numba_cache
            module = cache.load(_ENTRY_SOURCE, cache.key(_ENTRY_SOURCE))
            with cache.importable(module):
                compiled = numba_cache.cfunc(module.entry, SIGNATURE, error_model="numpy")
            binding.add_symbol(SYMBOL, compiled.address)
            _entry_point = compiled
    return _entry_point


def matmul_into(a, b, out):
    """out[...] = a @ b through the C function the kernels call: float32 matrices, `a`
    and `b` at any non-negative strides (transposed views welcome), `out` C-contiguous."""
    (m, depth), (depth_b, n) = a.shape, b.shape
    if depth != depth_b or out.shape != (m, n) or not out.flags.c_contiguous or any(
            x.dtype != np.float32 for x in (a, b, out)):
        raise ValueError(f"matmul_into: {a.shape} @ {b.shape} into {out.shape}, float32")
    pointer = ctypes.POINTER(ctypes.c_float)
    register().ctypes(a.ctypes.data_as(pointer), *(s // 4 for s in a.strides),
                      b.ctypes.data_as(pointer), *(s // 4 for s in b.strides),
                      out.ctypes.data_as(pointer), m, depth, n)


@njit(error_model="numpy", nogil=True, inline="always")
def _aligned_empty(size):
    """A float32 buffer that starts on a cache line: a vector load from the panel then
    never straddles two lines."""
    raw = empty_array(size + 16, np.float32)
    skip = (-raw.ctypes.data % 64) // 4
    return raw[skip:skip + size]


@njit(error_model="numpy", nogil=True, inline="always")
def _store_tile(tile, width, out, n, i0, j0, rows, columns, accumulate):
    for r in range(rows):
        for j in range(columns):
            if accumulate:
                out[(i0 + r) * n + j0 + j] += tile[r * width + j]
            else:
                out[(i0 + r) * n + j0 + j] = tile[r * width + j]
