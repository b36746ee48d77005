"""Index and size checks of the indexing and shape ops, eagerly and inside tf.function
(compiled), and errors of compiled kernels: TensorFlow 2.21's class and words, naming the
op and (inside tf.function) the user's line; a compiled kernel never reads or writes out
of bounds."""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.errors import InvalidArgumentError, ResourceExhaustedError

HERE = r"\S*test_bounds\.py:\d+"


@pytest.fixture
def compiled(monkeypatch):
    """tf.function graphs run compiled, and must not fall back to the NumPy kernels."""
    monkeypatch.setattr(settings, "compile_mode", "sync")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*runs with NumPy kernels")
        yield


def _raises(error, pattern, fn, *args):
    with pytest.raises(error, match=pattern):
        fn(*args)


# -- compiled kernels: errors NumPy raises inside them name the op and the line ------------

def test_singular_matrices_in_a_compiled_function(compiled):
    @tf.function
    def inverse_and_solve(a):
        return tf.linalg.inv(a), tf.linalg.solve(a + 1.0, tf.ones((2, 1)))

    a = tf.constant([[2.0, 0.0], [0.0, 4.0]])
    inv, _ = inverse_and_solve(a)
    np.testing.assert_allclose(inv.numpy(), [[0.5, 0.0], [0.0, 0.25]])
    _raises(InvalidArgumentError, rf"^Input is not invertible\. \(at {HERE}: .*"
                                  rf"\[Op:MatrixInverse\]$", inverse_and_solve, tf.zeros((2, 2)))
    _raises(InvalidArgumentError, rf"^Input matrix is not invertible\. \(at {HERE}: .*"
                                  rf"\[Op:MatrixSolve\]$", inverse_and_solve,
            tf.constant([[0.0, 1.0], [1.0, 3.0]]))  # invertible, but not once 1 is added


def test_an_op_that_fails_after_code_that_cannot_is_still_named(compiled):
    # Scalar ops and checked slices need no store of the running node (site_marks.py);
    # the inverse, which can fail unnamed, must still have its store, in a loop too.
    @tf.function
    def scaled_inverses(a, s):
        total = tf.zeros((2, 2))
        for i in tf.range(tf.shape(a)[0]):
            k = s * 2.0 + 1.0
            total += tf.linalg.inv(a[i]) * k
        return total

    eye = tf.constant([np.eye(2, dtype=np.float32)] * 2)
    np.testing.assert_allclose(scaled_inverses(eye, tf.constant(1.0)).numpy(),
                               6 * np.eye(2), rtol=1e-6)
    _raises(InvalidArgumentError, rf"^Input is not invertible\. \(at {HERE}: .*"
                                  rf"\[Op:MatrixInverse\]$", scaled_inverses,
            tf.constant([np.eye(2), np.zeros((2, 2))], tf.float32), tf.constant(1.0))
    lines = scaled_inverses.get_concrete_function(eye, tf.constant(1.0)) \
        .kernel_source.splitlines()
    body = lines.index("    while True:")
    inverse = lines.index("        # MatrixInverse")
    stores = [line for line in lines[body:] if line.strip().startswith("W[0] =")]
    assert not [line for line in lines[body:inverse] if "W[0] =" in line], "\n".join(lines)
    assert lines[inverse + 1].strip() == stores[0].strip()


def test_run_time_sizes_in_a_compiled_function(compiled):
    @tf.function
    def blocks(n, m):
        return tf.zeros([n, 2]), tf.ones([m, m])

    three, two = tf.constant(3), tf.constant(2)
    assert [t.shape for t in blocks(three, two)] == [(3, 2), (2, 2)]
    _raises(InvalidArgumentError, rf"^Dimension -3 must be >= 0 \(at {HERE}: .*tf.zeros",
            blocks, tf.constant(-3), two)
    # (2**31 - 1)**2 float32s: more bytes than an address space (Numba refuses the size).
    _raises(ResourceExhaustedError, rf"^OOM when allocating a float32 tensor .*\(at {HERE}: "
                                    rf".*tf.ones", blocks, three, tf.constant(2**31 - 1))


def test_run_time_reshape_targets_in_a_compiled_function(compiled):
    @tf.function
    def reshaped(shape):
        return tf.reshape(tf.range(6.0), shape)

    assert reshaped(tf.constant([3, -1])).shape == (3, 2)
    _raises(InvalidArgumentError, rf"^Input to reshape is a tensor with 6 values, but the "
                                  rf"requested shape has 8 \(at {HERE}", reshaped,
            tf.constant([4, 2]))
    _raises(InvalidArgumentError, r"^Only one input size may be -1, not both 0 and 1 ",
            reshaped, tf.constant([-1, -1]))
    _raises(InvalidArgumentError, r"^Size 1 must be non-negative, not -2 ", reshaped,
            tf.constant([-1, -2]))


