"""tf.einsum's gradient in a graph whose dimensions are unknown while tracing (a
signature's concrete function): labels summed away, repeated on a diagonal, or contracted
have the values and gradients eager execution gives, interpreted and compiled."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings

CASES = [
    ("ij->j", [(4, 3)], [[None, None]]),
    ("ij,jk->k", [(4, 3), (3, 2)], [[None, None], [None, 2]]),
    ("ij,jk->ik", [(4, 3), (3, 2)], [[None, 3], [3, None]]),
    ("...ij,...jk->...ik", [(2, 4, 3), (1, 3, 5)], [[2, None, 3], [1, 3, None]]),
    ("ii->i", [(3, 3)], [[None, None]]),
    ("ii->", [(3, 3)], [[None, None]]),
    ("iij->j", [(3, 3, 2)], [[None, None, 2]]),
    ("iji->ij", [(3, 2, 3)], [[None, None, None]]),
]


def _value_and_gradients(equation):
    def fn(*xs):
        with tf.GradientTape() as tape:
            tape.watch(list(xs))
            y = tf.einsum(equation, *xs)
        return [y] + tape.gradient(y, list(xs), output_gradients=tf.ones_like(y) * 1.5)
    return fn


def _check(equation, shapes, specs):
    rng = np.random.default_rng(0)
    xs = [tf.constant(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    fn = _value_and_gradients(equation)
    concrete = tf.function(fn, input_signature=[tf.TensorSpec(s) for s in specs]) \
        .get_concrete_function()
    assert [list(x.shape) for x in concrete.graph.inputs] == specs
    for got, want in zip(concrete(*xs), fn(*xs), strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    return concrete


@pytest.mark.parametrize("equation, shapes, specs", CASES, ids=[c[0] for c in CASES])
def test_einsum_gradients_with_unknown_dims_match_eager(equation, shapes, specs,
                                                        monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "off")
    _check(equation, shapes, specs)


def test_compiled_einsum_gradient_with_unknown_dims_matches_eager(monkeypatch):
    # A label summed away and one repeated, both of unknown size.
    monkeypatch.setattr(settings, "compile_mode", "sync")
    concrete = _check("iij->j", [(3, 3, 2)], [[None, None, 2]])
    assert concrete._compilation.kernel is not None
