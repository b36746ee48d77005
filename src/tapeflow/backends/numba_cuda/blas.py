"""MatMul and BatchMatMulV2 on the device through cuBLAS (float32 and float64), called
through nvmath-python's low-level bindings (nvmath.bindings.cublas): NVIDIA keeps them
in step with each CUDA release and they find the libcublas of the nvidia-cublas wheels
themselves, where ctypes would need the library's path and every signature declared by
hand. The `cuda` extra installs both. Without them, products run on the CPU (soft
placement).

Tensors are row-major and cuBLAS is column-major: a row-major C = op(A) op(B) is the
column-major C^T = op(B)^T op(A)^T, so the operands are passed swapped, each with its
row length as leading dimension. Batches go through the strided-batched GEMM; an operand
whose batch is broadcast has stride 0. Every call goes on the backend's stream.

Under numba-cuda's simulator the device's memory is host memory: there the product is
NumPy's matmul on it (cuBLAS needs a GPU).
"""

import math

import numpy as np

from ...device_tensor import on_device
from ...ops.linalg import BATCH_MATMUL, MATMUL
from . import device

_cublas = None
_handles = {}


def _bindings():
    """nvmath's cuBLAS bindings, or None when nvmath-python is not installed."""
    global _cublas
    if _cublas is None:
        try:
            from nvmath.bindings import cublas
        except ImportError:
            cublas = False
        _cublas = cublas
    return _cublas or None


def _address(handle):
    """An integer address from numba-cuda's pointer and stream handles (ctypes or
    cuda-bindings objects)."""
    value = getattr(handle, "value", handle)
    return int(value) if value is not None else 0


def _handle(cublas):
    """The cuBLAS handle of the current GPU, bound to the backend's stream."""
    gpu = device._current_gpu()
    found = _handles.get(gpu)
    if found is None:
        found = _handles[gpu] = cublas.create()
        cublas.set_stream(found, _address(device.stream().handle))
    return found


def _simulated_product(out, x, y, batch, shapes):
    """The simulator's GEMM: NumPy's, on the host arrays its device arrays hold."""
    (xm, xk, tx), (ym, yk, ty), (m, n) = shapes
    a = x._ary.reshape(-1, xm, xk)
    b = y._ary.reshape(-1, ym, yk)
    a = np.swapaxes(a, 1, 2) if tx else a
    b = np.swapaxes(b, 1, 2) if ty else b
    out._ary.reshape(batch, m, n)[...] = np.matmul(a, b)


class Product:
    """MatMul (transpose_a/b) and BatchMatMulV2 (adj_x/y; real dtypes, so adjoint is
    transpose) as one GEMM call."""

    _GEMM = {"float32": ("sgemm", "sgemm_strided_batched"),
             "float64": ("dgemm", "dgemm_strided_batched")}

    def run(self, op, inputs, attrs, shape, dtype, index):
        x, y = inputs
        if dtype.name not in self._GEMM or 0 in shape or 0 in x._shape:
            return None  # other dtypes, and empty products, on the CPU
        tx, ty = ((attrs["transpose_a"], attrs["transpose_b"]) if op is MATMUL
                  else (attrs["adj_x"], attrs["adj_y"]))
        m, n = shape[-2:]
        batch = math.prod(shape[:-2])
        xb, yb = math.prod(x._shape[:-2]), math.prod(y._shape[:-2])
        if xb not in (1, batch) or yb not in (1, batch):
            return None  # batch dimensions broadcast both ways: on the CPU
        if device.simulated():
            out = device.empty(batch * m * n, dtype)
            _simulated_product(out, device.device_array_of(x, index),
                               device.device_array_of(y, index), batch,
                               (x._shape[-2:] + (tx,), y._shape[-2:] + (ty,), (m, n)))
            return on_device(out, shape, dtype, index)
        cublas = _bindings()
        if cublas is None:
            return None
        out = device.empty(batch * m * n, dtype)
        self._gemm(cublas, dtype, device.device_array_of(x, index),
                   device.device_array_of(y, index), out, x._shape, y._shape, tx, ty,
                   (m, n, batch, xb, yb))
        return on_device(out, shape, dtype, index)

    def _gemm(self, cublas, dtype, a, b, c, a_shape, b_shape, ta, tb, sizes):
        m, n, batch, a_batch, b_batch = sizes
        k = a_shape[-2] if ta else a_shape[-1]
        one, zero = np.ones(1, dtype._np), np.zeros(1, dtype._np)
        # Column-major: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m).
        op_b = cublas.Operation.T if tb else cublas.Operation.N
        op_a = cublas.Operation.T if ta else cublas.Operation.N
        ldb, lda = b_shape[-1], a_shape[-1]
        pointers = [_address(arr.device_ctypes_pointer) for arr in (b, a, c)]
        single, batched = self._GEMM[dtype.name]
        handle = _handle(cublas)
        if batch == 1:
            getattr(cublas, single)(handle, op_b, op_a, n, m, k, one.ctypes.data,
                                    pointers[0], ldb, pointers[1], lda, zero.ctypes.data,
                                    pointers[2], n)
            return
        getattr(cublas, batched)(
            handle, op_b, op_a, n, m, k, one.ctypes.data,
            pointers[0], ldb, k * n if b_batch > 1 else 0,
            pointers[1], lda, m * k if a_batch > 1 else 0,
            zero.ctypes.data, pointers[2], n, m * n, batch)


def attach(lowers):
    lowers(MATMUL, BATCH_MATMUL)(Product())
