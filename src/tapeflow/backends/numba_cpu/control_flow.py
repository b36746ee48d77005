"""Lowerings of conds and loops: native `if` / `while` in the generated kernel, with a
loop's history in growing buffers."""

from ...ops.control import IF, WHILE
from .generator import Val, lowers
from .lists import chain_bases, list_chain, share_rows
from .text import np_name


@lowers(IF)
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
        outs = cg.subgraph(graph, captured, node,
                           share_rows(cg, chain_bases(cg, node), node))
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


@lowers(WHILE)
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
    outer_bases = chain_bases(cg, node)
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
            cg.emit(f"{base} = empty_array((maximum(16, 2 * {src}.shape[0]),) + {src}.shape[1:], "
                    f"{np_name(v.dtype)})")
            cg.emit(f"copy_flat({base}, 0, {src})")
            cg.emit(f"{name} = {base}[:{src}.shape[0]]")
        else:
            cg.emit(f"{name} = {cg.contiguous(v)}")
    loop = [Val(None, v.dtype, (), scalar=name, local=True) if i in scalars else
            Val(name, v.dtype, y._shape, "C")
            for i, (name, v, y) in enumerate(zip(names, initial, outs))]
    from ...ops.control import history_by_length
    from ...ops.draws import draw_variables
    by_length = history_by_length(node.attrs)
    after_step = draw_variables(node.attrs)  # their history: the value after each step
    buffers = {}  # a list's history is its length at each step
    for i in (i for i, keep in enumerate(histories) if keep):
        rows = "16" if i in by_length or i in scalars else f"(16,) + {names[i]}.shape"
        dtype = "np.int32" if i in by_length else np_name(loop[i].dtype)
        buffers[i] = cg.assign(f"empty_array({rows}, {dtype})")
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
    new = cg.subgraph(node.attrs["body"], loop + captured, node,
                      share_rows(cg, list_bases, node))
    temps = []
    for i, v in enumerate(new):
        temps.append(cg.assign(cg.typed_scalar(v) if i in scalars else cg.contiguous(v)))
    for name, t in zip(names, temps):
        cg.emit(f"{name} = {t}")
    for i, h in buffers.items():
        if i in after_step:
            if i not in scalars:  # the placeholder before the loop may have another shape
                cg.emit(f"if {count} == 0 and {names[i]}.shape != {h}.shape[1:]:")
                cg.emit(f"    {h} = empty_array((16,) + {names[i]}.shape, "
                        f"{np_name(loop[i].dtype)})")
            _store_step(cg, node, h, i, names[i], count, False, i in scalars,
                        None in outs[i]._shape)
    cg.emit(f"{count} += 1")
    cg.depth -= 1
    for i in range(n):
        if i in scalars:
            cg.define(outs[i], loop[i])
        else:
            cg.output(node, names[i], "C", i)
        if i in buffers:
            cg.output(node, cg.assign(f"{buffers[i]}[:{count}]"), "C", n + i)
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
