"""tf.saved_model.save / load in tapeflow's own format, and graph serialization: round
trips compute the same values and gradients; damaged or hostile directories give a clear
error naming the file, never a crash, and nothing in them is ever executed.

Functions run on the interpreter here (compile_mode "off"); the compiled path of a
loaded function is covered by the tutorial's SavedModel example
(tests/test_tutorial_advanced_autodiff.py)."""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.graph.function import ConcreteFunction
from tapeflow.graph.serialize import GraphReader, GraphWriter


@pytest.fixture(autouse=True)
def _interpreted(monkeypatch):
    monkeypatch.setattr(tf.config.settings, "compile_mode", "off")


# -- graph serialization ---------------------------------------------------------------------

_V = tf.Variable([1.0, 2.0, 3.0], name="v")


def _arithmetic(x):
    return x * 2.0 + tf.sin(x) / (1.0 + x * x)


def _matmul(x):
    return tf.reduce_sum(tf.matmul(tf.reshape(x, (1, 3)), tf.ones((3, 2))), axis=1)


def _reductions(x):
    return tf.reduce_max(x) + tf.reduce_mean(x[1:]) + tf.reduce_prod(x[..., None], axis=[0, 1])


def _cond(x):
    if tf.reduce_sum(x) > 0:
        y = x * _V
    else:
        y = -x
    return y


def _while_loop(x):
    i = tf.constant(0)
    acc = x
    while i < 3:
        acc = tf.tanh(acc) * _V
        i += 1
    return acc


def _assign(x):
    _V.assign_add(x)
    return _V * x


@pytest.mark.parametrize("fn", [_arithmetic, _matmul, _reductions, _cond, _while_loop,
                                _assign], ids=lambda f: f.__name__[1:])
def test_graph_round_trip_same_values_and_gradients(fn):
    x = tf.constant([0.5, -0.3, 0.8])
    concrete = tf.function(fn).get_concrete_function(x)
    writer = GraphWriter(lambda var: 0)
    data = json.loads(json.dumps(writer.graph(concrete.graph)))
    graph = GraphReader(dict(writer.arrays), [_V], "test.json").graph(data, "graph")
    loaded = ConcreteFunction(graph, graph.outputs[0], [0], "loaded")
    results = []
    for f in (concrete, loaded):
        _V.assign([1.0, 2.0, 3.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        results.append([y, *tape.gradient(y, [x, _V]), _V.read_value()])
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


# -- modules -----------------------------------------------------------------------------------

class Inner(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0]], name="w")


class Model(tf.Module):
    def __init__(self):
        super().__init__(name="model")
        self.v = tf.Variable(3.0, name="v")
        self.frozen = tf.Variable(1.0, trainable=False, name="frozen")
        self.inner = Inner()
        self.layers = [self.inner, {"a": tf.Variable(5.0, name="a")}]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def scale(self, x):
        return x * self.v + tf.reduce_sum(self.inner.w)

    @tf.function
    def plain(self, x, y=2.0):
        return {"out": x * y + self.frozen, "two": x}


def _saved(tmp_path, model=None, **kwargs):
    model = model or Model()
    model.plain(tf.constant(1.0))
    model.plain(tf.constant([1.0, 2.0]))
    tf.saved_model.save(model, str(tmp_path / "model"), **kwargs)
    return model, tf.saved_model.load(str(tmp_path / "model"))


def test_loaded_module_has_variables_functions_and_structure(tmp_path):
    _, loaded = _saved(tmp_path)
    assert isinstance(loaded.v, tf.Variable) and loaded.v.name == "v:0"
    assert loaded.v.trainable and not loaded.frozen.trainable
    assert loaded.layers[0] is loaded.inner  # shared objects stay shared
    assert float(loaded.layers[1]["a"]) == 5.0
    np.testing.assert_array_equal(loaded.inner.w.numpy(), [[1.0, 2.0]])
    assert not hasattr(loaded, "variables")  # as TensorFlow's loaded tf.Module
    np.testing.assert_allclose(loaded.scale(tf.constant([1.0, 2.0])), [6.0, 9.0])
    out = loaded.plain(tf.constant([1.0, 2.0]))
    assert sorted(out) == ["out", "two"]
    np.testing.assert_allclose(out["out"], [3.0, 5.0])
    # The loaded variables are the ones the functions read.
    loaded.v.assign(10.0)
    np.testing.assert_allclose(loaded.scale(tf.constant([1.0])), [13.0])


