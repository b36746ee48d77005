"""tapeflow: TensorFlow 2's GradientTape on NumPy (`import tapeflow as tf`).

The top-level names are TensorFlow 2's top-level names; the rest live in the TF
namespaces (`tf.math`, `tf.nn`, `tf.linalg`, `tf.random`, `tf.config`, `tf.nest`, ...).
"""

from . import (autodiff, autograph, config, data, debugging, dtypes, errors,  # noqa: F401
               experimental, keras, linalg, math, nest, nn, random, saved_model, signal,
               train)
from .autodiff.custom import RegisterGradient, custom_gradient
from .autodiff.tape import GradientTape, UnconnectedGradients
from .dtypes import (DType, as_dtype, bool, complex64, complex128, double, float16,  # noqa: A004
                     float32, float64, half, int8, int16, int32, int64, uint8)
from .ops.control import cond, while_loop
from .ops.tensor_array import TensorArray, TensorArraySpec
from .ops.creation import eye, fill, linspace, ones, ones_like, range, zeros, zeros_like  # noqa: A004
from .ops.elementwise import (
    abs, add, cast, clip_by_value, cos, divide, equal, exp, floor, floordiv, greater, greater_equal,
    identity, less, less_equal, logical_and, logical_not, logical_or, maximum, minimum,
    multiply, negative, not_equal, pow, realdiv, round, sigmoid, sign, sin, sqrt, square,
    stop_gradient, subtract, tan, tanh, truediv, where)
from .ops.complex_parts import complex  # noqa: A004
from .ops.linalg import clip_by_norm, einsum, matmul, norm, tensordot
from .ops.trigonometric import acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh
from .ops.statistics import add_n
from .ops.sorting import argsort, sort
from .ops.approx_top_k import approx_top_k
from .graph_hints import get_logger, guarantee_const, parallel_stack
from .ops.matrix_square_root import sqrtm as matrix_square_root
from .ops.rearrange import boolean_mask, meshgrid, repeat, roll, sequence_mask
from .ops.searching import searchsorted, unique, unique_with_counts
from .ops.switch import case, switch_case
from .debugging import Assert, assert_equal, assert_greater, assert_less, assert_rank
from .framework import (get_static_value, identity_n, inside_function, is_symbolic_tensor,
                        shape_n)
from .ops.checks import ensure_shape
from .ops.clipping import clip_by_global_norm
from .ops.elementwise import scalar_mul
from .ops.rearrange import reverse_sequence, unravel_index
from .ops.segments import dynamic_partition
from .ops.functional import foldl, foldr, map_fn, scan, vectorized_map
from .autodiff.custom import no_gradient
from .autodiff.recompute import grad_pass_through, recompute_grad
from .autodiff.symbolic import gradients, hessians
from .ops.indexing import tensor_scatter_nd_sub
from .ops.segments import histogram_fixed_width
from .ops.fourier_nd import (raw_fftnd as fftnd, raw_ifftnd as ifftnd, raw_irfftnd as irfftnd,
                              raw_rfftnd as rfftnd)
from .ops.space_batch import (batch_to_space, required_space_to_batch_paddings,
                              space_to_batch, space_to_batch_nd)
from .ops.counting import histogram_fixed_width_bins
from .scattering import (dynamic_stitch, tensor_scatter_nd_max, tensor_scatter_nd_min,
                         tensor_scatter_nd_update)
from .framework import broadcast_dynamic_shape, broadcast_static_shape
from .graph.trace import init_scope
from .grouping import control_dependencies, get_current_name_scope, group, no_op, tuple  # noqa: A004
from .initializers import (constant_initializer, ones_initializer, random_normal_initializer,
                           random_uniform_initializer, zeros_initializer)
from .ops.truncation import saturate_cast, truncatediv, truncatemod
from .ops.reduce import (argmax, argmin, cumsum, reduce_all, reduce_any, reduce_logsumexp,
                         reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum)
from .ops.shape import (broadcast_to, concat, expand_dims, pad, rank, reshape, reverse, shape,
                        size, split, squeeze, stack, tile, transpose, unstack)
from .ops.indexing import (gather, gather_nd, one_hot, scatter_nd, slice, strided_slice,
                           tensor_scatter_nd_add)
from .graph.function import Function, TensorSpec, function
from .module import Module, name_scope
from .printing import print_ as print  # noqa: A004
from .tensor import Tensor, TensorShape, constant, convert_to_tensor, is_tensor
from .variable import Variable
from .version import __version__
from .placement import DeviceSpec, device
from .backends import numba_cpu as _numba_cpu  # noqa: F401 - registers the CPU backend
from .backends import numba_cuda as _numba_cuda  # noqa: F401 - registers the GPU backend

newaxis = None


def executing_eagerly():
    """False while a tf.function is being traced, True otherwise."""
    from . import context
    return context.current_graph.get() is None
