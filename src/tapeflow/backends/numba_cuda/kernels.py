"""The @cuda.jit kernels, generated from a key and kept in memory (one per key).

A key is plain data (tuples of strings and ints) and the only input of `source(key)`:
the text and the argument types of the kernel follow from it, so a kernel can be
compiled again elsewhere (tests compile every key to PTX for sm_90). Two kinds:

    ("map", out dtype, rank, ((input dtype, mode), ...), ((attr, dtype), ...),
     expression, check)
        out[i] = expression over x0, x1, ... for every element i of the output, in a
        grid-stride loop. An input's mode says how it is read: "same" (its shape is the
        output's: element i), "one" (one element, broadcast), "strided" (broadcast along
        some dimensions: the output index unravelled over `shape`, times its strides,
        0 along the broadcast ones). `check`, when not None, is a condition on the
        operands under which the op fails (an integer division by zero): the kernel then
        sets flag[0] instead of writing, and the op reports the error.
    ("reduce", kind, input dtype, accumulator dtype, out dtype, kept rank,
     reduced rank, finish)
        out[t] for t = j * parts + c: the reduction (kind: sum, mean, max, min, prod,
        all, any) of the elements c, c + parts, ... of the reduced block of output j;
        a second launch with parts = 1 combines the partial results. `finish` turns the
        accumulator into the output (mean's division) on the last launch.
    ("fused", text, argument types)
        a fused group of a compiled graph (fused.py), its text generated there; each
        argument type is "int64", "ints<rank>" (a tuple of int64) or "array:<dtype>".
"""

import numpy as np

from .device import cuda

_kernels = {}


def clear():
    _kernels.clear()


def compiled_keys():
    """The keys of every kernel generated in this process."""
    return list(_kernels)


def kernel(key):
    """The compiled kernel of `key` (generated and compiled at first use)."""
    found = _kernels.get(key)
    if found is None:
        function, signature = _python_function(key)
        found = _kernels[key] = cuda().jit(signature)(function)
    return found


def _python_function(key):
    """(the kernel of `key` as a Python function, its numba signature)."""
    from .device_math import HELPERS
    text, signature = source(key)
    # The module name keeps NumPy's float warnings under the simulator quiet, as the
    # filter of ops/registry.py does for every tapeflow module (x / 0 is inf there).
    namespace = {"__name__": "tapeflow.backends.numba_cuda.generated", "cuda": cuda(),
                 "np": np, **HELPERS}
    exec(compile(text, f"<tapeflow cuda kernel {key[0]}>", "exec"), namespace)
    return namespace["kernel"], signature


def source(key):
    """(the kernel's Python text, its numba signature) for `key`."""
    if key[0] == "fused":
        return key[1], _signature([_argument_type(t) for t in key[2]])
    return _map_source(key) if key[0] == "map" else _reduce_source(key)


def ptx(key, cc=(9, 0)):
    """The PTX of `key`'s kernel for compute capability `cc` (needs NVVM, not a GPU)."""
    function, signature = _python_function(key)
    code, _ = cuda().compile_ptx(function, signature.args, cc=cc)
    return code


# -- argument types -------------------------------------------------------------------------

def _numba_type(name):
    import numba
    return getattr(numba, "boolean" if name == "bool" else name)


def _array(name):
    from numba import types
    return types.Array(_numba_type(name), 1, "C")


def _ints(n):
    from numba import types
    return types.UniTuple(types.int64, n)


def _argument_type(spec):
    if spec.startswith("array:"):
        return _array(spec[6:])
    if spec.startswith("ints"):
        return _ints(int(spec[4:]))
    return _numba_type(spec)


def _signature(args):
    from numba import types
    return types.void(*args)


def _unravel(lines, index, rank, shape, prefix):
    """Lines that set prefix0 ... prefix{rank-1} to `index` unravelled over `shape`."""
    if rank == 0:
        return
    lines.append(f"        rest = {index}")
    for d in range(rank - 1, 0, -1):
        lines.append(f"        {prefix}{d} = rest % {shape}[{d}]")
        lines.append(f"        rest = rest // {shape}[{d}]")
    lines.append(f"        {prefix}0 = rest")


def _offset(rank, coords, strides):
    if rank == 0:
        return "0"
    return " + ".join(f"{coords}{d} * {strides}[{d}]" for d in range(rank))


