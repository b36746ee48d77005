"""Lowerings of the ops that make new tensors: Fill, ConstFill, Eye, Range, LinSpace."""

from ...ops.creation import CONST_FILL, EYE, FILL, LINSPACE, RANGE
from ...ops.indexing import GATHER
from ...tensor import Symbolic
from .generator import lowers
from .text import literal, np_name, scalar_value


@lowers(FILL)
def _fill(cg, node):
    v = cg.val(node.inputs[0])
    y = node.outputs[0]
    shape = cg.runtime_ints(node.attrs["shape"])
    cg.output(node, cg.new_array(y, shape, fill=cg.scalar(v)))


@lowers(CONST_FILL)
def _const_fill(cg, node):
    y = node.outputs[0]
    shape = cg.runtime_ints(node.attrs["shape"])
    cg.output(node, cg.new_array(y, shape, fill=literal(node.attrs["value"], y.dtype)))


@lowers(EYE)
def _eye(cg, node):
    y = node.outputs[0]
    rows, cols = cg.runtime_ints([node.attrs["num_rows"], node.attrs["num_columns"]])
    # Not np.eye: a function Numba compiles in every process.
    out, index = cg.new_array(y, [rows, cols], fill=literal(0, y.dtype)), cg.fresh("i")
    cg.emit(f"for {index} in range({rows} if {rows} < {cols} else {cols}):")
    cg.emit(f"    {out}[{index}, {index}] = {literal(1, y.dtype)}")
    cg.output(node, out)


@lowers(RANGE)
def _range(cg, node):
    s, l, d = (cg.scalar(cg.val(x)) for x in node.inputs)
    y = node.outputs[0]
    code = cg.error("range", node)
    cg.emit(f"if {d} == 0 or ({d} > 0 and {s} > {l}) or ({d} < 0 and {s} < {l}): "
            f"raise ValueError({code})")
    if y.dtype._np.kind not in "iu":
        # NumPy's float arange, written out (Numba's np.arange is a function it compiles
        # in every process, and its values differ from NumPy's in the last bit): the
        # count in float64, then first + i * (second - first) in the dtype.
        dt, count = np_name(y.dtype), cg.fresh("n")
        first, second = cg.assign(f"{dt}({s})"), cg.fresh()
        cg.emit(f"{second} = {first} + {dt}({d})")
        cg.emit(f"{count} = np.int64(np.ceil((np.float64({l}) - np.float64({first})) / "
                f"np.float64({d})))")
        out, index = cg.new_array(y, [f"{count} if {count} > 0 else 0"]), cg.fresh("i")
        cg.emit(f"if {count} > 0:")
        cg.emit(f"    {out}[0] = {first}")
        cg.emit(f"if {count} > 1:")
        cg.emit(f"    {out}[1] = {second}")
        cg.emit(f"for {index} in range(2, {count}):")
        cg.emit(f"    {out}[{index}] = {first} + {dt}({index}) * ({second} - {first})")
        cg.output(node, out)
        return
    start, count, step = cg.assign(s), cg.fresh("n"), cg.assign(d)
    cg.emit(f"{count} = ({l} - {start} + {step} - 1) // {step} if {step} > 0 else "
            f"({start} - {l} - {step} - 1) // -{step}")
    readers = cg.consumers.get(id(y), [])
    if readers and id(y) not in cg.outputs_ids and all(
            r.op is GATHER and r.inputs[1] is y and r.inputs[0] is not y and
            r.attrs["batch_dims"] == 0 for r in readers):
        # Only gathers read it (a slice with tensor bounds, a list's first rows): they
        # take a strided view, so the indices are never written out.
        unit = not isinstance(node.inputs[2], Symbolic) and scalar_value(node.inputs[2]) == 1
        cg.ranges[id(y)] = (start, count, None if unit else step)
        return
    # A loop, not Numba's np.arange: a function it compiles again in every process.
    out = cg.new_array(y, [count])
    index = cg.fresh("i")
    cg.emit(f"for {index} in range({count}):")
    cg.emit(f"    {out}[{index}] = {start} + {index} * {step}")
    cg.output(node, out)


@lowers(LINSPACE)
def _linspace(cg, node):
    # NumPy's linspace, in the dtype (not Numba's np.linspace: a function it compiles in
    # every process, in float64, whose values differ in the last bit).
    s, e, n = (cg.scalar(cg.val(x)) for x in node.inputs)
    y = node.outputs[0]
    dt, count = np_name(y.dtype), cg.assign(f"np.int64({n})")
    cg.emit(f"if {count} < 0: raise ValueError({cg.error('linspace_count', node)}, {count})")
    first, last = cg.assign(f"{dt}({s})"), cg.assign(f"{dt}({e})")
    delta, div = cg.assign(f"{last} - {first}"), cg.assign(f"{dt}({count} - 1)")
    step, out, index = cg.assign(f"{delta} / {div}"), cg.new_array(y, [count]), cg.fresh("i")
    cg.emit(f"for {index} in range({count}):")
    cg.emit(f"    if {count} < 2:")
    cg.emit(f"        {out}[{index}] = {dt}({index}) * {delta} + {first}")
    cg.emit(f"    elif {step} == 0:  # NumPy's way with subnormal steps")
    cg.emit(f"        {out}[{index}] = {dt}({index}) / {div} * {delta} + {first}")
    cg.emit("    else:")
    cg.emit(f"        {out}[{index}] = {dt}({index}) * {step} + {first}")
    cg.emit(f"if {count} > 1:")
    cg.emit(f"    {out}[{count} - 1] = {last}")
    cg.output(node, out)
