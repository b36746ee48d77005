"""GradientTape semantics, checked against what TensorFlow 2 does (API.md, Differentiation).

Every test is written as TensorFlow user code (`import tapeflow as tf`); the expected
values and exception classes are TensorFlow 2's. Most tests take `mode` and run twice:
eagerly, and with the computation, the tapes and the gradients traced into one
tf.function (TensorFlow's behaviour is the same in both). Their body is a function of the
tensors it differentiates, so that inside tf.function they are the traced inputs, not
constants folded at trace time; numbers are checked on what the function returns,
trace-time facts (errors, which variables a tape watched) inside the body, where they run
while tracing. Tests that are inherently eager (threads, a tape used across calls) run
eagerly only.
"""

import math
import threading

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "off")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)


@pytest.fixture(params=["eager", "function"])
def mode(request):
    return request.param


def run(mode, fn, *args):
    """fn(*args) eagerly, or as a tf.function (traced once)."""
    if mode == "eager":
        return fn(*args)
    f = tf.function(fn)
    out = f(*args)
    assert f.experimental_get_tracing_count() == 1
    return out


def val(t):
    """The NumPy value of a Tensor (asserting it is one)."""
    assert isinstance(t, tf.Tensor), f"expected a Tensor, got {type(t).__name__}"
    return t.numpy()


# -- context manager, persistence ------------------------------------------------------


def test_basic_gradient_matches_tf_doc_example(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x)

    dy_dx = run(mode, fn, tf.constant(3.0))
    assert dy_dx.dtype == tf.float32 and dy_dx.shape == ()
    assert val(dy_dx) == 6.0
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


def test_with_returns_the_tape_itself():
    tape = tf.GradientTape()
    with tape as t:
        assert t is tape


def test_explicit_enter_exit(mode):
    def fn(x):
        tape = tf.GradientTape()
        assert tape.__enter__() is tape
        tape.watch(x)
        y = x * x * x
        tape.__exit__(None, None, None)
        z = y * x  # after exit: not recorded
        return tape.gradient(y, x), z

    dy, z = run(mode, fn, tf.constant(2.0))
    assert val(dy) == 12.0 and val(z) == 16.0


def test_exit_does_not_swallow_exceptions(mode):
    def fn(x):
        with pytest.raises(KeyError), tf.GradientTape() as t:
            t.watch(x)
            raise KeyError("boom")
        y = x * 2.0  # the tape was exited by the exception: not recorded
        return t.gradient(y, x)

    assert run(mode, fn, tf.constant(1.0)) is None


