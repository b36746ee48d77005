"""Fused loops: the loop nest of a fusion group (elementwise members and the reductions
that consume them), flat where every input is read whole and C-contiguous, with
run-time strides where a size is known only then. Each member's element comes from its
lowering (a generator.FusedMember: its template, or elementwise.py's); each reduction
accumulates as its entry's `reduction` kind says."""

import numpy as np

from ... import dtypes
from ...ops.creation import ONES_LIKE, ZEROS_LIKE
from ...tensor import Symbolic
from .generator import Val, lowering_of
from .text import (
    Unsupported,
    cast,
    literal,
    np_name,
    scalar_value,
    shape_tuple,
    subscript,
    tuple_expr,
)

# -- fused loops --------------------------------------------------------------------------------

# Elements per chunk of a fused loop that ends in a reduction (its buffer stays in L1).
CHUNK = 1024

# What a reduction kind accumulates (a mean is a sum divided at the end).
_ACCUMULATES = {"mean": "sum"}


class _Read:
    """An input of a fused loop: how the loop reads it at each iteration index."""

    __slots__ = ("dims", "flags", "flat", "mode", "val", "var")

    def __init__(self, val, dims, flags, mode):
        self.val, self.dims, self.flags, self.mode = val, dims, flags, mode
        self.var = None
        self.flat = None


