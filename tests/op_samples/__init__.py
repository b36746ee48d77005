"""Per-op samplers, one module per op module (op_samples/<module>.py for ops/<module>.py).

SAMPLES maps TensorFlow op names to samplers; ERRORS gathers every module's
`(callable, ExceptionClass, message_regex)` entries for the error tests;
STRUCTURAL_SAMPLES maps the graph-only ops (If, While) to samplers of small programs.
"""

import importlib
import pkgutil

SAMPLES = {}
STRUCTURAL_SAMPLES = {}
ERRORS = []
SAMPLE_MODULE = {}  # op name -> the sampler module that defines it

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name == "common" or _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _op in getattr(_module, "SAMPLES", {}):
        if _op in SAMPLES:
            raise KeyError(f"op {_op!r} has samplers in both {SAMPLE_MODULE[_op]} and "
                           f"{_info.name}")
        SAMPLE_MODULE[_op] = _info.name
    SAMPLES.update(getattr(_module, "SAMPLES", {}))
    STRUCTURAL_SAMPLES.update(getattr(_module, "STRUCTURAL_SAMPLES", {}))
    ERRORS.extend((_info.name, *entry) for entry in getattr(_module, "ERRORS", ()))
