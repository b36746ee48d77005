"""tf.Module and tf.name_scope, as TensorFlow 2.21 (expected values printed by it)."""

import pytest

import tapeflow as tf


class Leaf(tf.Module):
    def __init__(self, value, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(value, name="w")


class Tree(tf.Module):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(1.0, name="a")
        self.items = [tf.Variable(2.0, name="l0"),
                      {"k": tf.Variable(3.0, name="dk"), "b": tf.Variable(4.0, name="db")}]
        self.frozen = (tf.Variable(5.0, trainable=False, name="t0"),)
        self.child = Leaf(6.0, name="child")
        self.child.grand = Leaf(7.0, name="grand")


def names(values):
    return [v.name for v in values]


def test_variables_are_found_through_attributes_lists_dicts_and_tuples():
    tree = Tree()
    # TensorFlow's order: attributes sorted by name (dict keys sorted too), then the
    # submodules' variables.
    assert names(tree.variables) == ["a:0", "t0:0", "l0:0", "db:0", "dk:0", "w:0", "w:0"]
    assert names(tree.trainable_variables) == ["a:0", "l0:0", "db:0", "dk:0", "w:0", "w:0"]
    assert names(tree.non_trainable_variables) == ["t0:0"]
    assert [m.name for m in tree.submodules] == ["child", "grand"]
    assert isinstance(tree.variables, tuple) and isinstance(tree.submodules, tuple)


def test_submodules_are_walked_attributes_first_then_depth_by_depth():
    root = tf.Module()
    root.x = [tf.Module(name="c1"), (tf.Module(name="c2"),)]
    root.x[0].y = tf.Module(name="c3")
    assert [m.name for m in root.submodules] == ["c1", "c2", "c3"]
    flat = root._flatten(with_path=True, predicate=lambda v: isinstance(v, tf.Module))
    paths = [path for path, _ in flat]
    assert paths == [("x", 0), ("x", 1, 0), ("x", 0, "y")]


def test_flatten_with_path_gives_a_shared_variable_once_per_path():
    shared = tf.Variable(1.0)
    root = tf.Module()
    root.first, root.second = shared, [shared]
    root.self_loop = root  # a cycle ends the walk instead of recursing forever
    assert root.variables == (shared,)
    flat = list(root._flatten(with_path=True, predicate=lambda v: isinstance(v, tf.Variable)))
    # As TensorFlow: a module met again inside itself is walked one level, no deeper.
    assert [path for path, _ in flat] == [("first",), ("second", 0), ("self_loop", "first"),
                                          ("self_loop", "second", 0)]
    # Without paths every object comes once (the root itself counts as seen).
    assert list(root._flatten(predicate=lambda v: v is shared or v is root)) == [shared]


def test_names_follow_tensorflow():
    class CamelCaseHTTPModule(tf.Module):
        pass

    assert CamelCaseHTTPModule().name == "camel_case_http_module"
    assert tf.Module().name == "module"
    assert tf.Module(name="_ok").name == "_ok"
    for bad in ["1abc", "a b", "a/b", "", "x.y"]:
        with pytest.raises(ValueError, match="is not a valid module name"):
            tf.Module(name=bad)
    with pytest.raises(TypeError):
        tf.Module(name=3)


def test_name_scope_prefixes_variable_names_eagerly():
    with tf.name_scope("outer"):
        with tf.name_scope("inner") as scope:
            inner = tf.Variable(1.0, name="v")
        with tf.name_scope("abs/") as absolute:
            replaced = tf.Variable(1.0)
        with tf.name_scope("") as top:
            plain = tf.Variable(1.0)
        module = tf.Module()
    assert (scope, inner.name) == ("outer/inner/", "outer/inner/v:0")
    assert (absolute, replaced.name) == ("abs/", "abs/Variable:0")
    assert (top, plain.name) == ("", "Variable:0")
    assert tf.Variable(1.0).name == "Variable:0"
    # A module's scope is fixed when it is made, and not made unique.
    assert module.name_scope.name == "outer/module/"
    with module.name_scope as entered:
        assert tf.Variable(1.0, name="x").name == "outer/module/x:0"
    assert entered == "outer/module/"
    with pytest.raises(ValueError, match="name for name_scope must be a string"):
        tf.name_scope(None)


def test_with_name_scope_and_variables_made_inside_a_method():
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = None

        @tf.Module.with_name_scope
        def __call__(self, x):
            if self.w is None:
                self.w = tf.Variable(x, name="w")
            return self.w * x

    scale = Scale()
    assert scale.variables == ()
    scale(tf.constant(2.0))
    assert names(scale.variables) == ["scale/w:0"]


def test_tf_function_methods_are_listed_bound_and_track_their_variables():
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.count = None
            self.plain = tf.function(lambda x: x + 1)

        @tf.function(input_signature=[tf.TensorSpec(None)])
        def add(self, x):
            if self.count is None:  # made on the first trace, then captured
                self.count = tf.Variable(0.0, name="count")
            self.count.assign_add(tf.reduce_sum(x))
            return self.count.read_value()

    counter = Counter()
    functions = counter._functions()
    assert sorted(functions) == ["add", "plain"]
    assert functions["add"] is counter.add  # bound to this instance, one per instance
    assert Counter().add is not counter.add
    assert float(functions["add"]([1.0, 2.0])) == 3.0
    assert float(counter.add(tf.constant(4.0))) == 7.0
    assert names(counter.variables) == ["count:0"]
    assert counter.add.experimental_get_tracing_count() == 1


# -- Keras layers are Modules, with Keras 3's names (printed by TensorFlow 2.21) ----------

def test_keras_layer_is_a_module_with_keras_names_and_paths():
    dense = tf.keras.layers.Dense(2)
    assert isinstance(dense, tf.Module)
    second = tf.keras.layers.Dense(2)
    base = dense.name
    assert base.startswith("dense") and second.name == f"dense_{int(base[6:] or 0) + 1}"
    with tf.name_scope("ignored"):  # tf.name_scope does not reach Keras names
        dense(tf.ones((1, 3)))
    assert (dense.kernel.name, dense.kernel.path) == ("kernel", f"{base}/kernel")
    assert repr(dense.bias) == f"<Variable path={base}/bias, shape=(2,), dtype=float32, " \
                               f"value=[0. 0.]>"
    assert isinstance(dense.kernel, tf.Variable)
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        tf.keras.layers.Dense(1, name="a/b")


def test_layers_built_inside_a_layer_have_paths_under_it():
    class Outer(tf.keras.layers.Layer):
        def __init__(self, inner):
            super().__init__(name="outer")
            self.inner = inner
            self.head = tf.keras.layers.Dense(1, name="head")
            self.scale = self.add_weight(shape=(), initializer="ones", name="scale")

        def call(self, x):
            return self.head(self.inner(x)) * self.scale

    inner = tf.keras.layers.Dense(2, name="inner")
    inner(tf.ones((1, 3)))  # built before: its path stays its own
    outer = Outer(inner)
    outer(tf.ones((1, 3)))
    assert [v.path for v in outer.variables] == [
        "outer/scale", "inner/kernel", "inner/bias", "outer/head/kernel", "outer/head/bias"]
    assert [m.name for m in outer.submodules] == ["head", "inner"]
    assert isinstance(outer.variables, list)


def test_optimizer_variables_are_named_as_keras():
    var = tf.Variable([1.0], name="myw")
    dense = tf.keras.layers.Dense(1, name="d")
    dense(tf.ones((1, 1)))
    opt = tf.keras.optimizers.Adam(0.1, amsgrad=True, name="adam_named")
    opt.apply_gradients([(tf.constant([1.0]), var), (tf.ones((1, 1)), dense.kernel)])
    assert [v.path for v in opt.variables] == [
        "adam_named/iteration", "adam_named/learning_rate",
        "adam_named/myw_0_momentum", "adam_named/myw_0_velocity",
        "adam_named/myw_0_velocity_hat", "adam_named/d_kernel_momentum",
        "adam_named/d_kernel_velocity", "adam_named/d_kernel_velocity_hat"]
    assert tf.keras.optimizers.SGD().name.startswith("sgd")
