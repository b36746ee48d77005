"""tf.data.Dataset against TensorFlow 2.21: elements, element_spec, cardinality, reprs and
errors of the sources and transformations, shuffle's semantics (not its numbers), map
functions traced once, and datasets iterated inside tf.function (more in
tests/test_data_in_function.py).

Expected values are what TensorFlow 2.21 printed for the same pipelines.
"""

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def numpy_list(ds):
    return [tf.nest.map_structure(np.asarray, e) for e in ds.as_numpy_iterator()]


def test_sources_and_reprs():
    ds = D.from_tensor_slices([1, 2, 3])
    assert repr(ds) == ("<_TensorSliceDataset element_spec=TensorSpec(shape=(), "
                        "dtype=tf.int32, name=None)>")
    assert ds.as_numpy_iterator().__next__().dtype == np.int32
    assert [int(x) for x in ds] == [1, 2, 3]
    pairs = D.from_tensor_slices((np.arange(4.0), [[1, 2], [3, 4], [5, 6], [7, 8]]))
    assert repr(pairs.element_spec) == (
        "(TensorSpec(shape=(), dtype=tf.float64, name=None), "
        "TensorSpec(shape=(2,), dtype=tf.int32, name=None))")
    first = next(iter(pairs.batch(2)))
    np.testing.assert_array_equal(first[1].numpy(), [[1, 2], [3, 4]])
    records = D.from_tensor_slices({"a": [1, 2], "b": [[1.0], [2.0]]})
    assert [sorted(r) for r in numpy_list(records)] == [["a", "b"], ["a", "b"]]
    assert float(numpy_list(records)[1]["b"][0]) == 2.0
    assert repr(D.from_tensors([1, 2])) == (
        "<_TensorDataset element_spec=TensorSpec(shape=(2,), dtype=tf.int32, name=None)>")
    assert numpy_list(D.range(1, 10, 3, output_type=tf.int32)) == [1, 4, 7]
    assert D.range(5).element_spec == tf.TensorSpec((), tf.int64)


