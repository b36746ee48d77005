"""Lowerings of the ops that rearrange elements: reshapes (static and computed while the
graph runs), transposes, stacking and splitting, tiling, padding, reversing, and the
shape queries."""

from ...ops.dynamic import DYNAMIC_BROADCAST_TO, DYNAMIC_RESHAPE
from ...ops.shape import (
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
from .generator import lowers
from .text import Unsupported, colons, literal, np_name, subscript, tuple_expr


@lowers(RESHAPE)
def _reshape(cg, node):
    x = cg.val(node.inputs[0])
    shape = cg.runtime_ints(node.attrs["shape"])
    src = cg.contiguous(x)
    if None in x.shape and not shape:  # a scalar holds one element (Numba cannot loop ())
        _check_reshape_size(cg, node, src, [])
    elif None in x.shape:  # infer could not count the elements: count them now
        cg.emit(f"check_reshape_size({src}.size, {tuple_expr(shape)}, {cg.error('reshape', node)}, "
                f"{cg.error('reshape_multiple', node)})")
    cg.output(node, cg.assign(f"reshaped({src}, {tuple_expr(shape)})"))


@lowers(DYNAMIC_RESHAPE)
def _dynamic_reshape(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    src = cg.contiguous(x)
    shape = cg.array(cg.val(node.inputs[1]))
    dims = []
    cg.emit(f"check_reshape_target({shape}, {cg.error('reshape_unknowns', node)}, "
            f"{cg.error('reshape_negative', node)})")
    for i in range(len(y._shape)):
        dims.append(cg.assign(f"reshape_dim({shape}, {src}.size, {i})"))
    _check_reshape_size(cg, node, src, dims)
    cg.output(node, cg.assign(f"reshaped({src}, {tuple_expr(dims)})"))


def _check_reshape_size(cg, node, src, dims):
    code = cg.error("reshape", node)
    product = cg.assign(cg.product(dims))
    cg.emit(f"if {product} != {src}.size: raise ValueError({code}, {src}.size, {product})")


@lowers(DYNAMIC_BROADCAST_TO)
def _dynamic_broadcast_to(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    dims = [cg.assign(d) for d in cg.runtime_dims(node.inputs[1], len(y._shape))]
    _check_dims_not_negative(cg, node, dims)
    code = cg.error("shape", node)
    for k, d in enumerate(cg.dims(x)):
        target = dims[len(dims) - x.rank + k]
        cg.emit(f"if {d} != 1 and {d} != {target}: raise ValueError({code})")
    out = cg.new_array(y, dims)
    value = cg.array(x) if x.rank else cg.scalar(x)
    cg.emit(f"{out}[...] = {value}")
    cg.output(node, out)


def _check_dims_not_negative(cg, node, dims):
    """A shape computed when the graph runs (tf.zeros([n])) must have no negative entry:
    np.empty would raise without naming the node or the value."""
    code = cg.error("dimension", node)
    for d in dims:
        cg.emit(f"if {d} < 0: raise ValueError({code}, {d})")


@lowers(TRANSPOSE)
def _transpose(cg, node):
    x = cg.val(node.inputs[0])
    perm = tuple(node.attrs["perm"])
    if perm == tuple(range(len(perm))):
        cg.define(node.outputs[0], x)
        return
    cg.output(node, cg.assign(f"transposed({cg.array(x)}, {tuple_expr(map(str, perm))})"), "A")


@lowers(EXPAND_DIMS, SQUEEZE)
def _expand_squeeze(cg, node):
    x = cg.val(node.inputs[0])
    dims = cg.dims(x)
    y = node.outputs[0]
    if node.op is EXPAND_DIMS:
        axis = node.attrs["axis"] % (x.rank + 1)
        shape = dims[:axis] + ["1"] + dims[axis:]
    else:
        from ...ops.shape import _squeeze_dims
        drop = _squeeze_dims(x.shape, node.attrs["axis"])
        shape = [d for i, d in enumerate(dims) if i not in drop]
        for i in drop:
            if x.shape[i] is None:
                raise Unsupported(f"Squeeze of a dimension unknown at trace time at "
                                  f"{node.where()}")
    if len(shape) != len(y._shape):
        raise Unsupported(f"{node.op.name}: unexpected rank at {node.where()}")
    cg.output(node, cg.assign(f"reshaped({cg.contiguous(x)}, {tuple_expr(shape)})"))


@lowers(PACK)
def _pack(cg, node):
    values = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    axis = node.attrs["axis"] % (values[0].rank + 1)
    first = values[0]
    dims = cg.dims(first) if first.name is not None or first.rank else []
    shape = dims[:axis] + [str(len(values))] + dims[axis:]
    out = cg.new_array(y, shape)
    for k, v in enumerate(values):
        cg.write_item(f"{out}{subscript(colons(axis) + [str(k)] + colons(first.rank - axis))}",
                      v)
    cg.output(node, out)


@lowers(UNPACK)
def _unpack(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    name = cg.array(x)
    if x.shape[axis] is None:  # as many rows as outputs, when the kernel runs
        code = cg.error("unpack", node, (axis, len(node.outputs)))
        cg.emit(f"if {name}.shape[{axis}] != {len(node.outputs)}: "
                f"raise ValueError({code}, {', '.join(cg.dims(x))})")
    for k, y in enumerate(node.outputs):
        idx = colons(axis) + [str(k)] + colons(x.rank - axis - 1)
        if x.rank == 1:
            cg.output(node, cg.assign(f"scalar_array({name}[{k}])"), "C", k)
        else:
            cg.output(node, cg.assign(f"{name}{subscript(idx)}"), "A", k)


@lowers(CONCAT)
def _concat(cg, node):
    values = [cg.val(x) for x in node.inputs]
    y = node.outputs[0]
    rank = len(y._shape)
    axis = node.attrs["axis"] % rank
    names = [cg.array(v) for v in values]
    dims = [f"{names[0]}.shape[{d}]" for d in range(rank)]
    dims[axis] = " + ".join(f"{n}.shape[{axis}]" for n in names)
    out = cg.new_array(y, dims)
    offset = cg.fresh("o")
    cg.emit(f"{offset} = 0")
    for n in names:
        idx = colons(axis) + [f"{offset}:{offset} + {n}.shape[{axis}]"] + \
            colons(rank - axis - 1)
        cg.emit(f"copy_into({out}{subscript(idx)}, {n})")
        cg.emit(f"{offset} += {n}.shape[{axis}]")
    cg.output(node, out)


@lowers(SPLIT)
def _split(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    sizes = node.attrs["size_splits"]
    name = cg.array(x)
    exprs = cg.runtime_ints([0 if s == -1 else s for s in sizes])
    if x.shape[axis] is None:  # the sizes must fit the dimension when the kernel runs
        known = cg.assign(" + ".join(e for e, s in zip(exprs, sizes) if s != -1) or "0")
        code = cg.error("split", node)
        fits = "<=" if -1 in sizes else "=="
        cg.emit(f"if not {known} {fits} {name}.shape[{axis}]: raise ValueError({code}, {known})")
    if -1 in sizes:
        i = sizes.index(-1)
        known = [e for j, e in enumerate(exprs) if j != i]
        exprs[i] = f"({name}.shape[{axis}] - {' - '.join(known) if known else '0'})" \
            if known else f"{name}.shape[{axis}]"
    offset = cg.fresh("o")
    cg.emit(f"{offset} = 0")
    for k, size in enumerate(exprs):
        idx = colons(axis) + [f"{offset}:{offset} + {size}"] + colons(x.rank - axis - 1)
        cg.output(node, cg.assign(f"{name}{subscript(idx)}"), "A", k)
        cg.emit(f"{offset} += {size}")


@lowers(TILE)
def _tile(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        cg.output(node, cg.assign(f"scalar_array({cg.scalar(x)})"))
        return
    name = cg.array(x)
    mult = cg.runtime_ints(node.attrs["multiples"])
    dims = cg.dims(x)
    out = cg.new_array(y, [f"{d} * {m}" for d, m in zip(dims, mult)])
    ts = [cg.fresh("k") for _ in dims]
    for t, m in zip(ts, mult):
        cg.emit(f"for {t} in range({m}):")
        cg.depth += 1
    idx = [f"{t} * {d}:({t} + 1) * {d}" for t, d in zip(ts, dims)]
    cg.emit(f"copy_into({out}{subscript(idx)}, {name})")
    cg.depth -= len(ts)
    cg.output(node, out)


@lowers(PAD)
def _pad(cg, node):
    x, c = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    if x.rank == 0:
        cg.output(node, cg.assign(f"scalar_array({cg.scalar(x)})"))
        return
    flat = [p for pair in node.attrs["paddings"] for p in pair]
    pads = cg.runtime_ints(flat)
    dims = cg.dims(x)
    shape = [f"{d} + {pads[2 * i]} + {pads[2 * i + 1]}" for i, d in enumerate(dims)]
    out = cg.new_array(y, shape, fill=cg.scalar(c))
    idx = [f"{pads[2 * i]}:{pads[2 * i]} + {d}" for i, d in enumerate(dims)]
    cg.emit(f"copy_into({out}{subscript(idx)}, {cg.array(x)})")
    cg.output(node, out)


@lowers(MIRROR_PAD, MIRROR_PAD_GRAD)
def _mirror_pad(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    if x.rank == 0:
        cg.output(node, cg.assign(f"scalar_array({cg.scalar(x)})"))
        return
    shift = 0 if node.attrs["mode"] == "REFLECT" else 1
    flat = [p for pair in node.attrs["paddings"] for p in pair]
    pads = cg.runtime_ints(flat)
    dims = cg.dims(x)
    grad = node.op is MIRROR_PAD_GRAD
    name = cg.array(x)
    if grad:
        small = [f"{d} - {pads[2 * i]} - {pads[2 * i + 1]}" for i, d in enumerate(dims)]
        out = cg.new_array(y, small, fill=literal(0, y.dtype))
        sizes = small
    else:
        _check_mirror_paddings(cg, node, x, dims, pads, shift)
        out = cg.new_array(y, [f"{d} + {pads[2 * i]} + {pads[2 * i + 1]}"
                               for i, d in enumerate(dims)])
        sizes = dims
    maps = []
    for i, n in enumerate(sizes):
        m = cg.fresh("m")
        cg.emit(f"{m} = mirror_index({n}, {pads[2 * i]}, {pads[2 * i + 1]}, {shift})")
        maps.append(m)
    ks = [cg.fresh("k") for _ in maps]
    for k, m in zip(ks, maps):
        cg.emit(f"for {k} in range({m}.shape[0]):")
        cg.depth += 1
    src = [f"{m}[{k}]" for k, m in zip(ks, maps)]
    if grad:
        cg.emit(f"{out}{subscript(src)} += {name}{subscript(ks)}")
    else:
        cg.emit(f"{out}{subscript(ks)} = {name}{subscript(src)}")
    cg.depth -= len(ks)
    cg.output(node, out)


def _check_mirror_paddings(cg, node, x, dims, pads, shift):
    """A dimension unknown while tracing must be longer than its REFLECT paddings (at
    least as long as SYMMETRIC ones) when the kernel runs: mirror_index would read
    outside the input."""
    code = cg.error("mirror_reflect" if shift == 0 else "mirror_symmetric", node)
    for i, d in enumerate(dims):
        if x.shape[i] is None:
            lo, hi = pads[2 * i], pads[2 * i + 1]
            cg.emit(f"if {lo} > {d} - {1 - shift} or {hi} > {d} - {1 - shift}: "
                    f"raise ValueError({code}, {lo}, {hi}, {d})")
@lowers(PAD_TO)
def _pad_with_tensor(cg, node):
    x, y = cg.val(node.inputs[0]), node.outputs[0]
    paddings = cg.array(cg.val(node.inputs[1]))
    dims = cg.dims(x)
    code = cg.error("pad_rank", node)
    cg.emit(f"if {paddings}.shape[0] != {x.rank} or {paddings}.shape[1] != 2: "
            f"raise ValueError({code}, {paddings}.shape[0], {paddings}.shape[1]"
            f"{''.join(', ' + d for d in dims)})")
    cg.emit(f"check_paddings({paddings}, {x.rank}, {cg.error('pad_negative', node)})")
    if x.rank == 0:
        cg.output(node, cg.assign(f"scalar_array({cg.scalar(x)})"))
        return
    lo = [cg.assign(f"np.int64({paddings}[{i}, 0])") for i in range(x.rank)]
    hi = [cg.assign(f"np.int64({paddings}[{i}, 1])") for i in range(x.rank)]
    out = cg.new_array(y, [f"{d} + {a} + {b}" for d, a, b in zip(dims, lo, hi)],
                       fill=literal(0, y.dtype))
    cg.emit(f"copy_into({out}{subscript(f'{a}:{a} + {d}' for a, d in zip(lo, dims))}, "
            f"{cg.array(x)})")
    cg.output(node, out)


@lowers(REVERSE)
def _reverse(cg, node):
    x = cg.val(node.inputs[0])
    axes = {a % x.rank for a in node.attrs["axis"]} if x.rank else set()
    if not axes:
        cg.define(node.outputs[0], x)
        return
    idx = ["::-1" if d in axes else ":" for d in range(x.rank)]
    cg.output(node, cg.assign(f"{cg.array(x)}{subscript(idx)}"), "A")
@lowers(SHAPE, SIZE, RANK)
def _shape(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    dims = cg.dims(x)
    dt = np_name(y.dtype)
    if node.op is SHAPE:
        out = cg.new_array(y, [str(len(dims))])
        for k, d in enumerate(dims):
            cg.emit(f"{out}[{k}] = {d}")
    else:
        value = cg.product(dims) if node.op is SIZE else str(len(dims))
        out = cg.assign(f"scalar_array({dt}({value}))")
    cg.output(node, out)
