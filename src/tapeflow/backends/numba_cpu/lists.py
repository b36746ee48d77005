"""Lowerings of the lists a loop appends to and pops from: rows of growing buffers, and
the appends of a loop (however deeply nested in its conds and inner loops) writing the
rows of one buffer."""

from ...ops.control import IF, WHILE
from ...ops.lists import TENSOR_LIST_POP_BACK, TENSOR_LIST_PUSH_BACK
from .generator import lowers, of_kind
from .text import Unsupported, np_name


def list_chain(graph, k, j):
    """How `graph`'s output k is its input j with rows appended: the steps of
    ops.control.row_chain (pushes, conds, loops), when each list value on the way goes to
    one of them only, and the conds and loops are such chains inside too. Then every
    push, however deep, can write the next row of one shared buffer (earlier values, its
    prefixes, never see that row). None otherwise."""
    from ...ops.control import row_chain
    root, kinds, steps = row_chain(graph, graph.outputs[k])
    if root is not graph.inputs[j] or kinds - {"push"}:
        return None
    growers = {}  # value id -> how many pushes, conds and loops take it
    for node in graph.nodes:
        if any(of_kind(node.op, entry) for entry in (TENSOR_LIST_PUSH_BACK, IF, WHILE)):
            for x in {id(x) for x in node.inputs}:
                growers[x] = growers.get(x, 0) + 1
    for node, m in steps:
        if of_kind(node.op, IF):
            if any(list_chain(node.attrs[key], *m) is None for key in ("then", "else")):
                return None
            taken = node.inputs[1 + m[1]]
        elif of_kind(node.op, WHILE):
            if list_chain(node.attrs["body"], *m) is None:
                return None
            taken = node.inputs[m[0]]
        else:
            taken = node.inputs[0]
        if growers.get(id(taken)) != 1:
            return None
    return steps


def chain_bases(cg, node):
    """{(output, input): row buffer} of the lists a cond or loop appends to for an outer
    loop's list (see list_chain)."""
    entry, bases = cg.list_bases.get(id(node), (None, {}))
    return bases if entry is node else {}


@lowers(TENSOR_LIST_PUSH_BACK)
def _push_back(cg, node):
    b, item = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    y = node.outputs[0]
    name = cg.assign(cg.array(b))
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
            cg.emit(f"    {name} = empty_array((0,) + {rows}.shape, {np_name(y.dtype)})")
            if base is not None:
                cg.emit(f"    {base} = empty_array((16,) + {rows}.shape, {np_name(y.dtype)})")
        if None in b.shape[1:] or None in item.shape:  # else infer checked it
            code = cg.error("list_element", node)
            cg.emit(f"if {name}.shape[1:] != {rows}.shape: raise ValueError({code})")
    if base is not None:  # `name` is base[:n]: write row n, amortized growth
        cg.emit(f"if {n} == {base}.shape[0]:")
        cg.emit(f"    {base} = grow_rows({base})")
        cg.write_item(f"{base}[{n}]", item)  # a row is a C view: no reshape call
        cg.output(node, cg.assign(f"{base}[:{n} + 1]"))
        return
    out = cg.new_array(y, [f"{n} + 1"] + [f"{name}.shape[{k}]" for k in range(1, b.rank)])
    cg.emit(f"copy_flat({out}, 0, {name})")
    cg.write_item(f"{out}[{n}]", item)
    cg.output(node, out)


@lowers(TENSOR_LIST_POP_BACK)
def _pop_back(cg, node):
    x = cg.val(node.inputs[0])
    name = cg.array(x)
    if x.shape[0] is None or x.shape[0] == 0:
        code = cg.error("empty_list", node)
        cg.emit(f"if {name}.shape[0] == 0: raise ValueError({code})")
    # Leading rows, or one row, of a C-contiguous array are C-contiguous (Numba agrees).
    cg.output(node, cg.assign(f"{name}[:-1]"), x.layout, 0)
    if x.rank == 1:
        cg.local_scalar(node.outputs[1], f"{name}[{name}.shape[0] - 1]")
    else:
        cg.output(node, cg.assign(f"{name}[{name}.shape[0] - 1]"), x.layout, 1)


def share_rows(cg, list_bases, where):
    """prepare() of a branch or loop body (Codegen.subgraph) whose lists the caller grows
    in row buffers: list_bases {(output index, input index): buffer name}; the pushes
    that grow them, directly or in the branches and loops inside, write into the buffer
    (see _push_back)."""
    def prepare(sub):
        for (k, j), base in list_bases.items():
            chain = list_chain(sub, k, j)
            if chain is None:  # optimizing only removes consumers: it cannot break a chain
                raise Unsupported(f"a list appended to at {where.where()} lost its chain")
            for node, m in chain:  # the node kept: its id stays its own
                if m is None:
                    cg.list_bases[id(node)] = (node, base)
                else:
                    cg.list_bases.setdefault(id(node), (node, {}))[1][m] = base
    return prepare
