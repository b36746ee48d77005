"""One check the API tests share: a function compiled by tf.function (synchronously, never
falling back to the NumPy kernels) gives eager execution's values."""

import warnings

import numpy as np

import tapeflow as tf
from tapeflow.config import settings


def assert_compiled_matches_eager(monkeypatch, fn, *args, rtol=0.0):
    monkeypatch.setattr(settings, "compile_mode", "sync")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    eager = tf.nest.flatten(fn(*args))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        compiled = tf.nest.flatten(tf.function(fn)(*args))
    assert len(compiled) == len(eager)
    for e, c in zip(eager, compiled):
        assert c.dtype == e.dtype and c.shape == e.shape
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=rtol)