def test_loaded_function_dispatch_errors_as_tensorflow(tmp_path):
    _, loaded = _saved(tmp_path)
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.plain(tf.constant([[1.0]]))  # no trace of that shape
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.plain(tf.constant(1.0), 3.0)  # traced for y=2.0 only
    with pytest.raises(TypeError, match="Can not cast"):
        loaded.scale(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="too many positional arguments"):
        loaded.scale(1.0, 2.0)
    np.testing.assert_allclose(loaded.scale([1.0]), [6.0])  # converted, as the signature says


def test_loaded_function_differentiates_inputs_and_variables(tmp_path):
    _, loaded = _saved(tmp_path)
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(loaded.scale(x) ** 2)
    dx, dv, dw = tape.gradient(y, [x, loaded.v, loaded.inner.w])
    # y = sum((3x + 3)^2): dy/dx = 6(3x + 3), dy/dv = sum 2(3x + 3)x, dy/dw = sum 2(3x + 3)
    np.testing.assert_allclose(dx, [36.0, 54.0])
    np.testing.assert_allclose(dv, 12.0 + 36.0)
    np.testing.assert_allclose(dw, [[30.0, 30.0]])


def test_signatures(tmp_path):
    model = Model()
    _, loaded = _saved(tmp_path, model)  # the one tf.function with an input_signature
    serving = loaded.signatures["serving_default"]
    assert list(loaded.signatures) == ["serving_default"]
    assert sorted(serving.structured_input_signature[1]) == ["x"]
    result = serving(x=tf.constant([1.0, 2.0]))
    assert list(result) == ["output_0"]
    np.testing.assert_allclose(result["output_0"], [6.0, 9.0])
    plain = model.plain.get_concrete_function(tf.TensorSpec([2]))
    tf.saved_model.save(model, str(tmp_path / "named"),
                        signatures={"dict": plain, "scale": model.scale})
    named = tf.saved_model.load(str(tmp_path / "named")).signatures
    out = named["dict"](x=tf.constant([1.0, 2.0]))
    assert sorted(out) == ["out", "two"]  # a dict's keys name the outputs
    np.testing.assert_allclose(out["out"], [3.0, 5.0])
    with pytest.raises(TypeError, match="missing a required argument"):
        named["scale"]()


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(2)

    @tf.function(input_signature=[tf.TensorSpec([None, 3])])
    def __call__(self, x, *extra, scale=1.0, **named):
        return self.dense(x) * scale


