"""tf.keras: Dense, BatchNormalization, SGD, Adam and the activations against Keras'
formulas, eagerly and inside @tf.function.

References are hand-written NumPy (float64) versions of what Keras computes, or numbers
TensorFlow 2.21 (Keras 3.15.1) computed, hard-coded and marked so. Every test runs with
compilation off (the NumPy tier of tf.function), so no Numba compile runs here.
"""

import re

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def no_compile(monkeypatch):
    monkeypatch.setattr(tf.config.settings, "compile_mode", "off")
    tf.random.set_seed(1234)


def ramp(lo=-0.5, hi=0.5):
    """An initializer (called as Keras calls one: `init(shape, dtype=...)`) giving evenly
    spaced values from lo to hi: deterministic weights."""
    def init(shape, dtype=tf.float32):
        n = int(np.prod(shape))
        return tf.constant(np.linspace(lo, hi, n).reshape(shape), dtype=dtype)
    return init


def np_batch(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=rtol, atol=atol)


# -- Dense ---------------------------------------------------------------------------------

def test_dense_is_built_on_first_call():
    layer = tf.keras.layers.Dense(4)
    assert layer.units == 4 and not layer.built
    assert layer.variables == [] and layer.trainable_variables == []
    y = layer(tf.ones((2, 3)))
    assert layer.built
    assert y.shape == (2, 4) and y.dtype == tf.float32
    assert tuple(layer.kernel.shape) == (3, 4) and tuple(layer.bias.shape) == (4,)
    assert [id(v) for v in layer.variables] == [id(layer.kernel), id(layer.bias)]
    assert [id(v) for v in layer.trainable_variables] == [id(layer.kernel), id(layer.bias)]
    assert layer.non_trainable_variables == []
    assert re.fullmatch(r"dense(_\d+)?", layer.name)
    # Keras 3's names: the variable's own, and its path under the layer's name.
    assert (layer.kernel.name, layer.kernel.path) == ("kernel", f"{layer.name}/kernel")
    assert (layer.bias.name, layer.bias.path) == ("bias", f"{layer.name}/bias")
    # A second call reuses the variables.
    kernel = layer.kernel
    layer(tf.zeros((5, 3)))
    assert layer.kernel is kernel and len(layer.variables) == 2


def test_dense_names_are_unique():
    a, b = tf.keras.layers.Dense(1), tf.keras.layers.Dense(1)
    assert a.name != b.name
    assert tf.keras.layers.Dense(1, name="head").name == "head"


def test_dense_default_initializers_are_glorot_uniform_and_zeros():
    layer = tf.keras.layers.Dense(50)
    layer(tf.ones((1, 30)))
    kernel = layer.kernel.numpy()
    limit = np.sqrt(6.0 / (30 + 50))
    assert kernel.dtype == np.float32
    assert np.all(np.abs(kernel) <= limit)
    # Uniform on [-limit, limit]: mean 0, std limit / sqrt(3) (1500 draws).
    assert abs(kernel.mean()) < 0.1 * limit
    assert abs(kernel.std() - limit / np.sqrt(3)) < 0.1 * limit
    assert len(np.unique(kernel)) > 1400
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(50, np.float32))


def _np_activation(name):
    return {
        None: lambda z: z,
        "linear": lambda z: z,
        "relu": lambda z: np.maximum(z, 0),
        "sigmoid": lambda z: 1 / (1 + np.exp(-z)),
        "tanh": np.tanh,
        "elu": lambda z: np.where(z > 0, z, np.expm1(z)),
        "softplus": lambda z: np.log1p(np.exp(z)),
        "softmax": lambda z: np.exp(z) / np.exp(z).sum(-1, keepdims=True),
    }[name]


@pytest.mark.parametrize("activation", [None, "linear", "relu", "sigmoid", "tanh", "elu",
                                        "softplus", "softmax"])
def test_dense_activation_by_name(activation):
    layer = tf.keras.layers.Dense(3, activation=activation)
    x = np_batch((4, 2))
    y = layer(x)
    z = x.astype(np.float64) @ layer.kernel.numpy() + layer.bias.numpy()
    assert y.shape == (4, 3) and y.dtype == tf.float32
    assert_close(y.numpy(), _np_activation(activation)(z))


@pytest.mark.parametrize("activation, name", [(tf.nn.relu, "relu"), (tf.nn.elu, "elu"),
                                              (tf.math.sigmoid, "sigmoid"),
                                              (lambda z: z * 2.0, None)])
def test_dense_activation_callable(activation, name):
    layer = tf.keras.layers.Dense(3, activation=activation)
    x = np_batch((4, 2), seed=1)
    y = layer(tf.constant(x))
    z = x.astype(np.float64) @ layer.kernel.numpy() + layer.bias.numpy()
    expected = 2.0 * z if name is None else _np_activation(name)(z)
    assert_close(y.numpy(), expected)


def test_dense_without_bias():
    layer = tf.keras.layers.Dense(3, use_bias=False)
    x = np_batch((2, 4))
    y = layer(x)
    assert layer.bias is None
    assert [id(v) for v in layer.variables] == [id(layer.kernel)]
    assert [id(v) for v in layer.trainable_variables] == [id(layer.kernel)]
    assert_close(y.numpy(), x.astype(np.float64) @ layer.kernel.numpy())


def test_dense_accepts_tensors_arrays_and_lists():
    layer = tf.keras.layers.Dense(2, kernel_initializer=ramp(), bias_initializer="ones")
    rows = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]
    expected = np.array(rows) @ np.linspace(-0.5, 0.5, 6).reshape(3, 2) + 1.0
    for value in (tf.constant(rows), np.array(rows), np.array(rows, np.float32), rows,
                  np.array([[1, 2, 3], [-1, 0, 0]]), tf.constant([[1, 2, 3], [-1, 0, 0]])):
        y = layer(value)
        assert isinstance(y, tf.Tensor) and y.dtype == tf.float32 and y.shape == (2, 2)
        if np.asarray(value).dtype.kind == "i":  # Keras casts every input dtype
            assert_close(y.numpy(), np.array([[1, 2, 3], [-1, 0, 0]])
                         @ np.linspace(-0.5, 0.5, 6).reshape(3, 2) + 1.0)
        else:
            assert_close(y.numpy(), expected)
    assert len(layer.variables) == 2


def test_dense_float64_layer():
    layer = tf.keras.layers.Dense(2, dtype=tf.float64)
    y = layer(tf.ones((1, 3)))
    assert y.dtype == tf.float64 and layer.kernel.dtype == tf.float64


def test_dense_rank3_inputs():
    layer = tf.keras.layers.Dense(4, activation="tanh")
    x = np_batch((2, 5, 3))
    y = layer(x)
    assert y.shape == (2, 5, 4)
    z = np.einsum("bti,io->bto", x.astype(np.float64), layer.kernel.numpy()) + \
        layer.bias.numpy()
    assert_close(y.numpy(), np.tanh(z))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x))
    gk, gb = tape.gradient(loss, layer.trainable_variables)
    dz = 1 - np.tanh(z) ** 2
    assert_close(gk.numpy(), np.einsum("bti,bto->io", x.astype(np.float64), dz), rtol=1e-4)
    assert_close(gb.numpy(), dz.sum((0, 1)), rtol=1e-4)


