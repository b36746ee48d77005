"""How kernels allocate arrays: np.empty, np.zeros and np.full built in place, as Numba
builds np.empty's array (its _empty_nd_impl), with no function to compile. Numba's own
np.empty and np.full are functions it compiles again in every process, for each shape
rank and dtype (0.1-0.3 s of a new kernel's first compile, and of many empty-cache
compiles); helpers around them were compiled once per signature and cache directory, so
every graph with a new rank or dtype still paid for one. Even _empty_nd_impl compiles a
small function (its allocator trampoline, about 0.04 s) in every process: the memory
comes from the runtime's allocator directly here (`new_array`, also used by views.py).

    empty_array(shape, dtype)          # shape: an int or a tuple of ints
    zeros_array(shape, dtype)
    full_array(shape, value, dtype)
    scalar_array(value)                # a 0-d array of value's type
"""

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.extending import intrinsic
from numba.np.arrayobj import _parse_shape, get_itemsize, make_array, populate_array


def _array_type(shape, dtype):
    ndim, nb_dtype = parse_shape(shape), parse_dtype(dtype)
    if ndim is None or nb_dtype is None:
        return None
    return types.Array(nb_dtype, ndim, "C")


def new_array(context, builder, array_type, dims):
    """A new C-contiguous array of `array_type` whose shape is `dims` (intp values), its
    memory from the runtime: what _empty_nd_impl builds, less the function it compiles."""
    intp = context.get_value_type(types.intp)
    itemsize = context.get_constant(types.intp, get_itemsize(context, array_type))
    count, overflow = context.get_constant(types.intp, 1), ir.Constant(ir.IntType(1), 0)
    for dim in list(dims) + [itemsize]:
        product = builder.smul_with_overflow(count, dim)
        count = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    with builder.if_then(overflow, likely=False):
        message = ("array is too big; `arr.size * arr.dtype.itemsize` is larger than the "
                   "maximum possible size.")
        context.call_conv.return_user_exc(builder, ValueError, (message,))
    align = context.get_preferred_array_alignment(array_type.dtype)
    meminfo = context.nrt.meminfo_alloc_aligned(builder, count, align)
    data = context.nrt.meminfo_data(builder, meminfo)
    strides = [itemsize]
    for dim in reversed(list(dims)[1:]):
        strides.append(builder.mul(strides[-1], dim))
    array = make_array(array_type)(context, builder)
    populate_array(array, data=builder.bitcast(data, context.get_data_type(
        array_type.dtype).as_pointer()), shape=cgutils.pack_array(builder, list(dims), ty=intp),
        strides=cgutils.pack_array(builder, strides[::-1][:len(dims)], ty=intp),
        itemsize=itemsize, meminfo=meminfo)
    return array


def _allocated(context, builder, array_type, shape_type, shape):
    return new_array(context, builder, array_type,
                     _parse_shape(context, builder, shape_type, shape))


def _fill(context, builder, array_type, array, value):
    """Stores `value` (of the array's dtype) in every element of the new `array`."""
    with cgutils.for_range(builder, array.nitems) as loop:
        context.pack_value(builder, array_type.dtype, value,
                           cgutils.gep(builder, array.data, loop.index))


if not config.DISABLE_JIT:
    def _allocator(zeroed):
        def allocate(typingctx, shape, dtype):
            array_type = _array_type(shape, dtype)
            if array_type is None:
                return None

            def codegen(context, builder, signature, args):
                array = _allocated(context, builder, array_type, signature.args[0], args[0])
                if zeroed:
                    cgutils.memset(builder, array.data,
                                   builder.mul(array.nitems, array.itemsize), 0)
                return array._getvalue()
            return array_type(shape, dtype), codegen
        allocate.__name__ = "zeros_array" if zeroed else "empty_array"
        return intrinsic(allocate)

    empty_array = _allocator(zeroed=False)
    zeros_array = _allocator(zeroed=True)

    @intrinsic
    def full_array(typingctx, shape, value, dtype):
        array_type = _array_type(shape, dtype)
        if array_type is None or not isinstance(value, (types.Number, types.Boolean)):
            return None

        def codegen(context, builder, signature, args):
            array = _allocated(context, builder, array_type, signature.args[0], args[0])
            fill = context.cast(builder, args[1], signature.args[1], array_type.dtype)
            _fill(context, builder, array_type, array, fill)
            return array._getvalue()
        return array_type(shape, value, dtype), codegen

    @intrinsic
    def scalar_array(typingctx, value):
        if not isinstance(value, (types.Number, types.Boolean)):
            return None
        array_type = types.Array(value, 0, "C")

        def codegen(context, builder, signature, args):
            array = new_array(context, builder, array_type, ())
            context.pack_value(builder, value, args[0], array.data)
            return array._getvalue()
        return array_type(value), codegen
else:  # kernels run as Python
    def empty_array(shape, dtype):
        return np.empty(shape, dtype)

    def zeros_array(shape, dtype):
        return np.zeros(shape, dtype)

    def full_array(shape, value, dtype):
        return np.full(shape, value, dtype)

    def scalar_array(value):
        return np.full((), value)
