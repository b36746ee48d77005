"""How much of TensorFlow 2.21's public API tapeflow has, module by module.

The reference is `dir()` of each TensorFlow module (perf/reference/), less
TensorFlow's infrastructure (submodules such as compat, lite, tpu, io, strings, sparse,
ragged, and the quantized dtypes), which tapeflow does not aim at. A name counts as
present when the corresponding tapeflow module has it; tapeflow has no placeholders,
so a name that is there works.

Usage: python perf/api_coverage.py [--missing] [module ...]   (module: "" for tf, "math", ...)
"""

import json
import os
import sys

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference",
                         "tf-2.21-public-names.json")

# TensorFlow's infrastructure: not part of what a TensorFlow 2 GradientTape user calls.
INFRASTRUCTURE = {
    "compat", "lite", "tpu", "xla", "dtensor", "mlir", "raw_ops", "queue", "quantization",
    "strings", "sparse", "ragged", "io", "lookup", "feature_column", "sysconfig", "tools",
    "qint8", "qint16", "qint32", "quint8", "quint16", "distribute", "summary", "test",
}
# Modules of the reference that are infrastructure as a whole.
SKIPPED_MODULES = {"sparse", "strings", "distribute", "summary", "test"}


def reference():
    with open(REFERENCE) as f:
        return json.load(f)["public_names"]


def tapeflow_module(name):
    import tapeflow
    module = tapeflow
    for part in [p for p in name.split(".") if p]:
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


def coverage(modules=None):
    """{module: (present names, missing names)} over the reference's non-infrastructure
    names."""
    result = {}
    for module_name, names in reference().items():
        if module_name in SKIPPED_MODULES or (modules and module_name not in modules):
            continue
        wanted = [n for n in names if n not in INFRASTRUCTURE and not n.startswith("_")]
        module = tapeflow_module(module_name)
        present = [n for n in wanted if module is not None and hasattr(module, n)]
        result[module_name] = (present, sorted(set(wanted) - set(present)))
    return result


def main(argv):
    show_missing = "--missing" in argv
    modules = [a for a in argv if not a.startswith("--")] or None
    print(f"{'module':<20} {'tapeflow':>8} {'TF 2.21':>8} {'coverage':>9}")
    for module_name, (present, missing) in coverage(modules).items():
        total = len(present) + len(missing)
        shown = "tf" + ("." + module_name if module_name else "")
        print(f"{shown:<20} {len(present):>8} {total:>8} {100 * len(present) / total:>8.0f}%")
        if show_missing and missing:
            print("    missing: " + ", ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:])
