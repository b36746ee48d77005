"""perf/api_coverage.py's report: TensorFlow 2.21's public names that tapeflow has. The
floors keep what exists from disappearing (raise them as names are added)."""

import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "perf" / "api_coverage.py"

# module -> the fewest of its names tapeflow must have
FLOORS = {"": 224, "math": 131, "nn": 79, "debugging": 24, "autodiff": 2, "random": 29,
          "signal": 34, "linalg": 66, "data": 5}


def _coverage():
    spec = importlib.util.spec_from_file_location("api_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.coverage()


def test_coverage_never_falls():
    report = _coverage()
    for module, floor in FLOORS.items():
        present, missing = report[module]
        assert len(present) >= floor, (module, len(present), missing)


def test_infrastructure_is_left_out():
    present, missing = _coverage()[""]
    assert not {"compat", "lite", "raw_ops", "qint8"} & set(present + missing)
