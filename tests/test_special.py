"""tf.math's special functions at their special values (NaN, Inf, poles, 0, the domain
edges) against TensorFlow 2.21's numbers, eager and compiled, and the compiled helpers'
accuracy against SciPy on wide grids. One compile for the whole module."""

import numpy as np
import pytest
from scipy import special as sp

import tapeflow as tf
from tapeflow.graph.ir import Graph
from tapeflow.graph.trace import tracing
from tapeflow.ops import special
from tapeflow.ops.registry import bind

inf, nan = np.inf, np.nan

UNARY_POINTS = [0.0, -0.0, -1.0, -2.5, 0.5, 1.0, 2.0, inf, -inf, nan, 1e-30]
# TensorFlow 2.21, float64, at UNARY_POINTS.
UNARY = {
    "lgamma": [inf, inf, inf, -0.05624371649767407, 0.5723649429247001, 0.0, 0.0, inf, inf,
               nan, 69.07755278982137],
    "digamma": [nan, nan, nan, 1.1031566406452433, -1.9635100260214227, -0.5772156649015323,
                0.42278433509846747, inf, nan, nan, -9.999999999999999e+29],
    # TensorFlow's erfinv(1e-30) is 0 (it forms (1 + x) / 2); SciPy's value instead.
    "erfinv": [0.0, 0.0, -inf, nan, 0.4769362762044699, inf, nan, nan, nan, nan,
               8.862269254527581e-31],
    "ndtri": [-inf, -inf, nan, nan, 0.0, inf, nan, nan, nan, nan, -11.464024688443613],
    "erfcinv": [inf, inf, nan, nan, 0.4769362762044699, -0.0, -inf, nan, nan, nan,
                8.148616223169864],
    "bessel_i0": [1.0, 1.0, 1.2660658777520082, 3.289839144050123, 1.0634833707413238,
                  1.2660658777520082, 2.279585302336067, nan, nan, nan, 1.0],
    "bessel_i0e": [1.0, 1.0, 0.46575960759364043, 0.27004644161220276, 0.6450352704491502,
                   0.46575960759364043, 0.308508322553671, 0.0, 0.0, nan, 1.0],
    "bessel_i1": [0.0, 0.0, -0.565159103992485, -2.5167162452886984, 0.2578943053908962,
                  0.565159103992485, 1.5906368546373295, nan, nan, nan, 5e-31],
    "bessel_i1e": [0.0, 0.0, -0.20791041534970844, -0.20658464953126654,
                   0.15642080318487162, 0.20791041534970844, 0.2152692892489377, 0.0, -0.0,
                   nan, 5e-31],
}

IGAMMA_A = [0.0, 1.0, 0.0, -1.0, 2.0, inf, 1.0, 2.0, nan, 1.0, 0.0, inf, 3.0, 0.5]
IGAMMA_X = [1.0, 0.0, 0.0, 1.0, -1.0, 1.0, inf, nan, 1.0, inf, inf, inf, 1e-30, 1e3]
ZETA_X = [0.5, 1.0, 2.0, 3.0, 2.5, inf, nan, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0]
ZETA_Q = [1.0, 1.0, -1.0, -1.0, -1.5, 1.0, 1.0, -2.0, -2.5, 0.0, inf, nan, -1.0]
POLYGAMMA_N = [0.0, 1.0, 1.5, -1.0, 2.0, 3.0, 1.0, 0.0, 2.0, nan, 1.0, 0.0, 1.0]
POLYGAMMA_X = [1.0, 0.0, 1.0, 1.0, -1.0, -1.5, inf, -2.5, 1e-3, 1.0, -inf, inf, nan]
BETAINC_A = [0.0, 1.0, -1.0, 2.0, inf, 1.0, 2.0, nan, 1.0, 0.5, 1.0, 2.0, 1.0, 1e-3, 50.0]
BETAINC_B = [1.0, 0.0, 1.0, 2.0, 1.0, inf, 2.0, 1.0, nan, 0.5, 1.0, 2.0, 1.0, 1e-3, 50.0]
BETAINC_X = [0.5, 0.5, 0.5, 0.0, 0.5, 0.5, 1.0, 0.5, 0.5, nan, 1.5, -0.5, 0.0, 0.3, 0.5]
# TensorFlow 2.21, float64, at the tuples above.
MULTIPLE = {
    "igamma": ((IGAMMA_A, IGAMMA_X), [nan, 0.0, 0.0, nan, nan, 0.0, 1.0, nan, nan, 1.0, nan, 0.0,
                                    1.6666666666666753e-91, 1.0]),
    "igammac": ((IGAMMA_A, IGAMMA_X), [nan, 1.0, nan, nan, nan, 1.0, 0.0, nan, nan, 0.0, nan,
                                     0.0, 1.0, 0.0]),
    "igamma_grad_a": ((IGAMMA_A, IGAMMA_X), [nan, 0.0, 0.0, nan, nan, 0.0, -0.0, nan, nan, -0.0,
                                           nan, 0.0, -1.1722278409708922e-89, -0.0]),
    "zeta": ((ZETA_X, ZETA_Q), [nan, inf, inf, nan, nan, 1.0, nan, inf, 0.0541020258208641, inf,
                              0.0, nan, inf]),
    "polygamma": ((POLYGAMMA_N, POLYGAMMA_X), [-0.5772156649015323, inf, nan, nan, nan,
                                             194.59427621918758, 0.0, 1.1031566406452433,
                                             -2000000002.3976321, nan, inf, inf, nan]),
    "betainc": ((BETAINC_A, BETAINC_B, BETAINC_X), [nan, nan, nan, 0.0, nan, nan, 1.0, nan,
                                                    nan, nan, nan, nan, 0.0,
                                                    0.49957696213967645, 0.5000000000000567]),
}