class _FusedLoop:
    def __init__(self, cg, group):
        self.cg = cg
        self.g = group
        self.rank = len(group.shape)
        self.members = {id(n.outputs[0]): n for n in group.nodes}
        self.own = {id(n) for n in group.nodes} | {id(n) for n in group.reductions}
        self.reads = {}
        self.temps = {}

    # the read of external value x (its dims aligned to the loop's per `dims`)
    def read(self, x, dims=None):
        v = self.cg.uniform(x) if not isinstance(x, Symbolic) else self.cg.val(x)
        if dims is None:
            dims = tuple(range(self.rank - v.rank, self.rank))
        key = (id(x) if isinstance(x, Symbolic) else id(v), dims)
        r = self.reads.get(key)
        if r is not None:
            return r
        shape = self.g.shape
        # A flag per dimension: True where the value broadcasts (size 1), "runtime" where
        # its size is unknown while tracing and the loop's is known: it may be 1 then.
        flags = tuple("runtime" if v.shape[k] is None and shape[d] not in (None, 1) else
                      v.shape[k] == 1 and shape[d] != 1 for k, d in enumerate(dims))
        if v.rank == 0 or all(f is True for f in flags):
            mode = "scalar"
        elif not any(flags) and v.rank == self.rank:
            mode = "full"
        else:
            mode = "bcast"
        r = self.reads[key] = _Read(v, dims, flags, mode)
        return r

    def operand(self, node, i):
        x = node.inputs[i]
        if isinstance(x, Symbolic) and id(x) in self.members:
            return self.temps[id(x)]
        return self.operand_read(node, i).var

    def broadcast_unknown_sizes(self):
        """Inputs whose sizes along one dimension are all unknown while tracing may
        broadcast one another when the kernel runs (a size of 1, as in TensorFlow): they
        are read with run-time strides, as an unknown size against a known one is."""
        for d in range(self.rank):
            if self.g.shape[d] is not None:
                continue
            unknown = [r for r in self.reads.values() if r.mode != "scalar" and d in r.dims
                       and r.val.shape[r.dims.index(d)] is None]
            if len(unknown) < 2:
                continue
            for r in unknown:
                k = r.dims.index(d)
                r.flags = r.flags[:k] + ("runtime",) + r.flags[k + 1:]
                r.mode = "bcast"

    def materialized(self, node):
        y = node.outputs[0]
        if id(y) in self.cg.outputs_ids:
            return True
        own = self.own
        return any(id(c) not in own for c in self.cg.consumers.get(id(y), []))

    def emit(self):
        cg, g, rank = self.cg, self.g, self.rank
        first = (g.nodes or g.reductions)[0]
        cg.emit(f"# fused: {' '.join(n.op.name for n in g.nodes)}"
                + (f" -> {' '.join(n.op.name for n in g.reductions)}" if g.reductions else ""))
        # Collect the reads (declaring them), before any code is emitted for the loop.
        for node in g.nodes:
            for i in range(len(node.inputs)):
                x = node.inputs[i]
                if not (isinstance(x, Symbolic) and id(x) in self.members):
                    self.operand_read(node, i)
        for node in g.reductions:
            x = node.inputs[0]
            if not (isinstance(x, Symbolic) and id(x) in self.members):
                self.read(x)
        self.broadcast_unknown_sizes()
        # The loop bounds: each from an input that has the dimension, or from a
        # BroadcastTo member's runtime shape.
        bounds = []
        for d in range(rank):
            source = None
            if g.shape[d] is not None and any(
                    r.mode != "scalar" and d in r.dims and r.val.shape[r.dims.index(d)] is None
                    for r in self.reads.values()):
                # An input whose size here is unknown while tracing must have the known
                # size (checked below): the known one bounds the loop.
                source = cg.runtime_ints([g.shape[d]])[0]
            for r in self.reads.values() if source is None else ():
                if r.mode != "scalar" and d in r.dims and not r.flags[r.dims.index(d)]:
                    source = f"{cg.array(r.val)}.shape[{r.dims.index(d)}]"
                    break
            sizes = [f"{cg.array(r.val)}.shape[{r.dims.index(d)}]" for r in self.reads.values()
                     if r.mode != "scalar" and d in r.dims
                     and r.flags[r.dims.index(d)] == "runtime"]
            if source is None and g.shape[d] is None and sizes:
                # Sizes all unknown while tracing: the first that is not 1 (checked below).
                name = cg.assign(sizes[0])
                for size in sizes[1:]:
                    cg.emit(f"if {name} == 1: {name} = {size}")
                bounds.append(name)
                continue
            for node in g.nodes if source is None else ():
                bound = lowering_of(node.op).bound
                if bound is not None:
                    source = cg.runtime_ints([bound(node, d)])[0]
                    break
            if source is None and g.shape[d] is not None:
                source = cg.runtime_ints([g.shape[d]])[0]
            if source is None:
                if g.shape[d] != 1:
                    raise Unsupported(f"cannot tell the run-time size of dimension {d} of "
                                      f"{first.op.name} at {first.where()}")
                source = "1"
            name = cg.fresh("n")
            cg.emit(f"{name} = {source}")
            bounds.append(name)
        self.bounds = bounds
        # Shapes unknown at trace time are checked at run time.
        self.strides = {}
        for r in self.reads.values():
            if r.mode == "scalar":
                continue
            for k, d in enumerate(r.dims):
                if r.flags[k] == "runtime":  # 1 broadcasts; anything else must match
                    size = f"{cg.array(r.val)}.shape[{k}]"
                    code = cg.error("shape", first)
                    cg.emit(f"if {size} != 1 and {size} != {bounds[d]}: "
                            f"raise ValueError({code})")
                    stride = self.strides[(id(r), k)] = cg.fresh("s")
                    cg.emit(f"{stride} = 0 if {size} == 1 else 1")
                    continue
                if r.flags[k]:
                    continue
                if r.val.shape[k] is None or g.shape[d] is None:
                    code = cg.error("shape", first)
                    cg.emit(f"if {cg.array(r.val)}.shape[{k}] != {bounds[d]}: "
                            f"raise ValueError({code})")
        # Scalar reads happen once, before the loop.
        for r in self.reads.values():
            if r.mode == "scalar":
                if r.val.name is None:
                    r.var = r.val.scalar
                else:
                    r.var = cg.fresh("s", cg.shown_after(r.val, "_s"))
                    cg.emit(f"{r.var} = {r.val.name}{subscript(['0'] * r.val.rank)}")
            else:
                r.var = cg.fresh("r", cg.shown_after(r.val, "_s"))
        flat = rank >= 1 and all(r.mode == "scalar" or (r.mode == "full" and r.val.layout == "C")
                                 for r in self.reads.values()) and all(
            set(n.attrs["axis"]) == set(range(rank)) for n in g.reductions)
        # Outputs the loop writes: into the buffer of an input that dies here when one
        # fits (each element is read before the same element is written), else a new one.
        writes = []
        dead = self.dead_inputs()
        scalars = []  # 0-d outputs stay scalars: no array to allocate, write and read back
        for node in g.nodes:
            if not self.materialized(node):
                continue
            if rank == 0 and not g.reductions:
                scalars.append(node.outputs[0])
            else:
                y = node.outputs[0]
                r = next((r for r in dead if r.val.dtype is y.dtype), None)
                if r is not None:
                    dead.remove(r)
                    # The buffer, named after the value it now holds (an alias, no copy)
                    name = cg.assign(r.val.name, y.name)
                else:
                    name = cg.new_array(y, bounds)
                cg.define(y, Val(name, y.dtype, g.shape, "C", owner=id(y)))
                writes.append((node, name))
        reductions = [_Reduction(self, node) for node in g.reductions]
        for red in reductions:
            red.allocate()
        if flat:
            if rank == 1:
                total = bounds[0]
            else:
                total = cg.fresh("n")
                cg.emit(f"{total} = {cg.product(bounds)}")
            def flat(name):
                # kernels.flat_view, not a reshape (a runtime call); a vector is its own.
                # Sizes are checked above where tracing left them open.
                return name if rank == 1 else cg.assign(f"flat_view({name})",
                                                        cg.shown_after_name(name, "_flat"))
            for r in self.reads.values():
                if r.mode == "full":
                    r.flat = flat(cg.array(r.val))
            flat_writes = [(node, flat(name)) for node, name in writes]
            for red in reductions:
                red.init(0)
            if reductions and g.nodes:
                self.chunked(total, flat_writes, reductions)
            else:
                i = cg.fresh("i")
                cg.emit(f"for {i} in range({total}):")
                cg.depth += 1
                self.body([i], flat_writes, reductions, flat=True)
                cg.depth -= 1
            for red in reductions:
                red.combine(0)
        else:
            indices = [cg.fresh("i") for _ in range(rank)]
            self.indices = indices
            for d in range(rank + 1):
                for red in reductions:
                    red.init(d)
                if d == rank:
                    break
                cg.emit(f"for {indices[d]} in range({bounds[d]}):")
                cg.depth += 1
            self.body(indices, writes, reductions, flat=False)
            for d in reversed(range(rank + 1)):
                if d < rank:
                    cg.depth -= 1
                for red in reductions:
                    red.combine(d)
            for y in scalars:
                cg.local_scalar(y, self.temps[id(y)])
        for red in reductions:
            red.finish()

    def dead_inputs(self):
        """Reads of whole C-contiguous buffers this kernel allocated for a value that
        nothing after this loop uses (no other consumer, not an output). A view or alias
        of the value comes from a consumer, and a Val shared by another value has that
        value's id as owner, so neither passes."""
        cg = self.cg
        own = self.own
        keys = [key[0] for key in self.reads]
        dead = []
        for (xid, _), r in self.reads.items():
            v = r.val
            if (r.mode != "full" or v.layout != "C" or v.owner != xid or keys.count(xid) != 1
                    or xid in cg.outputs_ids
                    or any(id(c) not in own for c in cg.consumers.get(xid, []))):
                continue
            dead.append(r)
        return dead

    def chunked(self, total, writes, reductions):
        """The flat loop of a group that ends in reductions, in chunks of CHUNK elements:
        the elementwise part (vectorized at float32 width) writes each chunk's reduced
        values to a small buffer, a second loop accumulates it (in float64 for float32
        sums). One accumulating loop would run the whole body at float64 width."""
        cg = self.cg
        for red in reductions:
            red.buffer = cg.fresh("buf", red.node.outputs[0].name + "_chunk")
            cg.emit(f"{red.buffer} = empty_array({CHUNK}, {np_name(red.dt)})")
        base, m, j = cg.fresh("b"), cg.fresh("m"), cg.fresh("j")
        cg.emit(f"for {base} in range(0, {total}, {CHUNK}):")
        cg.depth += 1
        # Not the minimum helper: an int conditional compiles to a select, nothing to link.
        cg.emit(f"{m} = {CHUNK} if {total} - {base} > {CHUNK} else {total} - {base}")
        whole = {}
        for r in self.reads.values():
            if r.mode == "full":
                whole[id(r)] = r.flat
                part = cg.fresh("f", cg.shown_after(r.val, "_chunk"))
                cg.emit(f"{part} = {r.flat}[{base}:{base} + {m}]")
                r.flat = part
        parts = []
        for node, f in writes:
            part = cg.fresh("f", node.outputs[0].name + "_chunk")
            cg.emit(f"{part} = {f}[{base}:{base} + {m}]")
            parts.append((node, part))
        cg.emit(f"for {j} in range({m}):")
        cg.depth += 1
        self.body([j], parts, reductions, flat=True)
        cg.depth -= 1
        for red in reductions:
            red.drain(m)
        cg.depth -= 1
        for r in self.reads.values():
            if id(r) in whole:
                r.flat = whole[id(r)]

    def operand_read(self, node, i):
        spans = lowering_of(node.op).operand_dims
        return self.read(node.inputs[i], spans(node, i, self.rank) if spans else None)

    def body(self, indices, writes, reductions, flat):
        cg = self.cg
        for r in self.reads.values():
            if r.mode == "scalar":
                continue
            if flat:
                cg.emit(f"{r.var} = {r.flat}[{indices[0]}]")
            else:
                idx = [f"{indices[d]} * {self.strides[(id(r), k)]}" if r.flags[k] == "runtime"
                       else "0" if r.flags[k] else indices[d] for k, d in enumerate(r.dims)]
                cg.emit(f"{r.var} = {cg.array(r.val)}{subscript(idx)}")
        for node in self.g.nodes:
            member = lowering_of(node.op)
            operands = [self.operand(node, i) for i in range(len(node.inputs))]
            consts = [scalar_value(x) for x in node.inputs]
            expr = member.expression(node, operands, consts)
            t = cg.fresh("e", node.outputs[0].name + "_s")
            if _needs_cast(node, member):
                expr = cast(expr, node.outputs[0].dtype)
            cg.emit(f"{t} = {expr}")
            cg.exact[t] = node.outputs[0].dtype  # cast where Numba's type may differ
            if member.check is not None:
                member.check(cg, node, operands)
            self.temps[id(node.outputs[0])] = t
        for node, name in writes:
            idx = [indices[0]] if flat else indices
            cg.emit(f"{name}{subscript(idx)} = {self.temps[id(node.outputs[0])]}")
        for red in reductions:
            red.index = indices[0] if flat else None
            red.update()

    def value_of(self, x):
        if isinstance(x, Symbolic) and id(x) in self.members:
            return self.temps[id(x)]
        return self.read(x).var


