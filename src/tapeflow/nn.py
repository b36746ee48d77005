"""`tf.nn`: activations, softmax, the cross-entropy losses, dropout and moments,
convolutions and pooling."""

from .ops.elementwise import elu, relu, sigmoid, softplus, tanh  # noqa: F401
from .ops.nn import (  # noqa: F401
    bias_add, dropout, l2_loss, l2_normalize, leaky_relu, log_softmax, relu6, selu, silu,
    in_top_k, sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softsign,
    sparse_softmax_cross_entropy_with_logits, swish)
from .ops.sorting import top_k  # noqa: F401
from .ops.approx_top_k import approx_max_k, approx_min_k  # noqa: F401
from .ops.statistics import moments  # noqa: F401
from .ops.convolution import (  # noqa: F401
    atrous_conv2d, conv1d, conv2d, conv2d_transpose, conv3d, convolution, depthwise_conv2d)
from .ops.pooling import (  # noqa: F401
    avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool, max_pool1d, max_pool2d, max_pool3d,
    pool)
from .ops.nn_compositions import (  # noqa: F401
    batch_normalization, compute_average_loss, crelu, depth_to_space, embedding_lookup, gelu,
    log_poisson_loss, normalize_moments, scale_regularization_loss, space_to_depth,
    weighted_cross_entropy_with_logits)
from .ops.transposed_convolutions import (  # noqa: F401
    atrous_conv2d_transpose, conv1d_transpose, conv3d_transpose, conv_transpose,
    depthwise_conv2d_backprop_filter, depthwise_conv2d_backprop_input, separable_conv2d)
from .ops.ctc import collapse_repeated, ctc_loss, ctc_unique_labels  # noqa: F401
from .ops.space_batch import space_to_batch, with_space_to_batch  # noqa: F401
from .ops.window_taps import dilation2d, erosion2d, max_pool_with_argmax  # noqa: F401
from .ops.normalization import (  # noqa: F401
    batch_norm_with_global_normalization, local_response_normalization, lrn,
    sufficient_statistics, weighted_moments, zero_fraction)
from .ops.candidate_sampling import (  # noqa: F401
    all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler, log_uniform_candidate_sampler,
    uniform_candidate_sampler)
from .ops.sampled_losses import nce_loss, sampled_softmax_loss  # noqa: F401
