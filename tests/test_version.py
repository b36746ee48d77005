"""The version tapeflow reports is the one it is installed as."""

from pathlib import Path

import pytest

import tapeflow as tf
from tapeflow.version import __version__

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_the_package_reports_pyprojects_version():
    with open(PYPROJECT, "rb") as f:
        declared = tomllib.load(f)["project"]["version"]
    assert tf.__version__ == __version__ == declared