def test_dense_mismatched_input_size_raises_value_error():
    layer = tf.keras.layers.Dense(4)
    layer(tf.ones((2, 3)))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 3.*"
                                         r"\(2, 5\)"):
        layer(tf.ones((2, 5)))


@pytest.mark.parametrize("shape", [(), (3,)])
def test_dense_needs_rank_two_inputs(shape):
    layer = tf.keras.layers.Dense(4)
    with pytest.raises(ValueError, match=f"min_ndim=2, found ndim={len(shape)}"):
        layer(tf.ones(shape))
    assert not layer.built
    layer(tf.ones((2, 3)))
    with pytest.raises(ValueError, match="min_ndim=2"):
        layer(tf.ones((3,)))


def test_dense_bad_arguments():
    with pytest.raises(ValueError, match="units"):
        tf.keras.layers.Dense(0)
    with pytest.raises(ValueError, match="activation"):
        tf.keras.layers.Dense(2, activation="no_such_activation")


def test_dense_gradients():
    layer = tf.keras.layers.Dense(3)
    x = np_batch((5, 2))
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_sum(y * y)
    gk, gb = tape.gradient(loss, layer.trainable_variables)
    dy = 2 * (x.astype(np.float64) @ layer.kernel.numpy() + layer.bias.numpy())
    assert_close(gk.numpy(), x.T.astype(np.float64) @ dy, rtol=1e-4)
    assert_close(gb.numpy(), dy.sum(0), rtol=1e-4)
    assert {id(v) for v in tape.watched_variables()} == {id(layer.kernel), id(layer.bias)}


# -- activations ---------------------------------------------------------------------------

ACTIVATION_X = [-5.0, -3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 3.0, 6.5]
ACTIVATION_W = [1.0, -2.0, 0.5, 3.0, -1.5, 2.0, 1.0, -0.5, 0.25]

# TensorFlow 2.21 (Keras 3.15.1), float32: f(ACTIVATION_X), and the gradient with respect to
# x of sum(f(x) * ACTIVATION_W), for f = tf.keras.activations.get(case) or the call in
# ACTIVATION_VARIANTS. The x hold the kinks (0, -3, 3, 6.5 > 6) and both tails.
TF_ACTIVATIONS = {
    "selu": (
        [-1.7462534, -1.6705687, -1.1113308, -0.38889018, 0, 0.52535051, 2.101402, 3.152103,
         6.8295565],
        [0.011845946, -0.17506123, 0.32338428, 4.1076274, -1.5760515, 2.101402, 1.050701,
         -0.52535051, 0.26267526]),
    "gelu": (
        [-1.4332578e-06, -0.0040496956, -0.15865526, -0.10032342, 0, 0.34573123, 1.9544997,
         2.9959502, 6.5],
        [-7.1469467e-06, 0.023891304, -0.041657746, 0.91387993, -0.75, 1.7349902, 1.0852318,
         -0.5059728, 0.25]),
    "swish": (
        [-0.03346426, -0.1422776, -0.2689414, -0.10945586, 0, 0.31122968, 1.7615942,
         2.8577223, 6.490242],
        [-0.026547439, 0.17620818, 0.036164738, 1.1288698, -0.75, 1.4799224, 1.0907842,
         -0.54405206, 0.25206047]),
    "silu": (
        [-0.03346426, -0.1422776, -0.2689414, -0.10945586, 0, 0.31122968, 1.7615942,
         2.8577223, 6.490242],
        [-0.026547439, 0.17620818, 0.036164738, 1.1288698, -0.75, 1.4799224, 1.0907842,
         -0.54405206, 0.25206047]),
    "leaky_relu": (
        [-1, -0.60000002, -0.2, -0.050000001, 0, 0.5, 2, 3, 6.5],
        [0.2, -0.40000001, 0.1, 0.60000002, -0.30000001, 2, 1, -0.5, 0.25]),
    "relu6": (
        [0, 0, 0, 0, 0, 0.5, 2, 3, 6],
        [0, 0, 0, 0, 0, 2, 1, -0.5, 0]),
    "softsign": (
        [-0.83333331, -0.75, -0.5, -0.2, 0, 0.33333334, 0.66666669, 0.75, 0.86666668],
        [0.027777778, -0.125, 0.125, 1.92, -1.5, 0.8888889, 0.11111111, -0.03125,
         0.0044444446]),
    "hard_sigmoid": (
        [0, 0, 0.33333334, 0.45833334, 0.5, 0.58333331, 0.83333331, 1, 1],
        [0, 0, 0.083333336, 0.5, -0.25, 0.33333334, 0.16666667, 0, 0]),
    "exponential": (
        [0.006737947, 0.049787071, 0.36787945, 0.77880079, 1, 1.6487212, 7.3890562, 20.085537,
         665.14166],
        [0.006737947, -0.099574141, 0.18393972, 2.3364024, -1.5, 3.2974424, 7.3890562,
         -10.042768, 166.28542]),
    "log_softmax": (
        [-11.546022, -9.5460224, -7.5460219, -6.7960219, -6.5460219, -6.0460219, -4.5460219,
         -3.5460222, -0.046022113],
        [0.9999637, -2.000268, 0.49801922, 2.9958067, -1.5053843, 1.9911227, 0.96021503,
         -0.60814673, -3.3313282]),
    "elu": (
        [-0.99326205, -0.95021296, -0.63212055, -0.22119921, 0, 0.5, 2, 3, 6.5],
        [0.0067379475, -0.099574089, 0.18393972, 2.3364024, -1.5, 2, 1, -0.5, 0.25]),
    "softplus": (
        [0.0067153489, 0.048587356, 0.31326169, 0.57593948, 0.69314718, 0.97407693, 2.1269281,
         3.0485871, 6.5015025],
        [0.0066928524, -0.094851732, 0.1344707, 1.3134704, -0.75, 1.2449187, 0.88079709,
         -0.47628707, 0.2496247]),
    "sigmoid": (
        [0.0066928524, 0.047425866, 0.2689414, 0.43782344, 0.5, 0.62245935, 0.88079709,
         0.95257413, 0.9984988],
        [0.0066480581, -0.09035331, 0.098305963, 0.73840225, -0.375, 0.47000742, 0.10499357,
         -0.022588328, 0.00037473725]),
    "tanh": (
        [-0.99990916, -0.99505472, -0.76159418, -0.24491866, 0, 0.46211714, 0.96402758,
         0.99505472, 0.99999541],
        [0.00018167496, -0.019732237, 0.20998716, 2.8200445, -1.5, 1.5728955, 0.070650816,
         -0.0049330592, 2.2947788e-06]),
    "relu": (
        [0, 0, 0, 0, 0, 0.5, 2, 3, 6.5],
        [0, 0, 0, 0, 0, 2, 1, -0.5, 0.25]),
    "softmax": (
        [9.6744516e-06, 7.1485054e-05, 0.00052820705, 0.0011182144, 0.0014358158,
         0.0023672602, 0.010609323, 0.028839132, 0.95502084],
        [7.3428005e-06, -0.0001601988, 0.0001367997, 0.0030851413, -0.0024997715,
         0.0041639837, 0.0080523575, -0.02137012, 0.0085844751]),
    "linear": (
        [-5, -3, -1, -0.25, 0, 0.5, 2, 3, 6.5],
        [1, -2, 0.5, 3, -1.5, 2, 1, -0.5, 0.25]),
    "gelu_approximate": (
        [0, -0.0036374331, -0.15880799, -0.10032465, 0, 0.345714, 1.9545977, 2.9963627, 6.5],
        [0, 0.023168486, -0.041482046, 0.91393769, -0.75, 1.7347399, 1.086099, -0.50579208,
         0.25]),
    "leaky_relu_0.1": (
        [-0.5, -0.30000001, -0.1, -0.025, 0, 0.5, 2, 3, 6.5],
        [0.1, -0.2, 0.050000001, 0.30000001, -0.15000001, 2, 1, -0.5, 0.25]),
    "elu_alpha_0.5": (
        [-0.49663103, -0.47510648, -0.31606028, -0.11059961, 0, 0.5, 2, 3, 6.5],
        [0.0033689737, -0.049787045, 0.091969863, 1.1682012, -0.75, 2, 1, -0.5, 0.25]),
    "relu_slope_max_threshold": (
        [-0.55000001, -0.34999999, -0.15000001, -0.075000003, -0.050000001, 0, 2, 2.5, 2.5],
        [0.1, -0.2, 0.050000001, 0.30000001, -0.15000001, 0, 1, 0, 0]),
    "relu_max6": (
        [0, 0, 0, 0, 0, 0.5, 2, 3, 6],
        [0, 0, 0, 0, 0, 2, 1, -0.5, 0]),
    "relu_max4": (
        [0, 0, 0, 0, 0, 0.5, 2, 3, 4],
        [0, 0, 0, 0, 0, 2, 1, -0.5, 0]),
    "relu_threshold": (
        [0, 0, 0, -0.25, 0, 0.5, 2, 3, 6.5],
        [0, 0, 0, 3, -1.5, 2, 1, -0.5, 0.25]),
    "relu_slope": (
        [-1.5, -0.90000004, -0.30000001, -0.075000003, 0, 0.5, 2, 3, 6.5],
        [0.30000001, -0.60000002, 0.15000001, 0.90000004, -0.45000002, 2, 1, -0.5, 0.25]),
    "relu_slope_max": (
        [-1.5, -0.90000004, -0.30000001, -0.075000003, 0, 0.5, 2, 2, 2],
        [0.30000001, -0.60000002, 0.15000001, 0.90000004, 0, 2, 1, 0, 0]),
}

