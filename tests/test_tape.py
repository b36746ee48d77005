"""GradientTape semantics, checked against what TensorFlow 2 does (API.md, Differentiation).

Every test is written as TensorFlow user code (`import tapeflow as tf`); the expected
values and exception classes are TensorFlow 2's.
"""

import math
import threading

import numpy as np
import pytest

import tapeflow as tf


def val(t):
    """The NumPy value of a Tensor (asserting it is one)."""
    assert isinstance(t, tf.Tensor), f"expected a Tensor, got {type(t).__name__}"
    return t.numpy()


# -- context manager, persistence ------------------------------------------------------


def test_basic_gradient_matches_tf_doc_example():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)
    assert isinstance(dy_dx, tf.Tensor)
    assert dy_dx.dtype == tf.float32
    assert dy_dx.shape == ()
    assert val(dy_dx) == 6.0
    assert repr(dy_dx) == "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>"
    assert str(dy_dx) == "tf.Tensor(6.0, shape=(), dtype=float32)"


def test_with_returns_the_tape_itself():
    tape = tf.GradientTape()
    with tape as t:
        assert t is tape


def test_explicit_enter_exit():
    x = tf.constant(2.0)
    tape = tf.GradientTape()
    assert tape.__enter__() is tape
    tape.watch(x)
    y = x * x * x
    tape.__exit__(None, None, None)
    z = y * x  # after exit: not recorded
    assert val(tape.gradient(y, x)) == 12.0
    del z


def test_exit_does_not_swallow_exceptions():
    x = tf.constant(1.0)
    with pytest.raises(KeyError), tf.GradientTape() as t:
        t.watch(x)
        raise KeyError("boom")
    y = x * 2.0  # the tape was exited by the exception: not recorded
    assert t.gradient(y, x) is None


def test_non_persistent_second_gradient_raises():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert val(g.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError):
        g.gradient(y, x)


def test_non_persistent_gradient_then_jacobian_raises():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.gradient(y, x)
    with pytest.raises(RuntimeError):
        g.jacobian(y, x)


def test_non_persistent_jacobian_then_gradient_raises():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    np.testing.assert_allclose(val(g.jacobian(y, x)), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError):
        g.gradient(y, x)
    with pytest.raises(RuntimeError):
        g.jacobian(y, x)


def test_persistent_tape_many_gradients():
    # TensorFlow's GradientTape docstring example.
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    assert val(g.gradient(z, x)) == 108.0
    assert val(g.gradient(y, x)) == 6.0
    assert val(g.gradient(z, y)) == 18.0
    assert val(g.gradient(z, x)) == 108.0
    del g


