"""The single reverse walk: tape entries in reverse order, each op's gradient rule."""

from ..ops.registry import GRADIENT_OVERRIDES


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


def _accumulate(grads, key, g):
    old = grads.get(key)
    grads[key] = g if old is None else old + g


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
    for entry in reversed(relevant):
        out_ids = entry.out_ids
        if len(out_ids) == 1:
            dy = get(out_ids[0])
            if dy is None:
                continue
            dys = (dy,)
        else:
            dys = [get(o) for o in out_ids]
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
            in_grads = entry.op.grad(entry, *dys)
        if type(in_grads) is not tuple and type(in_grads) is not list:
            in_grads = (in_grads,)
        for i, need, g in zip(in_ids, needs, in_grads):
            if need and g is not None:
                old = get(i)
                grads[i] = g if old is None else old + g
    return grads