def test_callable_module_with_a_keras_layer(tmp_path):
    net = Net()
    x = tf.constant([[1.0, 2.0, 3.0]])
    tf.saved_model.save(net, str(tmp_path / "net"))
    loaded = tf.saved_model.load(str(tmp_path / "net"))
    np.testing.assert_allclose(loaded(x), net(x))
    # As a Keras layer that tf.saved_model.load revives: its variable lists.
    assert [v.name for v in loaded.dense.trainable_variables] == ["kernel:0", "bias:0"]
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(loaded(x))
    dkernel, dbias = tape.gradient(y, loaded.dense.trainable_variables)
    np.testing.assert_allclose(dkernel, [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(dbias, [1.0, 1.0])


def test_options_and_what_cannot_be_saved(tmp_path):
    with pytest.raises(TypeError):
        tf.saved_model.SaveOptions(bogus=1)
    tf.saved_model.LoadOptions(allow_partial_checkpoint=True)
    with pytest.raises(ValueError, match="Expected an object of type `Trackable`"):
        tf.saved_model.save([1, 2], str(tmp_path / "list"))
    with pytest.raises(ValueError, match="input_signature"):
        tf.saved_model.save(Model(), str(tmp_path / "x"), signatures=Model().plain)


# -- custom gradients -------------------------------------------------------------------------

@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


class CustomModule(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x) * 3.0


_LOAD_AND_DIFFERENTIATE = """
import tapeflow as tf
tf.config.settings.compile_mode = "off"
v = tf.Variable(2.0)
loaded = tf.saved_model.load({path!r})
try:
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    print(t.gradient(output, v))
except LookupError as e:
    print("LookupError:", str(e).split(". ")[0])
"""


def _save_custom(tmp_path, flag):
    path = str(tmp_path / f"custom_{flag}")
    tf.saved_model.save(CustomModule(), path,
                        options=tf.saved_model.SaveOptions(experimental_custom_gradients=flag))
    return path


def test_custom_gradient_saved_and_used_by_the_loaded_function(tmp_path):
    loaded = tf.saved_model.load(_save_custom(tmp_path, True))
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    # dy = 3 is clipped to 0.5, times d(v * v)/dv = 4
    assert float(t.gradient(output, v)) == 2.0
    x = tf.constant([[3.0, 4.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        output = loaded.call_custom_grad(x)
    np.testing.assert_allclose(t.gradient(output, x), [[0.5 / np.sqrt(2)] * 2], rtol=1e-6)


def test_custom_gradient_not_saved_has_no_gradient_in_a_new_process(tmp_path):
    path = _save_custom(tmp_path, False)
    code = _LOAD_AND_DIFFERENTIATE.format(path=path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout == ("LookupError: No gradient defined for operation'IdentityN' "
                          "(op type: IdentityN)\n")


def test_a_custom_gradient_node_whose_outputs_are_not_its_inputs_is_refused(tmp_path):
    path = _save_custom(tmp_path, True)

    def identity_n(document):
        return next(node for function in document["functions"] for c in function["concrete"]
                    for node in c["graph"]["nodes"] if node["op"] == "IdentityN")
    _edit(tmp_path / "custom_True", lambda d: identity_n(d)["outputs"][0].update(shape=[7]))
    with pytest.raises(ValueError, match=r"saved_model.json: .*IdentityN's outputs are not "):
        tf.saved_model.load(path)


# -- damaged and hostile directories ------------------------------------------------------------

@pytest.fixture
def saved_dir(tmp_path):
    model = Model()
    tf.saved_model.save(model, str(tmp_path / "m"))
    return tmp_path / "m"


def _edit(saved_dir, change):
    path = saved_dir / "saved_model.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _first_node(document):
    """The first node of a saved graph that has inputs."""
    return next(node for function in document["functions"] for c in function["concrete"]
                for node in c["graph"]["nodes"] if node["inputs"])


def test_missing_files_are_os_errors(saved_dir, tmp_path):
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.load(str(tmp_path / "nothing"))
    os.remove(saved_dir / "variables" / "variables.npz")
    with pytest.raises(OSError, match="variables.npz"):
        tf.saved_model.load(str(saved_dir))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d.update(format="other"), "not a tapeflow SavedModel"),
    (lambda d: _first_node(d).update(op="__import__"), "unknown op '__import__'"),
    (lambda d: _first_node(d)["outputs"][0].update(dtype="object"), "unknown dtype 'object'"),
    (lambda d: _first_node(d)["outputs"][0].update(shape=[7, 7]), "infer says"),
    (lambda d: _first_node(d)["inputs"][0].update(value=10**6), "expected an integer"),
    (lambda d: d["variables"][0].update(shape=[2]), "variable '"),
    (lambda d: d.update(root={"object": 99}), "expected an integer"),
    (lambda d: _first_node(d)["attrs"].update(
        code={"eval": "__import__('os').system('touch pwned')"}), "unknown attr kind 'eval'"),
], ids=["version", "format", "op-name", "dtype", "shape", "reference", "variable",
        "object", "tagged-code"])
def test_tampered_json_is_a_value_error_naming_the_file(saved_dir, change, message,
                                                        monkeypatch):
    monkeypatch.chdir(saved_dir)
    _edit(saved_dir, change)
    with pytest.raises(ValueError, match=message) as info:
        tf.saved_model.load(str(saved_dir))
    assert "saved_model.json" in str(info.value) or "variables.npz" in str(info.value)
    assert not os.path.exists(saved_dir / "pwned")


def test_code_in_a_string_attr_stays_a_string(saved_dir, monkeypatch):
    monkeypatch.chdir(saved_dir)
    _edit(saved_dir, lambda d: _first_node(d)["attrs"].update(
        code="__import__('os').system('touch pwned')"))
    try:
        loaded = tf.saved_model.load(str(saved_dir))
        loaded.scale(tf.constant([1.0]))
    except (ValueError, TypeError, tf.errors.InvalidArgumentError):
        pass  # refused, when or before the node runs: either is fine
    assert not os.path.exists(saved_dir / "pwned")


def test_truncated_files_are_value_errors(saved_dir):
    for name in ("saved_model.json", "constants.npz"):
        path = saved_dir / name
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
        with pytest.raises(ValueError, match=name):
            tf.saved_model.load(str(saved_dir))
        path.write_bytes(data)


class _Plant:
    """Unpickling it would create a file: the proof that a pickle was run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


def test_pickled_arrays_are_refused_not_run(saved_dir):
    marker = saved_dir / "planted"
    payload = np.empty((), dtype=object)
    payload[()] = _Plant(str(marker))
    with open(saved_dir / "variables" / "variables.npz", "wb") as f:
        np.savez(f, v0=payload)
    with pytest.raises(ValueError, match="variables.npz"):
        tf.saved_model.load(str(saved_dir))
    assert not marker.exists()
    pickle.loads(pickle.dumps(_Plant(str(marker)))).close()  # noqa: S301
    assert marker.exists()  # the payload is real: loading it would have run it
