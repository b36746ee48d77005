"""Lowerings of the ops that read or write elements by index: strided slices and their
gradients, Slice, gathers, scatters, segment sums, Where and OneHot; each checks its
indices before the view or loop, as TensorFlow's kernels do."""

from ...ops.dynamic import DYNAMIC_STRIDED_SLICE_GRAD
from ...ops.indexing import (
    GATHER,
    GATHER_ND,
    ONE_HOT,
    SCATTER_ND,
    SEGMENT_SUM,
    SLICE,
    SLICE_INDEX,
    STRIDED_SLICE,
    STRIDED_SLICE_GRAD,
    TENSOR_SCATTER_ADD,
    WHERE,
)
from .generator import lowers
from .text import Unsupported, literal, np_name, shape_tuple, subscript, tuple_expr


def _keysubscript(cg, node, key, rank, check_value=None):
    """The subscript for a StridedSlice key, with bounds read at run time."""
    consumed = sum(k is not None and k is not Ellipsis for k in key)
    items = []
    ints = []
    dim = 0
    for k in key:
        if k is None:
            items.append("None")
        elif k is Ellipsis:
            items.extend([":"] * (rank - consumed))
            dim += rank - consumed
        elif isinstance(k, tuple):
            parts = []
            for b in k[:2] if len(k) == 3 and k[2] is None else k:  # a:b, not a:b:
                parts.append("" if b is None else cg.runtime_ints([b])[0])
            items.append(":".join(parts))
            dim += 1
        else:
            e = cg.runtime_ints([k])[0]
            items.append(e)
            ints.append((dim, e))
            dim += 1
    items.extend([":"] * (rank - dim))
    return items, ints


@lowers(STRIDED_SLICE)
def _strided_slice(cg, node):
    x = cg.val(node.inputs[0])
    y = node.outputs[0]
    name = cg.array(x)
    items, ints = _keysubscript(cg, node, node.attrs["key"], x.rank)
    for dim, e in ints:
        code = cg.error("index", node, dim)
        cg.emit(f"if not -{name}.shape[{dim}] <= {e} < {name}.shape[{dim}]: "
                f"raise IndexError({code}, {e})")
    while items and items[-1] == ":":  # the same view, which Numba types more precisely
        items.pop()
    if len(y._shape) == 0:
        cg.local_scalar(y, f"{name}{subscript(items)}")
        return
    if not items:
        cg.output(node, name, x.layout)
        return
    # Numba keeps C-contiguity for integers then at most one step-less slice.
    steps = [item for item in items if ":" in item]
    contiguous = x.layout == "C" and "None" not in items and (
        not steps or (steps == [items[-1]] and items[-1].count(":") == 1))
    cg.output(node, cg.assign(f"{name}{subscript(items)}"), "C" if contiguous else "A")


@lowers(STRIDED_SLICE_GRAD, DYNAMIC_STRIDED_SLICE_GRAD)
def _strided_slice_grad(cg, node):
    dy = cg.val(node.inputs[0])
    y = node.outputs[0]
    if node.op is STRIDED_SLICE_GRAD:
        shape = cg.runtime_ints(node.attrs["shape"])
    else:
        shape = cg.runtime_dims(node.inputs[1], len(y._shape))
    out = cg.new_array(y, shape, fill=literal(0, y.dtype))
    key = node.attrs["key"]
    rank = len(y._shape)
    items, _ = _keysubscript(cg, node, key, rank)
    # dy has a size-1 axis for each None of the key: drop them to assign.
    kept = [i for i, item in enumerate(items) if item != "None"]
    value_dims = []
    pos = 0
    for item in items:
        if item == "None":
            pos += 1  # an axis of size 1 in dy
            continue
        if ":" in item:
            value_dims.append(pos)
            pos += 1
    region = f"{out}{subscript([items[i] for i in kept])}"
    if dy.rank == 0:
        cg.emit(f"{region} = {cg.scalar(dy)}")
        cg.output(node, out)
        return
    if not value_dims:  # a single element, under size-1 axes
        cg.emit(f"{region} = reshaped({cg.contiguous(dy)}, 1)[0]")
        cg.output(node, out)
        return
    if len(value_dims) != dy.rank:
        src = cg.contiguous(dy)
        value = cg.assign(f"reshaped({src}, {tuple_expr(f'{src}.shape[{d}]' for d in value_dims)})")
    else:
        value = cg.array(dy)
    cg.emit(f"copy_into({region}, {value})")
    cg.output(node, out)


