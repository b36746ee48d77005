"""What a GradientTape keeps alive, and when it lets go.

TensorFlow frees a non-persistent tape's recorded values as soon as `gradient` runs and a
persistent tape's when it is garbage collected; a tape keeps only what the gradient
functions need. tapeflow's tape holds exactly the values each op's rule declares in
`saves` (Sin saves x, Exp saves its output), so everything else is freed as soon as the
user drops it.
"""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops.registry import lookup

N = 200_000  # 800 kB per float32 array: big enough to see, small enough to be quick


@pytest.fixture(autouse=True, scope="module")
def _collect_only_new_objects():
    """The checks below collect garbage often; by this point of a test session the heap
    holds Numba's and every earlier test's objects, and a full collection of them takes
    most of a second. Freezing them leaves the collections what the tests made."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def _big(seed=0):
    return tf.constant(np.random.default_rng(seed).uniform(0.1, 0.9, N).astype(np.float32))


def _refs(t):
    """Weak references to a Tensor and to the array that owns its memory."""
    arr = np.asarray(t)
    owner = arr if arr.base is None else arr.base
    return weakref.ref(t), weakref.ref(owner)


def _alive(refs):
    gc.collect()
    alive = [r() is not None for r in refs]
    assert len(set(alive)) == 1, "a Tensor and its array disagree"
    return alive[0]


def test_unsaved_intermediate_is_freed_while_tape_records():
    x = _big()
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        u = x * 2.0          # Mul saves x and 2.0, not its output u
        v = tf.exp(u)        # Exp saves its output v, not its input u
        w = tf.math.sin(v)        # Sin saves its input v
        ru, rv = _refs(u), _refs(v)
        del u, v
        assert not _alive(ru)
        assert _alive(rv)
    g = t.gradient(w, x)
    # dw/dx = cos(exp(2x)) exp(2x) 2, computed after u was freed
    xs = x.numpy().astype(np.float64)
    want = np.cos(np.exp(2 * xs)) * np.exp(2 * xs) * 2
    np.testing.assert_allclose(g.numpy(), want, rtol=2e-5, atol=1e-5)
    del t


def test_non_persistent_tape_releases_saved_values_after_gradient():
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        v = tf.exp(x * 2.0)
        w = tf.math.sin(v)
    rv = _refs(v)
    del v
    assert _alive(rv)          # saved by Exp (out) and Sin (x) until gradient
    g = t.gradient(w, x)
    assert g.shape == (N,)
    assert not _alive(rv)      # released by gradient(), though the tape object lives on
    assert t is not None


def test_non_persistent_tape_releases_after_gradient_called_inside_context():
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        v = tf.exp(x)
        w = tf.math.sin(v)
        rv = _refs(v)
        del v
        t.gradient(w, x)
        assert not _alive(rv)


def test_persistent_tape_keeps_saved_values_until_deleted():
    x = _big()
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        v = tf.exp(x * 2.0)
        w = tf.math.sin(v)
    rv = _refs(v)
    rt = weakref.ref(t)
    del v
    t.gradient(w, x)
    assert _alive(rv)          # a persistent tape may be asked again
    t.gradient(w, x)
    assert _alive(rv)
    del t
    assert not _alive([rt])
    assert not _alive(rv)


def test_exited_unused_tape_releases_when_deleted():
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        v = tf.exp(x)
        w = tf.math.sin(v)
    rv = _refs(v)
    del v
    assert _alive(rv)
    del t
    assert not _alive(rv)
    del w


def test_tape_whose_body_raised_is_not_kept_by_the_tape_stack():
    x = _big()
    with pytest.raises(RuntimeError), tf.GradientTape() as t:
        t.watch(x)
        v = tf.exp(x)
        w = tf.math.sin(v)
        raise RuntimeError("stop")
    rt = weakref.ref(t)
    rv = _refs(v)
    del t, v, w
    assert not _alive([rt])
    assert not _alive(rv)


def test_reset_releases_what_was_recorded():
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        v = tf.exp(x)
        w = tf.math.sin(v)
        rv = _refs(v)
        del v, w
        assert _alive(rv)
        t.reset()
        assert not _alive(rv)


def test_sin_then_exp_keeps_only_declared_saves():
    # y = exp(sin(x)): Sin saves x, Exp saves out, so sin's output is not kept.
    assert lookup("Sin").saves == ("x",)
    assert lookup("Exp").saves == ("out",)
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        s = tf.math.sin(x)
        y = tf.exp(s)
    rs = _refs(s)
    ry = _refs(y)
    del s
    assert not _alive(rs)
    g = t.gradient(y, x)
    xs = x.numpy().astype(np.float64)
    np.testing.assert_allclose(g.numpy(), np.cos(xs) * np.exp(np.sin(xs)), rtol=1e-5)
    del y
    assert not _alive(ry)


_CHAIN = ["Sin", "Cos", "Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Square"]
_PUBLIC = {"Sin": tf.math.sin, "Cos": tf.math.cos, "Exp": tf.exp, "Log": lambda x: tf.math.log(x),
           "Sqrt": tf.sqrt, "Tanh": tf.tanh, "Sigmoid": tf.sigmoid,
           "Square": tf.square}


@pytest.mark.parametrize("first", _CHAIN)
@pytest.mark.parametrize("second", _CHAIN)
def test_intermediate_kept_iff_a_rule_saves_it(first, second):
    # z = second(first(x)): first's output is kept by the tape exactly when first saves
    # its "out" or second saves its input "x".
    kept = "out" in lookup(first).saves or "x" in lookup(second).saves
    x = tf.constant(np.linspace(0.2, 0.8, 1000))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = _PUBLIC[first](x)
        z = _PUBLIC[second](y)
    ry = _refs(y)
    del y
    assert _alive(ry) == kept
    assert t.gradient(z, x).shape == (1000,)
    del t
    assert not _alive(ry)


def test_variable_value_before_assign_released_after_gradient():
    v = tf.Variable(np.ones(N, np.float32))
    with tf.GradientTape() as t:
        y = v * v                    # Mul saves both reads (the old value)
    old = _refs(v.read_value())[1:]  # the array; the read Tensor here is a new object
    v.assign(np.zeros(N, np.float32))
    assert _alive(old)
    g = t.gradient(y, v)
    np.testing.assert_array_equal(g.numpy()[:3], [2.0, 2.0, 2.0])   # old value used
    assert not _alive(old)


def test_ops_not_recorded_keep_nothing():
    x = _big()
    with tf.GradientTape() as t:
        t.watch(x)
        c = _big(1)
        d = tf.exp(c)                # c is not watched: not recorded, nothing saved
        with t.stop_recording():
            e = tf.exp(x)            # not recorded either
        y = x * 3.0
    rd, re = _refs(d), _refs(e)
    del c, d, e
    assert not _alive(rd)
    assert not _alive(re)
    assert t.gradient(y, x).shape == (N,)


def _traced_kib():
    gc.collect()
    return tracemalloc.get_traced_memory()[0] / 1024


def test_tracemalloc_memory_returns_after_persistent_tape_deleted():
    size_kib = N * 4 / 1024
    tracemalloc.start()
    try:
        x = _big()
        base = _traced_kib()
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x
            for _ in range(10):
                y = tf.exp(tf.math.sin(y))   # Sin saves its input, Exp its output
        target = y
        del y
        held = _traced_kib() - base
        # each exp output is saved (by Exp and by the next Sin); sin outputs are not
        assert held >= 9 * size_kib
        assert held < 13 * size_kib
        g = t.gradient(target, x)
        del t, target
        after = _traced_kib() - base
        assert after < 2.5 * size_kib      # g itself (plus slack)
        del g
        assert _traced_kib() - base < 0.5 * size_kib
    finally:
        tracemalloc.stop()


def test_tracemalloc_training_loop_does_not_grow():
    tracemalloc.start()
    try:
        w = tf.Variable(np.full(N, 0.5, np.float32))
        x = _big()

        def step():
            with tf.GradientTape() as t:
                y = tf.tanh(w * x) * w
            g = t.gradient(y, w)
            w.assign_sub(g * 0.01)

        step()
        base = _traced_kib()
        for _ in range(20):
            step()
        grown = _traced_kib() - base
        assert grown < 0.5 * N * 4 / 1024
    finally:
        tracemalloc.stop()