def test_transformations_match_tensorflow():
    batches = numpy_list(D.range(7).batch(3))
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6]]
    assert repr(D.range(7).batch(3).element_spec) == (
        "TensorSpec(shape=(None,), dtype=tf.int64, name=None)")
    assert D.range(7).batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert len(D.range(7).batch(3, drop_remainder=True)) == 2
    assert numpy_list(D.range(4).map(lambda x: x * 2)) == [0, 2, 4, 6]
    assert numpy_list(D.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    assert numpy_list(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert numpy_list(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert numpy_list(D.range(10).skip(8)) == [8, 9]
    assert numpy_list(D.range(3).enumerate(start=5)) == [(5, 0), (6, 1), (7, 2)]
    assert numpy_list(D.zip(D.range(3), D.range(10, 12))) == [(0, 10), (1, 11)]
    assert numpy_list(D.zip((D.range(3), D.range(10, 15)))) == [(0, 10), (1, 11), (2, 12)]
    assert numpy_list(D.range(6).batch(4).unbatch()) == [0, 1, 2, 3, 4, 5]
    assert int(D.range(5).reduce(tf.constant(0, tf.int64), lambda a, x: a + x)) == 10
    assert numpy_list(D.range(3).prefetch(tf.data.AUTOTUNE)) == [0, 1, 2]
    assert repr(D.range(3).cache()).startswith("<CacheDataset element_spec=")
    assert repr(D.range(3).enumerate()).startswith("<_ZipDataset element_spec=(TensorSpec(")
    mapped = D.from_tensor_slices(([1.0, 2.0], [3, 4])).map(lambda x, y: (x + 1, y))
    assert repr(mapped) == ("<_MapDataset element_spec=(TensorSpec(shape=(), dtype=tf.float32,"
                            " name=None), TensorSpec(shape=(), dtype=tf.int32, name=None))>")
    # A map function's output shape is what its trace knows: fill([x], x) is (None,).
    assert D.range(3).map(lambda x: tf.fill([x], x)).element_spec.shape == (None,)


@pytest.mark.parametrize("pipeline, expected", [
    (lambda: D.range(7).batch(3), 3),
    (lambda: D.range(10).filter(lambda x: x > 1), tf.data.UNKNOWN_CARDINALITY),
    (lambda: D.range(3).repeat(), tf.data.INFINITE_CARDINALITY),
    (lambda: D.range(3).repeat(2), 6),
    (lambda: D.range(10).take(-1), 10),
    (lambda: D.range(10).skip(20), 0),
    (lambda: D.range(0).repeat(), 0),
    (lambda: D.range(5).filter(lambda x: x > 1).take(2), -2),
    (lambda: D.range(5).repeat().take(3), 3),
    (lambda: D.range(5).repeat().skip(3), -1),
    (lambda: D.range(10).shuffle(4, seed=1), 10),
])
def test_cardinality(pipeline, expected):
    cardinality = pipeline().cardinality()
    assert cardinality.dtype == tf.int64 and int(cardinality) == expected


def test_errors():
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(D.range(3).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(D.range(3).filter(lambda x: x > 0))
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        D.from_tensor_slices(([1, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="Unbatching a tensor is only supported for rank >= 1"):
        D.from_tensor_slices(3)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot add tensor to the batch: number of elements does not "
                             r"match\. Shapes are: \[tensor\]: \[1\], \[batch\]: \[0\]"):
        list(D.range(3).map(lambda x: tf.fill([x], x)).batch(3))
    with pytest.raises(ValueError, match=r"`predicate` must return a `tf.bool` scalar tensor, "
                                         r"but its return type is TensorSpec\(shape=\(\), "
                                         r"dtype=tf.int64, name=None\)"):
        D.range(3).filter(lambda x: x)
    with pytest.raises(TypeError, match="Python `list` is not supported"):
        D.zip([D.range(2), D.range(3)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater"):
        D.range(3).batch(0)


def test_shuffle_semantics():
    ds = D.range(10).shuffle(10, seed=1)
    first, second = numpy_list(ds), numpy_list(ds)
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10))
    assert first != second                         # reshuffled at each iteration
    fixed = D.range(10).shuffle(10, seed=1, reshuffle_each_iteration=False)
    assert numpy_list(fixed) == numpy_list(fixed)
    assert numpy_list(D.range(10).shuffle(1)) == list(range(10))   # a buffer of one
    # A buffer of two: the first element comes from the first two.
    assert all(numpy_list(D.range(10).shuffle(2))[0] in (0, 1) for _ in range(10))
    tf.random.set_seed(3)
    a = numpy_list(D.range(10).shuffle(10))
    tf.random.set_seed(3)
    assert numpy_list(D.range(10).shuffle(10)) == a   # the global seed fixes the order


def test_map_is_traced_once_with_autograph_and_cache_replays():
    calls = []

    def plus_one(x):
        calls.append(x)             # Python side effects run when the function is traced
        if x > 2:                   # AutoGraph: a tensor condition
            return x * 10
        return x + 1

    ds = D.range(5).map(plus_one)
    assert numpy_list(ds) == [1, 2, 3, 30, 40]
    assert len(calls) == 1
    noisy = D.range(3).map(lambda x: tf.random.uniform([]) + tf.cast(x, tf.float32)).cache()
    assert numpy_list(noisy) == numpy_list(noisy)


def test_iterating_inside_tf_function_assigns_at_every_call():
    w = tf.Variable(0.0)
    ds = D.from_tensor_slices(([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0])).batch(2)

    @tf.function
    def train(ds):
        for x, y in ds:
            w.assign_add(tf.reduce_sum(x * y))
        return w.read_value()

    assert float(train(ds)) == 60.0
    assert float(train(ds)) == 120.0
    assert train.experimental_get_tracing_count() == 1


def test_a_training_loop_over_batches():
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(-1, 1)
    ds = D.from_tensor_slices((x, 3.0 * x + 2.0)).shuffle(64, seed=0).batch(16)
    model = tf.keras.layers.Dense(1)
    opt = tf.keras.optimizers.SGD(0.3)
    loss_fn, mean_loss = tf.keras.losses.MeanSquaredError(), tf.keras.metrics.Mean()
    for _ in range(30):
        mean_loss.reset_state()
        for xb, yb in ds:
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                    model.trainable_variables))
            mean_loss.update_state(loss)
    assert float(mean_loss.result()) < 1e-3
    np.testing.assert_allclose(model.kernel.numpy(), [[3.0]], atol=0.05)


def test_cache_to_a_file_is_read_by_later_runs_and_checked(tmp_path):
    path = str(tmp_path / "squares")
    first = D.range(4).map(lambda x: x * x).cache(path)
    assert [int(v) for v in first] == [0, 1, 4, 9]
    later_run = D.range(4).map(lambda x: x * 100).cache(path)  # reads the file instead
    assert [int(v) for v in later_run] == [0, 1, 4, 9]
    with pytest.raises(tf.errors.DataLossError, match="element_spec"):
        list(D.from_tensor_slices([1.0, 2.0]).cache(path))
    (tmp_path / "squares.tapeflow-cache.npz").write_bytes(b"not an archive")
    with pytest.raises(tf.errors.DataLossError, match="not a readable dataset cache"):
        list(D.range(4).cache(path))