ACTIVATION_VARIANTS = {
    "gelu_approximate": lambda x: tf.keras.activations.gelu(x, approximate=True),
    "leaky_relu_0.1": lambda x: tf.keras.activations.leaky_relu(x, negative_slope=0.1),
    "elu_alpha_0.5": lambda x: tf.keras.activations.elu(x, alpha=0.5),
    "relu_slope_max_threshold": lambda x: tf.keras.activations.relu(
        x, negative_slope=0.1, max_value=2.5, threshold=0.5),
    "relu_max6": lambda x: tf.keras.activations.relu(x, max_value=6.0),
    "relu_max4": lambda x: tf.keras.activations.relu(x, max_value=4.0),
    "relu_threshold": lambda x: tf.keras.activations.relu(x, threshold=-0.5),
    "relu_slope": lambda x: tf.keras.activations.relu(x, negative_slope=0.3),
    "relu_slope_max": lambda x: tf.keras.activations.relu(x, negative_slope=0.3,
                                                          max_value=2.0),
}

ACTIVATION_NAMES = ["selu", "gelu", "swish", "silu", "leaky_relu", "relu6", "softsign",
                    "hard_sigmoid", "exponential", "log_softmax", "elu", "softplus", "sigmoid",
                    "tanh", "relu", "softmax", "linear"]


