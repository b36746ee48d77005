"""Lowerings of the lists a loop appends to and pops from, and of conds and loops: native
`if` / `while` in the generated kernel, with a loop's history in growing buffers and the
appends of a loop (however deeply nested in its conds and inner loops) writing the rows
of one buffer."""

from .codegen import Val, _assign, _out, lowering, np_name


def list_chain(graph, k, j):
    """How `graph`'s output k is its input j with rows appended: the steps of
    ops.control.row_chain (pushes, conds, loops), when each list value on the way goes to
    one of them only, and the conds and loops are such chains inside too. Then every
    push, however deep, can write the next row of one shared buffer (earlier values, its
    prefixes, never see that row). None otherwise."""
    from ..ops.control import row_chain
    root, kinds, steps = row_chain(graph, graph.outputs[k])
    if root is not graph.inputs[j] or kinds - {"push"}:
        return None
    growers = {}  # value id -> how many pushes, conds and loops take it
    for node in graph.nodes:
        if node.op.name in ("TensorListPushBack", "If", "While"):
            for x in {id(x) for x in node.inputs}:
                growers[x] = growers.get(x, 0) + 1
    for node, m in steps:
        if node.op.name == "If":
            if any(list_chain(node.attrs[key], *m) is None for key in ("then", "else")):
                return None
            taken = node.inputs[1 + m[1]]
        elif node.op.name == "While":
            if list_chain(node.attrs["body"], *m) is None:
                return None
            taken = node.inputs[m[0]]
        else:
            taken = node.inputs[0]
        if growers.get(id(taken)) != 1:
            return None
    return steps


def _chain_bases(cg, node):
    """{(output, input): row buffer} of the lists a cond or loop appends to for an outer
    loop's list (see _list_chain)."""
    entry, bases = cg.list_bases.get(id(node), (None, {}))
    return bases if entry is node else {}


@lowering("TensorListPushBack")
def _push_back(cg, node):
    b, item = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    name = _assign(cg, cg.array(b))
    n = f"{name}.shape[0]"
    push, base = cg.list_bases.get(id(node), (None, None))
    if push is not node:
        base = None
    if item.rank:
        rows = cg.array(item)
        if any(d is None for d in y._shape[1:]):
            # An empty list started before its elements' unknown dimensions were known:
            # its rows take the first element's shape.
            cg.emit(f"if {n} == 0 and {name}.shape[1:] != {rows}.shape:")
            cg.emit(f"    {name} = np.empty((0,) + {rows}.shape, {np_name(y.dtype)})")
            if base is not None:
                cg.emit(f"    {base} = np.empty((16,) + {rows}.shape, {np_name(y.dtype)})")
        if None in b.shape[1:] or None in item.shape:  # else infer checked it
            code = cg.error("list_element", node)
            cg.emit(f"if {name}.shape[1:] != {rows}.shape: raise ValueError({code})")
    if base is not None:  # `name` is base[:n]: write row n, amortized growth
        cg.emit(f"if {n} == {base}.shape[0]:")
        cg.emit(f"    {base} = grow_rows({base})")
        cg.write_item(f"{base}[{n}]", item)  # a row is a C view: no reshape call
        _out(cg, node, _assign(cg, f"{base}[:{n} + 1]"))
        return
    out = cg.new_array(y, [f"{n} + 1"] + [f"{name}.shape[{k}]" for k in range(1, b.rank)])
    cg.emit(f"copy_flat({out}, 0, {name})")
    cg.write_item(f"{out}[{n}]", item)
    _out(cg, node, out)


@lowering("TensorListPopBack")
def _pop_back(cg, node):
    x = cg.val(node.inputs[0])
    name = cg.array(x)
    if x.shape[0] is None or x.shape[0] == 0:
        code = cg.error("empty_list", node)
        cg.emit(f"if {name}.shape[0] == 0: raise ValueError({code})")
    # Leading rows, or one row, of a C-contiguous array are C-contiguous (Numba agrees).
    _out(cg, node, _assign(cg, f"{name}[:-1]"), x.layout, 0)
    if x.rank == 1:
        cg.local_scalar(node.outputs[1], f"{name}[{name}.shape[0] - 1]")
    else:
        _out(cg, node, _assign(cg, f"{name}[{name}.shape[0] - 1]"), x.layout, 1)


# -- control flow: native if / while ------------------------------------------------------------

@lowering("If")
def _if(cg, node):
    pred = cg.scalar(cg.val(node.inputs[0]))
    captured = [cg.val(x) for x in node.inputs[1:]]
    names = [cg.fresh("o") for _ in node.outputs]
    scalars = [y._shape == () for y in node.outputs]
    layouts = []
    for keyword, graph in (("if", node.attrs["then"]), ("else", node.attrs["else"])):
        cg.emit(f"if {pred}:" if keyword == "if" else "else:")
        cg.depth += 1
        start = len(cg.lines)
        outs = cg.subgraph(graph, captured, node, _chain_bases(cg, node))
        for name, v, scalar in zip(names, outs, scalars):
            cg.emit(f"{name} = {cg.typed_scalar(v) if scalar else cg.array(v)}")
            layouts.append(v.layout)
        if len(cg.lines) == start:
            cg.emit("pass")
        cg.depth -= 1
    for k, (name, y) in enumerate(zip(names, node.outputs)):
        if scalars[k]:
            cg.define(y, Val(None, y.dtype, (), scalar=name, local=True))
            continue
        layout = "C" if layouts[k] == layouts[k + len(names)] == "C" else "A"
        cg.define(y, Val(name, y.dtype, y._shape, layout))


