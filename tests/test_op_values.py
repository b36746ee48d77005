"""Op values at TensorFlow's edge cases, eager and compiled: argmax/argmin with NaN,
reductions over a repeated axis, and tf.linspace (its `axis`, broadcasting, dtypes and
gradients). Every expected number, dtype, exception class and message was printed by
TensorFlow 2.21 (CPU) for the same call.
"""

import warnings

import numpy as np
import pytest

import tapeflow as tf

NAN, INF = np.nan, np.inf


@pytest.fixture
def compiled(monkeypatch):
    """tf.function, compiled synchronously; fails if the call fell back to NumPy kernels."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")

    def run(fn, *args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(*args)
        fallbacks = [str(w.message) for w in caught if "not compiled" in str(w.message)]
        assert not fallbacks, fallbacks
        return out
    return run


# -- argmax / argmin: NaN is skipped ---------------------------------------------------------

# (values, argmax, argmin) from TensorFlow 2.21, the same for float16, float32 and float64.
# TensorFlow starts from the lowest finite value at index 0 and moves on only to a
# strictly larger one: a NaN never wins, nor does -inf over index 0.
ARG_CASES = [
    ([1, NAN, 5], 2, 0),
    ([NAN, 1, 5], 2, 1),
    ([NAN, NAN, NAN], 0, 0),
    ([5, NAN, 1], 0, 2),
    ([NAN], 0, 0),
    ([1, 1, NAN, 1], 0, 0),
    ([NAN, -INF, -INF], 0, 1),
    ([NAN, INF], 1, 0),
    ([-INF, NAN], 0, 0),
    ([INF, NAN, INF], 0, 0),
    ([NAN, NAN, 2, NAN], 2, 2),
    ([3, NAN, 3], 0, 0),
]


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
@pytest.mark.parametrize("values, largest, smallest", ARG_CASES)
def test_argmax_argmin_skip_nan(values, largest, smallest, dtype):
    x = tf.constant(values, dtype)
    assert int(tf.argmax(x)) == largest
    assert int(tf.argmin(x)) == smallest


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_compiled_argmax_argmin_skip_nan(dtype, compiled):
    both = tf.function(lambda v: (tf.argmax(v), tf.argmin(v)))
    for values, largest, smallest in ARG_CASES:
        a, b = compiled(both, tf.constant(values, dtype))
        assert (int(a), int(b)) == (largest, smallest), values


MATRIX = [[NAN, 1.0], [2.0, NAN], [NAN, NAN], [1.0, 2.0]]


@pytest.mark.parametrize("axis, largest, smallest", [
    (1, [1, 0, 0, 1], [1, 0, 0, 0]),
    (0, [1, 3], [3, 0]),
    (-1, [1, 0, 0, 1], [1, 0, 0, 0]),
])
def test_argmax_argmin_skip_nan_along_an_axis(axis, largest, smallest, compiled):
    x = tf.constant(MATRIX)
    np.testing.assert_array_equal(tf.argmax(x, axis=axis).numpy(), largest)
    np.testing.assert_array_equal(tf.argmin(x, axis=axis).numpy(), smallest)
    both = tf.function(lambda v: (tf.argmax(v, axis=axis), tf.argmin(v, axis=axis,
                                                                       output_type=tf.int32)))
    a, b = compiled(both, x)
    np.testing.assert_array_equal(a.numpy(), largest)
    np.testing.assert_array_equal(b.numpy(), smallest)
    assert a.dtype == tf.int64 and b.dtype == tf.int32


def test_argmax_at_the_lowest_finite_value(compiled):
    # TensorFlow 2.21: -FLT_MAX does not beat index 0 in float32 (it is the start
    # value), but it does in float64, where it is an ordinary number.
    lowest32 = float(np.finfo(np.float32).min)
    for dtype, want in [(tf.float32, 0), (tf.float64, 1)]:
        x = tf.constant([-INF, lowest32], dtype)
        assert int(tf.argmax(x)) == want
        assert int(compiled(tf.function(tf.argmax), x)) == want
    x = tf.constant([NAN, lowest32, 3.0, -1.0])
    assert int(tf.argmax(x)) == 2


def test_argmax_argmin_of_integers_and_bools_are_unchanged(compiled):
    # Ties give the first index; the extremes of the dtype are ordinary values.
    i32 = np.iinfo(np.int32)
    x = tf.constant([[i32.min, i32.min, 0], [2, i32.max, i32.max], [1, 1, 1]])
    b = tf.constant([[False, True, True], [False, False, False]])
    want = ([2, 1, 0], [0, 0, 0], [1, 0], [0, 0])
    got = (tf.argmax(x, axis=1), tf.argmin(x, axis=1), tf.argmax(b, axis=1),
           tf.argmin(b, axis=1))
    fn = tf.function(lambda x, b: (tf.argmax(x, axis=1), tf.argmin(x, axis=1),
                                   tf.argmax(b, axis=1), tf.argmin(b, axis=1)))
    for g, c, w in zip(got, compiled(fn, x, b), want):
        np.testing.assert_array_equal(g.numpy(), w)
        np.testing.assert_array_equal(c.numpy(), w)


# -- reductions reject a repeated axis -------------------------------------------------------

REDUCTIONS = [
    (tf.reduce_sum, "Sum"), (tf.reduce_mean, "Mean"), (tf.reduce_max, "Max"),
    (tf.reduce_min, "Min"), (tf.reduce_prod, "Prod"), (tf.reduce_all, "All"),
    (tf.reduce_any, "Any"), (tf.math.reduce_sum, "Sum"),
    (tf.reduce_logsumexp, "Max"),  # TensorFlow's logsumexp starts with reduce_max
    (tf.math.count_nonzero, "Sum"),
]


def _input_for(reduce):
    if reduce in (tf.reduce_all, tf.reduce_any):
        return tf.constant([[True, False, True], [True, True, True]])
    return tf.ones([2, 3])


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis, repeated", [
    ([0, 0], 0), ([1, -1], 1), ([0, 1, 0], 0), ((1, 1), 1),
    ([0, 0, 5], 0),  # the repeat comes before the out-of-range axis
])
@pytest.mark.parametrize("reduce, op", REDUCTIONS)
def test_reduction_over_a_repeated_axis_raises(reduce, op, axis, repeated, keepdims):
    # TensorFlow 2.21: "Invalid reduction arguments: Axes contains duplicate dimension: 0
    # [Op:Sum]"; it used to reduce once ([2. 2. 2.] for reduce_sum of ones([2, 3])).
    kwargs = {} if reduce is tf.math.count_nonzero and not keepdims else {"keepdims": keepdims}
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"^Invalid reduction arguments: Axes contains duplicate "
                             rf"dimension: {repeated} \[Op:{op}\]$"):
        reduce(_input_for(reduce), axis=axis, **kwargs)


def test_repeated_axis_check_follows_tensorflows_order():
    x = tf.ones([2, 3, 4])
    # An out-of-range axis before the repeat is reported as such.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 5"):
        tf.reduce_sum(x, axis=[5, 0, 0])
    # Negative axes are compared after wrapping: -1 is 2 here.
    for axis in ([2, 0, -1], [-1, 2], tf.constant([2, 2])):
        with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate dimension: 2"):
            tf.reduce_max(x, axis=axis)
    # Distinct axes still work.
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=[2, 0]).numpy(), [8.0, 8.0, 8.0])


def test_repeated_axis_inside_function_raises_invalid_argument():
    # TensorFlow 2.21 raises InvalidArgumentError when the function runs.
    f = tf.function(lambda v: tf.reduce_sum(v, axis=[0, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate dimension: 0"):
        f(tf.ones([2, 3]))


# -- linspace ----------------------------------------------------------------------------------

@pytest.mark.parametrize("start, stop, num, axis, want", [
    # TensorFlow 2.21's values and shapes.
    ([0.0, 1.0], [1.0, 3.0], 3, -1, [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]]),
    ([0.0, 1.0], [1.0, 3.0], 3, 1, [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]]),
    ([0.0, 1.0], [1.0, 3.0], 3, 0, [[0.0, 1.0], [0.5, 2.0], [1.0, 3.0]]),
    ([0.0, 1.0], [1.0, 3.0], 3, -2, [[0.0, 1.0], [0.5, 2.0], [1.0, 3.0]]),
    ([0.0, 5.0], [10.0, 40.0], 5, -1,
     [[0.0, 2.5, 5.0, 7.5, 10.0], [5.0, 13.75, 22.5, 31.25, 40.0]]),
    (0.0, 1.0, 3, -1, [0.0, 0.5, 1.0]),
    # start and stop broadcast against each other
    (0.0, [[1.0, 3.0]], 3, 1, [[[0.0, 0.0], [0.5, 1.5], [1.0, 3.0]]]),
    ([[0.0], [1.0]], [1.0, 3.0, 5.0], 3, 1,
     [[[0.0, 0.0, 0.0], [0.5, 1.5, 2.5], [1.0, 3.0, 5.0]],
      [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 5.0]]]),
    # num 0 and 1 (a slice of [start, stop]) and 2
    (0.0, 1.0, 0, 0, np.zeros([0])),
    (0.0, 1.0, 1, 0, [0.0]),
    (0.0, 1.0, 2, 0, [0.0, 1.0]),
    ([0.0, 1.0], [1.0, 3.0], 0, 1, np.zeros([2, 0])),
    # endpoints are exact: no 0 * inf
    (0.0, INF, 3, 0, [0.0, INF, INF]),
    (-INF, INF, 3, 0, [-INF, NAN, INF]),
    (NAN, 1.0, 3, 0, [NAN, NAN, 1.0]),
])
def test_linspace_values(start, stop, num, axis, want, compiled):
    want = np.asarray(want, np.float32)
    got = tf.linspace(start, stop, num, axis=axis)
    assert got.dtype == tf.float32 and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    fn = tf.function(lambda a, b: tf.linspace(a, b, num, axis=axis))
    np.testing.assert_array_equal(
        compiled(fn, tf.constant(start), tf.constant(stop)).numpy(), want)


def test_linspace_float32_values_are_tensorflows():
    # start + i * delta in float32, bit for bit (TensorFlow 2.21's output).
    want = np.array([-3.299999952316284, -1.1800000667572021, 0.9399998188018799,
                     3.059999704360962, 5.179999351501465, 7.299999237060547,
                     9.419999122619629, 11.539999008178711, 13.659998893737793,
                     15.779997825622559, 17.899999618530273], np.float32)
    np.testing.assert_array_equal(tf.linspace(-3.3, 17.9, 11).numpy(), want)
    want = np.array([0.10000000149011612, 0.19999998807907104, 0.29999998211860657,
                     0.3999999761581421, 0.4999999701976776, 0.5999999642372131,
                     0.699999988079071], np.float32)
    np.testing.assert_array_equal(tf.linspace(0.1, 0.7, 7).numpy(), want)


@pytest.mark.parametrize("start, stop, want_dtype", [
    (0, 10, tf.float64),                                   # int32: float64, as TF
    (tf.constant(0, tf.int64), 10, tf.float64),
    (tf.constant(0, tf.int16), 10, tf.float32),
    (tf.constant(0.0, tf.float64), 10.0, tf.float64),
    (np.float64(0.0), 10.0, tf.float64),
    (tf.constant(0.0, tf.float16), 10.0, tf.float16),
])
def test_linspace_dtypes(start, stop, want_dtype):
    got = tf.linspace(start, stop, 5)
    assert got.dtype == want_dtype
    np.testing.assert_array_equal(got.numpy(), [0.0, 2.5, 5.0, 7.5, 10.0])


@pytest.mark.parametrize("num", [tf.constant(3, tf.int64), np.int64(3), tf.constant(3)])
def test_linspace_num_may_be_an_integer_tensor(num):
    np.testing.assert_array_equal(tf.linspace(0.0, 1.0, num).numpy(), [0.0, 0.5, 1.0])


def _linspace_gradients(a, b, num, loss=lambda y: tf.reduce_sum(y ** 2), **kwargs):
    a, b = tf.constant(a), tf.constant(b)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = loss(tf.linspace(a, b, num, **kwargs))
    return tape.gradient(y, [a, b])


@pytest.mark.parametrize("a, b, num, kwargs, want_a, want_b", [
    # TensorFlow 2.21: d/d(start, stop) of reduce_sum(linspace(start, stop, num) ** 2).
    (0.0, 1.0, 5, {}, 1.25, 3.75),
    (0.0, 1.0, 3, {}, 0.5, 2.5),
    (0.0, 1.0, 2, {}, 0.0, 2.0),
    (0.0, 1.0, 1, {}, 0.0, 0.0),   # zeros, not None: stop is sliced away
    (0.0, 1.0, 0, {}, 0.0, 0.0),
    ([0.0, 1.0], [2.0, 5.0], 4, {"axis": 1}, [1.7777776718139648, 7.55555534362793],
     [6.222222328186035, 16.44444465637207]),
    ([0.0, 1.0], 2.0, 4, {"axis": 1}, [1.7777776718139648, 4.888888359069824],
     13.333333969116211),
])
def test_linspace_gradient(a, b, num, kwargs, want_a, want_b):
    ga, gb = _linspace_gradients(a, b, num, **kwargs)
    np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-6)


def test_linspace_gradient_of_a_plain_sum():
    # TensorFlow 2.21: n = 1 gives (1, 0); an infinite stop still gives finite weights.
    ga, gb = _linspace_gradients(0.0, 1.0, 1, loss=tf.reduce_sum)
    assert (float(ga), float(gb)) == (1.0, 0.0)
    ga, gb = _linspace_gradients(0.0, INF, 3, loss=tf.reduce_sum)
    assert (float(ga), float(gb)) == (1.5, 1.5)


def test_linspace_gradient_inside_function(compiled):
    @tf.function
    def f(a, b):
        with tf.GradientTape() as tape:
            tape.watch([a, b])
            y = tf.linspace(a, b, 5, axis=-1)
            loss = tf.reduce_sum(y ** 2)
        return y, tape.gradient(loss, [a, b])

    # TensorFlow 2.21's numbers, as in eager mode.
    y, (ga, gb) = compiled(f, tf.constant(0.0), tf.constant(1.0))
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose([float(ga), float(gb)], [1.25, 3.75], rtol=1e-6)
    y, (ga, gb) = compiled(f, tf.constant([[0.0], [1.0]], tf.float64),
                           tf.constant([2.0, 5.0, 7.0], tf.float64))
    assert y.shape == (2, 3, 5) and y.dtype == tf.float64
    np.testing.assert_allclose(ga.numpy(), [[17.5], [28.75]], rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), [16.25, 38.75, 53.75], rtol=1e-12)


def test_linspace_second_order_and_jacobian():
    # TensorFlow 2.21: 12.0 and 27.11111; the jacobian rows below.
    x = tf.constant(1.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.linspace(x, x * x, 4) ** 2)
        g = inner.gradient(y, x)
    np.testing.assert_allclose([float(g), float(outer.gradient(g, x))], [12.0, 27.11111],
                               rtol=1e-6)
    a, b = tf.Variable([0.0, 1.0]), tf.Variable([2.0, 4.0])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.linspace(a, b, 3, axis=1)
    np.testing.assert_array_equal(tape.jacobian(y, a).numpy(),
                                  [[[1.0, 0.0], [0.5, 0.0], [0.0, 0.0]],
                                   [[0.0, 1.0], [0.0, 0.5], [0.0, 0.0]]])
    np.testing.assert_array_equal(tape.jacobian(y, b, experimental_use_pfor=False).numpy(),
                                  [[[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]],
                                   [[0.0, 0.0], [0.0, 0.5], [0.0, 1.0]]])


# -- inputs TensorFlow accepts: stack, pad, expand_dims, transpose, reshape, activations -----
# Every expected value, shape and dtype below is what TensorFlow 2.21 printed.

@pytest.mark.parametrize("values, dtype, want", [
    ([1, 2.5], tf.float32, [1.0, 2.5]),  # one constant: floats win, as in tf.constant
    ([[1, 2], [3, 4.5]], tf.float32, [[1.0, 2.0], [3.0, 4.5]]),
    ((1, 2), tf.int32, [1, 2]),
    ([1, 2**40], tf.int64, [1, 2**40]),
    ([[True, False]], tf.bool, [[True, False]]),
])
def test_stack_of_python_numbers_is_one_constant(values, dtype, want):
    out = tf.stack(values)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), want)


def test_stack_of_nothing_is_an_empty_float32_vector():
    for empty in ([], ()):
        out = tf.stack(empty)
        assert out.dtype == tf.float32 and out.shape == (0,)


def test_stack_keeps_the_dtypes_of_arrays_and_tensors():
    assert tf.stack([np.array([1.0, 2.0]), np.array([3.0, 4.0])]).dtype == tf.float64
    assert tf.stack([np.float64(1.0), 2]).dtype == tf.float64
    assert tf.stack([tf.constant(1.0), 2]).dtype == tf.float32
    # an integral float axis is read as an int (TensorFlow: shape (1, 2))
    assert tf.stack([tf.constant([1.0]), tf.constant([2.0])], axis=1.0).shape == (1, 2)


def test_pad_with_a_plain_zero_pads_with_the_dtype_zero(compiled):
    np.testing.assert_array_equal(tf.pad(tf.constant([True]), [[1, 1]]).numpy(),
                                  [False, True, False])
    np.testing.assert_array_equal(
        tf.pad(tf.constant([[True, False]]), [[1, 0], [0, 1]]).numpy(),
        [[False, False, False], [True, False, False]])
    out = tf.pad(tf.constant([1, 2]), [[1, 1]], constant_values=0.0)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 0])
    padded = compiled(tf.function(lambda b: tf.pad(b, [[1, 1]])), tf.constant([True, False]))
    np.testing.assert_array_equal(padded.numpy(), [False, True, False, False])


@pytest.mark.parametrize("axis, shape", [
    ([0], (1, 2)), ([1], (2, 1)), ((-1,), (2, 1)), (np.array([0]), (1, 2)),
    (tf.constant([0]), (1, 2)), (tf.constant([[0]]), (1, 2)), (np.int64(1), (2, 1)),
])
def test_expand_dims_takes_an_axis_holding_one_value(axis, shape):
    v = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(v)
        y = tf.expand_dims(v, axis)
        loss = tf.reduce_sum(y * tf.reshape(tf.constant([3.0, 4.0]), shape))
    assert y.shape == shape
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), [3.0, 4.0])


def test_transpose_with_negative_perm_entries(compiled):
    x = tf.reshape(tf.range(6.0), [2, 3])
    want = [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    np.testing.assert_array_equal(tf.transpose(x, [-1, 0]).numpy(), want)
    assert tf.transpose(tf.ones([2, 3, 4]), [-1, 0, 1]).shape == (4, 2, 3)
    out = compiled(tf.function(lambda v: tf.transpose(v, [-1, -2])), x)
    np.testing.assert_array_equal(out.numpy(), want)
    # TensorFlow 2.21's gradient fails here (InvertPermutation of [-1, 0]); tapeflow's is
    # the transpose of the incoming gradient.
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.transpose(x, [-1, 0]) * tf.constant([[1.0, 2.0], [3.0, 4.0],
                                                                     [5.0, 6.0]]))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(),
                                  [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])


@pytest.mark.parametrize("shape, target, want", [
    ((0, 3), [0, -1], (0, 3)),
    ((0, 3), [-1, 0], (3, 0)),
    ((0, 3), [0, -1, 5], (0, 0, 5)),
    ((0, 3), [0, 0, -1], (0, 0, 3)),
    ((3, 0, 2), [0, -1], (0, 6)),
    ((0,), [-1, 0], (1, 0)),
    ((0, 3), [2, -1], (2, 0)),  # no 0 requested: the -1 is 0, as before
    ((3, 0, 2), [-1, 4], (0, 4)),
])
def test_reshape_of_an_empty_tensor_sizes_the_minus_one_as_tensorflow(shape, target, want,
                                                                      compiled):
    # TensorFlow leaves zero sizes out of the product, and the input's zero dimensions
    # out of its count when the requested shape has a 0.
    z = tf.zeros(shape)
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = tf.reshape(z, target)
        total = tf.reduce_sum(y)
    assert y.shape == want
    assert tape.gradient(total, z).shape == shape
    assert compiled(tf.function(lambda v: tf.reshape(v, target)), z).shape == want


@pytest.mark.parametrize("target, want", [
    ([0, -1], (0, 3)), ([-1, 0], (3, 0)), ([0, -1, 5], (0, 0, 5)), ([0, 0, -1], (0, 0, 3)),
])
@pytest.mark.parametrize("mode", ["off", "sync"])
def test_reshape_of_an_empty_tensor_of_a_size_unknown_while_tracing(target, want, mode,
                                                                   monkeypatch):
    # TensorFlow 2.21, the same function traced for TensorSpec([None, 3]) and called with
    # zeros([0, 3]): (0, 3), (3, 0), (0, 0, 5) and (0, 0, 3). The -1 is sized when the
    # graph runs, by TensorFlow's rule, interpreted and compiled (where NumPy's -1 beside a
    # 0 gave (0, 0)).
    monkeypatch.setattr(tf.config.settings, "compile_mode", mode)
    f = tf.function(lambda v: tf.reshape(v, target))
    concrete = f.get_concrete_function(tf.TensorSpec([None, 3]))
    z = tf.zeros([0, 3])
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = concrete(z)
        total = tf.reduce_sum(y)
    assert y.shape == want
    assert tape.gradient(total, z).shape == (0, 3)
    assert concrete(z).shape == want  # a second call (compiled by now under "sync")
    assert concrete.wait_compiled(30) == (mode == "sync")
    # With an input_signature, each call's shapes are traced: the size is known then.
    g = tf.function(lambda v: tf.reshape(v, target), input_signature=[tf.TensorSpec([None, 3])])
    assert g(z).shape == want
    # A tensor that is not empty has no such shape: TensorFlow's Reshape kernel raises
    # InvalidArgumentError "Input to reshape is a tensor with 6 values, but the requested
    # shape has 0". (A TF 2.21 tf.function returns it unchanged instead, (2, 3), when its
    # graph optimizer rewrites the Reshape; without the optimizer it raises.)
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor with 6 values"):
        concrete(tf.zeros([2, 3]))


def test_reshape_errors_while_tracing_are_tensorflows_graph_errors():
    # TensorFlow 2.21 inside tf.function, on a traced [2, 2] input: ValueError ("Cannot
    # reshape a tensor with 4 elements to shape [0,-1] (0 elements)" and the like).
    x = tf.zeros([2, 2])
    for target in ([0, -1], [3, -1], [3, 3], [-1, -1, 0], [-2, 0]):
        f = tf.function(lambda v, t=target: tf.reshape(v, t))
        with pytest.raises(ValueError, match=r"\[Op:Reshape\]"):
            f(x)
    # eagerly, the kernel's InvalidArgumentError
    with pytest.raises(tf.errors.InvalidArgumentError, match="requested shape has 0"):
        tf.reshape(x, [0, -1])


def test_activations_take_tensorflows_features_keyword():
    x = tf.constant([-1.5, 0.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        outs = [tf.nn.relu(features=x), tf.nn.elu(features=x), tf.nn.softplus(features=x)]
    want = [[0.0, 0.0, 2.0], [-0.7768698334693909, 0.0, 2.0],
            [0.20141328871250153, 0.6931471824645996, 2.1269280910491943]]
    grads = [[0.0, 0.0, 1.0], [0.22313016653060913, 1.0, 1.0],
             [0.18242551386356354, 0.5, 0.8807970881462097]]
    for out, w, g in zip(outs, want, grads):
        np.testing.assert_allclose(out.numpy(), w, rtol=1e-6)
        np.testing.assert_allclose(tape.gradient(out, x).numpy(), g, rtol=1e-6)
    np.testing.assert_allclose(tf.math.softplus(features=[0.0]).numpy(), [0.6931472],
                               rtol=1e-6)


# -- operators on bool tensors: `*` multiplies as int32, `^` is logical_xor --------------------

A = [True, False, True, False]
B = [True, True, False, False]


@pytest.mark.parametrize("expr, want", [
    (lambda a, b: a ^ b, [False, True, True, False]),
    (lambda a, b: a * b, [True, False, False, False]),
    (lambda a, b: a * 2.5, [True, False, True, False]),  # 2.5 cast to int32 is 2
    (lambda a, b: a * tf.constant([0.5, 1.5, 2.0, 0.0]), [False, False, True, False]),
    (lambda a, b: tf.constant([0.5, 1.5, -1.0, 3.0]) * a, [False, False, True, False]),
    (lambda a, b: True ^ a, [False, True, False, True]),
    (lambda a, b: a ^ False, [True, False, True, False]),
    (lambda a, b: a & b, [True, False, False, False]),
    (lambda a, b: a | b, [True, True, True, False]),
    (lambda a, b: ~a, [False, True, False, True]),
    (lambda a, b: np.array([2, 3, 0, 1]) * a, [True, False, False, False]),
    (lambda a, b: tf.Variable(A) * b, [True, False, False, False]),
])
def test_bool_operators_as_tensorflow(expr, want, compiled):
    a, b = tf.constant(A), tf.constant(B)
    out = expr(a, b)
    assert out.dtype == tf.bool
    np.testing.assert_array_equal(out.numpy(), want)
    if "Variable" not in expr.__code__.co_names:
        np.testing.assert_array_equal(compiled(tf.function(expr), a, b).numpy(), want)


def test_reflected_bool_product_converts_the_python_operand_first():
    # TensorFlow 2.21: TypeError "Cannot convert 2.5 to EagerTensor of dtype bool" (the
    # left operand is converted to the tensor's dtype), while `t * 2.5` works.
    for left in (2.5, 3, [1, 0]):
        with pytest.raises(TypeError, match="to EagerTensor of dtype bool"):
            left * tf.constant([True, False])


def test_bool_product_feeds_a_gradient_as_a_constant():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.cast(tf.constant([True, False]) * x, tf.float32) * x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 0.0])  # TF 2.21


def test_argmax_output_type_must_be_an_integer_type():
    # TensorFlow: InvalidArgumentError, "Value for attr 'output_type' of float ..."
    with pytest.raises(tf.errors.InvalidArgumentError, match="output_type"):
        tf.argmax(tf.constant([1.0, 2.0]), output_type=tf.float32)
    # While tracing, TensorFlow 2.21: TypeError "Value passed to parameter 'output_type'
    # has DataType float32 not in list of allowed values: int16, uint16, int32, int64"
    f = tf.function(lambda v: tf.argmax(v, output_type=tf.float32))
    with pytest.raises(TypeError, match=r"output_type.*int32, int64 \[Op:ArgMax\]"):
        f(tf.constant([1.0, 2.0]))


def test_logical_xor():
    got = tf.math.logical_xor(tf.constant([True, False, True]), tf.constant([True, True, False]))
    np.testing.assert_array_equal(got.numpy(), [False, True, True])


def test_relu_gradients_multiply_as_tensorflow(monkeypatch):
    """TensorFlow's ReluGrad and Relu6Grad are dy * mask: an Inf or NaN gradient stays NaN
    where the mask is 0 (checked against TensorFlow 2.21), eagerly and compiled."""
    from tapeflow.ops.elementwise import RELU_GRAD
    from tapeflow.ops.nn import RELU6_GRAD
    from tapeflow.ops.registry import bind

    dy = tf.constant([np.nan, np.inf, np.inf, np.nan, -2.0, 1.0])
    x = tf.constant([-1.0, 2.0, -3.0, 0.0, -1.0, 2.0])
    expected = np.array([np.nan, np.inf, np.nan, np.nan, -0.0, 1.0], np.float32)

    def both(dy, x):
        return bind(RELU_GRAD, (dy, x)), bind(RELU6_GRAD, (dy, x))

    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")
    for got in (*both(dy, x), *tf.function(both)(dy, x)):
        np.testing.assert_array_equal(got.numpy(), expected)
        assert np.signbit(got.numpy()[4])  # -2 * 0 is -0, as TensorFlow's product
