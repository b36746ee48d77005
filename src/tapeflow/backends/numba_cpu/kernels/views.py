"""Reshapes, dtype casts and copies of whole arrays, built in place, as allocation.py
builds new arrays. Numba lowers `a.reshape(shape)` through a function it compiles in
every process (its reshape's shape check, about 0.07 s of each process's first kernel),
`a.transpose(perm)` through one that checks `perm` with a set and formats its error
message (hashing and string code: about 3 s of the first such kernel in a process),
`np.broadcast_to` through two (0.3 s), and
`a.astype(dtype)`, `a.copy()` and `np.ascontiguousarray(a)` are overloads it compiles
per process and signature; these compile nothing (a reshape of a layout other than C
takes Numba's own code).

    reshaped(a, shape)      # a.reshape(shape): a view; shape an int or a tuple of ints
    transposed(a, perm)     # a.transpose(perm): a view; perm a permutation of a's axes
                            # (checked where the kernel is generated, not here)
    broadcast_view(a, shape)  # np.broadcast_to(a, shape): a read-only view, its
                            # repeated axes of stride 0; shape a tuple of ints
    cast_array(a, dtype)    # a.astype(dtype): a new C-contiguous array
    c_order(a)              # a's elements in C order, 1-D: a view of a C-contiguous
                            # array, a copy of any other (np.ascontiguousarray(a).ravel())
    contiguous(a)           # np.ascontiguousarray(a), of a's rank: a itself if C
    copy_of(a)              # a.copy(): a new C-contiguous array
    copy_elements(dst, src) # dst[...] = src, two arrays of one shape, any layouts, that
                            # share no memory (it copies element by element, in order)
"""

import numpy as np
from numba import config, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed, impl_ret_new_ref
from numba.core.typing.npydecl import parse_dtype
from numba.extending import intrinsic
from numba.np.arrayobj import array_reshape, load_item, make_array, populate_array, store_item

from .allocation import new_array


def _shape_types(shape):
    if isinstance(shape, types.Integer):
        return (shape,)
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return tuple(shape)
    return None


def _dims(context, builder, shape_type, shape):
    values = [shape] if isinstance(shape_type, types.Integer) else \
        cgutils.unpack_tuple(builder, shape, len(shape_type))
    return [context.cast(builder, v, t, types.intp)
            for v, t in zip(values, _shape_types(shape_type))]


def _resolved(context, builder, dims, size):
    """`dims` with a negative one inferred from `size`; raises ValueError (as NumPy) when
    the sizes do not agree."""
    intp = context.get_value_type(types.intp)
    zero, one = intp(0), intp(1)
    known, negatives = one, zero
    for dim in dims:
        negative = builder.icmp_signed("<", dim, zero)
        known = builder.select(negative, known, builder.mul(known, dim))
        negatives = builder.add(negatives, builder.zext(negative, intp))
    empty = builder.icmp_signed("==", known, zero)
    inferred = builder.select(empty, zero,
                              builder.sdiv(size, builder.select(empty, one, known)))
    dims = [builder.select(builder.icmp_signed("<", d, zero), inferred, d) for d in dims]
    total = one
    for dim in dims:
        total = builder.mul(total, dim)
    bad = builder.or_(builder.icmp_signed(">", negatives, one),
                      builder.icmp_signed("!=", total, size))
    with builder.if_then(bad, likely=False):
        context.call_conv.return_user_exc(
            builder, ValueError, ("cannot reshape array: the total size must be unchanged",))
    return dims


def strided_view(context, builder, source, shape, strides, view_type):
    """A view of `source`'s memory (an array struct) with the given shape and strides
    (lists of intp values), of Numba type `view_type`: a new reference, as the intrinsic
    that returns it must give."""
    view = make_array(view_type)(context, builder)
    intp = context.get_value_type(types.intp)
    populate_array(view, data=source.data, shape=cgutils.pack_array(builder, shape, ty=intp),
                   strides=cgutils.pack_array(builder, strides, ty=intp),
                   itemsize=source.itemsize, meminfo=source.meminfo, parent=source.parent)
    return impl_ret_borrowed(context, builder, view_type, view._getvalue())


