"""Sliding-window kernels of NHWC arrays: convolutions (Conv2D and its two gradients) and
pooling (max and average, with their gradients).

A convolution copies the windows of a block of output positions into a buffer (im2col),
one group's channels at a time, and multiplies the block by the group's filter matrix:
OpenBLAS or microgemm for float32/float64 (kernels/gemm.py), loops for integers. Blocks
of about a megabyte keep the buffer in cache; the windows of the whole image would be
KH * KW times the input. The window geometry (strides, dilations, the padding before
and the output size) comes from ops/windows.py, computed when the graph is compiled.
"""

import numpy as np
from numba import types
from numba.extending import overload

from . import array_helper as _array_jit
from . import helper as _jit
from . import inlined_helper as _inlined
from . import microgemm
from .allocation import empty_array, zeros_array
from .gemm import _blas_gemm_into, _blas_threads, _microgemm, _own_gemm, microgemm_pays
from .views import contiguous, copy_elements, reshaped, transposed

_BLOCK_ELEMENTS = 1 << 18  # the im2col buffer's size: a megabyte of float32


def _product_into(a, b, transpose_a, transpose_b, out):
    """out[...] = op(a) @ op(b), for C-contiguous matrices."""


@overload(_product_into, jit_options={"error_model": "numpy"})
def _product_into_impl(a, b, transpose_a, transpose_b, out):
    if isinstance(out.dtype, types.Float):
        def blas(a, b, transpose_a, transpose_b, out):
            m, n = out.shape
            k = a.shape[0] if transpose_a else a.shape[1]
            if a.itemsize == 4 and microgemm_pays(m, n, k) and _blas_threads() == 1:
                _own_gemm(a, b, transpose_a, transpose_b, out)
            else:
                _blas_gemm_into(a, b, transpose_a, transpose_b, out)
        return blas

    def loops(a, b, transpose_a, transpose_b, out):
        m, n = out.shape
        k = a.shape[0] if transpose_a else a.shape[1]
        out[:] = 0
        for i in range(m):
            for p in range(k):
                left = a[p, i] if transpose_a else a[i, p]
                if left == 0:
                    continue
                for j in range(n):
                    out[i, j] += left * (b[j, p] if transpose_b else b[p, j])
    return loops


