"""The numba.cuda backend: eager ops placed on an NVIDIA GPU (placement.py decides
where an op runs) run as @cuda.jit kernels generated from the op table — elementwise
entries from their `emit` templates, reductions from their `reduction` flag — on
tensors that stay in device memory (device_tensor.py). A tf.function traced under a GPU
placement compiles to a Program (program.py): fused groups as single kernels, other
nodes as eager ops. Ops without a lowering here run on the CPU (soft placement).

Registering loads nothing: numba-cuda is imported when the first GPU is counted or the
first kernel is generated.
"""

from ... import backend_registry, context
from ...ops.registry import record
from .. import compiler
from . import (
    blas,
    ctc,
    device,
    elementwise,
    gather,
    kernels,
    program,
    random,
    reduce,
    rows,
    shape,
    slicing,
)

BACKEND = "numba_cuda"
lowers = compiler.lowering_registrar(BACKEND)
for _module in (elementwise, reduce, shape, blas, gather, random, rows, slicing, ctc):
    _module.attach(lowers)


class NumbaCUDA(compiler.Backend):
    name = BACKEND
    device_type = "GPU"

    def compile(self, graph, index=0, scope=None):
        """`graph` compiled for logical GPU `index`; its nodes without a fused kernel
        run as eager ops under `scope` (the tf.device scope it was traced in)."""
        return program.Program(graph, index, scope, self)

    def clear_cache(self):
        # Their files on disk share the CPU kernels' directory and names, and go with them.
        kernels.clear()

    def lowering(self, op):
        found = op.lowerings.get(self.name)
        if found is None and op.elementwise and op.emit is not None:
            return elementwise.DEFAULT
        return found

    @staticmethod
    def device_count():
        return device.device_count()

    @staticmethod
    def upload(tensor, index):
        with device.selected(index):
            return device.upload(tensor, index)

    def run(self, op, inputs, attrs, index):
        """The op's outputs computed on GPU `index`, or None when this backend has no
        kernel for it (or for its dtypes): the op then runs on the CPU. Shape and dtype
        errors are raised first, as on the CPU."""
        lowering = self.lowering(op)
        if lowering is None or (op.n_out != 1 and not getattr(lowering, "outputs_all", False)):
            return None
        inferred = op.infer(*inputs, **attrs)
        # A lowering of several outputs gets their shapes and dtypes as lists.
        shape, dtype = inferred if op.n_out == 1 else map(list, zip(*inferred))
        with device.selected(index):
            out = lowering.run(op, inputs, attrs, shape, dtype, index)
        if out is None:
            return None
        outputs = (out,) if op.n_out == 1 else tuple(out)
        if op.differentiable:
            tapes = context.recording_tapes.get()
            if tapes:
                record(op, attrs, inputs, outputs, tapes)
        return out if op.n_out == 1 else list(outputs)  # as ops/registry.py's run_on_host


backend_registry.register(NumbaCUDA())