@lowers(SLICE)
def _slice(cg, node):
    x = cg.val(node.inputs[0])
    begin, size = (cg.array(cg.val(t)) for t in node.inputs[1:])
    name = cg.array(x)
    codes = [cg.error(kind, node) for kind in (
        "slice_rank", "slice_empty", "slice_begin", "slice_size")]
    if x.rank == 0:
        cg.emit(f"if {begin}.shape[0] != 0 or {size}.shape[0] != 0: "
                f"raise ValueError({codes[0]}, {begin}.shape[0], {size}.shape[0], 0)")
        cg.define(node.outputs[0], x)
        return
    # Checked before the view is taken: Numba clamps a slice past the end silently.
    sizes = cg.assign(f"slice_sizes({name}.shape, {begin}, {size}, "
                        f"{', '.join(map(str, codes))})")
    items = []
    for i in range(x.rank):
        start = cg.assign(f"np.int64({begin}[{i}])")
        items.append(f"{start}:{start} + {sizes}[{i}]")
    cg.output(node, cg.assign(f"{name}{subscript(items)}"), "A")
@lowers(GATHER)
def _gather(cg, node):
    p = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % p.rank
    if id(node.inputs[1]) in cg.ranges:
        _gather_range(cg, node, p, axis, *cg.ranges[id(node.inputs[1])])
        return
    i = cg.val(node.inputs[1])
    y = node.outputs[0]
    b = node.attrs["batch_dims"]
    b = b + i.rank if b < 0 else b
    if i.rank == 0:  # one index (a loop reading its history): index in place
        _gather_one(cg, node, p, i, axis)
        return
    pd, id_ = cg.dims(p), cg.dims(i)
    batch = cg.product(pd[:b])
    outer = cg.product(pd[b:axis])
    inner = cg.product(pd[axis + 1:])
    m = cg.product(id_[b:])
    p4 = cg.assign(f"reshaped({cg.contiguous(p)}, ({batch}, {outer}, {pd[axis]}, {inner}))")
    i2 = cg.assign(f"reshaped({cg.contiguous(i)}, ({batch}, {m}))")
    o4 = cg.assign(f"empty_array({shape_tuple([batch, outer, m, inner])}, {np_name(y.dtype)})")
    code = cg.error("gather", node, i.shape)
    cg.emit(f"gather4({p4}, {i2}, {o4}, {code})")
    shape = pd[:axis] + id_[b:] + pd[axis + 1:]
    cg.output(node, cg.assign(f"reshaped({o4}, {tuple_expr(shape)})"))


def _check_gathersubscript(cg, node, p, axis, k, when=""):
    """Raises (as gather4 does) unless 0 <= k < p's size along `axis`."""
    code = cg.error("gather", node, ())
    n = f"{cg.array(p)}.shape[{axis}]"
    if when:
        cg.emit(f"if {when}({k} < 0 or {k} >= {n}): raise IndexError({code}, {k}, {n}, 0)")
    else:  # a call: less for Numba to compile than the test and its raise
        cg.emit(f"check_row(np.int64({code}), {k}, {n})")


