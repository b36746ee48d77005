"""The single reverse walk: tape entries in reverse order, each op's gradient rule."""

from ..ops.registry import GRADIENT_OVERRIDES
from ..tensor import Tensor


class OverrideOp:
    """TensorFlow's `op` argument of a registered gradient function."""

    def __init__(self, entry):
        n_in = len(entry.in_ids)
        self.type = entry.op.name
        self.name = entry.op.name
        self.inputs = list(entry.saved[:n_in])
        self.outputs = list(entry.saved[n_in:])
        self._attrs = entry.attrs

    def get_attr(self, name):
        return self._attrs[name]


def _call_override(entry, dys):
    if len(entry.saved) != len(entry.in_ids) + len(entry.out_ids):
        # Recorded before the override was registered: only the declared saves exist.
        return entry.op.grad(entry, *dys)
    return GRADIENT_OVERRIDES[entry.op.name](OverrideOp(entry), *dys)


def _zeros(shape, dtype):
    if None in shape:  # unknown until run time: the rule treats None as zero itself
        return None
    from ..ops.creation import zeros
    return zeros(shape, dtype=dtype)


class _Rows:
    """A gradient of the uses of a tensor that read rows of it (ops' `row_grad`: `xs[t]`
    at every step of a Python loop, an embedding's lookups), not yet added together,
    plus the dense part of its other uses. Adding each use's rows into zeros of the
    whole tensor cost the tensor's size per use, so a loop over a sequence's rows took
    time growing with the square of its length; here the rows of all uses are added
    once. A single use's gradient is its op's dense rule, as quick as ever for one
    `x[0]`: the rows are made only when a second use comes."""

    __slots__ = ("dense", "uses")

    def __init__(self, entry, dys, needs):
        self.uses = [(entry, dys, needs)]
        self.dense = None

    def add(self, g):
        if type(g) is _Rows:
            self.uses += g.uses
            g = g.dense
        if g is not None:
            self.dense = g if self.dense is None else self.dense + g
        return self

    def total(self):
        summed, indices, rows, length = None, [], [], None
        for entry, dys, needs in self.uses:
            read = entry.op.row_grad(entry, *dys) if len(self.uses) > 1 else None
            if read is None:  # alone, or not rows after all: the op's rule, for the
                # first input only (_row_grads had the rule give the others)
                entry.needs = (True,) + (False,) * (len(needs) - 1)
                g = entry.op.grad(entry, *dys)[0]
                summed = g if summed is None else summed + g
            else:
                indices.append(read[0])
                rows.append(read[1])
                length = read[2]
        if rows:
            from ..ops.loop_rows import scattered
            g = scattered(rows, indices, length)
            summed = g if summed is None else summed + g
        return summed if self.dense is None else self.dense + summed


def _added(old, g):
    if old is None:
        return g
    if type(old) is _Rows:
        return old.add(g)
    if type(g) is _Rows:
        return g.add(old)
    return old + g


def _dense(grads, key):
    g = grads.get(key)
    if type(g) is _Rows:
        g = grads[key] = g.total()
    return g


def _accumulate(grads, key, g):
    grads[key] = _added(grads.get(key), g)


def _row_grads(entry, dys, needs):
    """The op's gradient with respect to its first input as _Rows (OpDef.row_grad), and
    the rule's for the others; None for all but eager tensors on the CPU: in a traced
    gradient, the rows' indices of a Python loop's steps are constants, one per step,
    which keep the compiled kernel from rolling the steps back into a loop (an unrolled
    RNN of 100 steps compiled in 24 s instead of 6.6 s; a tensor loop's rows are
    loop_rows.py's); a vectorized walk's rules batch the dense gradient; on a GPU the
    dense rule runs there and the rows' addition would not."""
    if any(type(dy) is not Tensor and dy is not None for dy in dys):
        return None  # symbolic, batched or on a GPU
    if any(needs[1:]):
        entry.needs = (False,) + needs[1:]
        rest = entry.op.grad(entry, *dys)[1:]
    else:
        rest = (None,) * (len(needs) - 1)
    return (_Rows(entry, dys, needs), *rest)


def backprop(entries, targets, seeds, source_ids):
    """Gradients of `targets` (weighted by `seeds`) w.r.t. the tensors with `source_ids`.

    Returns {tensor id: gradient Tensor} for every source reached; a missing id means
    the source is unconnected. Only entries on a path from a source to a target run.
    """
    reach = set(source_ids)
    relevant = []
    for entry in entries:
        for i in entry.in_ids:
            if i in reach:
                relevant.append(entry)
                reach.update(entry.out_ids)
                break
    grads = {}
    for target, seed in zip(targets, seeds):
        if target.dtype.is_differentiable and target._id in reach:
            _accumulate(grads, target._id, seed)
    get = grads.get
    overrides = GRADIENT_OVERRIDES
    rows_kept = False  # whether some gradient is _Rows (read densely as the walk goes)
    for entry in reversed(relevant):
        out_ids = entry.out_ids
        if len(out_ids) == 1:
            dy = get(out_ids[0])
            if dy is None:
                continue
            if rows_kept and type(dy) is _Rows:
                dy = _dense(grads, out_ids[0])
            dys = (dy,)
        else:
            dys = [_dense(grads, o) for o in out_ids] if rows_kept else \
                [get(o) for o in out_ids]
            if all(dy is None for dy in dys):
                continue
            if not entry.op.none_dys:
                dys = [dy if dy is not None else _zeros(s, d)
                       for dy, s, d in zip(dys, entry.out_shapes, entry.out_dtypes)]
        in_ids = entry.in_ids
        needs = tuple([i in reach and d.is_differentiable for i, d in zip(in_ids, entry.dtypes)])
        if True not in needs:
            continue
        if overrides and entry.op.name in overrides:
            in_grads = _call_override(entry, dys)
        else:
            entry.needs = needs
            in_grads = None
            if needs[0] and entry.op.row_grad is not None:
                in_grads = _row_grads(entry, dys, needs)
                rows_kept = rows_kept or in_grads is not None
            if in_grads is None:
                entry.needs = needs
                in_grads = entry.op.grad(entry, *dys)
        if type(in_grads) is not tuple and type(in_grads) is not list:
            in_grads = (in_grads,)
        for i, need, g in zip(in_ids, needs, in_grads):
            if need and g is not None:
                _accumulate(grads, i, g)
    if rows_kept:
        for key in list(grads):
            _dense(grads, key)
    return grads