# -- map kernels ----------------------------------------------------------------------------

def _map_source(key):
    _, out_dtype, rank, inputs, attrs, expression, check = key
    strided = any(mode == "strided" for _, mode in inputs)
    params, types = ["out", "n"], [_array(out_dtype), _numba_type("int64")]
    if strided:
        params.append("shape")
        types.append(_ints(rank))
    for i, (dtype, mode) in enumerate(inputs):
        params.append(f"a{i}")
        types.append(_array(dtype))
        if mode == "strided":
            params.append(f"s{i}")
            types.append(_ints(rank))
    for name, dtype in attrs:
        params.append(f"attr_{name}")
        types.append(_numba_type(dtype))
    if check is not None:
        params.append("flag")
        types.append(_array("int32"))
    lines = [f"def kernel({', '.join(params)}):",
             "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):"]
    if strided:
        _unravel(lines, "i", rank, "shape", "c")
    for i, (_, mode) in enumerate(inputs):
        at = {"same": "i", "one": "0"}.get(mode) or _offset(rank, "c", f"s{i}")
        lines.append(f"        x{i} = a{i}[{at}]")
    if check is not None:
        lines.append(f"        if {check}:")
        lines.append("            flag[0] = 1")
        lines.append("        else:")
        lines.append(f"            out[i] = {expression}")
    else:
        lines.append(f"        out[i] = {expression}")
    return "\n".join(lines) + "\n", _signature(types)


# -- reduction kernels ----------------------------------------------------------------------

_INITIAL = {"sum": "0", "mean": "0", "prod": "1", "all": "True", "any": "False"}
_COMBINE = {"sum": "acc + v", "mean": "acc + v", "prod": "acc * v", "max": "maximum(acc, v)",
            "min": "minimum(acc, v)", "all": "acc and v", "any": "acc or v"}


def _initial(kind, acc_dtype):
    if kind in ("max", "min"):
        if acc_dtype.startswith("float"):
            return f"np.{acc_dtype}({'-' if kind == 'max' else ''}np.inf)"
        info = np.iinfo(acc_dtype)
        return f"np.{acc_dtype}({info.min if kind == 'max' else info.max})"
    if acc_dtype == "bool":
        return _INITIAL[kind]
    return f"np.{acc_dtype}({_INITIAL[kind]})"


def _finish(kind, out_dtype):
    if kind != "mean":
        return "acc"
    if out_dtype.startswith("float"):  # an empty mean is NaN, as 0 / 0 in NumPy
        return "acc / np.float64(count) if count > 0 else np.nan"
    # TensorFlow's integer mean: the sum in the integer type, divided toward zero.
    return (f"(abs(np.{out_dtype}(acc)) // (count if count > 0 else 1)) * "
            f"(1 if np.{out_dtype}(acc) >= 0 else -1)")


def _reduce_source(key):
    _, kind, in_dtype, acc_dtype, out_dtype, kept, reduced, finish = key
    params = ["out", "m", "parts", "k", "kshape", "kstride", "rshape", "rstride", "inp", "count"]
    types = [_array(out_dtype), _numba_type("int64"), _numba_type("int64"),
             _numba_type("int64"), _ints(kept), _ints(kept), _ints(reduced), _ints(reduced),
             _array(in_dtype), _numba_type("int64")]
    lines = [f"def kernel({', '.join(params)}):",
             "    for t in range(cuda.grid(1), m * parts, cuda.gridsize(1)):",
             "        j = t // parts",
             "        c = t - j * parts"]
    _unravel(lines, "j", kept, "kshape", "q")
    lines.append(f"        base = {_offset(kept, 'q', 'kstride')}")
    lines.append(f"        acc = {_initial(kind, acc_dtype)}")
    lines.append("        for r in range(c, k, parts):")
    inner = []
    _unravel(inner, "r", reduced, "rshape", "p")
    lines += ["    " + line for line in inner]
    lines.append(f"            v = inp[base + {_offset(reduced, 'p', 'rstride')}]")
    lines.append(f"            acc = {_COMBINE[kind]}")
    lines.append(f"        out[t] = {_finish(kind, out_dtype) if finish else 'acc'}")
    return "\n".join(lines) + "\n", _signature(types)
