"""Every public op function, gathered from the op modules (the table lives in registry)."""

import sys as _sys

from .. import tensor as _tensor
from .creation import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .complex_parts import *  # noqa: F401,F403
from .trigonometric import *  # noqa: F401,F403
from .nonfinite import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .rearrange import *  # noqa: F401,F403
from .searching import *  # noqa: F401,F403
from .switch import *  # noqa: F401,F403
from .segments import *  # noqa: F401,F403
from .segment_reductions import *  # noqa: F401,F403
from .truncation import *  # noqa: F401,F403
from .clipping import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .control import *  # noqa: F401,F403
from .lists import *  # noqa: F401,F403
from .registry import OPS, OpDef, bind, lookup, register  # noqa: F401

_tensor.use_ops(_sys.modules[__name__])  # Tensor's operators call the ops gathered above