def _needs_cast(node, member):
    """Whether Numba's type for the member's expression may differ from the node's dtype
    (the member says, or else: float arithmetic on operands and typed literals of one
    float type keeps that type; integer arithmetic widens to int64 and must be cast back,
    which also gives NumPy's wrap-around)."""
    if member.cast is not None:
        said = member.cast(node)
        if said is not None:
            return said
    out = node.outputs[0].dtype
    if out.is_floating:
        return not all(x.dtype is out for x in node.inputs if not x.dtype.is_bool)
    return True


class _Reduction:
    """A reduction accumulated by a fused loop: a scalar accumulator for the reduced
    innermost dimensions (or all of them), an accumulator array for the rest."""

    def __init__(self, loop, node):
        self.loop, self.cg, self.node = loop, loop.cg, node
        self.kind = _ACCUMULATES.get(node.op.reduction, node.op.reduction)
        self.axes = set(node.attrs["axis"])
        self.keepdims = node.attrs["keepdims"]
        rank = loop.rank
        self.full = self.axes == set(range(rank))
        k = rank
        while k > 0 and (k - 1) in self.axes:
            k -= 1
        self.suffix = k  # dims [suffix, rank) are all reduced
        x = node.inputs[0]
        self.dt = x.dtype
        self.out = node.outputs[0]
        if self.kind in ("sum", "prod"):
            acc = dtypes.float64 if self.dt.is_floating else (
                dtypes.int64 if self.dt.is_integer else self.dt)
        else:
            acc = self.dt
        self.acc_dt = acc
        self.scalar = None
        self.array = None
        self.buffer = None
        self.index = None

    def initial(self):
        dt = self.acc_dt
        if self.kind == "sum":
            return literal(0, dt)
        if self.kind == "prod":
            return literal(1, dt)
        if self.kind == "all":
            return "True"
        if self.kind == "any":
            return "False"
        lowest = self.kind == "max"
        if dt.is_floating:
            return literal(-np.inf if lowest else np.inf, dt)
        info = np.iinfo(dt._np)
        return literal(info.min if lowest else info.max, dt)

    def step(self, acc, value):
        kind, dt = self.kind, self.acc_dt
        if kind == "sum":
            return f"radd_fast({acc}, {np_name(dt)}({value}))" if dt.is_floating \
                else f"{acc} + {np_name(dt)}({value})"
        if kind == "prod":
            return f"rmul_fast({acc}, {np_name(dt)}({value}))" if dt.is_floating \
                else f"{acc} * {np_name(dt)}({value})"
        if kind == "max":
            return f"maximum({acc}, {value})"
        if kind == "min":
            return f"minimum({acc}, {value})"
        if kind == "all":
            return f"{acc} and {value}"
        return f"{acc} or {value}"

    def allocate(self):
        if self.full:
            return
        cg = self.cg
        kept = ["1" if d in self.axes else b for d, b in enumerate(self.loop.bounds)]
        self.array = cg.fresh("acc", self.node.outputs[0].name + "_acc")
        cg.emit(f"{self.array} = full_array({shape_tuple(kept)}, {self.initial()}, "
                f"{np_name(self.acc_dt)})")

    def _acc_subscript(self, upto):
        idx = []
        for d in range(self.loop.rank):
            if d in self.axes or d >= upto:
                idx.append("0")
            else:
                idx.append(self.loop.indices[d])
        return subscript(idx)

    def init(self, depth):
        start = 0 if self.full else self.suffix
        if depth == start and (self.full or self.suffix < self.loop.rank):
            self.scalar = self.cg.fresh("p", self.node.outputs[0].name + "_acc")
            self.cg.emit(f"{self.scalar} = {self.initial()}")

    def update(self):
        value = self.loop.value_of(self.node.inputs[0])
        if self.buffer is not None:
            self.cg.emit(f"{self.buffer}[{self.index}] = {value}")
        elif self.scalar is not None:
            self.cg.emit(f"{self.scalar} = {self.step(self.scalar, value)}")
        else:
            target = f"{self.array}{self._acc_subscript(self.loop.rank)}"
            self.cg.emit(f"{target} = {self.step(target, value)}")

    def drain(self, count):
        j = self.cg.fresh("j")
        self.cg.emit(f"for {j} in range({count}):")
        self.cg.emit(f"    {self.scalar} = {self.step(self.scalar, f'{self.buffer}[{j}]')}")

    def combine(self, depth):
        if self.full or self.scalar is None or depth != self.suffix:
            return
        target = f"{self.array}{self._acc_subscript(self.suffix)}"
        self.cg.emit(f"{target} = {self.step(target, self.scalar)}")

    def finish(self):
        cg, node, out = self.cg, self.node, self.out
        rank = self.loop.rank
        bounds = self.loop.bounds
        count = cg.product(b for d, b in enumerate(bounds) if d in self.axes)
        out_np = np_name(out.dtype)
        if self.full:
            s = self.scalar
            if node.op.reduction == "mean":
                value = (f"int_mean({out_np}({s}), {count})" if out.dtype.is_integer
                         else f"{out_np}({s} / np.float64({count}))")
            else:
                value = f"{out_np}({s})"
            if not (self.keepdims and rank):
                cg.local_scalar(out, s if node.op.reduction != "mean" else value)
                return
            name = cg.fresh()
            cg.emit(f"{name} = empty_array({shape_tuple(['1'] * rank)}, {out_np})")
            cg.emit(f"{name}{subscript(['0'] * rank)} = {value}")
        else:
            a = self.array
            if node.op.reduction == "mean":
                if out.dtype.is_integer:
                    a = f"int_mean_array(cast_array({a}, {out_np}), {count})"
                else:
                    a = f"cast_array({a} / np.float64({count}), {out_np})"
            elif self.acc_dt is not out.dtype:
                a = f"cast_array({a}, {out_np})"
            if not self.keepdims:
                shape = [b for d, b in enumerate(bounds) if d not in self.axes]
                a = f"reshaped({a}, {tuple_expr(shape)})"
            name = cg.assign(a)
        cg.define(out, Val(name, out.dtype, out._shape, "C"))


_FILLS = {ZEROS_LIKE: "zeros_array({shape}, {dtype})",
          ONES_LIKE: "full_array({shape}, 1, {dtype})"}


def _fill(cg, group):
    """A group that is one ZerosLike or OnesLike alone: an allocation that fills (a
    memset for zeros), not a loop that reads its input. Returns whether it emitted it."""
    if len(group.nodes) != 1 or group.reductions or group.nodes[0].op not in _FILLS:
        return False
    node = group.nodes[0]
    y = node.outputs[0]
    if not y._shape:
        return False
    dims = cg.dims(cg.val(node.inputs[0]))
    name = cg.assign(_FILLS[node.op].format(shape=shape_tuple(dims),
                                                 dtype=np_name(y.dtype)))
    cg.define(y, Val(name, y.dtype, y._shape, "C", owner=id(y)))
    return True


def emit_group(cg, group):
    """Emits a fusion group as one loop nest (Codegen's emit_group)."""
    if _fill(cg, group):
        return
    _FusedLoop(cg, group).emit()