def test_compiled_gather_and_segment_errors_name_the_index(compiled):
    m = tf.reshape(tf.range(6.0), [2, 3])

    @tf.function
    def gather_and_sum(i, ids):
        return tf.gather(m, i, axis=1), tf.math.unsorted_segment_sum(m[0], ids, 3)

    ok = gather_and_sum(tf.constant([[0, 2]]), tf.constant([0, -1, 2]))
    np.testing.assert_array_equal(ok[1].numpy(), [0.0, 0.0, 2.0])  # a negative id drops
    _raises(InvalidArgumentError, rf"^indices\[0,1\] = -1 is not in \[0, 3\) \(at {HERE}: "
                                  rf".*\[Op:GatherV2\]$", gather_and_sum,
            tf.constant([[0, -1]]), tf.constant([0, 1, 2]))
    _raises(InvalidArgumentError, r"^segment_ids\[2\] = 5 is out of range \[0, 3\) .*"
                                  r"\[Op:UnsortedSegmentSum\]$", gather_and_sum,
            tf.constant([[0, 1]]), tf.constant([0, 1, 5]))


# -- tf.slice: TensorFlow's bounds, where NumPy would clamp -------------------------------

SLICE_ERRORS = [
    ([5], [1], r"Expected begin\[0\] in \[0, 3\], but got 5 \[Op:Slice\]"),
    ([-2], [1], r"Expected begin\[0\] in \[0, 3\], but got -2 \[Op:Slice\]"),
    ([4], [-1], r"Expected begin\[0\] in \[0, 3\], but got 4 \[Op:Slice\]"),
    ([2], [3], r"Expected size\[0\] in \[0, 1\], but got 3 \[Op:Slice\]"),
    ([1], [-2], r"Expected size\[0\] in \[0, 2\], but got -2 \[Op:Slice\]"),
    ([0, 0], [1, 1], r"Expected begin and size arguments to be 1-D tensors of size 1, but "
                     r"got shapes \[2\] and \[2\] instead\. \[Op:Slice\]"),
]


@pytest.mark.parametrize("begin, size, pattern", SLICE_ERRORS)
def test_slice_out_of_bounds(begin, size, pattern):
    _raises(InvalidArgumentError, pattern, tf.slice, tf.constant([1.0, 2.0, 3.0]), begin,
            size)


def test_slice_within_bounds_and_inside_a_function(compiled):
    x = tf.constant([1.0, 2.0, 3.0])
    assert tf.slice(x, [3], [0]).shape == (0,)
    assert tf.slice(x, [0], [-1]).numpy().tolist() == [1.0, 2.0, 3.0]

    @tf.function
    def tail(y):
        return tf.slice(y, [1], [-1]), tf.slice(y, [2], [1])

    assert [t.numpy().tolist() for t in tail(x)] == [[2.0, 3.0], [3.0]]
    _raises(InvalidArgumentError, r"Expected size\[0\] in \[0, 0\], but got 1 \[Op:Slice\]",
            tail, tf.constant([1.0, 2.0]))


# -- tf.slice with begin and size known when the function runs ----------------------------

SPEC = tf.TensorSpec


@pytest.fixture(scope="module")
def slice_at_run_time():
    """Slice and its gradient (Pad) with begin and size as tensors, and a slice with
    constant bounds of a dimension unknown while tracing: one compiled kernel."""
    @tf.function
    def sliced(x, begin, size):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.slice(x, begin, size)
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, x), tf.slice(x, [2, 0], [1, -1])

    saved = settings.compile_mode, settings.run_functions_eagerly
    settings.compile_mode, settings.run_functions_eagerly = "sync", False
    try:
        yield sliced.get_concrete_function(SPEC([None, None]), SPEC([None], tf.int32),
                                           SPEC([None], tf.int32))
    finally:
        settings.compile_mode, settings.run_functions_eagerly = saved


def test_slice_with_tensor_bounds_in_a_compiled_function(compiled, slice_at_run_time):
    x = tf.reshape(tf.range(12.0), [3, 4])
    y, dx, row = slice_at_run_time(x, tf.constant([1, 1]), tf.constant([2, -1]))
    np.testing.assert_array_equal(y.numpy(), [[5.0, 6.0, 7.0], [9.0, 10.0, 11.0]])
    np.testing.assert_array_equal(dx.numpy(), np.pad(2 * y.numpy(), [[1, 0], [1, 0]]))
    np.testing.assert_array_equal(row.numpy(), [[8.0, 9.0, 10.0, 11.0]])
    eager = tf.slice(x, tf.constant([0, 2]), [3, 2])
    assert eager.shape == (3, 2) and float(tf.reduce_sum(eager)) == 39.0