def activation_value_and_gradient(fn, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
        loss = tf.reduce_sum(y * tf.constant(ACTIVATION_W))
    return y, tape.gradient(loss, x)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", sorted(TF_ACTIVATIONS))
def test_activation_values_and_gradients_match_tensorflow(case, traced):
    fn = ACTIVATION_VARIANTS.get(case) or tf.keras.activations.get(case)
    run = activation_value_and_gradient
    if traced:
        run = tf.function(run)
    y, grad = run(fn, tf.constant(ACTIVATION_X))
    expected_y, expected_grad = TF_ACTIVATIONS[case]
    assert y.dtype == tf.float32 and grad.dtype == tf.float32
    assert_close(y.numpy(), expected_y, rtol=1e-5, atol=1e-6)
    # atol: float32 tanh saturates a little differently (gelu_approximate at x = -5).
    assert_close(grad.numpy(), expected_grad, rtol=1e-5, atol=3e-6)


@pytest.mark.parametrize("name", ACTIVATION_NAMES)
def test_activations_are_module_functions_and_dense_names(name):
    fn = getattr(tf.keras.activations, name)
    assert tf.keras.activations.get(name) is fn
    layer = tf.keras.layers.Dense(3, activation=name)
    x = np_batch((4, 2), seed=14)
    y = layer(x)
    z = tf.matmul(tf.constant(x), layer.kernel) + layer.bias
    assert_close(y.numpy(), fn(z).numpy(), rtol=1e-6, atol=1e-7)


def test_swish_is_silu():
    assert tf.keras.activations.swish is tf.keras.activations.silu


def test_exact_gelu_float64_and_second_derivative_match_tensorflow():
    x = tf.constant(ACTIVATION_X, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.keras.activations.gelu(x)
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert y.dtype == tf.float64
    # TensorFlow's, float64 (its Gelu kernel is good to ~2e-8 relative, not float64's
    # precision; tapeflow's erfc is).
    assert_close(y.numpy(), [-1.4332585e-06, -0.0040496948, -0.15865526, -0.10032342, 0.0,
                             0.34573123, 1.9544997, 2.9959503, 6.5], rtol=1e-6, atol=0)
    assert_close(dy.numpy(), [-7.1469489e-06, -0.011945649, -0.083315466, 0.30462665, 0.5,
                              0.86749512, 1.0852318, 1.0119456, 1.0], rtol=1e-6, atol=0)
    assert_close(d2y.numpy(), [-3.4194562e-05, -0.031022942, 0.24197073, 0.74916947,
                               0.79788455, 0.61611432, -0.10798193, -0.031022942,
                               -1.0744973e-08], rtol=2e-6, atol=0)


def test_exact_gelu_tails_match_tensorflow():
    y = tf.keras.activations.gelu(tf.constant([-10.0, -8.0, 8.0]))
    # TensorFlow's: erfc keeps the relative precision of the far negative tail.
    assert_close(y.numpy(), [-7.6198536e-23, -4.9767738e-15, 8.0], rtol=1e-5, atol=0)


def test_softmax_and_log_softmax_axis_as_keras():
    logits = tf.constant([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]])
    # TensorFlow's: Keras' axis=None normalizes over every element.
    assert_close(tf.keras.activations.softmax(logits, axis=0).numpy(),
                 [[0.88079703, 0.88079703, 0.26894143], [0.11920291, 0.11920291, 0.73105854]])
    assert_close(tf.keras.activations.softmax(logits, axis=None).numpy(),
                 [[0.031549633, 0.085760795, 0.23312204], [0.0042697783, 0.01160646,
                                                          0.63369131]])
    assert_close(tf.keras.activations.log_softmax(logits, axis=0).numpy(),
                 [[-0.12692805, -0.12692805, -1.3132616], [-2.1269281, -2.1269281,
                                                          -0.31326166]])


def test_unknown_activation_name_raises_value_error():
    with pytest.raises(ValueError, match="Could not interpret activation function identifier"):
        tf.keras.activations.get("no_such_activation")


# -- BatchNormalization ------------------------------------------------------------------

EPS = 1e-3


def test_batch_norm_defaults_and_variables():
    bn = tf.keras.layers.BatchNormalization()
    assert bn.epsilon == 1e-3 and bn.momentum == 0.99
    bn(tf.ones((4, 3)))
    assert re.fullmatch(r"batch_normalization(_\d+)?", bn.name)
    weights = ("gamma", "beta", "moving_mean", "moving_variance")
    assert [v.name for v in bn.variables] == list(weights)
    assert [v.path for v in bn.variables] == [f"{bn.name}/{w}" for w in weights]
    assert [id(v) for v in bn.trainable_variables] == [id(bn.gamma), id(bn.beta)]
    assert [id(v) for v in bn.non_trainable_variables] == [id(bn.moving_mean),
                                                           id(bn.moving_variance)]
    assert not bn.moving_mean.trainable and not bn.moving_variance.trainable
    np.testing.assert_array_equal(bn.gamma.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(bn.beta.numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.ones(3, np.float32))


def test_batch_norm_training_uses_batch_statistics_and_updates_moving_ones():
    bn = tf.keras.layers.BatchNormalization()
    x1 = np_batch((6, 3), seed=1) * 2.0 + 1.0
    x2 = np_batch((6, 3), seed=2) - 3.0
    moving_mean = np.zeros(3)
    moving_var = np.ones(3)
    for x in (x1, x2):
        y = bn(x, training=True)
        x64 = x.astype(np.float64)
        mean, var = x64.mean(0), x64.var(0)  # biased variance, as Keras
        assert_close(y.numpy(), (x64 - mean) / np.sqrt(var + EPS), rtol=1e-4, atol=1e-5)
        moving_mean = moving_mean * 0.99 + mean * (1 - 0.99)
        moving_var = moving_var * 0.99 + var * (1 - 0.99)
        assert_close(bn.moving_mean.numpy(), moving_mean)
        assert_close(bn.moving_variance.numpy(), moving_var)


def test_batch_norm_momentum_gamma_beta():
    bn = tf.keras.layers.BatchNormalization(momentum=0.5, gamma_initializer=ramp(1, 2),
                                            beta_initializer=ramp(-1, 1))
    x = np_batch((8, 3), seed=3)
    y = bn(x, training=True)
    x64 = x.astype(np.float64)
    gamma, beta = np.linspace(1, 2, 3), np.linspace(-1, 1, 3)
    expected = (x64 - x64.mean(0)) / np.sqrt(x64.var(0) + EPS) * gamma + beta
    assert_close(y.numpy(), expected, rtol=1e-4, atol=1e-5)
    assert_close(bn.moving_mean.numpy(), 0.5 * x64.mean(0))
    assert_close(bn.moving_variance.numpy(), 0.5 + 0.5 * x64.var(0))


@pytest.mark.parametrize("training", [False, None])
def test_batch_norm_inference_uses_moving_statistics(training):
    bn = tf.keras.layers.BatchNormalization()
    x = np_batch((5, 2), seed=4)
    bn(x, training=False)  # builds
    bn.moving_mean.assign([0.5, -1.0])
    bn.moving_variance.assign([4.0, 0.25])
    bn.gamma.assign([2.0, 3.0])
    bn.beta.assign([0.1, 0.2])
    y = bn(x) if training is None else bn(x, training=training)
    expected = (x - np.array([0.5, -1.0])) / np.sqrt(np.array([4.0, 0.25]) + EPS) * \
        np.array([2.0, 3.0]) + np.array([0.1, 0.2])
    assert_close(y.numpy(), expected, rtol=1e-5)
    # Inference leaves the moving statistics alone.
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.float32([0.5, -1.0]))
    np.testing.assert_array_equal(bn.moving_variance.numpy(), np.float32([4.0, 0.25]))


def test_batch_norm_rank4_channels_last():
    bn = tf.keras.layers.BatchNormalization()
    x = np_batch((2, 3, 4, 5), seed=5) + 2.0
    y = bn(x, training=True)
    x64 = x.astype(np.float64)
    mean, var = x64.mean((0, 1, 2)), x64.var((0, 1, 2))
    assert y.shape == (2, 3, 4, 5) and tuple(bn.gamma.shape) == (5,)
    assert_close(y.numpy(), (x64 - mean) / np.sqrt(var + EPS), rtol=1e-4, atol=1e-5)
    assert_close(bn.moving_mean.numpy(), 0.01 * mean)


def test_batch_norm_gradients_reach_gamma_and_beta_only():
    bn = tf.keras.layers.BatchNormalization()
    x = tf.constant(np_batch((6, 3), seed=6))
    w = np_batch((6, 3), seed=7)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = bn(x, training=True)
        loss = tf.reduce_sum(y * w)
    g_gamma, g_beta, g_mm, g_mv = tape.gradient(loss, bn.variables)
    x64 = x.numpy().astype(np.float64)
    xhat = (x64 - x64.mean(0)) / np.sqrt(x64.var(0) + EPS)
    assert_close(g_gamma.numpy(), (xhat * w).sum(0), rtol=1e-4, atol=1e-5)
    assert_close(g_beta.numpy(), w.sum(0), rtol=1e-5)
    assert g_mm is None and g_mv is None
    assert {id(v) for v in tape.watched_variables()} == {id(bn.gamma), id(bn.beta)}
    # Input gradient with batch statistics (gamma = 1):
    # dx = (w - mean(w) - xhat * mean(w * xhat)) / sqrt(var + eps).
    dx = (w - w.mean(0) - xhat * (w * xhat).mean(0)) / np.sqrt(x64.var(0) + EPS)
    assert_close(tape.gradient(loss, x).numpy(), dx, rtol=1e-3, atol=1e-5)


def test_frozen_batch_norm_normalizes_with_moving_statistics_when_training():
    bn = tf.keras.layers.BatchNormalization()
    x1 = np_batch((6, 3), seed=8) * 2.0 + 1.0
    x2 = np_batch((6, 3), seed=9) - 2.0
    bn(x1, training=True)
    moving_mean, moving_var = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    bn.trainable = False
    with tf.GradientTape() as tape:
        y = bn(x2, training=True)
        loss = tf.reduce_sum(y)
    # Keras since TF 2.0: a frozen BN layer runs in inference mode, and keeps its moving
    # statistics.
    expected = (x2 - moving_mean) / np.sqrt(moving_var.astype(np.float64) + EPS)
    assert_close(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), moving_mean)
    np.testing.assert_array_equal(bn.moving_variance.numpy(), moving_var)
    assert [g is None for g in tape.gradient(loss, bn.variables)] == [False, False, True, True]
    bn.trainable = True
    bn(x2, training=True)
    assert not np.array_equal(bn.moving_mean.numpy(), moving_mean)