def test_persistent_tape_gradient_and_jacobian():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
    np.testing.assert_allclose(val(g.gradient(y, x)), [2.0, 4.0])
    np.testing.assert_allclose(val(g.jacobian(y, x)), [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_allclose(val(g.gradient(y, x)), [2.0, 4.0])


def test_gradient_on_used_non_persistent_tape_after_reentry_works_as_new_tape():
    # In TensorFlow a used non-persistent tape has no tape left; entering it again
    # pushes a fresh one.
    x = tf.constant(2.0)
    tape = tf.GradientTape()
    with tape:
        tape.watch(x)
        y = x * x
    assert val(tape.gradient(y, x)) == 4.0
    with tape:
        tape.watch(x)
        z = x * x * x
    assert val(tape.gradient(z, x)) == 12.0


def test_reentering_a_recording_tape_raises_value_error():
    tape = tf.GradientTape()
    with tape, pytest.raises(ValueError):
        tape.__enter__()


# -- watch -----------------------------------------------------------------------------


def test_unwatched_constant_gives_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        y = x * x
    assert g.gradient(y, x) is None


def test_watch_nested_structure():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    c = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch([a, (b, {"c": c})])
        y = a * b * c
    ga, gb, gc = g.gradient(y, [a, b, c])
    assert (val(ga), val(gb), val(gc)) == (6.0, 3.0, 2.0)


def test_watch_variable_explicitly():
    v = tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as g:
        g.watch(v)
        y = v * v
    assert val(g.gradient(y, v)) == 6.0


@pytest.mark.parametrize("bad", [3.0, 2, None, "x", np.float32(1.0)])
def test_watch_non_tensor_raises_value_error(bad):
    with tf.GradientTape() as g, pytest.raises(ValueError):
        g.watch(bad)


def test_watch_list_with_non_tensor_raises_value_error():
    x = tf.constant(1.0)
    with tf.GradientTape() as g, pytest.raises(ValueError):
        g.watch([x, 1.0])


def test_watch_accessed_variables_false_watches_only_watched():
    # TensorFlow's GradientTape docstring example.
    x = tf.Variable(2.0)
    w = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x ** 2
        z = w ** 3
    assert val(tape.gradient(y, x)) == 4.0
    assert tape.gradient(z, w) is None
    ws = tape.watched_variables()
    assert len(ws) == 1 and ws[0] is x


def test_trainable_variable_auto_watched():
    v = tf.Variable(3.0)
    with tf.GradientTape() as g:
        y = v * v
    assert val(g.gradient(y, v)) == 6.0


def test_non_trainable_variable_never_auto_watched():
    v = tf.Variable(3.0, trainable=False)
    w = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as g:
        y = v * w
    assert g.gradient(y, v) is None
    assert val(g.gradient(y, w)) == 3.0
    assert list(g.watched_variables()) == [w]


def test_non_trainable_variable_can_be_watched_explicitly():
    v = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as g:
        g.watch(v)
        y = v * v
    assert val(g.gradient(y, v)) == 6.0


def test_watched_variables_in_construction_order():
    # TensorFlow: "Returns variables watched by this tape in order of construction."
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = tf.Variable(3.0, name="c")
    with tf.GradientTape() as g:
        y = c * b
        y = y * a
    names = [v.name for v in g.watched_variables()]
    assert names == ["a:0", "b:0", "c:0"]
    assert all(isinstance(v, tf.Variable) for v in g.watched_variables())


def test_watched_variables_no_duplicates_and_not_unaccessed():
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    unused = tf.Variable(3.0)
    with tf.GradientTape() as g:
        _ = a * a + a * b
    ws = g.watched_variables()
    assert len(ws) == 2
    assert ws[0] is a and ws[1] is b
    assert all(v is not unused for v in ws)


def test_watched_variables_kept_after_non_persistent_gradient():
    a = tf.Variable(1.0)
    with tf.GradientTape() as g:
        y = a * 2.0
    g.gradient(y, a)
    assert len(g.watched_variables()) == 1 and g.watched_variables()[0] is a


def test_variable_read_outside_tape_not_watched():
    v = tf.Variable(3.0)
    y = v * v
    with tf.GradientTape() as g:
        z = y * 2.0
    assert g.gradient(z, v) is None
    assert len(g.watched_variables()) == 0


# -- sources and targets ---------------------------------------------------------------


def test_sources_list_tuple_dict_keep_structure():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as g:
        g.watch([a, b])
        y = a * a * b
    as_list = g.gradient(y, [a, b])
    assert isinstance(as_list, list) and len(as_list) == 2
    assert (val(as_list[0]), val(as_list[1])) == (4.0, 1.0)
    as_tuple = g.gradient(y, (a, b))
    assert isinstance(as_tuple, tuple) and len(as_tuple) == 2
    assert (val(as_tuple[0]), val(as_tuple[1])) == (4.0, 1.0)
    as_dict = g.gradient(y, {"b": b, "a": a})
    assert isinstance(as_dict, dict) and set(as_dict) == {"a", "b"}
    assert (val(as_dict["a"]), val(as_dict["b"])) == (4.0, 1.0)
    nested = g.gradient(y, {"x": [a, (b,)], "y": b})
    assert isinstance(nested["x"], list) and isinstance(nested["x"][1], tuple)
    assert val(nested["x"][0]) == 4.0
    assert val(nested["x"][1][0]) == 1.0
    assert val(nested["y"]) == 1.0


def test_single_source_gives_single_tensor():
    a = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch(a)
        y = a * 3.0
    out = g.gradient(y, a)
    assert isinstance(out, tf.Tensor)


def test_same_source_twice_in_list():
    a = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch(a)
        y = a * a
    ga1, ga2 = g.gradient(y, [a, a])
    assert val(ga1) == 4.0 and val(ga2) == 4.0


def test_variables_as_sources_in_structures():
    w = tf.Variable([1.0, 2.0])
    b = tf.Variable(0.5)
    with tf.GradientTape() as g:
        y = w * w + b
    grads = g.gradient(y, {"w": w, "b": b})
    np.testing.assert_allclose(val(grads["w"]), [2.0, 4.0])
    # b was broadcast to shape (2,): its gradient is summed back to a scalar.
    assert grads["b"].shape == ()
    assert val(grads["b"]) == 2.0


def test_multiple_targets_are_summed():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y1 = x * x
        y2 = x * 5.0
    assert val(g.gradient([y1, y2], x)) == 11.0
    assert val(g.gradient((y1, y2), x)) == 11.0
    assert val(g.gradient({"p": y1, "q": [y2, y2]}, x)) == 16.0


def test_target_can_be_a_variable():
    v = tf.Variable(3.0)
    with tf.GradientTape() as g:
        g.watch(v)
    assert val(g.gradient(v, v)) == 1.0


def test_output_gradients_weight_the_target():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    grad = g.gradient(y, x, output_gradients=tf.constant([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(val(grad), [2.0, 40.0, 600.0])


def test_output_gradients_for_several_targets():
    x = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y1 = x * x
        y2 = x * x * x
    grad = g.gradient([y1, y2], x, output_gradients=[tf.constant(3.0), tf.constant(0.5)])
    assert val(grad) == pytest.approx(3.0 * 4.0 + 0.5 * 12.0)


def test_output_gradients_accepts_numpy_and_none_entries():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as g:
        g.watch(x)
        y1 = x * 3.0
        y2 = x * x
    grad = g.gradient(y1, x, output_gradients=np.array([2.0, 4.0], np.float32))
    np.testing.assert_allclose(val(grad), [6.0, 12.0])
    grad = g.gradient([y1, y2], x, output_gradients=[None, tf.constant([1.0, -1.0])])
    np.testing.assert_allclose(val(grad), [3.0 + 2.0, 3.0 - 4.0])


# -- unconnected gradients -------------------------------------------------------------


def test_unconnected_source_gives_none():
    x = tf.constant(1.0)
    z = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch([x, z])
        y = x * 2.0
    gx, gz = g.gradient(y, [x, z])
    assert val(gx) == 2.0
    assert gz is None


def test_unconnected_gradients_zero():
    x = tf.constant(1.0)
    z = tf.constant([[2.0, 3.0]], dtype=tf.float64)
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    gx, gz, gv = g.gradient(y, [x, z, v],
                            unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert val(gx) == 2.0
    assert gz.shape == (1, 2) and gz.dtype == tf.float64
    np.testing.assert_array_equal(val(gz), [[0.0, 0.0]])
    assert gv.shape == (3,) and gv.dtype == tf.float32
    np.testing.assert_array_equal(val(gv), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("mode", ["zero", tf.UnconnectedGradients.ZERO])
def test_unconnected_gradients_zero_string_and_enum(mode):
    x = tf.constant(1.0)
    z = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    gz = g.gradient(y, z, unconnected_gradients=mode)
    assert isinstance(gz, tf.Tensor) and val(gz) == 0.0


@pytest.mark.parametrize("mode", ["none", tf.UnconnectedGradients.NONE])
def test_unconnected_gradients_none_string_and_enum(mode):
    x = tf.constant(1.0)
    z = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    assert g.gradient(y, z, unconnected_gradients=mode) is None


def test_unconnected_gradients_values():
    assert tf.UnconnectedGradients.NONE.value == "none"
    assert tf.UnconnectedGradients.ZERO.value == "zero"


def test_unconnected_gradients_unknown_value_raises_value_error():
    x = tf.constant(1.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError):
        g.gradient(y, x, unconnected_gradients="nothing")


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
def test_integer_source_not_differentiable():
    x = tf.constant(3)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert g.gradient(y, x) is None


@pytest.mark.filterwarnings("ignore:The dtype of the watched tensor")
def test_integer_source_through_cast_not_differentiable():
    x = tf.constant([1, 2])
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.cast(x, tf.float32) * 2.0
    assert g.gradient(y, x) is None


@pytest.mark.filterwarnings("ignore:The dtype of the watched tensor")
def test_integer_source_zero_mode_gives_zeros_of_its_dtype():
    x = tf.constant([1, 2])
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.cast(x, tf.float32) * 2.0
    gx = g.gradient(y, x, unconnected_gradients="zero")
    assert gx.dtype == tf.int32
    np.testing.assert_array_equal(val(gx), [0, 0])


def test_integer_variable_not_differentiable():
    v = tf.Variable(2)
    with tf.GradientTape() as g:
        y = v * v
    assert g.gradient(y, v) is None


def test_float_through_cast_to_float64_is_differentiable():
    x = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.cast(x, tf.float64) * tf.constant(3.0, dtype=tf.float64)
    gx = g.gradient(y, x)
    assert gx.dtype == tf.float32
    assert val(gx) == 3.0


def test_float64_gradient_dtype():
    x = tf.constant(2.0, dtype=tf.float64)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    gx = g.gradient(y, x)
    assert gx.dtype == tf.float64
    assert val(gx) == 4.0


# -- target is a source ----------------------------------------------------------------


def test_gradient_of_watched_source_itself_is_ones():
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as g:
        g.watch(x)
    gx = g.gradient(x, x)
    assert gx.shape == (1, 3) and gx.dtype == tf.float32
    np.testing.assert_array_equal(val(gx), [[1.0, 1.0, 1.0]])


def test_gradient_of_source_itself_with_output_gradients():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
    gx = g.gradient(x, x, output_gradients=tf.constant([3.0, 4.0]))
    np.testing.assert_array_equal(val(gx), [3.0, 4.0])


def test_gradient_of_target_list_including_source():
    x = tf.constant(2.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert val(g.gradient([x, y], x)) == 5.0


# -- stop_recording, reset -------------------------------------------------------------


def test_stop_recording_tf_doc_example():
    x = tf.constant(4.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x ** 2
    assert tape.gradient(y, x) is None


def test_stop_recording_resumes_afterwards():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            c = x * x  # a constant for the tape
        y = c * x
    assert val(tape.gradient(y, x)) == 4.0


def test_stop_recording_around_gradient_of_persistent_tape():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        with t.stop_recording():
            dy = t.gradient(y, x)
    assert val(dy) == 6.0
    assert t.gradient(dy, x) is None  # not recorded
    assert val(t.gradient(y, x)) == 6.0


def test_stop_recording_only_stops_that_tape():
    x = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert val(outer.gradient(y, x)) == 6.0


def test_stop_recording_on_never_entered_tape_raises_runtime_error():
    tape = tf.GradientTape()
    with pytest.raises(RuntimeError), tape.stop_recording():
        pass


def test_stop_recording_on_exited_tape_raises_value_error():
    # TensorFlow raises RuntimeError only for a tape that has no tape (never entered, or
    # used up); an exited tape fails in its _pop_tape: ValueError("Tape is not recording.")
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
    with pytest.raises(ValueError), tape.stop_recording():
        pass


def test_reset_inside_context_forgets_ops_and_watches():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        z = y * x  # x is no longer watched after reset
    assert tape.gradient(z, x) is None
    assert tape.gradient(y, x) is None


def test_reset_inside_context_keeps_recording():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = y * x  # y is a constant for the tape now
    assert val(tape.gradient(z, x)) == 9.0


def test_reset_like_tf_docstring():
    # "Equivalent to exiting and reentering the tape context manager with a new tape".
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        loss = v * v
        t.reset()
        loss += v * 10.0
    assert val(t.gradient(loss, v)) == 10.0


def test_reset_clears_watched_variables():
    a = tf.Variable(1.0)
    b = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = a * 2.0
        t.reset()
        z = b * 3.0
    assert list(t.watched_variables()) == [b]
    del y, z


def test_reset_then_watch_again_inside_context():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        y = x * x * x
    assert val(t.gradient(y, x)) == 12.0


def test_reset_outside_context_raises_value_error():
    # TensorFlow's reset() pops the tape first: "Tape is not recording." (ValueError).
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * 2.0
    with pytest.raises(ValueError):
        t.reset()
    assert val(t.gradient(y, x)) == 2.0


# -- recording scope ---------------------------------------------------------------------


def test_ops_run_while_no_tape_records_are_not_recorded():
    x = tf.constant(3.0)
    y = x * x  # before the tape
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        z = x * 2.0
    w = x * x * x  # after the tape
    assert t.gradient(y, x) is None
    assert t.gradient(w, x) is None
    assert val(t.gradient(z, x)) == 2.0


def test_ops_on_unwatched_tensors_do_not_link():
    x = tf.constant(3.0)
    c = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a = c * c   # not recorded: c is not watched
        y = a * x
    assert val(t.gradient(y, x)) == 4.0


def test_several_tapes_record_the_same_ops():
    x = tf.constant(3.0)
    with tf.GradientTape() as t1, tf.GradientTape() as t2:
        t1.watch(x)
        t2.watch(x)
        y = x * x
    assert val(t1.gradient(y, x)) == 6.0
    assert val(t2.gradient(y, x)) == 6.0


def test_several_tapes_watch_different_things():
    x = tf.constant(3.0)
    with tf.GradientTape() as t1, tf.GradientTape() as t2:
        t1.watch(x)
        y = x * x
        t2.watch(y)
        z = y * y
    assert val(t1.gradient(z, x)) == 4 * 27.0
    assert val(t2.gradient(z, y)) == 18.0


def test_several_tapes_with_variables():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t1, tf.GradientTape() as t2:
        y = v * v
    assert val(t2.gradient(y, v)) == 4.0
    assert val(t1.gradient(y, v)) == 4.0


def test_tape_created_inside_other_tape_sees_only_its_part():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        y = x * x
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = y * x
    assert val(inner.gradient(z, x)) == 4.0        # y is a constant for inner
    assert val(outer.gradient(z, x)) == 12.0       # 3 x^2


# -- higher order ----------------------------------------------------------------------


def test_nested_tapes_tf_doc_example():
    x = tf.constant(5.0)
    with tf.GradientTape() as g:
        g.watch(x)
        with tf.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)
    d2y_dx2 = g.gradient(dy_dx, x)
    assert val(dy_dx) == 10.0
    assert val(d2y_dx2) == 2.0


def test_third_derivative_of_cube():
    x = tf.constant(3.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = x ** 3
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert val(y) == 27.0
    assert val(d1) == 27.0
    assert val(d2) == 18.0
    assert val(d3) == 6.0
    assert all(t.dtype == tf.float32 for t in (d1, d2, d3))


def test_third_derivative_of_cube_by_products():
    x = tf.constant(3.0)
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
    assert (val(d1), val(d2), val(d3)) == (27.0, 18.0, 6.0)


def test_fourth_derivative_is_zero_or_none():
    x = tf.constant(3.0)
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
    d4 = t4.gradient(d3, x)
    assert d4 is None or val(d4) == 0.0


def test_persistent_tape_differentiates_its_own_gradient():
    # A persistent tape used inside its own context still records (TF warns only).
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x * x
        dy = t.gradient(y, x)
        d2y = t.gradient(dy, x)
    assert val(dy) == 27.0
    assert val(d2y) == 18.0
    assert val(t.gradient(d2y, x)) == 6.0


def test_gradient_inside_non_persistent_context_stops_recording():
    # TensorFlow 2: gradient() inside a non-persistent tape's context returns the
    # value and pops the tape; nothing after it is recorded; exiting is fine.
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        dy = t.gradient(y, x)
        z = dy * x
    assert val(dy) == 6.0
    assert val(z) == 18.0
    with pytest.raises(RuntimeError):
        t.gradient(z, x)


def test_gradient_inside_non_persistent_context_not_recorded_for_itself():
    x = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
            dy = t.gradient(y, x)   # recorded by the outer tape only
    assert val(outer.gradient(dy, x)) == 2.0


def test_hessian_vector_like_nested_with_variables():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = v * v * v  # per element v^3
        g = inner.gradient(y, v)  # 3 v^2
    h = outer.gradient(g, v)      # 6 v
    np.testing.assert_allclose(val(g), [3.0, 12.0])
    np.testing.assert_allclose(val(h), [6.0, 12.0])


def _derivatives(f, x0, order, dtype=tf.float64):
    """[f(x0), f'(x0), ..., f^(order)(x0)] by nested tapes."""
    x = tf.constant(x0, dtype=dtype)
    tapes = [tf.GradientTape() for _ in range(order)]
    for t in tapes:
        t.__enter__()
        t.watch(x)
    values = [f(x)]
    for t in reversed(tapes):
        d = t.gradient(values[-1], x)
        t.__exit__(None, None, None)
        values.append(d)
    return [float(val(v)) for v in values]


@pytest.mark.parametrize("x0", [-1.3, 0.0, 0.4, 2.1])
def test_second_derivative_tanh(x0):
    t = math.tanh(x0)
    got = _derivatives(tf.tanh, x0, 3)
    want = [t, 1 - t * t, -2 * t * (1 - t * t), (1 - t * t) * (6 * t * t - 2)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.7])
def test_second_derivative_sigmoid(x0):
    s = 1 / (1 + math.exp(-x0))
    got = _derivatives(tf.sigmoid, x0, 3)
    want = [s, s * (1 - s), s * (1 - s) * (1 - 2 * s),
            s * (1 - s) * (1 - 6 * s + 6 * s * s)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x0", [-1.0, 0.5, 1.5])
def test_derivatives_exp_of_sin(x0):
    e, s, c = math.exp(math.sin(x0)), math.sin(x0), math.cos(x0)
    got = _derivatives(lambda x: tf.exp(tf.math.sin(x)), x0, 2)
    want = [e, c * e, (c * c - s) * e]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("x0", [-0.5, 0.3])
def test_derivatives_tanh_of_exp_chain(x0):
    # f = tanh(exp(x)); u = exp(x); f' = (1 - tanh(u)^2) u;
    # f'' = -2 tanh(u) (1 - tanh(u)^2) u^2 + (1 - tanh(u)^2) u
    u = math.exp(x0)
    t = math.tanh(u)
    got = _derivatives(lambda x: tf.tanh(tf.exp(x)), x0, 2)
    want = [t, (1 - t * t) * u, -2 * t * (1 - t * t) * u * u + (1 - t * t) * u]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_second_derivative_float32_tanh_close():
    got = _derivatives(tf.tanh, 0.5, 2, dtype=tf.float32)
    t = math.tanh(0.5)
    np.testing.assert_allclose(got, [t, 1 - t * t, -2 * t * (1 - t * t)], rtol=1e-5)


def test_mixed_partial_derivative():
    x = tf.constant(2.0)
    y = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(y)
        with tf.GradientTape() as inner:
            inner.watch(x)
            f = x * x * y * y * y  # d2f/dxdy = 2x * 3y^2
        dfdx = inner.gradient(f, x)
    assert val(dfdx) == 2 * 2.0 * 27.0
    assert val(outer.gradient(dfdx, y)) == 2 * 2.0 * 3 * 9.0


# -- Variables ---------------------------------------------------------------------------


def test_variable_gradient_uses_value_at_read_time():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = v * v        # reads 2.0
        v.assign(5.0)
        z = y * v        # reads 5.0: z = v_a^2 v_b
    # dz/dv = 2 v_a v_b + v_a^2 = 20 + 4
    assert val(z) == 20.0
    assert val(t.gradient(z, v)) == 24.0


def test_variable_assign_after_tape_does_not_change_gradient():
    v = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = v * v
    v.assign(100.0)
    assert val(t.gradient(y, v)) == 6.0


def test_variable_assign_add_inside_tape():
    v = tf.Variable(1.0)
    with tf.GradientTape() as t:
        v.assign_add(1.0)
        y = v * v * v    # reads 2.0
    assert val(t.gradient(y, v)) == 12.0


def test_variable_and_tensor_sources_together():
    w = tf.Variable(2.0)
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = w * x * x
    gw, gx = t.gradient(y, [w, x])
    assert (val(gw), val(gx)) == (9.0, 12.0)


def test_variable_gradient_shape_and_dtype():
    w = tf.Variable(np.ones((2, 3)))  # float64 from NumPy
    with tf.GradientTape() as t:
        y = w * w
    gw = t.gradient(y, w)
    assert gw.shape == (2, 3) and gw.dtype == tf.float64
    np.testing.assert_array_equal(val(gw), 2 * np.ones((2, 3)))


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


def test_stop_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.stop_gradient(x * x) + x
    assert val(y) == 12.0
    assert val(t.gradient(y, x)) == 1.0


def test_stop_gradient_alone_gives_none():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.stop_gradient(x) * 2.0
    assert t.gradient(y, x) is None


def test_stop_gradient_on_variable():
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        y = tf.stop_gradient(v) * v
    assert val(t.gradient(y, v)) == 2.0


def test_stop_gradient_second_order():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * tf.stop_gradient(x)  # f = x^2 c, c = x held constant
        dy = inner.gradient(y, x)            # 2 x c = 8
    assert val(dy) == 8.0
    # The outer tape sees dy = 2 x stop_gradient(x): d/dx = 2 c = 4
    assert val(outer.gradient(dy, x)) == 4.0


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [3.0, None])
def test_gradient_source_not_a_tensor_raises_type_error(bad):
    # TensorFlow checks each source's dtype first: as_dtype(3.0) raises TypeError.
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(TypeError):
        t.gradient(y, bad)


def test_gradient_source_list_with_python_float_raises_type_error():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(TypeError):
        t.gradient(y, [x, 3.0])


def test_gradient_target_none_raises_type_error():
    # TensorFlow: "Cannot convert value None to a TensorFlow DType." (issue #42386)
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
    with pytest.raises(TypeError):
        t.gradient(None, x)


def test_gradient_on_never_entered_tape_raises_runtime_error():
    # TensorFlow: a tape that never recorded has no tape: gradient raises RuntimeError.
    x = tf.constant(3.0)
    t = tf.GradientTape(persistent=True)
    with pytest.raises(RuntimeError):
        t.gradient(x * x, x)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_jacobian_without_pfor_needs_persistent_tape(method):
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    with pytest.raises(RuntimeError):
        getattr(g, method)(y, x, experimental_use_pfor=False)
    # the refusal did not use the tape up
    np.testing.assert_allclose(val(g.gradient(y, x)), [[2.0, 4.0]])


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


def test_watch_integer_tensor_is_allowed():
    # TensorFlow only logs a warning; the gradient is None.
    x = tf.constant([1, 2])
    with tf.GradientTape() as t:
        with pytest.warns(UserWarning, match="must be floating"):
            t.watch(x)
        y = x * 2
    assert t.gradient(y, x) is None


def test_stop_recording_after_non_persistent_gradient_raises_runtime_error():
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * 2.0
    t.gradient(y, x)
    with pytest.raises(RuntimeError), t.stop_recording():
        pass


def test_watched_variables_of_fresh_tape_is_empty():
    assert len(tf.GradientTape().watched_variables()) == 0


def test_unwatched_constant_used_with_watched_one_gets_none():
    # TensorFlow drops the gradient of a tensor the tape does not know, even when a
    # recorded op used it ("has no associated op. Deleting gradient").
    x = tf.constant(3.0)
    c = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * c
    gx, gc = t.gradient(y, [x, c])
    assert val(gx) == 2.0
    assert gc is None


def test_unwatched_source_that_is_the_target_gets_ones():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        pass
    np.testing.assert_array_equal(val(t.gradient(x, x)), [1.0, 1.0])


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