SLICE_RUN_TIME_ERRORS = [
    ([1, 5], [2, -1], rf"^Expected begin\[1\] in \[0, 4\], but got 5 \(at {HERE}: "
                      r"y = tf\.slice\(x, begin, size\)\) \[Op:Slice\]$"),
    ([1, 1], [3, -1], r"^Expected size\[0\] in \[0, 2\], but got 3 "),
    ([1, 1], [2, 4], r"^Expected size\[1\] in \[0, 3\], but got 4 "),
    ([-1, 0], [1, 1], r"^Expected begin\[0\] in \[0, 3\], but got -1 "),
    ([1], [2, -1], r"^Expected begin and size arguments to be 1-D tensors of size 2, but got "
                   r"shapes \[1\] and \[2\] instead\. "),
]


@pytest.mark.parametrize("begin, size, pattern", SLICE_RUN_TIME_ERRORS)
def test_slice_run_time_bounds(compiled, slice_at_run_time, begin, size, pattern):
    x = tf.reshape(tf.range(12.0), [3, 4])
    _raises(InvalidArgumentError, pattern, slice_at_run_time, x, tf.constant(begin),
            tf.constant(size))
    _raises(InvalidArgumentError, pattern.split(r" \(at")[0], tf.slice, x, tf.constant(begin),
            tf.constant(size))


def test_slice_of_a_dimension_unknown_while_tracing(compiled, slice_at_run_time):
    # [2, 0] to [1, -1] of a one-row input: the begin is past the end when it runs.
    _raises(InvalidArgumentError, rf"^Expected begin\[0\] in \[0, 1\], but got 2 \(at {HERE}: "
                                  r".*\[2, 0\], \[1, -1\]\)\) \[Op:Slice\]$",
            slice_at_run_time, tf.ones([1, 4]), tf.constant([0, 0]), tf.constant([1, 1]))
    _raises(InvalidArgumentError, r"^Expected begin\[0\] == 0 \(got 0\) and size\[0\] == 0 "
                                  r"\(got 1\) when input.dim_size\(0\) == 0 ",
            slice_at_run_time, tf.ones([0, 4]), tf.constant([0, 0]), tf.constant([1, 1]))


# -- dimensions unknown while tracing: checked before the kernel's loops ------------------

@pytest.fixture(scope="module")
def unknown_dims():
    """Ops whose sizes must agree, traced with every dimension unknown: one kernel."""
    @tf.function
    def shaped(a, v, u, m1, m2, b1, b2, r):
        return (tf.pad(a, [[2, 0], [0, 1]], mode="REFLECT"), tf.split(v, [2, 3]),
                tf.unstack(u, num=3), tf.matmul(m1, m2), tf.matmul(b1, b2),
                tf.reshape(r, [4, 2]), tf.einsum("ij,kj->ik", m1, r))

    saved = settings.compile_mode, settings.run_functions_eagerly
    settings.compile_mode, settings.run_functions_eagerly = "sync", False
    try:
        yield shaped.get_concrete_function(
            SPEC([None, None]), SPEC([None]), SPEC([None, 2]), SPEC([2, None]),
            SPEC([None, 3]), SPEC([None, 2, None]), SPEC([None, None, 3]),
            SPEC([None, None]))
    finally:
        settings.compile_mode, settings.run_functions_eagerly = saved


def _shaped_inputs(**changed):
    shapes = {"a": [3, 3], "v": [5], "u": [3, 2], "m1": [2, 4], "m2": [4, 3],
              "b1": [2, 2, 4], "b2": [2, 4, 3], "r": [2, 4]}
    shapes.update(changed)
    return [tf.ones(shapes[name]) for name in ("a", "v", "u", "m1", "m2", "b1", "b2", "r")]


