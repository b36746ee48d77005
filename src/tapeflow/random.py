"""`tf.random`: seeded normal, uniform, truncated-normal and categorical draws."""

from .ops.random import normal, set_seed, shuffle, truncated_normal, uniform  # noqa: F401
from .ops.sampling import categorical  # noqa: F401
from .ops.stateless import (  # noqa: F401
    fold_in,
    split,
    stateless_normal,
    stateless_truncated_normal,
    stateless_uniform,
)
from .random_generator import (  # noqa: F401
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from .ops.counted_draws import (  # noqa: F401
    stateless_binomial,
    stateless_categorical,
    stateless_parameterized_truncated_normal,
    stateless_poisson,
)
from . import random_experimental as experimental  # noqa: F401
from .ops.candidate_sampling import (  # noqa: F401
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from .ops.shaped_draws import gamma, poisson, stateless_gamma  # noqa: F401
