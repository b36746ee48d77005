"""The call from a kernel's Python entry to its machine code (kernel_caller.py): kernels
are compiled without Numba's Python wrapper, and one jitted function per signature and
results calls any of them by address.

A kernel's results are a tuple of arrays; `results_text` writes their types as text (the
caller's source holds it) and `call_native` reads it back where the caller is typed.
"""

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_new_ref
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype, from_dtype

_READ_ONLY, _WRITABLE = "r", "w"


def results_text(restype):
    """The text of a kernel's result type, a tuple of arrays: for each array its dtype,
    rank, layout and whether it is writable. ValueError for any other type."""
    if not isinstance(restype, types.BaseTuple):
        raise ValueError(f"a kernel returns a tuple, not {restype}")
    entries = []
    for array in restype.types:
        if not isinstance(array, types.Array):
            raise ValueError(f"a kernel returns arrays, not {array}")
        entries.append(f"{as_dtype(array.dtype).str}/{array.ndim}/{array.layout}/"
                       f"{_WRITABLE if array.mutable else _READ_ONLY}")
    text = ";".join(entries)
    if results_type(text) != restype:  # what the text leaves out (alignment) differs
        raise ValueError(f"{restype} is not written as its text")
    return text


def results_type(text):
    """The tuple type that `results_text` wrote as `text`."""
    arrays = []
    for entry in filter(None, text.split(";")):
        dtype, ndim, layout, access = entry.split("/")
        arrays.append(types.Array(from_dtype(np.dtype(dtype)), int(ndim), layout,
                                  readonly=access == _READ_ONLY))
    return types.BaseTuple.from_types(arrays)


@intrinsic
def call_native(typingctx, address, results, *arguments):
    """Calls the kernel at `address` (an integer) with `arguments`; `results` is the text
    of its result type (a literal). Its errors propagate as the kernel's own would."""
    if not isinstance(results, types.StringLiteral) or not isinstance(address, types.Integer):
        return None  # typed again with the literal text
    restype = results_type(results.literal_value)

    def codegen(context, builder, signature, args):
        argtypes = signature.args[2].types
        values = [builder.extract_value(args[2], i) for i in range(len(argtypes))]
        fnty = context.call_conv.get_function_type(restype, argtypes)
        function = builder.inttoptr(args[0], fnty.as_pointer())
        status, value = context.call_conv.call_function(builder, function, restype,
                                                        argtypes, values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return impl_ret_new_ref(context, builder, restype, value)

    return restype(address, results, types.StarArgTuple.from_types(arguments)), codegen
