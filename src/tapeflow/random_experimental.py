"""`tf.random.experimental`: the Generator API and the stateless seed functions under
their experimental names, as TensorFlow 2.21 exports them."""

from .ops.stateless import fold_in as stateless_fold_in  # noqa: F401
from .ops.stateless import split as stateless_split  # noqa: F401
from .random_generator import (  # noqa: F401
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