def test_batch_norm_constructed_frozen_is_in_inference_mode():
    bn = tf.keras.layers.BatchNormalization(trainable=False)
    x = np_batch((5, 2), seed=10) * 3.0 + 1.0
    y = bn(x, training=True)
    assert_close(y.numpy(), x / np.sqrt(1.0 + EPS), rtol=1e-6)  # moving mean 0, variance 1
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(2, np.float32))
    assert bn.trainable_variables == [] and len(bn.non_trainable_variables) == 4


def test_frozen_batch_norm_in_tf_function():
    bn = tf.keras.layers.BatchNormalization(trainable=False)
    forward = tf.function(lambda x: bn(x, training=True))
    x = np_batch((4, 3), seed=11) + 5.0
    assert_close(forward(tf.constant(x)).numpy(), x / np.sqrt(1.0 + EPS), rtol=1e-6)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3, np.float32))


# -- trainable and layer arguments -----------------------------------------------------------

def ids(variables):
    return [id(v) for v in variables]


def test_dense_constructed_frozen_has_no_trainable_variables():
    layer = tf.keras.layers.Dense(2, trainable=False)
    x = tf.ones((1, 3))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x))
    assert layer.trainable is False
    assert layer.trainable_variables == [] and layer.trainable_weights == []
    assert ids(layer.non_trainable_variables) == ids([layer.kernel, layer.bias])
    assert ids(layer.variables) == ids([layer.kernel, layer.bias])
    # As in Keras 3, tapes still watch a frozen layer's variables.
    assert tape.gradient(y, layer.kernel) is not None
    layer.trainable = True
    assert ids(layer.trainable_variables) == ids([layer.kernel, layer.bias])
    assert layer.non_trainable_variables == []


def test_dense_frozen_after_build():
    layer = tf.keras.layers.Dense(2)
    layer(tf.ones((1, 3)))
    layer.trainable = False
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 2
    layer.trainable = 1  # the setter takes any truth value, as Keras'
    assert layer.trainable is True and len(layer.trainable_variables) == 2


def test_batch_norm_moving_statistics_stay_non_trainable_when_unfrozen():
    bn = tf.keras.layers.BatchNormalization()
    bn(tf.ones((2, 3)))
    bn.trainable = False
    assert bn.trainable_variables == [] and len(bn.non_trainable_variables) == 4
    bn.trainable = True
    assert ids(bn.trainable_variables) == ids([bn.gamma, bn.beta])
    assert ids(bn.non_trainable_variables) == ids([bn.moving_mean, bn.moving_variance])


class _Block(tf.keras.layers.Layer):
    """A layer holding a layer, a list of layers and variables, trainable or not."""

    def __init__(self, counter=False):
        super().__init__()
        self.first = tf.keras.layers.Dense(3)
        self.rest = [tf.keras.layers.Dense(2)]
        self.scale = tf.Variable(1.0)
        if counter:
            self.count = tf.Variable(0, trainable=False)

    def call(self, x):
        return self.rest[0](self.first(x)) * self.scale


def test_freezing_a_layer_freezes_the_layers_it_holds():
    block = _Block()
    block(tf.ones([1, 4]))
    block.trainable = False
    assert not block.first.trainable and not block.rest[0].trainable
    assert block.trainable_variables == []
    assert ids(block.non_trainable_variables) == ids(block.variables)
    block.trainable = True
    assert block.first.trainable and len(block.trainable_variables) == 5
    block.first.trainable = False
    assert ids(block.trainable_variables) == ids(
        [block.rest[0].kernel, block.rest[0].bias, block.scale])
    assert ids(block.non_trainable_variables) == ids([block.first.kernel, block.first.bias])


def test_trainable_argument_must_be_a_bool():
    with pytest.raises(ValueError, match="Expected `trainable` to be a boolean"):
        tf.keras.layers.Dense(2, trainable=0)


@pytest.mark.parametrize("make", [
    lambda: tf.keras.layers.Dense(2, bogus=3),
    lambda: tf.keras.layers.BatchNormalization(fused=True),
    lambda: tf.keras.layers.Layer(bogus=1),
], ids=["dense", "batch_norm", "layer"])
def test_unknown_layer_arguments_raise_value_error(make):
    with pytest.raises(ValueError, match="Unrecognized keyword arguments passed to"):
        make()


@pytest.mark.parametrize("layer, kwargs", [
    ("Dense", {"kernel_regularizer": "l2"}), ("Dense", {"bias_regularizer": "l2"}),
    ("Dense", {"activity_regularizer": "l2"}), ("Dense", {"kernel_constraint": "non_neg"}),
    ("Dense", {"bias_constraint": "non_neg"}), ("Dense", {"lora_rank": 2}),
    ("BatchNormalization", {"gamma_regularizer": "l2"}),
    ("BatchNormalization", {"beta_constraint": "non_neg"}),
    ("BatchNormalization", {"renorm": True}), ("BatchNormalization", {"synchronized": True}),
])
def test_unimplemented_layer_arguments_raise(layer, kwargs):
    args = (2,) if layer == "Dense" else ()
    [name] = kwargs
    with pytest.raises(NotImplementedError, match=f"`{name}`"):
        getattr(tf.keras.layers, layer)(*args, **kwargs)


def test_layer_arguments_that_change_nothing_are_accepted():
    layer = tf.keras.layers.Dense(2, kernel_regularizer=None, lora_alpha=None,
                                  input_shape=(3,), autocast=True, name="accepted")
    assert layer.name == "accepted" and not layer.built
    bn = tf.keras.layers.BatchNormalization(renorm=False, renorm_momentum=0.9,
                                            synchronized=False)
    assert bn.trainable


# -- SGD ----------------------------------------------------------------------------------

def quadratic_grads(var_values, targets):
    """Gradients of sum((v - t)**2 * (i + 1)) for each variable (i its index)."""
    return [2.0 * (i + 1) * (v - t) for i, (v, t) in enumerate(zip(var_values, targets))]


def run_optimizer(opt, steps=5):
    """Minimizes quadratic_grads' loss with `opt` for `steps` steps through GradientTape;
    returns the variables' values after each step."""
    variables = [tf.Variable([[1.0, -2.0], [0.5, 3.0]]), tf.Variable([0.25, -0.75, 2.0])]
    targets = [np.array([[0.0, 1.0], [-1.0, 2.0]]), np.array([1.0, 0.0, -1.0])]
    history = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = sum(tf.reduce_sum((v - t.astype(np.float32)) ** 2) * (i + 1)
                       for i, (v, t) in enumerate(zip(variables, targets)))
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
        history.append([v.numpy().astype(np.float64) for v in variables])
    return history, targets


def initial_values():
    return [np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([0.25, -0.75, 2.0])]


def test_sgd_defaults():
    opt = tf.keras.optimizers.SGD()
    assert float(opt.learning_rate) == pytest.approx(0.01)
    assert opt.momentum == 0.0 and opt.nesterov is False
    assert int(opt.iterations) == 0


