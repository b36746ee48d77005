"""Lowerings of the neural-network ops that are not elementwise: softmax, the
cross-entropies, CTC's loss and L2Loss."""

from ...ops.ctc import CTC_LOSS
from ...ops.nn import L2_LOSS, LOG_SOFTMAX, SOFTMAX, SOFTMAX_XENT, SPARSE_SOFTMAX_XENT
from .generator import lowers
from .text import np_name, tuple_expr

# Along the last axis (the usual one), the helpers of rows (softmax_rows, xent_rows),
# whose first compile is a quarter of the (outer, axis, inner) ones'.

@lowers(SOFTMAX, LOG_SOFTMAX)
def _softmax(cg, node):
    x = cg.val(node.inputs[0])
    axis = node.attrs["axis"] % x.rank
    log = node.op is LOG_SOFTMAX
    if axis == x.rank - 1:
        rows, dims = cg.batched(x, 1)
        out = cg.shaped(cg.assign(f"softmax_rows({rows}, {log})"), 2, dims)
    else:
        x3, dims = cg.view3(x, axis)
        out3 = cg.assign(f"softmax3({x3}, {log})")
        out = cg.assign(f"reshaped({out3}, {tuple_expr(dims)})")
    cg.output(node, out)


@lowers(SOFTMAX_XENT)
def _xent(cg, node):
    f, lab = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    axis = node.attrs["axis"] % f.rank
    loss, back = cg.fresh(), cg.fresh()
    if axis == f.rank - 1:
        f2, dims = cg.batched(f, 1)
        l2, _ = cg.batched(lab, 1)
        cg.emit(f"{loss}, {back} = xent_rows({f2}, {l2})")
        cg.output(node, cg.shaped(loss, 1, dims[:-1]), "C", 0)
        cg.output(node, cg.shaped(back, 2, dims), "C", 1)
        return
    f3, dims = cg.view3(f, axis)
    l3, _ = cg.view3(lab, axis)
    cg.emit(f"{loss}, {back} = xent3({f3}, {l3})")
    cg.output(node, cg.assign(f"reshaped({loss}, {tuple_expr(dims[:axis] + dims[axis + 1:])})"),
              "C", 0)
    cg.output(node, cg.assign(f"reshaped({back}, {tuple_expr(dims)})"), "C", 1)


@lowers(SPARSE_SOFTMAX_XENT)
def _sparse_xent(cg, node):
    f, lab = cg.val(node.inputs[0]), cg.val(node.inputs[1])
    f2, dims = cg.batched(f, 1)
    # A view of the logits' row count even where the labels are a vector already: its
    # check of the sizes keeps the helper from reading past the labels.
    l1 = cg.assign(f"reshaped({cg.contiguous(lab)}, {cg.product(dims[:-1])})")
    loss, back = cg.fresh(), cg.fresh()
    code = cg.error("label", node)
    cg.emit(f"{loss}, {back} = sparse_xent2({f2}, {l1}, {code})")
    cg.output(node, cg.shaped(loss, 1, dims[:-1]), "C", 0)
    cg.output(node, cg.shaped(back, 2, dims), "C", 1)


@lowers(CTC_LOSS)
def _ctc_loss(cg, node):
    logits, labels, label_length, logit_length = (cg.contiguous(cg.val(x))
                                                   for x in node.inputs)
    loss, grad = cg.fresh(), cg.fresh()
    code = cg.error("label", node)
    cg.emit(f"{loss}, {grad} = ctc_loss_grad({logits}, {labels}, {label_length}, "
            f"{logit_length}, {code})")
    cg.output(node, loss, "C", 0)
    cg.output(node, grad, "C", 1)


@lowers(L2_LOSS)
def _l2_loss(cg, node):
    t = cg.val(node.inputs[0])
    y = node.outputs[0]
    flat = cg.assign(f"reshaped({cg.contiguous(t)}, {cg.product(cg.dims(t))})")
    cg.output(node, cg.assign(f"scalar_array({np_name(y.dtype)}(l2_loss1({flat})))"))