def _gather_range(cg, node, p, axis, start, count, step):
    """Rows start, start + step, ... (count of them) along `axis`: a view."""
    params = cg.array(p)
    last = cg.assign(f"{start} + ({count} - 1) * {1 if step is None else step}")
    for k in (start, last):  # the range is monotonic: its ends bound it
        _check_gathersubscript(cg, node, p, axis, k, when=f"{count} > 0 and ")
    before = [":"] * axis
    view = cg.fresh()
    if step is None:  # a unit step: Numba keeps leading rows C-contiguous
        cg.emit(f"{view} = {params}{subscript(before + [f'{start}:{start} + {count}'])}")
        cg.output(node, view, p.layout if axis == 0 else "A")
        return
    cg.emit(f"if {count} == 0:")
    cg.emit(f"    {view} = {params}{subscript(before + ['0:0:1'])}")
    cg.emit(f"elif {step} > 0:")
    cg.emit(f"    {view} = {params}{subscript(before + [f'{start}:{last} + 1:{step}'])}")
    cg.emit("else:")
    cg.emit(f"    {view} = {params}{subscript(before + [f'{last}:{start} + 1:-{step}'])}"
            f"{subscript([':'] * axis + ['::-1'])}")
    cg.output(node, view, "A")


def _gather_one(cg, node, p, i, axis):
    k = cg.assign(cg.scalar(i))
    params = cg.array(p)
    _check_gathersubscript(cg, node, p, axis, k)
    if p.rank == 1:
        cg.local_scalar(node.outputs[0], f"{params}[{k}]")
        return
    # A view: nothing writes into a value that has consumers left (see dead_inputs).
    view = cg.assign(f"{params}{subscript([':'] * axis + [k])}")
    cg.output(node, view, p.layout if axis == 0 else "A")


@lowers(SEGMENT_SUM)
def _segment_sum(cg, node):
    data, ids = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    dd = cg.dims(data)
    k = ids.rank
    n = cg.runtime_ints([node.attrs["num_segments"]])[0]
    m, inner = cg.product(dd[:k]), cg.product(dd[k:])
    d2 = cg.assign(f"reshaped({cg.contiguous(data)}, ({m}, {inner}))")
    i1 = cg.assign(f"reshaped({cg.contiguous(ids)}, {m})")
    o2 = cg.assign(f"zeros_array({shape_tuple([n, inner])}, {np_name(y.dtype)})")
    code = cg.error("segment", node, ids.shape)
    cg.emit(f"segment_sum({d2}, {i1}, {o2}, {code})")
    cg.output(node, cg.assign(f"reshaped({o2}, {tuple_expr([n] + dd[k:])})"))


def _index_rows(cg, node, i):
    """(depth, rows, name of a (rows, depth) view) of an nd index tensor: the coordinates
    GatherNd, ScatterNd and TensorScatterAdd read row by row."""
    depth = i.shape[-1]
    if depth is None or depth == 0:
        raise Unsupported(f"{node.op.name} with index depth {depth} at {node.where()}")
    m = cg.product(cg.dims(i)[:-1])
    return depth, m, cg.assign(f"reshaped({cg.contiguous(i)}, ({m}, {depth}))")


def _check_index_rows(cg, node, i, rows, depth, shape):
    """Raises, naming the bad row, its position and `shape` (dims expressions), unless
    every row of the (rows, depth) view `rows` of index tensor `i` lies inside shape."""
    last = node.op is GATHER_ND  # as TensorFlow's kernels report it
    bad = cg.assign(f"nd_bad_row({rows}, {tuple_expr(shape[:depth])}, {last})")
    code = cg.error("nd_index", node, {"rows": tuple(i.shape[:-1]), "depth": depth})
    row = ", ".join(f"{rows}[{bad}, {d}]" for d in range(depth))
    cg.emit(f"if {bad} >= 0: raise IndexError({code}, {bad}, {row}, {', '.join(shape)})")


@lowers(SLICE_INDEX)
def _slicesubscript(cg, node):
    dim = node.attrs["dim"]
    n = f"{cg.array(cg.val(node.inputs[0]))}.shape[{dim}]"
    k = cg.assign(cg.scalar(cg.val(node.inputs[1])))
    code = cg.error("index", node, dim)
    cg.local_scalar(node.outputs[0], f"checked_position(np.int64({code}), {k}, {n})")


