"""tapeflow's version, at the bottom layer: the package reports it as `tf.__version__` and
the compiled backends key their caches with it. pyproject.toml's version is the same
(tests/test_version.py)."""

__version__ = "0.1.0"
