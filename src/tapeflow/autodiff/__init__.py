"""`tf.autodiff`: GradientTape, ForwardAccumulator and the machinery behind them."""

from .tape import GradientTape, UnconnectedGradients  # noqa: F401
from .forward import ForwardAccumulator  # noqa: F401
from .recompute import grad_pass_through, recompute_grad  # noqa: F401