@lowers(GATHER_ND)
def _gather_nd(cg, node):
    p, i = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    depth, m, i2 = _index_rows(cg, node, i)
    pd = cg.dims(p)
    inner = cg.product(pd[depth:])
    p2 = cg.assign(f"reshaped({cg.contiguous(p)}, ({cg.product(pd[:depth])}, {inner}))")
    o2 = cg.assign(f"empty_array({shape_tuple([m, inner])}, {np_name(y.dtype)})")
    _check_index_rows(cg, node, i, i2, depth, pd)
    cg.emit(f"gather_nd2({p2}, {i2}, {tuple_expr(pd[:depth])}, {o2})")
    cg.output(node, cg.assign(f"reshaped({o2}, {tuple_expr(cg.dims(i)[:-1] + pd[depth:])})"))


def _scatter_rows(cg, node, i, u, shape, start):
    """Adds the rows of `u` at the coordinates in `i` into a (rows, inner) view of a new
    array of `shape` made by `start(rows, inner)`: ScatterNd and TensorScatterAdd."""
    depth, m, i2 = _index_rows(cg, node, i)
    inner = cg.product(shape[depth:])
    o2 = cg.assign(start(cg.product(shape[:depth]), inner))
    u2 = cg.assign(f"reshaped({cg.contiguous(u)}, ({m}, {inner}))")
    _check_index_rows(cg, node, i, i2, depth, shape)
    cg.emit(f"scatter_nd2({i2}, {u2}, {tuple_expr(shape[:depth])}, {o2})")
    cg.output(node, cg.assign(f"reshaped({o2}, {tuple_expr(shape)})"))


@lowers(SCATTER_ND)
def _scatter_nd(cg, node):
    i, u = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    dtype = np_name(node.outputs[0].dtype)
    _scatter_rows(cg, node, i, u, cg.runtime_ints(node.attrs["shape"]),
                  lambda rows, inner: f"zeros_array({shape_tuple([rows, inner])}, {dtype})")


@lowers(TENSOR_SCATTER_ADD)
def _tensor_scatter_add(cg, node):
    t, i, u = (cg.val(x) for x in node.inputs)
    _scatter_rows(cg, node, i, u, cg.dims(t),
                  lambda rows, inner: f"reshaped({cg.contiguous(t)}, ({rows}, {inner})).copy()")


@lowers(WHERE)
def _where(cg, node):
    c = cg.val(node.inputs[0])
    if c.rank == 0:
        cg.output(node, cg.assign(f"zeros_array((1 if {cg.scalar(c)} else 0, 0), np.int64)"))
        return
    flat = cg.assign(f"reshaped({cg.contiguous(c)}, {cg.product(cg.dims(c))})")
    cg.output(node, cg.assign(f"argwhere_flat({flat}, {tuple_expr(cg.dims(c))})"))
@lowers(ONE_HOT)
def _one_hot(cg, node):
    i = cg.val(node.inputs[0])
    y = node.outputs[0]
    a = node.attrs
    axis = i.rank if a["axis"] == -1 else a["axis"]
    depth = cg.runtime_ints([a["depth"]])[0]
    dims = cg.dims(i)
    outer, inner = cg.product(dims[:axis]), cg.product(dims[axis:])
    i2 = cg.assign(f"reshaped({cg.contiguous(i)}, ({outer}, {inner}))")
    o3 = cg.assign(f"empty_array({shape_tuple([outer, depth, inner])}, {np_name(y.dtype)})")
    cg.emit(f"one_hot3({i2}, {o3}, {literal(a['on_value'], y.dtype)}, "
            f"{literal(a['off_value'], y.dtype)})")
    cg.output(node, cg.assign(f"reshaped({o3}, {tuple_expr(dims[:axis] + [depth] + dims[axis:])})"))