def c_view(context, builder, source, dims, view_type):
    """A C-contiguous view of `source`'s elements (an array struct whose memory is
    contiguous) with shape `dims` (intp values), of Numba type `view_type`."""
    strides = [source.itemsize]
    for dim in reversed(list(dims)[1:]):
        strides.append(builder.mul(strides[-1], dim))
    return strided_view(context, builder, source, list(dims), strides[::-1][:len(dims)],
                        view_type)


if not config.DISABLE_JIT:
    @intrinsic
    def reshaped(typingctx, array, shape):
        dims = _shape_types(shape)
        if not isinstance(array, types.Array) or dims is None or array.layout not in "CF":
            return None
        result = array.copy(ndim=len(dims), layout=array.layout)

        def codegen(context, builder, signature, args):
            if array.layout != "C":
                return array_reshape(context, builder, result(array, types.UniTuple(
                    types.intp, len(dims))), [args[0], cgutils.pack_array(
                        builder, _dims(context, builder, shape, args[1]))])
            source = make_array(array)(context, builder, args[0])
            new = _resolved(context, builder, _dims(context, builder, shape, args[1]),
                            source.nitems)
            return c_view(context, builder, source, new, result)
        return result(array, shape), codegen

    @intrinsic
    def transposed(typingctx, array, perm):
        axes = _shape_types(perm)
        if not isinstance(array, types.Array) or axes is None or len(axes) != array.ndim:
            return None
        result = array.copy(layout="A") if array.ndim > 1 else array

        def codegen(context, builder, signature, args):
            source = make_array(array)(context, builder, args[0])
            intp = context.get_value_type(types.intp)
            # Axis k of the view is axis perm[k] of the source: its size and its stride.
            old_shape = cgutils.alloca_once_value(builder, source.shape)
            old_strides = cgutils.alloca_once_value(builder, source.strides)
            zero = intp(0)
            shape, strides = [], []
            for at in _dims(context, builder, perm, args[1]):
                shape.append(builder.load(builder.gep(old_shape, [zero, at])))
                strides.append(builder.load(builder.gep(old_strides, [zero, at])))
            return strided_view(context, builder, source, shape, strides, result)
        return result(array, perm), codegen

    @intrinsic
    def broadcast_view(typingctx, array, shape):
        dims = _shape_types(shape)
        if not isinstance(array, types.Array) or dims is None or len(dims) < array.ndim:
            return None
        result = types.Array(array.dtype, len(dims), "A", readonly=True)

        def codegen(context, builder, signature, args):
            source = make_array(array)(context, builder, args[0])
            intp = context.get_value_type(types.intp)
            zero, one = intp(0), intp(1)
            new = _dims(context, builder, shape, args[1])
            old_shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
            old_strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
            lead = len(new) - array.ndim  # NumPy's rule: the trailing axes line up
            strides, bad = [zero] * lead, cgutils.false_bit
            for size, old, stride in zip(new[lead:], old_shape, old_strides):
                same = builder.icmp_signed("==", old, size)
                bad = builder.or_(bad, builder.and_(builder.not_(same),
                                                    builder.icmp_signed("!=", old, one)))
                strides.append(builder.select(same, stride, zero))
            for size in new:
                bad = builder.or_(bad, builder.icmp_signed("<", size, zero))
            with builder.if_then(bad, likely=False):
                context.call_conv.return_user_exc(
                    builder, ValueError, ("operands could not be broadcast together",))
            return strided_view(context, builder, source, new, strides, result)
        return result(array, shape), codegen

    def _c_copy(context, builder, array, source, result, dims):
        """A new C-contiguous array of type `result` and shape `dims` holding the elements
        of `source` (of Numba type `array`, any layout) in C order, cast to result's dtype:
        the one copy loop of cast_array, c_order, contiguous and copy_of."""
        out = new_array(context, builder, result, dims)

        def copy(item, at):
            value = load_item(context, builder, array, item)
            store_item(context, builder, result,
                       context.cast(builder, value, array.dtype, result.dtype),
                       cgutils.gep(builder, out.data, at))
        if array.layout == "C":
            with cgutils.for_range(builder, source.nitems) as loop:
                copy(cgutils.gep(builder, source.data, loop.index), loop.index)
        else:
            shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
            strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
            position = cgutils.alloca_once_value(builder, context.get_constant(types.intp, 0))
            with cgutils.loop_nest(builder, shape, source.nitems.type) as indices:
                at = builder.load(position)
                copy(cgutils.get_item_pointer2(context, builder, source.data, shape, strides,
                                               array.layout, indices), at)
                builder.store(builder.add(at, context.get_constant(types.intp, 1)), position)
        return impl_ret_new_ref(context, builder, result, out._getvalue())

    @intrinsic
    def cast_array(typingctx, array, dtype):
        target = parse_dtype(dtype)
        if not isinstance(array, types.Array) or target is None or (
                isinstance(array.dtype, types.Complex) and not isinstance(target, types.Complex)):
            return None  # as Numba's astype: no complex to real
        result = types.Array(target, array.ndim, "C")

        def codegen(context, builder, signature, args):
            source = make_array(array)(context, builder, args[0])
            return _c_copy(context, builder, array, source, result,
                           cgutils.unpack_tuple(builder, source.shape, array.ndim))
        return result(array, dtype), codegen

    @intrinsic
    def c_order(typingctx, array):
        if not isinstance(array, types.Array):
            return None
        result = types.Array(array.dtype, 1, "C")

        def codegen(context, builder, signature, args):
            source = make_array(array)(context, builder, args[0])
            if array.layout == "C":
                return c_view(context, builder, source, [source.nitems], result)
            return _c_copy(context, builder, array, source, result, [source.nitems])
        return result(array), codegen

    @intrinsic
    def copy_of(typingctx, array):
        if not isinstance(array, types.Array):
            return None
        result = array.copy(layout="C", readonly=False)

        def codegen(context, builder, signature, args):
            source = make_array(array)(context, builder, args[0])
            return _c_copy(context, builder, array, source, result,
                           cgutils.unpack_tuple(builder, source.shape, array.ndim))
        return result(array), codegen

    @intrinsic
    def contiguous(typingctx, array):
        if not isinstance(array, types.Array):
            return None
        result = array.copy(layout="C", readonly=False) if array.layout != "C" else array

        def codegen(context, builder, signature, args):
            if array.layout == "C":
                return impl_ret_borrowed(context, builder, array, args[0])
            source = make_array(array)(context, builder, args[0])
            return _c_copy(context, builder, array, source, result,
                           cgutils.unpack_tuple(builder, source.shape, array.ndim))
        return result(array), codegen

    @intrinsic
    def copy_elements(typingctx, dst, src):
        if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
                and dst.ndim == src.ndim):
            return None

        def codegen(context, builder, signature, args):
            target, source = (make_array(t)(context, builder, v) for t, v in zip((dst, src), args))
            shape = cgutils.unpack_tuple(builder, source.shape, src.ndim)
            different = cgutils.false_bit
            for a, b in zip(cgutils.unpack_tuple(builder, target.shape, dst.ndim), shape):
                different = builder.or_(different, builder.icmp_signed("!=", a, b))
            with builder.if_then(different, likely=False):
                context.call_conv.return_user_exc(
                    builder, ValueError, ("the shapes of a copied region differ",))
            with cgutils.loop_nest(builder, shape, source.nitems.type) as indices:
                value = load_item(context, builder, src, cgutils.get_item_pointer2(
                    context, builder, source.data, shape,
                    cgutils.unpack_tuple(builder, source.strides, src.ndim), src.layout,
                    indices))
                store_item(context, builder, dst, context.cast(builder, value, src.dtype,
                                                               dst.dtype),
                           cgutils.get_item_pointer2(
                               context, builder, target.data, shape,
                               cgutils.unpack_tuple(builder, target.strides, dst.ndim),
                               dst.layout, indices))
            return context.get_dummy_value()
        return types.none(dst, src), codegen
else:  # kernels run as Python
    def reshaped(array, shape):
        return array.reshape(shape)

    def transposed(array, perm):
        return array.transpose(perm)

    def broadcast_view(array, shape):
        return np.broadcast_to(array, shape)

    def c_order(array):
        return np.ascontiguousarray(array).reshape(-1)

    def copy_of(array):
        return array.copy()

    def contiguous(array):
        return np.ascontiguousarray(array)

    def copy_elements(dst, src):
        if dst.shape != src.shape:
            raise ValueError("the shapes of a copied region differ")
        dst[...] = src

    def cast_array(array, dtype):
        return np.ascontiguousarray(array.astype(dtype))
