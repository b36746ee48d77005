"""tf.data.Dataset iterated inside tf.function, as TensorFlow 2.21: one graph loop over an
iterator that reads the dataset at every call (traced once), a dataset argument keyed by
its element_spec, and the custom-training-loop tutorials' epoch function.

Expected numbers are what TensorFlow 2.21 returned for the same functions.
"""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings

D = tf.data.Dataset


def _regression_data(n):
    x = np.linspace(-1.0, 1.0, n, dtype=np.float32).reshape(-1, 1)
    return x, 3.0 * x + 2.0


def _trainer():
    model = tf.keras.layers.Dense(1)
    model.build((None, 1))
    model.kernel.assign([[0.5]])
    model.bias.assign([0.0])
    opt = tf.keras.optimizers.SGD(learning_rate=0.3)
    loss_fn = tf.keras.losses.MeanSquaredError()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def train_epoch(dataset):
        total = tf.constant(0.0)
        for x, y in dataset:
            total += train_step(x, y)
        return total

    return model, train_epoch


def test_training_epochs_over_a_dataset_trace_once_and_match_the_eager_loop():
    x, y = _regression_data(40)

    def pipeline():  # the same seed: the eager and the traced epochs see the same orders
        return D.from_tensor_slices((x, y)).shuffle(40, seed=3).batch(16)  # 16, 16, 8

    eager_model, eager_epoch = _trainer()
    traced_model, traced_epoch = _trainer()
    traced_epoch = tf.function(traced_epoch)
    eager_ds, traced_ds = pipeline(), pipeline()
    for _ in range(4):
        np.testing.assert_allclose(float(traced_epoch(traced_ds)),
                                   float(eager_epoch(eager_ds)), rtol=1e-5)
    np.testing.assert_allclose(traced_model.kernel.numpy(), eager_model.kernel.numpy(),
                               rtol=1e-5)
    np.testing.assert_allclose(traced_model.bias.numpy(), eager_model.bias.numpy(),
                               rtol=1e-5)
    # Another dataset of the same element_spec reuses the trace.
    other = D.from_tensor_slices((x[:20], y[:20])).batch(16)
    assert float(traced_epoch(other)) > 0.0
    assert traced_epoch.experimental_get_tracing_count() == 1


def test_take_enumerate_break_reduce_and_tensor_sources():
    @tf.function
    def first_batches(ds):
        out = tf.constant(0.0)
        for batch in ds.take(3):
            out = out * 10.0 + tf.reduce_sum(batch)
        return out

    @tf.function
    def weighted(ds):
        n = tf.constant(0, tf.int64)
        for i, x in ds.enumerate(start=1):
            n += i * x
        return n

    @tf.function
    def until(ds, limit):
        n = tf.constant(0, tf.int64)
        for x in ds:
            if x > limit:
                break
            n += x
        return n

    @tf.function
    def stats(ds):
        return ds.reduce((tf.constant(0.0), tf.constant(0)),
                         lambda s, x: (s[0] + x, s[1] + 1))

    @tf.function
    def of_tensor(x):
        s = tf.constant(0.0)
        for v in D.from_tensor_slices(x).map(lambda v: v * v).skip(1):
            s += v
        return s

    batches = D.from_tensor_slices(np.arange(10, dtype=np.float32)).batch(2)
    assert float(first_batches(batches)) == 159.0
    assert int(weighted(D.range(4))) == 20
    assert int(weighted(D.range(5))) == 40
    assert weighted.experimental_get_tracing_count() == 1
    # An infinite dataset: the loop reads until the break, as TensorFlow's.
    assert int(until(D.range(3).repeat(), tf.constant(1, tf.int64))) == 1
    total, count = stats(D.from_tensor_slices([1.5, 2.5, 4.0]))
    assert (float(total), int(count), count.dtype) == (8.0, 3, tf.int32)
    assert float(of_tensor(tf.constant([1.0, 2.0, 3.0]))) == 13.0
    assert float(of_tensor(tf.constant([2.0, 2.0, 3.0]))) == 13.0
    assert of_tensor.experimental_get_tracing_count() == 1


def test_dataset_arguments_retrace_by_element_spec_and_reshuffle_per_call():
    @tf.function
    def digits(ds):
        return ds.reduce(tf.constant(0, tf.int64), lambda s, x: s * 10 + x)

    shuffled = D.range(6).shuffle(6, seed=1)
    orders = {int(digits(shuffled)) for _ in range(4)}
    assert len(orders) > 1                        # a new order at every call
    assert all(sorted(str(o).zfill(6)) == list("012345") for o in orders)
    fixed = D.range(6).shuffle(6, seed=1, reshuffle_each_iteration=False)
    assert len({int(digits(fixed)) for _ in range(3)}) == 1
    assert int(digits(D.range(3).map(lambda x: x + 1))) == 123
    assert digits.experimental_get_tracing_count() == 1   # all int64 scalars
    assert int(digits(D.range(3).batch(2).map(tf.reduce_sum))) == 12
    assert digits.experimental_get_tracing_count() == 1

    @tf.function
    def count(ds):
        return ds.reduce(tf.constant(0), lambda n, _: n + 1)

    assert [int(count(ds)) for ds in (D.range(3), D.range(5), D.from_tensor_slices([1.0]),
                                      D.range(3).batch(2), D.range(5).batch(2))] == [
        3, 5, 1, 2, 3]
    assert count.experimental_get_tracing_count() == 3  # int64, float32, int64 batches

    @tf.function
    def cardinalities(ds):
        return ds.cardinality(), ds.take(2).cardinality(), ds.batch(2).cardinality()

    assert [int(c) for c in cardinalities(D.range(3))] == [3, 2, 2]
    assert [int(c) for c in cardinalities(D.range(7).repeat())] == [-1, 2, -1]
    assert cardinalities.experimental_get_tracing_count() == 1

    @tf.function
    def made_inside():
        s = tf.constant(0, tf.int64)
        for x in D.range(6).shuffle(6):
            s = s * 10 + x
        return s

    assert len({int(made_inside()) for _ in range(4)}) > 1
    assert made_inside.experimental_get_tracing_count() == 1

    @tf.function(autograph=False)
    def without_autograph(ds):
        return [x for x in ds]

    with pytest.raises(ValueError, match="only supported when AutoGraph is enabled"):
        without_autograph(D.range(3))


def test_gradient_around_the_loop_matches_eager():
    w = tf.Variable(2.0)

    def loss_and_gradient(ds):
        with tf.GradientTape() as tape:
            total = tf.constant(0.0)
            for x in ds:
                total += tf.reduce_sum(w * x * x)
        return total, tape.gradient(total, w)

    ds = D.from_tensor_slices(np.arange(5, dtype=np.float32)).batch(2, drop_remainder=True)
    eager = loss_and_gradient(ds)
    traced = tf.function(loss_and_gradient)(ds)
    assert [float(t) for t in traced] == [float(t) for t in eager] == [28.0, 14.0]


def test_compiled_mode_runs_the_loop_on_numpy_with_a_warning(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "sync")

    @tf.function
    def total(ds):
        s = tf.constant(0, tf.int64)
        for x in ds:
            s += x
        return s

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert int(total(D.range(5))) == 10
        assert int(total(D.range(7))) == 21
    messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
    assert any("runs with NumPy kernels" in m and "AnonymousIteratorV3" in m
               for m in messages)