def test_non_persistent_second_gradient_raises(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        dy = g.gradient(y, x)
        with pytest.raises(RuntimeError):
            g.gradient(y, x)
        return dy

    assert val(run(mode, fn, tf.constant(3.0))) == 6.0


def test_non_persistent_gradient_then_jacobian_raises(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        g.gradient(y, x)
        with pytest.raises(RuntimeError):
            g.jacobian(y, x)
        return y

    run(mode, fn, tf.constant([1.0, 2.0]))


def test_non_persistent_jacobian_then_gradient_raises(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        jac = g.jacobian(y, x)
        with pytest.raises(RuntimeError):
            g.gradient(y, x)
        with pytest.raises(RuntimeError):
            g.jacobian(y, x)
        return jac

    np.testing.assert_allclose(val(run(mode, fn, tf.constant([1.0, 2.0]))),
                               [[2.0, 0.0], [0.0, 4.0]])


def test_persistent_tape_many_gradients(mode):
    # TensorFlow's GradientTape docstring example.
    def fn(x):
        with tf.GradientTape(persistent=True) as g:
            g.watch(x)
            y = x * x
            z = y * y
        return g.gradient(z, x), g.gradient(y, x), g.gradient(z, y), g.gradient(z, x)

    assert [val(t) for t in run(mode, fn, tf.constant(3.0))] == [108.0, 6.0, 18.0, 108.0]


def test_persistent_tape_gradient_and_jacobian(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x), g.jacobian(y, x), g.gradient(y, x)

    g1, jac, g2 = run(mode, fn, tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(val(g1), [2.0, 4.0])
    np.testing.assert_allclose(val(jac), [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_allclose(val(g2), [2.0, 4.0])


def test_gradient_on_used_non_persistent_tape_after_reentry_works_as_new_tape(mode):
    def fn(x):
        tape = tf.GradientTape()
        with tape:
            tape.watch(x)
            y = x * x
        first = tape.gradient(y, x)
        with tape:
            tape.watch(x)
            z = x * x * x
        return first, tape.gradient(z, x)

    first, second = run(mode, fn, tf.constant(2.0))
    assert (val(first), val(second)) == (4.0, 12.0)


def test_reentering_a_recording_tape_raises_value_error(mode):
    def fn(x):
        tape = tf.GradientTape()
        with tape, pytest.raises(ValueError):
            tape.__enter__()
        return x

    run(mode, fn, tf.constant(1.0))


# -- watch -----------------------------------------------------------------------------


def test_unwatched_constant_gives_none(mode):
    def fn(x):
        with tf.GradientTape() as g:
            y = x * x
        return g.gradient(y, x)

    assert run(mode, fn, tf.constant(3.0)) is None


def test_watch_nested_structure(mode):
    def fn(a, b, c):
        with tf.GradientTape() as g:
            g.watch([a, (b, {"c": c})])
            y = a * b * c
        return g.gradient(y, [a, b, c])

    ga, gb, gc = run(mode, fn, tf.constant(1.0), tf.constant(2.0), tf.constant(3.0))
    assert (val(ga), val(gb), val(gc)) == (6.0, 3.0, 2.0)


def test_watch_variable_explicitly(mode):
    v = tf.Variable(3.0)

    def fn():
        with tf.GradientTape(watch_accessed_variables=False) as g:
            g.watch(v)
            y = v * v
        return g.gradient(y, v)

    assert val(run(mode, fn)) == 6.0


@pytest.mark.parametrize("bad", [3.0, 2, None, "x", np.float32(1.0)])
def test_watch_non_tensor_raises_value_error(mode, bad):
    def fn(x):
        with tf.GradientTape() as g, pytest.raises(ValueError):
            g.watch(bad)
        return x

    run(mode, fn, tf.constant(1.0))


def test_watch_list_with_non_tensor_raises_value_error(mode):
    def fn(x):
        with tf.GradientTape() as g, pytest.raises(ValueError):
            g.watch([x, 1.0])
        return x

    run(mode, fn, tf.constant(1.0))


def test_watch_accessed_variables_false_watches_only_watched(mode):
    # TensorFlow's GradientTape docstring example.
    x = tf.Variable(2.0)
    w = tf.Variable(5.0)

    def fn():
        with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
            z = w ** 3
        ws = tape.watched_variables()
        assert len(ws) == 1 and ws[0] is x
        return tape.gradient(y, x), tape.gradient(z, w)

    gx, gw = run(mode, fn)
    assert val(gx) == 4.0
    assert gw is None


def test_trainable_variable_auto_watched(mode):
    v = tf.Variable(3.0)

    def fn():
        with tf.GradientTape() as g:
            y = v * v
        return g.gradient(y, v)

    assert val(run(mode, fn)) == 6.0


def test_non_trainable_variable_never_auto_watched(mode):
    v = tf.Variable(3.0, trainable=False)
    w = tf.Variable(2.0)

    def fn():
        with tf.GradientTape(persistent=True) as g:
            y = v * w
        assert list(g.watched_variables()) == [w]
        return g.gradient(y, v), g.gradient(y, w)

    gv, gw = run(mode, fn)
    assert gv is None
    assert val(gw) == 3.0


def test_non_trainable_variable_can_be_watched_explicitly(mode):
    v = tf.Variable(3.0, trainable=False)

    def fn():
        with tf.GradientTape() as g:
            g.watch(v)
            y = v * v
        return g.gradient(y, v)

    assert val(run(mode, fn)) == 6.0


def test_watched_variables_in_construction_order(mode):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = tf.Variable(3.0, name="c")

    def fn():
        with tf.GradientTape() as g:
            y = c * b
            y = y * a
        assert [v.name for v in g.watched_variables()] == ["a:0", "b:0", "c:0"]
        assert all(isinstance(v, tf.Variable) for v in g.watched_variables())
        return g.gradient(y, [a, b, c])

    assert [val(t) for t in run(mode, fn)] == [6.0, 3.0, 2.0]


def test_watched_variables_no_duplicates_and_not_unaccessed(mode):
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    unused = tf.Variable(3.0)

    def fn():
        with tf.GradientTape() as g:
            y = a * a + a * b
        ws = g.watched_variables()
        assert len(ws) == 2
        assert ws[0] is a and ws[1] is b
        assert all(v is not unused for v in ws)
        return y

    assert val(run(mode, fn)) == 3.0


def test_watched_variables_kept_after_non_persistent_gradient(mode):
    a = tf.Variable(1.0)

    def fn():
        with tf.GradientTape() as g:
            y = a * 2.0
        grad = g.gradient(y, a)
        assert len(g.watched_variables()) == 1 and g.watched_variables()[0] is a
        return grad

    assert val(run(mode, fn)) == 2.0


def test_variable_read_outside_tape_not_watched(mode):
    v = tf.Variable(3.0)

    def fn():
        y = v * v
        with tf.GradientTape() as g:
            z = y * 2.0
        assert len(g.watched_variables()) == 0
        return g.gradient(z, v)

    assert run(mode, fn) is None


# -- sources and targets ---------------------------------------------------------------


def test_sources_list_tuple_dict_keep_structure(mode):
    def fn(a, b):
        with tf.GradientTape(persistent=True) as g:
            g.watch([a, b])
            y = a * a * b
        return (g.gradient(y, [a, b]), g.gradient(y, (a, b)), g.gradient(y, {"b": b, "a": a}),
                g.gradient(y, {"x": [a, (b,)], "y": b}))

    as_list, as_tuple, as_dict, nested = run(mode, fn, tf.constant(1.0), tf.constant(2.0))
    assert isinstance(as_list, list) and len(as_list) == 2
    assert (val(as_list[0]), val(as_list[1])) == (4.0, 1.0)
    assert isinstance(as_tuple, tuple) and len(as_tuple) == 2
    assert (val(as_tuple[0]), val(as_tuple[1])) == (4.0, 1.0)
    assert isinstance(as_dict, dict) and set(as_dict) == {"a", "b"}
    assert (val(as_dict["a"]), val(as_dict["b"])) == (4.0, 1.0)
    assert isinstance(nested["x"], list) and isinstance(nested["x"][1], tuple)
    assert val(nested["x"][0]) == 4.0
    assert val(nested["x"][1][0]) == 1.0
    assert val(nested["y"]) == 1.0


def test_single_source_gives_single_tensor(mode):
    def fn(a):
        with tf.GradientTape() as g:
            g.watch(a)
            y = a * 3.0
        return g.gradient(y, a)

    assert val(run(mode, fn, tf.constant(1.0))) == 3.0


def test_same_source_twice_in_list(mode):
    def fn(a):
        with tf.GradientTape() as g:
            g.watch(a)
            y = a * a
        return g.gradient(y, [a, a])

    ga1, ga2 = run(mode, fn, tf.constant(2.0))
    assert val(ga1) == 4.0 and val(ga2) == 4.0


def test_variables_as_sources_in_structures(mode):
    w = tf.Variable([1.0, 2.0])
    b = tf.Variable(0.5)

    def fn():
        with tf.GradientTape() as g:
            y = w * w + b
        return g.gradient(y, {"w": w, "b": b})

    grads = run(mode, fn)
    np.testing.assert_allclose(val(grads["w"]), [2.0, 4.0])
    assert grads["b"].shape == ()
    assert val(grads["b"]) == 2.0


def test_multiple_targets_are_summed(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as g:
            g.watch(x)
            y1 = x * x
            y2 = x * 5.0
        return (g.gradient([y1, y2], x), g.gradient((y1, y2), x),
                g.gradient({"p": y1, "q": [y2, y2]}, x))

    assert [val(t) for t in run(mode, fn, tf.constant(3.0))] == [11.0, 11.0, 16.0]


def test_target_can_be_a_variable(mode):
    v = tf.Variable(3.0)

    def fn():
        with tf.GradientTape() as g:
            g.watch(v)
        return g.gradient(v, v)

    assert val(run(mode, fn)) == 1.0


def test_output_gradients_weight_the_target(mode):
    def fn(x, w):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x, output_gradients=w)

    grad = run(mode, fn, tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(val(grad), [2.0, 40.0, 600.0])


def test_output_gradients_for_several_targets(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y1 = x * x
            y2 = x * x * x
        return g.gradient([y1, y2], x, output_gradients=[tf.constant(3.0), tf.constant(0.5)])

    assert val(run(mode, fn, tf.constant(2.0))) == pytest.approx(3.0 * 4.0 + 0.5 * 12.0)


def test_output_gradients_accepts_numpy_and_none_entries(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as g:
            g.watch(x)
            y1 = x * 3.0
            y2 = x * x
        return (g.gradient(y1, x, output_gradients=np.array([2.0, 4.0], np.float32)),
                g.gradient([y1, y2], x, output_gradients=[None, tf.constant([1.0, -1.0])]))

    g1, g2 = run(mode, fn, tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(val(g1), [6.0, 12.0])
    np.testing.assert_allclose(val(g2), [3.0 + 2.0, 3.0 - 4.0])


# -- unconnected gradients -------------------------------------------------------------


def test_unconnected_source_gives_none(mode):
    def fn(x, z):
        with tf.GradientTape() as g:
            g.watch([x, z])
            y = x * 2.0
        return g.gradient(y, [x, z])

    gx, gz = run(mode, fn, tf.constant(1.0), tf.constant(2.0))
    assert val(gx) == 2.0
    assert gz is None


def test_unconnected_gradients_zero(mode):
    v = tf.Variable([1.0, 2.0, 3.0])

    def fn(x, z):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * 2.0
        return g.gradient(y, [x, z, v], unconnected_gradients=tf.UnconnectedGradients.ZERO)

    gx, gz, gv = run(mode, fn, tf.constant(1.0), tf.constant([[2.0, 3.0]], dtype=tf.float64))
    assert val(gx) == 2.0
    assert gz.shape == (1, 2) and gz.dtype == tf.float64
    np.testing.assert_array_equal(val(gz), [[0.0, 0.0]])
    assert gv.shape == (3,) and gv.dtype == tf.float32
    np.testing.assert_array_equal(val(gv), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("how", ["zero", tf.UnconnectedGradients.ZERO])
def test_unconnected_gradients_zero_string_and_enum(mode, how):
    def fn(x, z):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * 2.0
        return g.gradient(y, z, unconnected_gradients=how)

    assert val(run(mode, fn, tf.constant(1.0), tf.constant(5.0))) == 0.0


@pytest.mark.parametrize("how", ["none", tf.UnconnectedGradients.NONE])
def test_unconnected_gradients_none_string_and_enum(mode, how):
    def fn(x, z):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * 2.0
        return g.gradient(y, z, unconnected_gradients=how)

    assert run(mode, fn, tf.constant(1.0), tf.constant(5.0)) is None


def test_unconnected_gradients_values():
    assert tf.UnconnectedGradients.NONE.value == "none"
    assert tf.UnconnectedGradients.ZERO.value == "zero"


def test_unconnected_gradients_unknown_value_raises_value_error(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * 2.0
        with pytest.raises(ValueError):
            g.gradient(y, x, unconnected_gradients="nothing")
        return y

    run(mode, fn, tf.constant(1.0))


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("mode", [None, "none", "zero"])
def test_batch_jacobian_of_unconnected_source_is_zeros(use_pfor, mode):
    # TensorFlow 2.21 returns zeros of shape target.shape + source.shape[1:] here, not
    # None, whatever unconnected_gradients says (backprop.py keeps its older behaviour).
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    u = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape(persistent=True) as g:
        g.watch(u)
        y = u * 2.0
        z = tf.reshape(x * 3.0, [2, 1, 2])
    kwargs = {} if mode is None else {"unconnected_gradients": mode}
    j = g.batch_jacobian(y, x, experimental_use_pfor=use_pfor, **kwargs)
    assert j.shape == (2, 3, 2) and j.dtype == tf.float32
    np.testing.assert_array_equal(val(j), np.zeros((2, 3, 2)))
    j = g.batch_jacobian(z, u, experimental_use_pfor=use_pfor, **kwargs)  # rank-3 target
    assert j.shape == (2, 1, 2, 3)
    np.testing.assert_array_equal(val(j), np.zeros((2, 1, 2, 3)))


@pytest.mark.parametrize("use_pfor", [True, False])
def test_batch_jacobian_zeros_of_unconnected_source_have_the_targets_dtype(use_pfor):
    # TensorFlow 2.21: `zeros(new_shape, target.dtype)`: int32 zeros for an int32 target,
    # float64 zeros for a float64 target of a float32 source.
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    u = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape(persistent=True) as g:
        g.watch(u)
        y64 = tf.cast(u, tf.float64) * 2.0
    j = g.batch_jacobian(tf.constant([[1, 2], [3, 4]]), x, experimental_use_pfor=use_pfor)
    assert j.shape == (2, 2, 2) and j.dtype == tf.int32
    np.testing.assert_array_equal(val(j), np.zeros((2, 2, 2)))
    j = g.batch_jacobian(y64, x, experimental_use_pfor=use_pfor)
    assert j.shape == (2, 3, 2) and j.dtype == tf.float64
    # With "zero", TensorFlow (pfor) stacks the zero gradients: the source's dtype.
    j = g.batch_jacobian(y64, x, unconnected_gradients="zero")
    assert j.dtype == tf.float32


def test_batch_jacobian_partly_connected_target_has_zero_rows():
    # TensorFlow 2.21: [[[2,0],[0,2],[0,0],[0,0]]] for each example.
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as g:
        y = tf.concat([x * 2.0, tf.stop_gradient(x)], axis=1)
    want = [[[2.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]] * 2
    np.testing.assert_array_equal(val(g.batch_jacobian(y, x)), want)
    np.testing.assert_array_equal(val(g.batch_jacobian(y, x, experimental_use_pfor=False)),
                                  want)


# -- dtypes ----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:The dtype of the watched tensor")
def test_integer_source_not_differentiable(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x)

    assert run(mode, fn, tf.constant(3)) is None


@pytest.mark.filterwarnings("ignore:The dtype of the watched tensor")
def test_integer_source_through_cast_not_differentiable(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.cast(x, tf.float32) * 2.0
        return g.gradient(y, x)

    assert run(mode, fn, tf.constant([1, 2])) is None


@pytest.mark.filterwarnings("ignore:The dtype of the watched tensor")
def test_integer_source_zero_mode_gives_zeros_of_its_dtype(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.cast(x, tf.float32) * 2.0
        return g.gradient(y, x, unconnected_gradients="zero")

    gx = run(mode, fn, tf.constant([1, 2]))
    assert gx.dtype == tf.int32
    np.testing.assert_array_equal(val(gx), [0, 0])


def test_integer_variable_not_differentiable(mode):
    v = tf.Variable(2)

    def fn():
        with tf.GradientTape() as g:
            y = v * v
        return g.gradient(y, v)

    assert run(mode, fn) is None


def test_float_through_cast_to_float64_is_differentiable(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.cast(x, tf.float64) * tf.constant(3.0, dtype=tf.float64)
        return g.gradient(y, x)

    gx = run(mode, fn, tf.constant(2.0))
    assert gx.dtype == tf.float32
    assert val(gx) == 3.0


def test_float64_gradient_dtype(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x)

    gx = run(mode, fn, tf.constant(2.0, dtype=tf.float64))
    assert gx.dtype == tf.float64
    assert val(gx) == 4.0


# -- target is a source ----------------------------------------------------------------


def test_gradient_of_watched_source_itself_is_ones(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
        return g.gradient(x, x)

    gx = run(mode, fn, tf.constant([[1.0, 2.0, 3.0]]))
    assert gx.shape == (1, 3) and gx.dtype == tf.float32
    np.testing.assert_array_equal(val(gx), [[1.0, 1.0, 1.0]])


def test_gradient_of_source_itself_with_output_gradients(mode):
    def fn(x, w):
        with tf.GradientTape() as g:
            g.watch(x)
        return g.gradient(x, x, output_gradients=w)

    gx = run(mode, fn, tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    np.testing.assert_array_equal(val(gx), [3.0, 4.0])


def test_gradient_of_target_list_including_source(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient([x, y], x)

    assert val(run(mode, fn, tf.constant(2.0))) == 5.0


# -- stop_recording, reset -------------------------------------------------------------


def test_stop_recording_tf_doc_example(mode):
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                y = x ** 2
        return tape.gradient(y, x)

    assert run(mode, fn, tf.constant(4.0)) is None


def test_stop_recording_resumes_afterwards(mode):
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                c = x * x  # a constant for the tape
            y = c * x
        return tape.gradient(y, x)

    assert val(run(mode, fn, tf.constant(2.0))) == 4.0


def test_stop_recording_around_gradient_of_persistent_tape(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x
            with t.stop_recording():
                dy = t.gradient(y, x)
        return dy, t.gradient(dy, x), t.gradient(y, x)

    dy, d2y, dy_again = run(mode, fn, tf.constant(3.0))
    assert val(dy) == 6.0
    assert d2y is None  # not recorded
    assert val(dy_again) == 6.0


def test_stop_recording_only_stops_that_tape(mode):
    def fn(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                with inner.stop_recording():
                    y = x * x
        return inner.gradient(y, x), outer.gradient(y, x)

    g_inner, g_outer = run(mode, fn, tf.constant(3.0))
    assert g_inner is None
    assert val(g_outer) == 6.0


def test_stop_recording_on_never_entered_tape_raises_runtime_error(mode):
    def fn(x):
        tape = tf.GradientTape()
        with pytest.raises(RuntimeError), tape.stop_recording():
            pass
        return x

    run(mode, fn, tf.constant(1.0))


def test_stop_recording_on_exited_tape_raises_value_error(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
        with pytest.raises(ValueError), tape.stop_recording():
            pass
        return x

    run(mode, fn, tf.constant(1.0))


def test_reset_inside_context_forgets_ops_and_watches(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            tape.reset()
            z = y * x  # x is no longer watched after reset
        return tape.gradient(z, x), tape.gradient(y, x)

    gz, gy = run(mode, fn, tf.constant(3.0))
    assert gz is None and gy is None


def test_reset_inside_context_keeps_recording(mode):
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            tape.reset()
            tape.watch(x)
            z = y * x  # y is a constant for the tape now
        return tape.gradient(z, x)

    assert val(run(mode, fn, tf.constant(3.0))) == 9.0


def test_reset_like_tf_docstring(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape() as t:
            loss = v * v
            t.reset()
            loss += v * 10.0
        return t.gradient(loss, v)

    assert val(run(mode, fn)) == 10.0


def test_reset_clears_watched_variables(mode):
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)

    def fn():
        with tf.GradientTape() as t:
            y = a * 2.0
            t.reset()
            z = b * 3.0
        assert list(t.watched_variables()) == [b]
        return y + z

    assert val(run(mode, fn)) == 8.0


def test_reset_then_watch_again_inside_context(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
            t.reset()
            t.watch(x)
            y = x * x * x
        return t.gradient(y, x)

    assert val(run(mode, fn, tf.constant(2.0))) == 12.0


def test_reset_outside_context_raises_value_error(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * 2.0
        with pytest.raises(ValueError):
            t.reset()
        return t.gradient(y, x)

    assert val(run(mode, fn, tf.constant(1.0))) == 2.0


# -- recording scope ---------------------------------------------------------------------


def test_ops_run_while_no_tape_records_are_not_recorded(mode):
    def fn(x):
        y = x * x  # before the tape
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            z = x * 2.0
        w = x * x * x  # after the tape
        return t.gradient(y, x), t.gradient(w, x), t.gradient(z, x)

    gy, gw, gz = run(mode, fn, tf.constant(3.0))
    assert gy is None and gw is None
    assert val(gz) == 2.0


def test_ops_on_unwatched_tensors_do_not_link(mode):
    def fn(x, c):
        with tf.GradientTape() as t:
            t.watch(x)
            a = c * c   # not recorded: c is not watched
            y = a * x
        return t.gradient(y, x)

    assert val(run(mode, fn, tf.constant(3.0), tf.constant(2.0))) == 4.0


def test_several_tapes_record_the_same_ops(mode):
    def fn(x):
        with tf.GradientTape() as t1, tf.GradientTape() as t2:
            t1.watch(x)
            t2.watch(x)
            y = x * x
        return t1.gradient(y, x), t2.gradient(y, x)

    assert [val(t) for t in run(mode, fn, tf.constant(3.0))] == [6.0, 6.0]


def test_several_tapes_watch_different_things(mode):
    def fn(x):
        with tf.GradientTape() as t1, tf.GradientTape() as t2:
            t1.watch(x)
            y = x * x
            t2.watch(y)
            z = y * y
        return t1.gradient(z, x), t2.gradient(z, y)

    assert [val(t) for t in run(mode, fn, tf.constant(3.0))] == [4 * 27.0, 18.0]


def test_several_tapes_with_variables(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape() as t1, tf.GradientTape() as t2:
            y = v * v
        return t2.gradient(y, v), t1.gradient(y, v)

    assert [val(t) for t in run(mode, fn)] == [4.0, 4.0]


def test_tape_created_inside_other_tape_sees_only_its_part(mode):
    def fn(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            y = x * x
            with tf.GradientTape() as inner:
                inner.watch(x)
                z = y * x
        return inner.gradient(z, x), outer.gradient(z, x)

    g_inner, g_outer = run(mode, fn, tf.constant(2.0))
    assert val(g_inner) == 4.0        # y is a constant for inner
    assert val(g_outer) == 12.0       # 3 x^2


# -- higher order ----------------------------------------------------------------------


def test_nested_tapes_tf_doc_example(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            with tf.GradientTape() as gg:
                gg.watch(x)
                y = x * x
            dy_dx = gg.gradient(y, x)
        return dy_dx, g.gradient(dy_dx, x)

    dy_dx, d2y_dx2 = run(mode, fn, tf.constant(5.0))
    assert (val(dy_dx), val(d2y_dx2)) == (10.0, 2.0)


def test_third_derivative_of_cube(mode):
    out = run(mode, _cube_derivatives(lambda x: x ** 3), tf.constant(3.0))
    assert [val(t) for t in out] == [27.0, 27.0, 18.0, 6.0]
    assert all(t.dtype == tf.float32 for t in out)


def test_third_derivative_of_cube_by_products(mode):
    out = run(mode, _cube_derivatives(lambda x: x * x * x), tf.constant(3.0))
    assert [val(t) for t in out] == [27.0, 27.0, 18.0, 6.0]


def test_fourth_derivative_is_zero_or_none(mode):
    def fn(x):
        with tf.GradientTape() as t4:
            t4.watch(x)
            with tf.GradientTape() as t3:
                t3.watch(x)
                with tf.GradientTape() as t2:
                    t2.watch(x)
                    with tf.GradientTape() as t1:
                        t1.watch(x)
                        y = x * x * x
                    d1 = t1.gradient(y, x)
                d2 = t2.gradient(d1, x)
            d3 = t3.gradient(d2, x)
        return d3, t4.gradient(d3, x)

    d3, d4 = run(mode, fn, tf.constant(3.0))
    assert val(d3) == 6.0
    assert d4 is None or val(d4) == 0.0


def test_persistent_tape_differentiates_its_own_gradient(mode):
    def fn(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = x * x * x
            dy = t.gradient(y, x)
            d2y = t.gradient(dy, x)
        return dy, d2y, t.gradient(d2y, x)

    assert [val(t) for t in run(mode, fn, tf.constant(3.0))] == [27.0, 18.0, 6.0]


def test_gradient_inside_non_persistent_context_stops_recording(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
            dy = t.gradient(y, x)
            z = dy * x
        with pytest.raises(RuntimeError):
            t.gradient(z, x)
        return dy, z

    dy, z = run(mode, fn, tf.constant(3.0))
    assert (val(dy), val(z)) == (6.0, 18.0)


def test_gradient_inside_non_persistent_context_not_recorded_for_itself(mode):
    def fn(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                y = x * x
                dy = t.gradient(y, x)   # recorded by the outer tape only
        return outer.gradient(dy, x)

    assert val(run(mode, fn, tf.constant(3.0))) == 2.0


def test_hessian_vector_like_nested_with_variables(mode):
    v = tf.Variable([1.0, 2.0])

    def fn():
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = v * v * v  # per element v^3
            g = inner.gradient(y, v)  # 3 v^2
        return g, outer.gradient(g, v)  # 6 v

    g, h = run(mode, fn)
    np.testing.assert_allclose(val(g), [3.0, 12.0])
    np.testing.assert_allclose(val(h), [6.0, 12.0])


def _cube_derivatives(cube):
    def fn(x):
        with tf.GradientTape() as t3:
            t3.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = cube(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        return y, d1, d2, t3.gradient(d2, x)
    return fn


def _derivatives(mode, f, x0, order, dtype=tf.float64):
    """[f(x0), f'(x0), ..., f^(order)(x0)] by nested tapes."""
    def fn(x):
        tapes = [tf.GradientTape() for _ in range(order)]
        for t in tapes:
            t.__enter__()
            t.watch(x)
        values = [f(x)]
        for t in reversed(tapes):
            d = t.gradient(values[-1], x)
            t.__exit__(None, None, None)
            values.append(d)
        return values

    return [float(val(v)) for v in run(mode, fn, tf.constant(x0, dtype=dtype))]


@pytest.mark.parametrize("x0", [-1.3, 0.0, 0.4, 2.1])
def test_second_derivative_tanh(mode, x0):
    t = math.tanh(x0)
    got = _derivatives(mode, tf.tanh, x0, 3)
    want = [t, 1 - t * t, -2 * t * (1 - t * t), (1 - t * t) * (6 * t * t - 2)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.7])
def test_second_derivative_sigmoid(mode, x0):
    s = 1 / (1 + math.exp(-x0))
    got = _derivatives(mode, tf.sigmoid, x0, 3)
    want = [s, s * (1 - s), s * (1 - s) * (1 - 2 * s),
            s * (1 - s) * (1 - 6 * s + 6 * s * s)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x0", [-1.0, 0.5, 1.5])
def test_derivatives_exp_of_sin(mode, x0):
    e, s, c = math.exp(math.sin(x0)), math.sin(x0), math.cos(x0)
    got = _derivatives(mode, lambda x: tf.exp(tf.math.sin(x)), x0, 2)
    np.testing.assert_allclose(got, [e, c * e, (c * c - s) * e], rtol=1e-12)


@pytest.mark.parametrize("x0", [-0.5, 0.3])
def test_derivatives_tanh_of_exp_chain(mode, x0):
    u = math.exp(x0)
    t = math.tanh(u)
    got = _derivatives(mode, lambda x: tf.tanh(tf.exp(x)), x0, 2)
    want = [t, (1 - t * t) * u, -2 * t * (1 - t * t) * u * u + (1 - t * t) * u]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_second_derivative_float32_tanh_close(mode):
    got = _derivatives(mode, tf.tanh, 0.5, 2, dtype=tf.float32)
    t = math.tanh(0.5)
    np.testing.assert_allclose(got, [t, 1 - t * t, -2 * t * (1 - t * t)], rtol=1e-5)


def test_mixed_partial_derivative(mode):
    def fn(x, y):
        with tf.GradientTape() as outer:
            outer.watch(y)
            with tf.GradientTape() as inner:
                inner.watch(x)
                f = x * x * y * y * y  # d2f/dxdy = 2x * 3y^2
            dfdx = inner.gradient(f, x)
        return dfdx, outer.gradient(dfdx, y)

    dfdx, d2 = run(mode, fn, tf.constant(2.0), tf.constant(3.0))
    assert val(dfdx) == 2 * 2.0 * 27.0
    assert val(d2) == 2 * 2.0 * 3 * 9.0


# -- Variables ---------------------------------------------------------------------------


def test_variable_gradient_uses_value_at_read_time(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape() as t:
            y = v * v        # reads 2.0
            v.assign(5.0)
            z = y * v        # reads 5.0: z = v_a^2 v_b
        return z, t.gradient(z, v)

    z, gz = run(mode, fn)
    # dz/dv = 2 v_a v_b + v_a^2 = 20 + 4
    assert val(z) == 20.0
    assert val(gz) == 24.0
    assert v.numpy() == 5.0


def test_a_read_before_the_tape_starts_is_a_constant_not_the_variable(mode):
    v = tf.Variable(1.0)

    def fn():
        old = v.read_value()  # no tape records this read
        v.assign_add(1.0)
        with tf.GradientTape() as t:
            loss = v * old
        return t.gradient(loss, v)

    # TensorFlow: d(v * old)/dv = old; the snapshot is not the variable.
    assert val(run(mode, fn)) == 1.0


def test_a_gradient_with_respect_to_one_read_concerns_that_read_alone(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape(persistent=True) as t:
            r = v.read_value()
            loss = r * v + v
        return t.gradient(loss, r), t.gradient(loss, v)

    wrt_read, wrt_variable = run(mode, fn)
    assert val(wrt_read) == 2.0  # TensorFlow's numbers: d/dr = v; d/dv = r + 1 + d/dr
    assert val(wrt_variable) == 5.0


def test_watching_a_read_watches_that_read(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape(watch_accessed_variables=False) as t:
            r = v.read_value()
            t.watch(r)
            loss = r * v
        return t.gradient(loss, [r, v])

    wrt_read, wrt_variable = run(mode, fn)
    assert val(wrt_read) == 2.0 and wrt_variable is None  # as TensorFlow


def test_a_tensor_computed_from_a_variable_before_the_tape_is_a_constant(mode):
    v = tf.Variable(3.0)

    def fn():
        doubled = v * 2.0
        with tf.GradientTape() as t:
            loss = doubled * v
        return t.gradient(loss, v)

    assert val(run(mode, fn)) == 6.0


def test_variable_assign_after_tape_does_not_change_gradient(mode):
    v = tf.Variable(3.0)

    def fn():
        with tf.GradientTape() as t:
            y = v * v
        v.assign(100.0)
        return t.gradient(y, v)

    assert val(run(mode, fn)) == 6.0
    assert v.numpy() == 100.0


def test_variable_assign_add_inside_tape(mode):
    v = tf.Variable(1.0)

    def fn():
        with tf.GradientTape() as t:
            v.assign_add(1.0)
            y = v * v * v    # reads 2.0
        return t.gradient(y, v)

    assert val(run(mode, fn)) == 12.0
    assert v.numpy() == 2.0


def test_variable_assigned_from_watched_tensor_is_not_linked_to_it(mode):
    # An assignment copies numbers: reads after it differentiate w.r.t. the variable,
    # never through the assigned tensor (TensorFlow's ReadVariableOp).
    v = tf.Variable(1.0)

    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            v.assign(x * 2.0)
            y = v * x
        return y, t.gradient(y, [x, v])

    y, (gx, gv) = run(mode, fn, tf.constant(3.0))
    assert (val(y), val(gx), val(gv)) == (18.0, 6.0, 3.0)


def test_variable_and_tensor_sources_together(mode):
    w = tf.Variable(2.0)

    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = w * x * x
        return t.gradient(y, [w, x])

    gw, gx = run(mode, fn, tf.constant(3.0))
    assert (val(gw), val(gx)) == (9.0, 12.0)


def test_variable_gradient_shape_and_dtype(mode):
    w = tf.Variable(np.ones((2, 3)))  # float64 from NumPy

    def fn():
        with tf.GradientTape() as t:
            y = w * w
        return t.gradient(y, w)

    gw = run(mode, fn)
    assert gw.shape == (2, 3) and gw.dtype == tf.float64
    np.testing.assert_array_equal(val(gw), 2 * np.ones((2, 3)))


@pytest.mark.parametrize("op", ["sqrt", "rsqrt", "reciprocal"])
def test_a_masked_pole_has_a_zero_gradient_not_nan(mode, op):
    # TensorFlow's SqrtGrad / RsqrtGrad / ReciprocalGrad give 0 where the incoming
    # gradient is 0, so the usual tf.where guard keeps NaN out of the gradient.
    fn_of = {"sqrt": tf.sqrt, "rsqrt": tf.math.rsqrt, "reciprocal": tf.math.reciprocal}[op]

    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(tf.where(x > 0, fn_of(x), 0.0))
        return g.gradient(y, x)

    expected = {"sqrt": 0.25, "rsqrt": -0.0625, "reciprocal": -0.0625}[op]
    np.testing.assert_array_equal(val(run(mode, fn, tf.constant([-1.0, 0.0, 4.0]))),
                                  [0.0, 0.0, expected])


def test_a_safe_norm_of_a_zero_row_has_a_zero_gradient(mode):
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            n = tf.norm(x, axis=1)
            y = tf.reduce_sum(tf.where(n > 0, n, 0.0))
        return g.gradient(y, x)

    np.testing.assert_allclose(val(run(mode, fn, tf.constant([[0.0, 0.0], [3.0, 4.0]]))),
                               [[0.0, 0.0], [0.6, 0.8]], rtol=1e-6)


def test_relu_second_derivative_is_zeros_not_none(mode):
    def fn(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.nn.relu(x))
            g = inner.gradient(y, x)
        return outer.gradient(g, x)

    np.testing.assert_array_equal(val(run(mode, fn, tf.constant([-1.0, 0.0, 2.0]))),
                                  [0.0, 0.0, 0.0])


def test_xent_labels_take_no_second_derivative_through_the_backprop(mode):
    # TensorFlow's gradient of SoftmaxCrossEntropyWithLogits sends none of grad_grad to
    # the labels: d(d loss / d logits)/d labels is zeros.
    def fn(labels, logits):
        with tf.GradientTape() as outer:
            outer.watch(labels)
            with tf.GradientTape() as inner:
                inner.watch(logits)
                loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels, logits))
            g = inner.gradient(loss, logits)
        return outer.gradient(g, labels)

    got = run(mode, fn, tf.constant([[0.3, 0.7]]), tf.constant([[1.0, 2.0]]))
    np.testing.assert_array_equal(val(got), [[0.0, 0.0]])


def test_clip_by_value_is_maximum_of_minimum_as_tensorflow(mode):
    # min > max: every element is min; a NaN element's gradient goes to min.
    def fn(t, lo, hi):
        with tf.GradientTape() as g:
            g.watch([t, lo, hi])
            y = tf.clip_by_value(t, lo, hi)
            total = tf.reduce_sum(y)
        return y, g.gradient(total, [t, lo, hi])

    y, (gt, glo, ghi) = run(mode, fn, tf.constant([-5.0, 0.0, 5.0, float("nan")]),
                            tf.constant(3.0), tf.constant(-1.0))
    np.testing.assert_array_equal(val(y)[:3], [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(val(gt), [0.0, 0.0, 0.0, 0.0])  # TensorFlow's numbers
    assert val(glo) == 4.0 and val(ghi) == 0.0


def test_concat_of_one_tensor_keeps_it(mode):
    def fn(x):
        return tf.concat(x, 1)

    assert run(mode, fn, tf.zeros([2, 3, 4])).shape == (2, 3, 4)


# -- threads -----------------------------------------------------------------------------


def test_tape_does_not_record_ops_of_another_thread():
    x = tf.constant(2.0)
    box = {}

    def work():
        box["y"] = x * x

    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        th = threading.Thread(target=work)
        th.start()
        th.join()
        z = x * 3.0
    assert val(box["y"]) == 4.0
    assert t.gradient(box["y"], x) is None
    assert val(t.gradient(z, x)) == 3.0


def test_tapes_in_two_threads_are_independent():
    x = tf.constant(3.0)
    barrier = threading.Barrier(2)
    out = {}
    errors = []

    def thread_a():  # records while thread b computes with the same x
        try:
            with tf.GradientTape(persistent=True) as t:
                t.watch(x)
                barrier.wait(timeout=10)
                out["ya"] = x * x
                barrier.wait(timeout=10)
            out["ta"] = t
        except Exception as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    def thread_b():
        try:
            with tf.GradientTape(persistent=True) as t:
                barrier.wait(timeout=10)
                t.watch(x)
                out["yb"] = x * x * x
                barrier.wait(timeout=10)
            out["tb"] = t
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    ta, tb = out["ta"], out["tb"]
    assert val(ta.gradient(out["ya"], x)) == 6.0
    assert val(tb.gradient(out["yb"], x)) == 27.0
    assert ta.gradient(out["yb"], x) is None
    assert tb.gradient(out["ya"], x) is None


def test_variable_read_in_other_thread_not_watched():
    v = tf.Variable(1.0)

    def work():
        return v * 2.0

    with tf.GradientTape() as t:
        th = threading.Thread(target=work)
        th.start()
        th.join()
    assert len(t.watched_variables()) == 0


# -- stop_gradient -----------------------------------------------------------------------


def test_stop_gradient(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.stop_gradient(x * x) + x
        return y, t.gradient(y, x)

    y, gy = run(mode, fn, tf.constant(3.0))
    assert (val(y), val(gy)) == (12.0, 1.0)


def test_stop_gradient_alone_gives_none(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.stop_gradient(x) * 2.0
        return t.gradient(y, x)

    assert run(mode, fn, tf.constant(3.0)) is None


def test_stop_gradient_on_variable(mode):
    v = tf.Variable(2.0)

    def fn():
        with tf.GradientTape() as t:
            y = tf.stop_gradient(v) * v
        return t.gradient(y, v)

    assert val(run(mode, fn)) == 2.0


def test_stop_gradient_second_order(mode):
    def fn(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x * x * tf.stop_gradient(x)  # f = x^2 c, c = x held constant
            dy = inner.gradient(y, x)            # 2 x c = 8
        return dy, outer.gradient(dy, x)

    dy, d2 = run(mode, fn, tf.constant(2.0))
    assert val(dy) == 8.0
    # The outer tape sees dy = 2 x stop_gradient(x): d/dx = 2 c = 4
    assert val(d2) == 4.0


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [3.0, None])
def test_gradient_source_not_a_tensor_raises_type_error(mode, bad):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        with pytest.raises(TypeError):
            t.gradient(y, bad)
        return y

    run(mode, fn, tf.constant(3.0))


def test_gradient_source_list_with_python_float_raises_type_error(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        with pytest.raises(TypeError):
            t.gradient(y, [x, 3.0])
        return y

    run(mode, fn, tf.constant(3.0))


def test_gradient_target_none_raises_type_error(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
        with pytest.raises(TypeError):
            t.gradient(None, x)
        return x

    run(mode, fn, tf.constant(3.0))


def test_gradient_on_never_entered_tape_raises_runtime_error(mode):
    def fn(x):
        t = tf.GradientTape(persistent=True)
        with pytest.raises(RuntimeError):
            t.gradient(x * x, x)
        return x

    run(mode, fn, tf.constant(3.0))


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_jacobian_without_pfor_needs_persistent_tape_only_eagerly(mode, method):
    # TensorFlow refuses "with eager execution enabled"; inside tf.function it works.
    def fn(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x * x
        if mode == "eager":
            with pytest.raises(RuntimeError):
                getattr(g, method)(y, x, experimental_use_pfor=False)
            return g.gradient(y, x)  # the refusal did not use the tape up
        return getattr(g, method)(y, x, experimental_use_pfor=False)

    got = val(run(mode, fn, tf.constant([[1.0, 2.0]])))
    if mode == "eager":
        np.testing.assert_allclose(got, [[2.0, 4.0]])
    else:  # (1, 2, 1, 2) or (1, 2, 2): the same four numbers
        np.testing.assert_allclose(got.reshape(2, 2), [[2.0, 0.0], [0.0, 4.0]])


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("which, pattern", [
    ("target", r"^Shape \(2,\) must have rank at least 2$"),
    ("source", r"^Shape \(2,\) must have rank at least 2$"),
    ("scalar source", r"^Shape \(\) must have rank at least 2$"),
    ("both", r"^Shape \(3,\) must have rank at least 2$"),  # the target is checked first
    ("batch", (r"^Need first dimension of target shape \(\(3, 2\)\) and source shape "
               r"\(\(2, 2\)\) to match\.$")),
])
def test_batch_jacobian_needs_rank_2_and_matching_batch(use_pfor, which, pattern):
    # TensorFlow 2.21's messages (with_rank_at_least(2) on target, then source).
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as g:
        y = x * x
        rows = tf.reduce_sum(x ** 2, axis=1)  # shape (2,): TensorFlow rejects it
    target, source = {
        "target": (rows, x), "source": (y, tf.constant([1.0, 2.0])),
        "scalar source": (y, tf.constant(1.0)), "both": (tf.zeros([3]), tf.zeros([2])),
        "batch": (tf.zeros([3, 2]), x)}[which]
    with pytest.raises(ValueError, match=pattern):
        g.batch_jacobian(target, source, experimental_use_pfor=use_pfor)


def test_batch_jacobian_of_scalar_target_raises_value_error():
    # TensorFlow 2.21 raises IndexError (it reads shape.dims[0] before its rank check);
    # tapeflow raises the ValueError that check means (docs/differences.md).
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as g:
        s = tf.reduce_sum(x)
    with pytest.raises(ValueError, match=r"^Shape \(\) must have rank at least 2$"):
        g.batch_jacobian(s, x)


def test_watch_integer_tensor_warns_and_gives_none(mode):
    def fn(x):
        with tf.GradientTape() as t:
            with pytest.warns(UserWarning, match="must be floating .* got tf.int32"):
                t.watch(x)
            y = x * 2
        return t.gradient(y, x)

    assert run(mode, fn, tf.constant([1, 2])) is None


def test_stop_recording_after_non_persistent_gradient_raises_runtime_error(mode):
    def fn(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * 2.0
        t.gradient(y, x)
        with pytest.raises(RuntimeError), t.stop_recording():
            pass
        return y

    run(mode, fn, tf.constant(1.0))


def test_watched_variables_of_fresh_tape_is_empty():
    assert len(tf.GradientTape().watched_variables()) == 0


def test_unwatched_constant_used_with_watched_one_gets_none(mode):
    def fn(x, c):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * c
        return t.gradient(y, [x, c])

    gx, gc = run(mode, fn, tf.constant(3.0), tf.constant(2.0))
    assert val(gx) == 2.0
    assert gc is None


def test_unwatched_source_that_is_the_target_gets_ones(mode):
    def fn(x):
        with tf.GradientTape() as t:
            pass
        return t.gradient(x, x)

    np.testing.assert_array_equal(val(run(mode, fn, tf.constant([1.0, 2.0]))), [1.0, 1.0])


def test_a_gradient_call_with_a_bad_argument_does_not_use_up_the_tape():
    # TensorFlow checks the arguments first: the non-persistent tape can be asked again.
    x = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    with pytest.raises(TypeError):
        g.gradient(y, 3.0)
    with pytest.raises(TypeError):
        g.gradient(None, x)
    assert val(g.gradient(y, x)) == 4.0


def test_gradient_inside_a_persistent_tapes_context_warns_once(monkeypatch):
    """TensorFlow logs this once per process (log_first_n); tapeflow warns once, at the
    user's line. A non-persistent tape, or a call after the `with`, does not warn."""
    import warnings

    from tapeflow.autodiff import tape as tape_module
    monkeypatch.setattr(tape_module, "_warned_inside_context", False)
    x = tf.constant(3.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tf.GradientTape() as single:
            single.watch(x)
            y = x * x
            single.gradient(y, x)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            assert float(tape.gradient(y, x)) == 6.0
            assert float(tape.gradient(y, x)) == 6.0
        tape.gradient(y, x)
    messages = [w for w in caught if "GradientTape.gradient" in str(w.message)]
    assert len(messages) == 1, [str(w.message) for w in caught]
    assert messages[0].category is UserWarning
    assert messages[0].filename == __file__
    assert str(messages[0].message).startswith(
        "Calling GradientTape.gradient on a persistent tape inside its context is "
        "significantly less efficient than calling it outside the context")