_RNG = np.random.default_rng(7)
# Wide grids for the compiled helpers' accuracy, with SciPy's float64 values.
ACCURACY = {
    "lgamma": ([_RNG.uniform(-20, 60, 400)], sp.gammaln),
    "digamma": ([np.concatenate([_RNG.uniform(-20, 60, 400), 1.4616321 + _RNG.uniform(
        -1e-3, 1e-3, 50)])], sp.psi),
    "erfinv": ([np.concatenate([_RNG.uniform(-1, 1, 400), np.exp(_RNG.uniform(-60, 0, 50)),
                                1 - np.exp(_RNG.uniform(-36, -1, 50))])], sp.erfinv),
    "ndtri": ([np.concatenate([_RNG.uniform(0, 1, 400), np.exp(_RNG.uniform(-690, 0, 100)),
                               1 - np.exp(_RNG.uniform(-36, -1, 50))])], sp.ndtri),
    "bessel_i0e": ([_RNG.uniform(-80, 80, 400)], sp.i0e),
    "bessel_i1e": ([_RNG.uniform(-80, 80, 400)], sp.i1e),
    "zeta": ([_RNG.uniform(1.05, 30, 400), np.exp(_RNG.uniform(-4, 5, 400))], sp.zeta),
    "polygamma": ([np.floor(_RNG.uniform(1, 8, 400)), _RNG.uniform(0.05, 30, 400)],
                  lambda n, x: sp.polygamma(n.astype(int), x)),
    "igamma": ([np.exp(_RNG.uniform(-3, 4, 400)), np.exp(_RNG.uniform(-4, 4.5, 400))],
               sp.gammainc),
    "igammac": ([np.exp(_RNG.uniform(-3, 4, 400)), np.exp(_RNG.uniform(-4, 4.5, 400))],
                sp.gammaincc),
    "betainc": ([np.exp(_RNG.uniform(-3, 4, 400)), np.exp(_RNG.uniform(-3, 4, 400)),
                 _RNG.uniform(0, 1, 400)], sp.betainc),
}


def _function(name):
    if name == "igamma_grad_a":
        return lambda a, x: bind(special.IGAMMA_GRAD_A, (a, x))
    return getattr(tf.math, name)


def _calls():
    """(label, function, float inputs) of everything the compiled graph computes."""
    calls = []
    for dtype in (np.float64, np.float32):
        with np.errstate(over="ignore"):
            calls += [(f"{n} {dtype.__name__}", _function(n),
                       [np.asarray(UNARY_POINTS, dtype)]) for n in UNARY]
            calls += [(f"{n} {dtype.__name__}", _function(n),
                       [np.asarray(v, dtype) for v in inputs])
                      for n, (inputs, _) in MULTIPLE.items()]
    calls += [(f"{n} accuracy", _function(n), inputs) for n, (inputs, _) in ACCURACY.items()]
    return calls


@pytest.fixture(scope="module")
def compiled_results():
    """Every call's compiled result, from one graph (one Numba compile)."""
    from tapeflow.backends.numba_cpu import compile_graph
    graph = Graph("special_values")
    calls = _calls()
    feeds = []
    with tracing(graph):
        for _, fn, inputs in calls:
            placeholders = [graph.placeholder(a.shape, tf.as_dtype(a.dtype)) for a in inputs]
            feeds += inputs
            graph.outputs.append(fn(*placeholders))
    got, _ = compile_graph(graph)(feeds, [])
    return {label: np.asarray(value) for (label, _, _), value in zip(calls, got)}


def _tensorflow_value(name):
    return UNARY[name] if name in UNARY else MULTIPLE[name][1]


def _assert_matches(got, want, rtol):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=0,
                               equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(MULTIPLE))