UNKNOWN_DIM_ERRORS = [
    ({"a": [2, 3]}, r"paddings must be less than the dimension size: 2, 0 not less than 2",
     "MirrorPad"),
    ({"a": [3, 1]}, r"paddings must be less than the dimension size: 0, 1 not less than 1",
     "MirrorPad"),
    ({"v": [4]}, r"Determined shape must either match input shape along split_dim exactly if "
                 r"fully specified, or be less than the size of the input along split_dim if "
                 r"not fully specified.  Got: 5", "SplitV"),
    ({"u": [2, 2]}, r"Input shape axis 0 must equal 3, got shape \[2,2\]", "Unpack"),
    ({"m1": [2, 5]}, r"Matrix size-incompatible: In\[0\]: \[2,5\], In\[1\]: \[4,3\]", "MatMul"),
    ({"b1": [2, 2, 5]}, r"Matrix size-incompatible: In\[0\]: \[2,2,5\], In\[1\]: \[2,4,3\] 0 0",
     "BatchMatMulV2"),
    ({"b1": [3, 2, 4]}, r"In\[0\] and In\[1\] must have compatible batch dimensions: "
                        r"\[3,2,4\] vs. \[2,4,3\]", "BatchMatMulV2"),
    ({"r": [2, 3]}, r"Input to reshape is a tensor with 6 values, but the requested shape has 8",
     "Reshape"),
    ({"r": [1, 8]}, r"Expected dimension 4 at axis 1 of the input shaped \[1,8\] but got "
                    r"dimension 8", "Einsum"),
]


@pytest.mark.parametrize("changed, pattern, op", UNKNOWN_DIM_ERRORS)
def test_unknown_dimensions_checked_when_the_kernel_runs(compiled, unknown_dims, changed,
                                                          pattern, op):
    _raises(InvalidArgumentError, rf"^{pattern} \(at {HERE}: .*\) \[Op:{op}\]$",
            unknown_dims, *_shaped_inputs(**changed))


def test_unknown_dimensions_within_bounds(compiled, unknown_dims):
    out = unknown_dims(*_shaped_inputs())
    assert [tuple(t.shape) for t in tf.nest.flatten(out)] == [
        (5, 4), (2,), (3,), (2,), (2,), (2,), (2, 3), (2, 2, 3), (4, 2), (2, 2)]
    np.testing.assert_array_equal(out[0].numpy(), np.ones((5, 4)))


# -- messages of the index checks, as TensorFlow's ------------------------------------------

def test_compiled_index_errors_name_the_index_and_the_row(compiled):
    m = tf.reshape(tf.range(6.0), [3, 2])

    @tf.function
    def indexed(i, rows):
        return m[i], tf.gather_nd(m, rows), tf.scatter_nd(rows, tf.ones([1, 2]), [3, 2])

    got = indexed(tf.constant(-1), tf.constant([[[0, 1], [2, 0]]]))
    assert [t.numpy().tolist() for t in got[:2]] == [[4.0, 5.0], [[1.0, 4.0]]]
    _raises(InvalidArgumentError, rf"^slice index 3 of dimension 0 out of bounds\. \(at {HERE}: "
                                  r".*\) \[Op:StridedSlice\]$", indexed, tf.constant(3),
            tf.constant([[[0, 1], [2, 0]]]))
    _raises(InvalidArgumentError, r"^slice index -4 of dimension 0 out of bounds\. ", indexed,
            tf.constant(-4), tf.constant([[[0, 1], [2, 0]]]))
    # GatherNd names the last bad row, the params' shape and itself; ScatterNd (which
    # runs only if the gather did) the first, and the output's "shape".
    _raises(InvalidArgumentError, r"^indices\[0,1\] = \[5, 0\] does not index into param shape "
                                  r"\[3,2\], node name: GatherNd \(at .*\[Op:GatherNd\]$",
            indexed, tf.constant(0), tf.constant([[[0, 2], [5, 0]]]))
    _raises(InvalidArgumentError, r"^indices\[0,1\] = \[5, 0\] does not index into param shape ",
            tf.gather_nd, m, tf.constant([[[0, 2], [5, 0]]]))
    _raises(InvalidArgumentError, r"^indices\[1\] = \[5, 0\] does not index into shape \[3,2\] "
                                  r"\[Op:ScatterNd\]$", tf.scatter_nd,
            tf.constant([[0, 0], [5, 0]]), tf.ones([2]), [3, 2])


# -- eager outputs too big to allocate ---------------------------------------------------------

@pytest.mark.parametrize("make, op, shape", [
    # More bytes than a 64-bit address space maps: NumPy's allocation fails at once.
    (lambda: tf.broadcast_to(tf.ones([1]), [10**7, 10**7]), "BroadcastTo", "10000000,10000000"),
    (lambda: tf.pad(tf.ones([2, 2]), [[10**7, 10**7], [10**7, 10**7]]), "PadV2",
     "20000002,20000002"),
])
def test_eager_outputs_too_big_are_resource_exhausted(make, op, shape):
    _raises(ResourceExhaustedError, rf"^OOM when allocating tensor with shape\[{shape}\] and "
                                    rf"type float on .* \[Op:{op}\]$", make)
