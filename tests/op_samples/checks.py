"""Samplers and error cases for ops/checks.py (the failing checks: tests/test_debugging.py)."""

import numpy as np

from tapeflow.errors import InvalidArgumentError
from tapeflow.ops import checks

from .common import Case, floats, shapes
from .common import constant as _c


def _finite(draw):
    return Case([floats(draw, shapes(draw))], {"message": "checked"})


def _true(draw):
    return Case([np.array(True)], {"message": "holds"})


SAMPLES = {"CheckNumerics": _finite, "Assert": _true}

ERRORS = [
    (lambda: checks.check_numerics(_c([1.0, np.nan]), "x"), InvalidArgumentError,
     r"x : Tensor had NaN values \[Op:CheckNumerics\]"),
    (lambda: checks.check_numerics(_c([1, 2]), "x"), InvalidArgumentError,
     r"int32.*\[Op:CheckNumerics\]"),
    (lambda: checks.assert_at_run_time(_c(False), "no"), InvalidArgumentError,
     r"no \[Op:Assert\]"),
]