def test_special_values_match_tensorflow(name, compiled_results):
    want = np.asarray(_tensorflow_value(name))
    inputs = [UNARY_POINTS] if name in UNARY else MULTIPLE[name][0]
    eager = _function(name)(*[tf.constant(np.asarray(a)) for a in inputs]).numpy()
    # (TensorFlow's betainc(50, 50, 0.5) is 0.5 + 5.7e-14; SciPy's and tapeflow's 0.5.)
    _assert_matches(eager, want, 2e-13)
    _assert_matches(compiled_results[f"{name} float64"], want, 2e-13)
    # float32: the same NaN, Inf and zeros, the rest to float32's precision, where the
    # value is inside float32's range.
    got32 = compiled_results[f"{name} float32"].astype(np.float64)
    fits = (np.abs(want) < 3e38) & ((np.abs(want) > 1e-37) | (want == 0))
    _assert_matches(got32[fits | np.isnan(want)], want[fits | np.isnan(want)], 1e-6)


@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_compiled_accuracy_against_scipy(name, compiled_results):
    inputs, reference = ACCURACY[name]
    want = reference(*inputs)
    # Relative to the value, with an absolute floor of 1e-13 times the grid's typical
    # magnitude where a function crosses zero (lgamma at 1 and 2).
    scale = np.median(np.abs(want[np.isfinite(want)]))
    np.testing.assert_allclose(compiled_results[f"{name} accuracy"], want, rtol=1e-12,
                               atol=1e-13 * scale, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name, want", [
    ("bessel_i0", [0.0, 0.565159103992485]),
    ("bessel_i0e", [0.0, -0.257849192243932]),
    ("bessel_i1", [1.0, 0.7009067737595231]),
    ("bessel_i1e", [0.5, 0.04993877689422355]),
])
def test_bessel_gradients_at_zero_are_tensorflows(name, want):
    x = tf.constant([0.0, 1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = getattr(tf.math.special, name)(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-14)


def test_igamma_gradients_and_the_missing_second_derivative_in_a():
    """TensorFlow's numbers; differentiating IgammaGradA raises its LookupError."""
    a = tf.constant([0.5, 2.0], tf.float64)
    x = tf.constant([0.7, 1.5], tf.float64)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch([a, x])
        with tf.GradientTape() as inner:
            inner.watch([a, x])
            y = tf.math.igamma(a, x)
        ga, gx = inner.gradient(y, [a, x])
    np.testing.assert_allclose(ga.numpy(), [-0.53133883, -0.31348864], rtol=1e-7)
    np.testing.assert_allclose(gx.numpy(), [0.33486511, 0.33469524], rtol=1e-7)
    np.testing.assert_allclose(outer.gradient(gx, x).numpy(), [-0.57405448, -0.11156508],
                               rtol=1e-7)
    with pytest.raises(LookupError, match="no entry for: IgammaGradA"):
        outer.gradient(ga, a)


def test_zeta_and_polygamma_have_no_gradient_in_their_first_input():
    s = tf.constant([2.5, 4.0], tf.float64)
    q = tf.constant([0.7, 1.5], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([s, q])
        z = tf.math.zeta(s, q)
        p = tf.math.polygamma(tf.constant([1.0, 2.0], tf.float64), q)
    assert tape.gradient(z, s) is None
    np.testing.assert_allclose(tape.gradient(z, q).numpy(), [-9.23192016, -0.57904164],
                               rtol=1e-7)  # TensorFlow's -x * zeta(x + 1, q)
    np.testing.assert_allclose(tape.gradient(p, q).numpy(),
                               sp.polygamma([2, 3], [0.7, 1.5]), rtol=1e-12)


def test_lbeta_reduces_the_last_axis():
    np.testing.assert_array_equal(tf.math.lbeta(tf.zeros([2, 0], tf.float64)).numpy(),
                                  [-inf, -inf])
    x = np.array([[1.0, 2.0, 0.5], [3.0, 0.25, 4.0]])
    want = sp.gammaln(x).sum(-1) - sp.gammaln(x.sum(-1))
    np.testing.assert_allclose(tf.math.lbeta(x).numpy(), want, rtol=1e-13)


def test_math_special_namespace():
    assert {"bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"} <= set(vars(tf.math.special))
    assert tf.math.special.bessel_i1e is tf.math.bessel_i1e


def test_betainc_gradient_is_tensorflows_in_x_only():
    a = tf.constant([0.5, 2.0, 3.0], tf.float64)
    b = tf.constant([1.5, 0.7, 3.0], tf.float64)
    x = tf.constant([0.2, 0.6, 0.9], tf.float64)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b, x])
        y = tf.math.betainc(a, b, x)
    np.testing.assert_allclose(y.numpy(), [0.549815144247899, 0.2522949079381531, 0.99144],
                               rtol=1e-13)
    assert tape.gradient(y, a) is None and tape.gradient(y, b) is None
    np.testing.assert_allclose(tape.gradient(y, x).numpy(),
                               [1.2732395447351625, 0.9398968938946455, 0.243], rtol=1e-13)