@lowering("While")
def _while(cg, node):
    n = node.attrs["n_vars"]
    initial = [cg.val(x) for x in node.inputs[:n]]
    captured = [cg.val(x) for x in node.inputs[n:]]
    outs = node.outputs
    consumers = cg.consumers
    used = lambda y: id(y) in cg.outputs_ids or bool(consumers.get(id(y)))
    histories = [used(h) for h in outs[n:2 * n]]
    names = [cg.fresh("w") for _ in range(n)]
    # 0-d loop variables (counters, flags, running scalars) are Numba scalars.
    scalars = {i for i, (v, y) in enumerate(zip(initial, outs)) if v.rank == 0 and
               y._shape == ()}
    list_bases = {}
    outer_bases = _chain_bases(cg, node)
    for i, (name, v) in enumerate(zip(names, initial)):
        if i in scalars:
            cg.emit(f"{name} = {cg.typed_scalar(v)}")
        elif (i, i) in outer_bases:  # a list an outer loop appends to: already its rows
            list_bases[(i, i)] = outer_bases[(i, i)]
            cg.emit(f"{name} = {cg.array(v)}")
        elif i in node.attrs.get("appended", ()) and v.rank >= 1 and \
                list_chain(node.attrs["body"], i, i):
            # The list lives in the first rows of a buffer with room to grow.
            base = list_bases[(i, i)] = cg.fresh("rows")
            src = cg.contiguous(v)
            cg.emit(f"{base} = np.empty((max(16, 2 * {src}.shape[0]),) + {src}.shape[1:], "
                    f"{np_name(v.dtype)})")
            cg.emit(f"copy_flat({base}, 0, {src})")
            cg.emit(f"{name} = {base}[:{src}.shape[0]]")
        else:
            cg.emit(f"{name} = {cg.contiguous(v)}")
    loop = [Val(None, v.dtype, (), scalar=name, local=True) if i in scalars else
            Val(name, v.dtype, y._shape, "C")
            for i, (name, v, y) in enumerate(zip(names, initial, outs))]
    from ..ops.control import history_by_length
    from ..ops.draws import draw_variables
    by_length = history_by_length(node.attrs)
    after_step = draw_variables(node.attrs)  # their history: the value after each step
    buffers = {}  # a list's history is its length at each step
    for i in (i for i, keep in enumerate(histories) if keep):
        rows = "16" if i in by_length or i in scalars else f"(16,) + {names[i]}.shape"
        dtype = "np.int32" if i in by_length else np_name(loop[i].dtype)
        buffers[i] = _assign(cg, f"np.empty({rows}, {dtype})")
    count = cg.fresh("count")
    cg.emit(f"{count} = 0")
    cg.emit("while True:")
    cg.depth += 1
    (c,) = cg.subgraph(node.attrs["cond"], loop + captured, node)
    cg.emit(f"if not {cg.scalar(c)}:")
    cg.emit("    break")
    for i, h in buffers.items():
        if i not in after_step:
            _store_step(cg, node, h, i, names[i], count, i in by_length, i in scalars,
                        None in outs[i]._shape)
    new = cg.subgraph(node.attrs["body"], loop + captured, node, list_bases)
    temps = []
    for i, v in enumerate(new):
        temps.append(_assign(cg, cg.typed_scalar(v) if i in scalars else cg.contiguous(v)))
    for name, t in zip(names, temps):
        cg.emit(f"{name} = {t}")
    for i, h in buffers.items():
        if i in after_step:
            if i not in scalars:  # the placeholder before the loop may have another shape
                cg.emit(f"if {count} == 0 and {names[i]}.shape != {h}.shape[1:]:")
                cg.emit(f"    {h} = np.empty((16,) + {names[i]}.shape, "
                        f"{np_name(loop[i].dtype)})")
            _store_step(cg, node, h, i, names[i], count, False, i in scalars,
                        None in outs[i]._shape)
    cg.emit(f"{count} += 1")
    cg.depth -= 1
    for i in range(n):
        if i in scalars:
            cg.define(outs[i], loop[i])
        else:
            _out(cg, node, names[i], "C", i)
        if i in buffers:
            _out(cg, node, _assign(cg, f"{buffers[i]}[:{count}]"), "C", n + i)
        else:
            cg.define(outs[n + i], Val(None, outs[n + i].dtype, outs[n + i]._shape,
                                       scalar="None"))
    cg.local_scalar(outs[2 * n], count)


def _store_step(cg, node, history, i, name, count, by_length, scalar, shape_unknown):
    """history[count] = the loop variable's value (its length, for a list)."""
    cg.emit(f"if {count} == {history}.shape[0]:")
    cg.emit(f"    {history} = grow_rows({history})")
    if by_length:
        cg.emit(f"{history}[{count}] = {name}.shape[0]")
    elif scalar:
        cg.emit(f"{history}[{count}] = {name}")
    else:
        if shape_unknown:  # unknown while tracing: the same at every step?
            code = cg.error("loop_shape", node)
            cg.emit(f"if {name}.shape != {history}.shape[1:]: raise ValueError({code})")
        cg.emit(f"copy_into({history}[{count}], {name})")