def test_sgd_plain():
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    history, targets = run_optimizer(opt)
    values = initial_values()
    for step in history:
        grads = quadratic_grads(values, targets)
        values = [v - 0.1 * g for v, g in zip(values, grads)]
        for got, want in zip(step, values):
            assert_close(got, want)
    assert int(opt.iterations) == 5


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum(nesterov):
    lr, momentum = 0.05, 0.9
    opt = tf.keras.optimizers.SGD(learning_rate=lr, momentum=momentum, nesterov=nesterov)
    history, targets = run_optimizer(opt)
    values = initial_values()
    velocity = [np.zeros_like(v) for v in values]
    for step in history:
        grads = quadratic_grads(values, targets)
        velocity = [momentum * m - lr * g for m, g in zip(velocity, grads)]
        if nesterov:
            values = [v + momentum * m - lr * g for v, m, g in zip(values, velocity, grads)]
        else:
            values = [v + m for v, m in zip(values, velocity)]
        for got, want in zip(step, values):
            assert_close(got, want)


# -- Adam ---------------------------------------------------------------------------------

def adam_reference(grads_fn, values, steps, lr=0.001, b1=0.9, b2=0.999, eps=1e-7,
                   amsgrad=False):
    """Keras' Adam, step by step in float32 as Keras runs it: m += (g - m)(1 - b1);
    v += (g^2 - v)(1 - b2); alpha = lr sqrt(1 - b2^t) / (1 - b1^t);
    var -= alpha m / (sqrt(v) + eps). (A float64 reference drifts from any float32
    implementation by ~1e-5 within a few steps where gradients change sign.)"""
    f32 = np.float32
    # As Keras: (1 - beta) is Python arithmetic; beta ** t is a float32 op.
    one_minus_b1, one_minus_b2 = f32(1 - b1), f32(1 - b2)
    lr, b1, b2, eps = f32(lr), f32(b1), f32(b2), f32(eps)
    values = [v.astype(f32) for v in values]
    m = [np.zeros_like(v) for v in values]
    s = [np.zeros_like(v) for v in values]
    s_hat = [np.zeros_like(v) for v in values]
    history = []
    for t in range(1, steps + 1):
        grads = [g.astype(f32) for g in grads_fn(values)]
        m = [mi + (g - mi) * one_minus_b1 for mi, g in zip(m, grads)]
        s = [si + (g * g - si) * one_minus_b2 for si, g in zip(s, grads)]
        alpha = lr * np.sqrt(f32(1) - b2 ** f32(t)) / (f32(1) - b1 ** f32(t))
        if amsgrad:
            s_hat = [np.maximum(a, b) for a, b in zip(s_hat, s)]
            denom = s_hat
        else:
            denom = s
        values = [v - alpha * mi / (np.sqrt(si) + eps) for v, mi, si in zip(values, m, denom)]
        history.append([v.astype(np.float64) for v in values])
    return history


def test_adam_defaults():
    opt = tf.keras.optimizers.Adam()
    assert float(opt.learning_rate) == pytest.approx(0.001)
    assert (opt.beta_1, opt.beta_2, opt.epsilon) == (0.9, 0.999, 1e-7)


@pytest.mark.parametrize("kwargs", [{}, {"learning_rate": 0.1},
                                    {"learning_rate": 0.05, "beta_1": 0.5, "beta_2": 0.9,
                                     "epsilon": 1e-3},
                                    {"learning_rate": 0.1, "amsgrad": True}])
def test_adam_matches_keras_formula(kwargs):
    opt = tf.keras.optimizers.Adam(**kwargs)
    history, targets = run_optimizer(opt, steps=6)
    ref_kwargs = {"lr": kwargs.get("learning_rate", 0.001), "b1": kwargs.get("beta_1", 0.9),
                  "b2": kwargs.get("beta_2", 0.999), "eps": kwargs.get("epsilon", 1e-7),
                  "amsgrad": kwargs.get("amsgrad", False)}
    targets32 = [t.astype(np.float32) for t in targets]
    expected = adam_reference(lambda vs: quadratic_grads(vs, targets32), initial_values(), 6,
                              **ref_kwargs)
    for got_step, want_step in zip(history, expected):
        for got, want in zip(got_step, want_step):
            assert_close(got, want, rtol=1e-6, atol=1e-7)
    assert int(opt.iterations) == 6


def test_adam_first_step_moves_by_learning_rate():
    # With bias correction the first step is lr * g / (|g| + eps'), about lr * sign(g).
    var = tf.Variable([1.0, -1.0, 3.0])
    opt = tf.keras.optimizers.Adam(learning_rate=0.1)
    opt.apply_gradients([(tf.constant([2.0, -0.5, 0.0]), var)])
    assert_close(var.numpy(), [0.9, -0.9, 3.0], rtol=1e-6)


# -- clipping, weight decay and loss scaling -------------------------------------------------

def clip_problem_step(opt, kernel, bias):
    """One step on loss = 3 sum(kernel^2) + 2 sum(bias^2)."""
    with tf.GradientTape() as tape:
        loss = 3.0 * tf.reduce_sum(kernel ** 2) + 2.0 * tf.reduce_sum(bias ** 2)
    grads = tape.gradient(loss, [kernel, bias])
    opt.apply_gradients(zip(grads, [kernel, bias]))


def run_clip_problem(opt, steps=3, step=clip_problem_step):
    """`steps` steps from kernel = [1, -2, 3], bias = [[0.5, -0.25]]; the final values."""
    kernel = tf.Variable([1.0, -2.0, 3.0], name="kernel")
    bias = tf.Variable([[0.5, -0.25]], name="bias")
    for _ in range(steps):
        step(opt, kernel, bias)
    return kernel.numpy(), bias.numpy()


# TensorFlow 2.21 (Keras 3.15.1): kernel and bias after run_clip_problem with
# tf.keras.optimizers.<name>(0.1, **kwargs). A clip of 0 clips nothing; a decay of 0 decays
# nothing (Keras' tests).
TF_CLIP_AND_DECAY_RUNS = [
    ("SGD", {"clipnorm": 0.5},
     [0.95991081, -1.9198216, 2.8797326], [[0.36583591, -0.18291795]]),
    ("SGD", {"clipvalue": 0.5},
     [0.84999996, -1.8500001, 2.8500001], [[0.34999996, -0.10000001]]),
    ("SGD", {"global_clipnorm": 0.5},
     [0.96011001, -1.92022, 2.8803301], [[0.48664325, -0.24332163]]),
    ("SGD", {"weight_decay": 0.1},
     [0.05931899, -0.11863798, 0.177957], [[0.1026895, -0.051344749]]),
    ("SGD", {"momentum": 0.9, "weight_decay": 0.05, "clipnorm": 1.0},
     [0.83566177, -1.6713235, 2.5069852], [[-0.0074943453, 0.0037471727]]),
    ("SGD", {"loss_scale_factor": 4.0},
     [0.61412501, -1.22825, 1.842375], [[0.36449999, -0.18224999]]),
    ("Adam", {"clipnorm": 0.5},
     [0.70082843, -1.7000849, 2.699914], [[0.19965164, 0.039951585]]),
    ("Adam", {"weight_decay": 0.1},
     [0.67510331, -1.6443708, 2.6144075], [[0.19341788, 0.033715602]]),
    ("Adam", {"global_clipnorm": 1.0},
     [0.70080054, -1.7000669, 2.699899], [[0.20362842, 0.031825274]]),
    ("SGD", {"clipnorm": 0.0},
     [0.063999988, -0.12799998, 0.192], [[0.108, -0.054000001]]),
    ("SGD", {"weight_decay": 0.0},
     [0.063999988, -0.12799998, 0.192], [[0.108, -0.054000001]]),
]