@_inlined
def _block_rows(positions, depth):
    return max(1, min(positions, _BLOCK_ELEMENTS // max(depth, 1)))


@_inlined
def _buffers(positions, w_shape, c, like):
    """(groups, outputs per group, rows per block, the im2col buffer, one group's block
    of outputs) of a convolution with a filter of shape w_shape over c channels."""
    kh, kw, cg, o = w_shape
    groups = c // cg
    og = o // groups
    depth = kh * kw * cg
    block = _block_rows(positions, depth)
    return (groups, og, block, empty_array((block, depth), like.dtype),
            empty_array((block, og), like.dtype))


@_inlined
def _filter_matrices(w, groups):
    """The filter [KH, KW, Cg, O] as one [KH * KW * Cg, O / groups] matrix per group."""
    kh, kw, cg, o = w.shape
    og = o // groups
    out = empty_array((groups, kh * kw * cg, og), w.dtype)
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                for c in range(cg):
                    row = (i * kw + j) * cg + c
                    for q in range(og):
                        out[g, row, q] = w[i, j, c, g * og + q]
    return out


@_inlined
def _tap_range(z, size, window, stride, dilation, before):
    """The taps [first, last) of a window along one axis that fall inside the image."""
    start = z * stride - before
    first = 0 if start >= 0 else (-start + dilation - 1) // dilation
    last = 0 if start >= size else min(window, (size - 1 - start) // dilation + 1)
    return first, max(first, last)


@_inlined
def _copy_run(dst, to, src, at, length, add):
    """dst[to:to + length] = src[at:at + length] (or +=): a plain loop, which LLVM
    vectorizes, without the cost of slicing for the short runs of few channels."""
    if add:
        for t in range(length):
            dst[to + t] += src[at + t]
    else:
        for t in range(length):
            dst[to + t] = src[at + t]


@_jit
def _move_windows(image, cols, first, rows, g, cg, kh, kw, geo, gather):
    """gather: cols[r] = the window of output position first + r (the channels of group
    g), zeros where it hangs over the image. Otherwise the adjoint: each entry of cols
    added to the input it reads. With one group and taps side by side (dilation 1 across
    the width), a window's row is one contiguous run of the image."""
    sh, sw, dh, dw, top, left, oh, ow = geo
    _, h, w, c = image.shape
    flat = reshaped(image, image.size)
    runs = dw == 1 and cg == c
    per_image = oh * ow
    c0 = g * cg
    row_length = kw * cg
    for r in range(rows):
        p = first + r
        n = p // per_image
        y = (p % per_image) // ow
        z = p % ow
        window = cols[r]
        j0, j1 = _tap_range(z, w, kw, sw, dw, left)
        for i in range(kh):
            iy = y * sh - top + i * dh
            base = i * row_length
            inside = 0 <= iy < h and j0 < j1
            if gather:
                start, stop = (base + j0 * cg, base + j1 * cg) if inside else (base, base)
                for t in range(base, start):
                    window[t] = 0
                for t in range(stop, base + row_length):
                    window[t] = 0
            if not inside:
                continue
            pixel = ((n * h + iy) * w + z * sw - left) * c + c0
            if runs:
                if gather:
                    _copy_run(window, base + j0 * c, flat, pixel + j0 * c, (j1 - j0) * c, False)
                else:
                    _copy_run(flat, pixel + j0 * c, window, base + j0 * c, (j1 - j0) * c, True)
                continue
            for j in range(j0, j1):
                if gather:
                    _copy_run(window, base + j * cg, flat, pixel + j * dw * c, cg, False)
                else:
                    _copy_run(flat, pixel + j * dw * c, window, base + j * cg, cg, True)


_ROW_BLOCK = 1 << 16  # outputs of one product: 256 KB of float32, kept in L2
_MIN_RUN = 64  # a filter row's taps times channels: shorter products pay im2col's copy
_MIN_OUTPUTS = 16  # fewer output channels leave the product's tiles mostly padding


def _conv_by_rows(x, w, geo, out):
    """conv2d_nhwc without copying windows, for one group, stride 1 across both axes and
    dilation 1 across the width, in float32 with microgemm: with the image's columns
    padded once, the windows' rows for one filter row are the rows of a matrix whose rows
    overlap (each starts one pixel after the last), which microgemm multiplies in place;
    each block of output rows sums one such product per filter row. About 10% faster than
    im2col on a 3x3, 64-channel layer. False (out untouched) where this does not apply."""


@overload(_conv_by_rows, jit_options={"error_model": "numpy"})
def _conv_by_rows_impl(x, w, geo, out):
    if x.dtype == types.float32 and microgemm.ENABLED:
        return _conv_by_rows_float32
    return lambda x, w, geo, out: False  # im2col: no second code path to compile


def _conv_by_rows_float32(x, w, geo, out):
    sh, sw, dh, dw, top, left, oh, ow = geo
    n, h, width, c = x.shape
    kh, kw, _, o = w.shape
    if (sh != 1 or sw != 1 or dw != 1 or w.shape[2] != c or kw * c < _MIN_RUN
            or o < _MIN_OUTPUTS):
        return False
    padded_width = ow + kw - 1
    run = kw * c
    # One pixel of slack per filter tap: the last row's overhanging windows read it.
    padded = zeros_array(n * h * padded_width * c + run, x.dtype)
    for b in range(n):
        for iy in range(h):
            for p in range(padded_width):
                ix = p - left
                if 0 <= ix < width:
                    at = ((b * h + iy) * padded_width + p) * c
                    for k in range(c):
                        padded[at + k] = x[b, iy, ix, k]
    matrix = _filter_matrices(w, 1)[0]
    flat_matrix = reshaped(matrix, matrix.size)
    rows_per_block = max(1, _ROW_BLOCK // (padded_width * max(o, 1)))
    block_size = rows_per_block * padded_width * o
    # One product per filter row, summed into the output once: the output is written
    # in a single pass, the products stay in cache.
    parts = empty_array((kh, block_size), x.dtype)
    for b in range(n):
        for y0 in range(0, oh, rows_per_block):
            y1 = min(oh, y0 + rows_per_block)
            for i in range(kh):
                # the output rows of this block whose filter row i lies inside the image
                first = min(max(y0, top - i * dh), y1)
                last = max(min(y1, h + top - i * dh), first)
                part = parts[i]
                part[:(first - y0) * padded_width * o] = 0
                part[(last - y0) * padded_width * o:] = 0
                if first < last:
                    start = ((b * h + first - top + i * dh) * padded_width) * c
                    _microgemm(padded[start:], c, 1, flat_matrix[i * run * o:], o, 1,
                               part[(first - y0) * padded_width * o:],
                               (last - first) * padded_width, run, o)
            for y in range(y0, y1):
                target = reshaped(out[b, y], ow * o)  # one output row, in cache for the sum
                row = (y - y0) * padded_width * o
                copy_elements(target, parts[0, row:row + ow * o])
                for i in range(1, kh):
                    _copy_run(target, 0, parts[i], row, ow * o, True)
    return True


@_array_jit
def conv2d_nhwc(x, w, geo):
    """Conv2D of NHWC x with filter w [KH, KW, C / groups, O]; geo = (stride h, stride w,
    dilation h, dilation w, padding top, padding left, out h, out w)."""
    x = contiguous(x)
    n, _, _, c = x.shape
    kh, kw, cg, o = w.shape
    oh, ow = geo[6], geo[7]
    out = empty_array((n, oh, ow, o), x.dtype)
    positions = n * oh * ow
    if positions == 0 or o == 0:
        return out
    if _conv_by_rows(x, w, geo, out):
        return out
    groups, og, block, cols, part = _buffers(positions, w.shape, c, x)
    matrices = _filter_matrices(w, groups)
    flat = reshaped(out, (positions, o))
    for first in range(0, positions, block):
        rows = min(block, positions - first)
        for g in range(groups):
            _move_windows(x, cols, first, rows, g, cg, kh, kw, geo, True)
            if groups == 1:
                _product_into(cols[:rows], matrices[0], False, False, flat[first:first + rows])
            else:
                _product_into(cols[:rows], matrices[g], False, False, part[:rows])
                copy_elements(flat[first:first + rows, g * og:(g + 1) * og], part[:rows])
    return out


@_array_jit
def conv2d_input_grad_nhwc(w, dy, h, width, c, geo):
    """Conv2DBackpropInput: the NHWC [N, h, width, c] gradient of conv2d_nhwc's input."""
    dy = contiguous(dy)
    n, oh, ow, o = dy.shape
    kh, kw, cg, _ = w.shape
    sh, sw, dh, dw, top, left = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    before_h, before_w = (kh - 1) * dh - top, (kw - 1) * dw - left
    if (sh == 1 and sw == 1 and cg == c and c >= _MIN_OUTPUTS and before_h >= 0
            and before_w >= 0 and n * h * width):
        # Stride 1: the gradient is the forward convolution of dy with the filter turned
        # around (rows and columns reversed, inputs and outputs swapped).
        turned = contiguous(transposed(w[::-1, ::-1], (0, 1, 3, 2)))
        return conv2d_nhwc(dy, turned, (1, 1, dh, dw, before_h, before_w, h, width))
    dx = zeros_array((n, h, width, c), dy.dtype)
    positions = n * oh * ow
    if positions == 0 or c == 0:
        return dx
    groups, og, block, cols, part = _buffers(positions, w.shape, c, dy)
    matrices = _filter_matrices(w, groups)
    flat = reshaped(dy, (positions, o))
    for first in range(0, positions, block):
        rows = min(block, positions - first)
        for g in range(groups):
            if groups == 1:
                _product_into(flat[first:first + rows], matrices[0], False, True, cols[:rows])
            else:
                copy_elements(part[:rows], flat[first:first + rows, g * og:(g + 1) * og])
                _product_into(part[:rows], matrices[g], False, True, cols[:rows])
            _move_windows(dx, cols, first, rows, g, cg, kh, kw, geo, False)
    return dx


@_array_jit
def conv2d_filter_grad_nhwc(x, dy, kh, kw, cg, geo):
    """Conv2DBackpropFilter: the [kh, kw, cg, O] gradient of conv2d_nhwc's filter."""
    x = contiguous(x)
    dy = contiguous(dy)
    n, oh, ow, o = dy.shape
    c = x.shape[3]
    dw = zeros_array((kh, kw, cg, o), x.dtype)
    positions = n * oh * ow
    if positions == 0 or o == 0 or cg == 0:
        return dw
    groups, og, block, cols, part = _buffers(positions, (kh, kw, cg, o), c, x)
    depth = kh * kw * cg
    flat = reshaped(dy, (positions, o))
    total = zeros_array((groups, depth, og), x.dtype)
    step = empty_array((depth, og), x.dtype)
    for first in range(0, positions, block):
        rows = min(block, positions - first)
        for g in range(groups):
            _move_windows(x, cols, first, rows, g, cg, kh, kw, geo, True)
            if groups == 1:
                _product_into(cols[:rows], flat[first:first + rows], True, False, step)
            else:
                copy_elements(part[:rows], flat[first:first + rows, g * og:(g + 1) * og])
                _product_into(cols[:rows], part[:rows], True, False, step)
            _copy_run(reshaped(total[g], step.size), 0, reshaped(step, step.size), 0, step.size,
                      True)
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                for ci in range(cg):
                    row = (i * kw + j) * cg + ci
                    for q in range(og):
                        dw[i, j, ci, g * og + q] = total[g, row, q]
    return dw


# -- pooling ---------------------------------------------------------------------------------

@_inlined
def _window_argmax(x, n, y, z, c, geo):
    """The flat index (row * width + column) of the largest input of a window, the first
    of equal ones and NaN above all, as np.argmax over the window padded with the
    lowest value; -1 where that is padding."""
    kh, kw, sh, sw, top, left = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    _, h, w, _ = x.shape
    best = x[n, 0, 0, c]
    where = -2  # nothing seen yet
    for i in range(kh):
        iy = y * sh - top + i
        for j in range(kw):
            ix = z * sw - left + j
            inside = 0 <= iy < h and 0 <= ix < w
            if inside:
                v = x[n, iy, ix, c]
                if where == -2 or v > best or (v != v and best == best):
                    best = v
                    where = iy * w + ix
            elif where == -2:
                where = -1  # padding is the lowest value: real inputs replace it if larger
                best = _lowest_like(best)
    return where


def _lowest_like(v):
    """The smallest value of v's type (-inf for floats)."""


@overload(_lowest_like, jit_options={"error_model": "numpy"})
def _lowest_like_impl(v):
    if isinstance(v, types.Float):
        return lambda v: -np.inf
    low = np.iinfo(np.dtype(str(v))).min
    return lambda v: low


@_inlined
def _argmax_map(x, geo):
    """_window_argmax of every window: [N, out h, out w, C] flat indices."""
    n, _, _, c = x.shape
    where = empty_array((n, geo[6], geo[7], c), np.int64)
    for b in range(n):
        for y in range(geo[6]):
            for z in range(geo[7]):
                for k in range(c):
                    where[b, y, z, k] = _window_argmax(x, b, y, z, k, geo)
    return where


@_array_jit
def max_pool_nhwc(x, geo):
    """MaxPool of NHWC x; geo = (window h, window w, stride h, stride w, padding top,
    padding left, out h, out w)."""
    x = contiguous(x)
    w = x.shape[2]
    where = _argmax_map(x, geo)
    out = empty_array(where.shape, x.dtype)
    for b, y, z, k in np.ndindex(where.shape):
        at = where[b, y, z, k]
        out[b, y, z, k] = _lowest_like(x[b, 0, 0, k]) if at < 0 else x[b, at // w, at % w, k]
    return out


@_array_jit
def max_pool_grad_nhwc(x, grad, geo, to_image):
    """MaxPoolGrad (to_image: each window's gradient added to its largest input), or
    MaxPoolGradGrad (for each window, the image gradient at its largest input)."""
    x = contiguous(x)
    w = x.shape[2]
    where = _argmax_map(x, geo)
    out = zeros_array(x.shape if to_image else where.shape, grad.dtype)
    for b, y, z, k in np.ndindex(where.shape):
        at = where[b, y, z, k]
        if at < 0:
            continue
        if to_image:
            out[b, at // w, at % w, k] += grad[b, y, z, k]
        else:
            out[b, y, z, k] = grad[b, at // w, at % w, k]
    return out


@_inlined
def _window_rows(y, size, window, stride, before):
    start = y * stride - before
    return max(start, 0), min(start + window, size)


@_array_jit
def avg_pool_nhwc(x, geo):
    """AvgPool: each window's mean over the inputs inside the image."""
    x = contiguous(x)
    n, h, w, c = x.shape
    out = zeros_array((n, geo[6], geo[7], c), x.dtype)
    for b in range(n):
        for y in range(geo[6]):
            y0, y1 = _window_rows(y, h, geo[0], geo[2], geo[4])
            for z in range(geo[7]):
                x0, x1 = _window_rows(z, w, geo[1], geo[3], geo[5])
                for iy in range(y0, y1):
                    for ix in range(x0, x1):
                        for k in range(c):
                            out[b, y, z, k] += x[b, iy, ix, k]
                count = max((y1 - y0) * (x1 - x0), 1)
                for k in range(c):
                    out[b, y, z, k] /= count
    return out


@_array_jit
def avg_pool_grad_nhwc(grad, h, w, geo):
    """AvgPoolGrad: each window's gradient spread evenly over the inputs it averaged."""
    grad = contiguous(grad)
    n, oh, ow, c = grad.shape
    dx = zeros_array((n, h, w, c), grad.dtype)
    for b in range(n):
        for y in range(oh):
            y0, y1 = _window_rows(y, h, geo[0], geo[2], geo[4])
            for z in range(ow):
                x0, x1 = _window_rows(z, w, geo[1], geo[3], geo[5])
                count = max((y1 - y0) * (x1 - x0), 1)
                for iy in range(y0, y1):
                    for ix in range(x0, x1):
                        for k in range(c):
                            dx[b, iy, ix, k] += grad[b, y, z, k] / count
    return dx
