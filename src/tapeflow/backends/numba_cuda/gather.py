"""GatherV2 on the device (batch_dims 0, any axis): one "gather" kernel per dtype and
index dtype. As TensorFlow's GPU kernel, an index outside [0, dim) gives zeros instead of
an error (the CPU raises). A host scalar index (the step a loop's gradient reads its
history at) is a kernel argument, so it is not copied to the device."""

import math

from ...device_tensor import DeviceTensor, on_device
from ...ops.indexing import GATHER
from . import device, kernels
from .elementwise import SUPPORTED
from .fused import literal


def _key(dtype, index_type):
    index = "indices[j]" if index_type.startswith("array:") else "indices"
    text = "\n".join([
        "def kernel(n, inner, k, dim, out, params, indices):",
        "    for i in range(cuda.grid(1), n, cuda.gridsize(1)):",
        "        o = i // (k * inner)",
        "        rest = i - o * (k * inner)",
        "        j = rest // inner",
        "        e = rest - j * inner",
        f"        at = {index}",
        "        if at < 0 or at >= dim:",
        f"            out[i] = {literal(0, dtype)}",
        "        else:",
        "            out[i] = params[(o * dim + at) * inner + e]",
    ]) + "\n"
    return ("gather", text, ("int64",) * 4 + (f"array:{dtype.name}",) * 2 + (index_type,))


class Gather:
    def run(self, op, inputs, attrs, shape, dtype, index):
        params, indices = inputs
        if attrs["batch_dims"] or dtype.name not in SUPPORTED:
            return None
        p = params._shape
        axis = attrs["axis"] % len(p)
        inner, k, n = math.prod(p[axis + 1:]), math.prod(indices._shape), math.prod(shape)
        if indices._shape == () and type(indices) is not DeviceTensor:
            index_type, index_arg = "int64", int(indices._value)
        else:
            index_type = f"array:{indices.dtype.name}"
            index_arg = device.device_array_of(indices, index)
        out = device.empty(n, dtype)
        if n:
            device.launch(kernels.kernel(_key(dtype, index_type)), n, n, inner, k, p[axis],
                          out, device.device_array_of(params, index), index_arg)
        return on_device(out, shape, dtype, index)


def attach(lowers):
    lowers(GATHER)(Gather())