@pytest.mark.parametrize("optimizer, kwargs, kernel, bias", TF_CLIP_AND_DECAY_RUNS,
                         ids=[f"{o}-{'-'.join(k)}" for o, k, _, _ in TF_CLIP_AND_DECAY_RUNS])
def test_clipping_and_weight_decay_match_tensorflow(optimizer, kwargs, kernel, bias):
    opt = getattr(tf.keras.optimizers, optimizer)(0.1, **kwargs)
    got_kernel, got_bias = run_clip_problem(opt)
    assert_close(got_kernel, kernel, rtol=1e-6)
    assert_close(got_bias, bias, rtol=1e-6)


def test_clipping_and_weight_decay_in_tf_function():
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9, weight_decay=0.05, clipnorm=1.0)
    traced_step = tf.function(clip_problem_step)
    kernel, bias = run_clip_problem(opt, step=traced_step)
    assert traced_step.experimental_get_tracing_count() == 1
    # TensorFlow's numbers, as in TF_CLIP_AND_DECAY_RUNS.
    assert_close(kernel, [0.83566177, -1.6713235, 2.5069852], rtol=1e-6)
    assert_close(bias, [[-0.0074943453, 0.0037471727]], rtol=1e-6)


def test_exclude_from_weight_decay_by_name_or_variable():
    by_name = tf.keras.optimizers.SGD(0.1, weight_decay=0.5)
    by_name.exclude_from_weight_decay(var_names=["bias"])
    kernel, bias = run_clip_problem(by_name, steps=1)
    # TensorFlow's: the kernel decays by 5% before its step, the bias only steps.
    assert_close(kernel, [0.34999996, -0.69999993, 1.0499998], rtol=1e-6)
    assert_close(bias, [[0.30000001, -0.15000001]], rtol=1e-6)
    var, kept = tf.Variable(2.0), tf.Variable(2.0)
    by_variable = tf.keras.optimizers.SGD(0.1, weight_decay=0.5)
    by_variable.exclude_from_weight_decay(var_list=[kept])
    by_variable.apply_gradients([(tf.constant(0.0), var), (tf.constant(0.0), kept)])
    assert var.numpy() == pytest.approx(1.9) and kept.numpy() == 2.0


def test_weight_decay_skips_variables_without_gradient():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    tf.keras.optimizers.SGD(0.1, weight_decay=0.5).apply_gradients(
        [(tf.constant(1.0), a), (None, b)])
    assert a.numpy() == pytest.approx(1.8) and b.numpy() == 3.0  # TensorFlow's


def test_global_clipnorm_of_an_infinite_gradient_gives_nan():
    var = tf.Variable([1.0, 1.0])
    tf.keras.optimizers.SGD(0.5, global_clipnorm=1.0).apply_gradients(
        [(tf.constant([np.inf, 1.0]), var)])
    assert np.isnan(var.numpy()).all()  # as TensorFlow


def test_clipnorm_of_a_zero_gradient_is_zero():
    var = tf.Variable([1.0, 1.0])
    tf.keras.optimizers.SGD(0.5, clipnorm=1.0).apply_gradients(
        [(tf.constant([0.0, 0.0]), var)])
    np.testing.assert_array_equal(var.numpy(), [1.0, 1.0])


def test_global_clipnorm_over_float32_and_float64_variables():
    v64, v32 = tf.Variable([1.0, 1.0], dtype=tf.float64), tf.Variable([1.0])
    tf.keras.optimizers.SGD(0.5, global_clipnorm=1.0).apply_gradients(
        [(tf.constant([3.0, 0.0], tf.float64), v64), (tf.constant([4.0]), v32)])
    # Global norm 5: the gradients scale by 1/5 (TensorFlow fails on the mixed dtypes).
    assert_close(v64.numpy(), [0.7, 1.0])
    assert_close(v32.numpy(), [0.6])


@pytest.mark.parametrize("dtype", [tf.float64, tf.int32])
def test_gradients_are_cast_to_the_variable_dtype(dtype):
    var = tf.Variable([1.0, 1.0])
    tf.keras.optimizers.SGD(0.5).apply_gradients([(tf.constant([1, 2], dtype), var)])
    assert var.dtype == tf.float32
    np.testing.assert_array_equal(var.numpy(), [0.5, 0.0])  # TensorFlow's


def test_scale_loss():
    assert float(tf.keras.optimizers.SGD(0.1).scale_loss(tf.constant(2.0))) == 2.0
    scaled = tf.keras.optimizers.SGD(0.1, loss_scale_factor=4.0).scale_loss(tf.constant(2.0))
    assert float(scaled) == 8.0


# -- optimizer arguments ---------------------------------------------------------------------

@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("kwargs", [{"lr": 0.5}, {"bogus": 1}])
def test_unknown_optimizer_arguments_raise_value_error(optimizer, kwargs):
    with pytest.raises(ValueError, match=re.escape(f"Argument(s) not recognized: {kwargs}")):
        getattr(tf.keras.optimizers, optimizer)(0.1, **kwargs)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("name, value", [("use_ema", True),
                                         ("gradient_accumulation_steps", 2)])
def test_unimplemented_optimizer_arguments_raise(optimizer, name, value):
    with pytest.raises(NotImplementedError, match=f"`{name}`"):
        getattr(tf.keras.optimizers, optimizer)(0.1, **{name: value})


def test_optimizer_arguments_at_their_defaults_are_accepted():
    opt = tf.keras.optimizers.Adam(0.1, use_ema=False, ema_momentum=0.9,
                                   gradient_accumulation_steps=None, name="adam")
    assert opt.name == "adam" and opt.weight_decay is None and opt.clipnorm is None


def test_only_one_clipping_argument():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and "
                                         "`global_clipnorm`"):
        tf.keras.optimizers.SGD(0.1, clipnorm=1.0, clipvalue=1.0)


def test_decay_argument_warns_and_is_ignored():
    with pytest.warns(UserWarning, match="`decay` is no longer supported"):
        opt = tf.keras.optimizers.SGD(0.5, decay=0.1)
    var = tf.Variable(1.0)
    opt.apply_gradients([(tf.constant(1.0), var)])
    assert var.numpy() == 0.5


# -- apply_gradients and learning_rate -------------------------------------------------------

def test_apply_gradients_skips_none():
    a, b = tf.Variable([1.0, 2.0]), tf.Variable(5.0)
    opt = tf.keras.optimizers.SGD(learning_rate=0.5)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(a * a)
    grads = tape.gradient(loss, [a, b])
    assert grads[1] is None
    opt.apply_gradients(zip(grads, [a, b]))
    assert_close(a.numpy(), [0.0, 0.0])
    assert b.numpy() == 5.0
    assert int(opt.iterations) == 1


def test_apply_gradients_with_no_gradients_raises():
    opt = tf.keras.optimizers.Adam()
    with pytest.raises(ValueError, match="No gradients"):
        opt.apply_gradients([(None, tf.Variable(1.0))])


def test_learning_rate_is_a_settable_variable():
    var = tf.Variable(1.0)
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    assert isinstance(opt.learning_rate, tf.Variable)
    assert opt.learning_rate.dtype == tf.float32 and not opt.learning_rate.trainable
    opt.apply_gradients([(tf.constant(1.0), var)])
    assert var.numpy() == pytest.approx(0.9)
    opt.learning_rate = 0.5
    assert float(opt.learning_rate) == 0.5 and float(opt.lr) == 0.5
    opt.apply_gradients([(tf.constant(1.0), var)])
    assert var.numpy() == pytest.approx(0.4)
    opt.lr = 0.25
    opt.apply_gradients([(tf.constant(1.0), var)])
    assert var.numpy() == pytest.approx(0.15)


def test_learning_rate_schedule_is_called_with_the_step():
    var = tf.Variable(0.0)
    opt = tf.keras.optimizers.SGD(learning_rate=lambda step: 0.1 * tf.cast(step, tf.float32))
    for _ in range(3):  # steps 1, 2, 3 (iterations is incremented first)
        opt.apply_gradients([(tf.constant(-1.0), var)])
    assert var.numpy() == pytest.approx(0.1 + 0.2 + 0.3)
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.5


# -- inside @tf.function ---------------------------------------------------------------------

def make_model(optimizer):
    layer = tf.keras.layers.Dense(3, activation="tanh", kernel_initializer=ramp(),
                                  bias_initializer=ramp(-0.1, 0.1))
    bn = tf.keras.layers.BatchNormalization()
    head = tf.keras.layers.Dense(1, kernel_initializer=ramp(0.5, -0.5))
    return layer, bn, head, optimizer()


def train_step(model, x, y):
    layer, bn, head, opt = model
    with tf.GradientTape() as tape:
        pred = head(bn(layer(x), training=True))
        loss = tf.reduce_mean((pred - y) ** 2)
    variables = layer.trainable_variables + bn.trainable_variables + head.trainable_variables
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return loss


def model_state(model):
    layer, bn, head, opt = model
    return [v.numpy() for v in layer.variables + bn.variables + head.variables] + [
        opt.iterations.numpy()]


@pytest.mark.parametrize("optimizer", [
    lambda: tf.keras.optimizers.SGD(0.1),
    lambda: tf.keras.optimizers.SGD(0.05, momentum=0.9),
    lambda: tf.keras.optimizers.Adam(0.01),
], ids=["sgd", "momentum", "adam"])
def test_training_step_in_tf_function_matches_eager(optimizer):
    x = np_batch((8, 4), seed=10)
    y = np_batch((8, 1), seed=11)
    eager_model = make_model(optimizer)
    traced_model = make_model(optimizer)
    traced_step = tf.function(train_step)
    for _ in range(4):
        eager_loss = train_step(eager_model, x, y)
        traced_loss = traced_step(traced_model, x, y)
        assert_close(traced_loss.numpy(), eager_loss.numpy(), rtol=1e-6)
    assert traced_step.experimental_get_tracing_count() == 1
    # The layers were built (their variables created) during the one trace.
    for got, want in zip(model_state(traced_model), model_state(eager_model)):
        assert_close(got, want, rtol=1e-6)
    assert int(traced_model[3].iterations) == 4


def test_learning_rate_change_is_seen_by_traced_step():
    var = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(learning_rate=0.1)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(var * var)
        opt.apply_gradients(zip(tape.gradient(loss, [var]), [var]))

    step()
    assert_close(var.numpy(), [0.8, 1.6])
    opt.learning_rate = 0.5
    step()
    assert_close(var.numpy(), [0.0, 0.0])
    assert step.experimental_get_tracing_count() == 1


def test_layers_in_tf_function_with_python_training_flag():
    bn = tf.keras.layers.BatchNormalization()
    layer = tf.keras.layers.Dense(2, kernel_initializer=ramp())

    @tf.function
    def forward(x, training):
        return bn(layer(x), training=training)

    x = np_batch((4, 3), seed=12)
    x_tensor = tf.constant(x)
    y_train = forward(x_tensor, True)
    y_infer = forward(x_tensor, False)
    assert forward.experimental_get_tracing_count() == 2
    z = x.astype(np.float64) @ np.linspace(-0.5, 0.5, 6).reshape(3, 2)
    assert_close(y_train.numpy(), (z - z.mean(0)) / np.sqrt(z.var(0) + EPS), rtol=1e-4,
                 atol=1e-5)
    mm, mv = 0.01 * z.mean(0), 0.99 + 0.01 * z.var(0)
    assert_close(y_infer.numpy(), (z - mm) / np.sqrt(mv + EPS), rtol=1e-5, atol=1e-6)
    assert_close(bn.moving_mean.numpy(), mm)
    forward(x_tensor, True)  # the traced graph updates the moving statistics each call
    assert_close(bn.moving_mean.numpy(), 0.99 * mm + 0.01 * z.mean(0))
    assert forward.experimental_get_tracing_count() == 2


def test_gradient_through_tf_function_calling_a_layer():
    layer = tf.keras.layers.Dense(2, activation="sigmoid")
    x = np_batch((3, 4), seed=13)
    layer(x)

    @tf.function
    def model(x):
        return tf.reduce_sum(layer(x) ** 2)

    def gradients(fn):
        with tf.GradientTape() as tape:
            loss = fn(x)
        return tape.gradient(loss, layer.trainable_variables)

    eager = gradients(model.python_function)
    traced = gradients(model)
    for got, want in zip(traced, eager):
        assert_close(got.numpy(), want.numpy(), rtol=1e-6)


def test_minimize_with_a_loss_callable_or_a_tape():
    var = tf.Variable([1.0, -2.0])
    opt = tf.keras.optimizers.SGD(learning_rate=0.25)
    opt.minimize(lambda: tf.reduce_sum(var * var), [var])
    assert_close(var.numpy(), [0.5, -1.0])
    layer = tf.keras.layers.Dense(1, kernel_initializer="ones")
    opt.minimize(lambda: tf.reduce_sum(layer(tf.ones((1, 2)))),
                 lambda: layer.trainable_variables)  # created by the first loss call
    assert_close(layer.kernel.numpy(), [[0.75], [0.75]])
    assert_close(layer.bias.numpy(), [-0.25])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(var * var)
    opt.minimize(loss, [var], tape=tape)
    assert_close(var.numpy(), [0.25, -0.5])


def test_layers_track_sub_layers_and_variable_attributes():
    block = _Block(counter=True)
    x = tf.ones([1, 4])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(block(x))
    trainable = block.trainable_variables
    assert [tuple(v.shape) for v in trainable] == [(4, 3), (3,), (3, 2), (2,), ()]
    assert block.non_trainable_variables == [block.count]
    assert all(g is not None for g in tape.gradient(y, trainable))
