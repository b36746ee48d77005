"""Tutorial conformance: seed 001, "Advanced automatic differentiation" guide (Thai).

Each test runs one code example of ../shared/seeds/001_*.txt as written, with
`import tapeflow as tf`, and checks the output the page prints. The Keras-layer
examples run as written at the end of the file. The plotting calls are not here.
"""
# ruff: noqa: F841  (tutorial code is kept as the page writes it)

import subprocess
import sys

import numpy as np

import tapeflow as tf


def test_stop_recording(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)

    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == (
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)\n"
        "dz/dy: None\n")


def test_reset(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True

    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            # Throw out all the tape recorded so far.
            t.reset()
        z = x * x + y_sq

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == (
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)\n"
        "dz/dy: None\n")


def test_stop_gradient(capsys):
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)

    with tf.GradientTape() as t:
        y_sq = y**2
        z = x**2 + tf.stop_gradient(y_sq)

    grad = t.gradient(z, {'x': x, 'y': y})

    print('dz/dx:', grad['x'])  # 2*x => 4
    print('dz/dy:', grad['y'])
    assert capsys.readouterr().out == (
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)\n"
        "dz/dy: None\n")


def test_custom_gradient_clip_by_norm(capsys):
    # Establish an identity operation, but clip during the gradient pass.
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    print(t.gradient(output, v))  # calls "backward", which clips 4 to 2
    assert capsys.readouterr().out == "tf.Tensor(2.0, shape=(), dtype=float32)\n"
    # The forward pass is the identity.
    assert float(output) == 4.0


def test_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)

    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)

        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)

        y = y0 + y1

        ys = tf.reduce_sum(y)

    r0 = tape0.gradient(ys, x0).numpy()  # cos(x) => 1.0
    r1 = tape1.gradient(ys, x1).numpy()  # sigmoid(x1)*(1-sigmoid(x1)) => 0.25
    assert repr(float(r0)) == "1.0" and str(r0) == "1.0"
    assert str(r1) == "0.25"
    # TensorFlow's .numpy() of a float32 scalar is a NumPy float32 scalar.
    assert isinstance(r0, np.float32) and isinstance(r1, np.float32)


def test_each_tape_watches_only_its_own_constant():
    # The multiple-tapes example reduced to one tape: x0 and x1 are two different
    # tensors that happen to hold the same value; watching x0 must not watch x1.
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0:
        tape0.watch(x0)
        y = tf.math.sin(x0) + tf.nn.sigmoid(x1)
    assert tape0.gradient(y, x0).numpy() == 1.0


def test_higher_order_gradients(capsys):
    x = tf.Variable(1.0)  # Create a Tensorflow variable initialized to 1.0

    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x

        # Compute the gradient inside the outer `t2` context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)

    print('dy_dx:', dy_dx.numpy())  # 3 * x**2 => 3.0
    print('d2y_dx2:', d2y_dx2.numpy())  # 6 * x => 6.0
    assert capsys.readouterr().out == "dy_dx: 3.0\nd2y_dx2: 6.0\n"


def test_jacobian_scalar_source(capsys):
    x = tf.linspace(-10.0, 10.0, 200+1)
    delta = tf.Variable(0.0)

    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x+delta)

    dy_dx = tape.jacobian(y, delta)

    print(y.shape)
    print(dy_dx.shape)
    assert capsys.readouterr().out == "(201,)\n(201,)\n"
    assert x.dtype == tf.float32 and y.dtype == tf.float32 and dy_dx.dtype == tf.float32
    # Each element's gradient w.r.t. the scalar source: sigmoid'(x) = s * (1 - s).
    s = 1.0 / (1.0 + np.exp(-np.linspace(-10.0, 10.0, 201)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(y.numpy(), s, rtol=1e-5, atol=1e-7)


def test_einsum_diagonal_and_reduce_sum_of_batch_jacobian():
    # From the "Batch Jacobian" section, without the Keras layers: for an
    # elementwise-per-row model, summing the full Jacobian over the second batch axis
    # and selecting its diagonal with tf.einsum('bxby->bxy', j) both give the batch
    # Jacobian, of shape (7, 6, 5) for x (7, 5) and y (7, 6).
    x = tf.constant(np.linspace(-1.0, 1.0, 35, dtype=np.float32).reshape(7, 5))
    w = tf.constant(np.linspace(-0.5, 0.5, 30, dtype=np.float32).reshape(5, 6))
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ w)
    assert y.shape == (7, 6)
    j = tape.jacobian(y, x)
    assert j.shape == [7, 6, 7, 5]

    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum('bxby->bxy', j)
    assert j_sum.shape == (7, 6, 5)
    assert j_select.shape == (7, 6, 5)

    jb = tape.batch_jacobian(y, x)
    assert repr(jb.shape) == "TensorShape([7, 6, 5])"
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    np.testing.assert_allclose(j_select.numpy(), jb.numpy(), rtol=1e-6)


def test_batch_jacobian_transpose_pad_reshape_shapes():
    # plot_as_patches(j) without the plotting: transpose, pad with constant_values,
    # reshape to an image of shape (s0*s1, s2*s3).
    j = tf.reshape(tf.range(7 * 6 * 7 * 5, dtype=tf.float32), [7, 6, 7, 5])
    j = tf.transpose(j, [1, 0, 3, 2])
    assert j.shape == (6, 7, 5, 7)
    lim = tf.reduce_max(abs(j))
    j = tf.pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]],
               constant_values=-lim)
    s = j.shape
    assert s == (6, 9, 5, 9)
    j = tf.reshape(j, [s[0]*s[1], s[2]*s[3]])
    assert j.shape == (54, 45)
    assert float(tf.reduce_min(j)) == -float(lim)


# -- The page's Keras examples, with each Dense layer written out as Variables ------------
# (tf.keras.layers.Dense(n, activation=act)(x) == act(x @ kernel + bias)). These keep
# the page's code shape and the shapes it prints and check values the Keras versions
# (further down) cannot, since those draw their own random kernels.

def _dense(n_in, n_out):
    kernel = tf.Variable(tf.random.normal([n_in, n_out], seed=1) * 0.5)
    bias = tf.Variable(tf.random.normal([n_out], seed=2) * 0.1)
    return kernel, bias


def test_input_gradient_regularization_without_keras():
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    kernel, bias = _dense(5, 10)

    def layer(x):
        return tf.nn.relu(x @ kernel + bias)

    with tf.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x)**2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = tf.norm(g1)

    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, [kernel, bias])
    assert repr([var.shape for var in dg1_mag]) == "[TensorShape([5, 10]), TensorShape([10])]"
    assert g1.shape == (7, 5) and g1_mag.shape == ()
    assert t1.watched_variables() == () or len(t1.watched_variables()) == 0


def test_jacobian_tensor_source_without_keras(capsys):
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    kernel, bias = _dense(5, 10)

    with tf.GradientTape(persistent=True) as tape:
        y = tf.nn.relu(x @ kernel + bias)

    assert repr(y.shape) == "TensorShape([7, 10])"
    assert repr(kernel.shape) == "TensorShape([5, 10])"

    j = tape.jacobian(y, kernel)
    assert repr(j.shape) == "TensorShape([7, 10, 5, 10])"

    g = tape.gradient(y, kernel)
    print('g.shape:', g.shape)

    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    assert capsys.readouterr().out == "g.shape: (5, 10)\n"


def test_hessian_and_newton_step_without_keras(capsys):
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    kernel1, bias1 = _dense(5, 8)
    kernel2, bias2 = _dense(8, 6)

    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = tf.nn.relu(x @ kernel1 + bias1)
            x = tf.nn.relu(x @ kernel2 + bias2)
            loss = tf.reduce_mean(x**2)

        g = t1.gradient(loss, kernel1)

    h = t2.jacobian(g, kernel1)

    print(f'layer.kernel.shape: {kernel1.shape}')
    print(f'h.shape: {h.shape}')
    assert capsys.readouterr().out == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"

    n_params = tf.reduce_prod(kernel1.shape)
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    assert int(n_params) == 40 and n_params.dtype == tf.int32
    assert h_mat.shape == (40, 40) and g_vec.shape == (40, 1)
    # The Hessian matrix should be symmetric.
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0])*eps

    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    before = kernel1.numpy()

    # Reshape the update and apply it to the variable.
    _ = kernel1.assign_sub(tf.reshape(update, kernel1.shape))
    assert update.shape == (40, 1) and update.dtype == tf.float32
    # A backward-stable float32 solve: small residual relative to |A| |update|.
    a = h_mat.numpy().astype(np.float64) + eps * np.eye(40)
    u = update.numpy().astype(np.float64)
    residual = np.linalg.norm(a @ u - g_vec.numpy())
    assert residual <= 1e-4 * np.linalg.norm(a) * np.linalg.norm(u) + 1e-6
    np.testing.assert_allclose(kernel1.numpy(), before - update.numpy().reshape(5, 8),
                               rtol=1e-6)


def test_batch_jacobian_without_keras():
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    kernel1, bias1 = _dense(5, 8)
    kernel2, bias2 = _dense(8, 6)

    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.nn.elu(x @ kernel1 + bias1)
        y = tf.nn.elu(y @ kernel2 + bias2)

    assert repr(y.shape) == "TensorShape([7, 6])"
    j = tape.jacobian(y, x)
    assert repr(j.shape) == "TensorShape([7, 6, 7, 5])"

    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum('bxby->bxy', j)
    assert (j_sum.shape, j_select.shape) == ((7, 6, 5), (7, 6, 5))

    jb = tape.batch_jacobian(y, x)
    assert repr(jb.shape) == "TensorShape([7, 6, 5])"
    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    # Off-diagonal (batch, batch) blocks are zero.
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert np.all(off == 0)


# -- The page's Keras examples, as written -------------------------------------------------

def test_input_gradient_regularization():
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])

    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

    with tf.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with tf.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x)**2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = tf.norm(g1)

    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)

    assert repr([var.shape for var in dg1_mag]) == (
        "[TensorShape([5, 10]), TensorShape([10])]")
    assert len(t1.watched_variables()) == 0
    assert [id(v) for v in t2.watched_variables()] == [id(layer.kernel), id(layer.bias)]


def test_jacobian_tensor_source(capsys):
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)

    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)

    assert repr(y.shape) == "TensorShape([7, 10])"
    assert repr(layer.kernel.shape) == "TensorShape([5, 10])"

    j = tape.jacobian(y, layer.kernel)
    assert repr(j.shape) == "TensorShape([7, 10, 5, 10])"

    g = tape.gradient(y, layer.kernel)
    print('g.shape:', g.shape)

    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-3
    print('delta:', delta)

    first, second = capsys.readouterr().out.splitlines()
    assert first == "g.shape: (5, 10)"
    assert second.startswith("delta: ")  # the page's 2.3841858e-07 is float32 rounding


def test_hessian_and_newton_step(capsys):
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)

    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x**2)

        g = t1.gradient(loss, layer1.kernel)

    h = t2.jacobian(g, layer1.kernel)

    print(f'layer.kernel.shape: {layer1.kernel.shape}')
    print(f'h.shape: {h.shape}')
    assert capsys.readouterr().out == "layer.kernel.shape: (5, 8)\nh.shape: (5, 8, 5, 8)\n"

    n_params = tf.reduce_prod(layer1.kernel.shape)

    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    # The Hessian matrix should be symmetric.
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, atol=1e-5)

    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0])*eps

    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    # h_mat = ∇²f(X(k))
    # g_vec = ∇f(X(k))
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    before = layer1.kernel.numpy()

    # Reshape the update and apply it to the variable.
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))

    assert update.shape == (40, 1)
    np.testing.assert_allclose(layer1.kernel.numpy(), before - update.numpy().reshape(5, 8),
                               rtol=1e-6)


def test_batch_jacobian():
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])

    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)

    assert repr(y.shape) == "TensorShape([7, 6])"

    j = tape.jacobian(y, x)
    assert repr(j.shape) == "TensorShape([7, 6, 7, 5])"

    j_sum = tf.reduce_sum(j, axis=2)
    j_select = tf.einsum('bxby->bxy', j)
    assert (j_sum.shape, j_select.shape) == ((7, 6, 5), (7, 6, 5))

    jb = tape.batch_jacobian(y, x)
    assert repr(jb.shape) == "TensorShape([7, 6, 5])"

    error = tf.reduce_max(abs(jb - j_sum))
    assert error < 1e-3
    assert error.numpy() == 0.0  # the page prints 0.0


def test_batch_jacobian_with_batch_normalization(capsys):
    tf.random.set_seed(0)
    x = tf.random.normal([7, 5])

    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)

    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)

    j = tape.jacobian(y, x)
    print(f'j.shape: {j.shape}')

    # "These slices are not diagonal": batch statistics couple the examples.
    off = j.numpy().copy()
    for b in range(7):
        off[b, :, b, :] = 0
    assert np.abs(off).max() > 1e-4

    jb = tape.batch_jacobian(y, x)
    print(f'jb.shape: {jb.shape}')
    assert capsys.readouterr().out == "j.shape: (7, 6, 7, 5)\njb.shape: (7, 6, 5)\n"


def test_custom_gradient_in_tf_function_method(capsys, monkeypatch):
    # The tf.function half of the SavedModel example (tf.Module and tf.saved_model are not
    # part of tapeflow; a plain class holds the method). TensorFlow prints 2.0.
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")  # compiled, as TF runs it

    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule:
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    model = MyModule()
    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = model.call_custom_grad(v * v)
    print(t.gradient(output, v))
    assert capsys.readouterr().out == "tf.Tensor(2.0, shape=(), dtype=float32)\n"


def test_custom_gradient_in_saved_model(capsys, monkeypatch, tmp_path):
    # The page's cell as written, compiled as TensorFlow runs it; the load also happens in
    # a new process, where only the files tell the gradient.
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")
    monkeypatch.chdir(tmp_path)

    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class MyModule(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)

    model = MyModule()
    tf.saved_model.save(
        model,
        'saved_model',
        options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))

    # The loaded gradients will be the same as the above example.
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load('saved_model')
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    print(t.gradient(output, v))
    assert capsys.readouterr().out == "tf.Tensor(2.0, shape=(), dtype=float32)\n"

    code = ("import tapeflow as tf\n"
            "v = tf.Variable(2.0)\n"
            "loaded = tf.saved_model.load('saved_model')\n"
            "with tf.GradientTape() as t:\n"
            "    output = loaded.call_custom_grad(v * v)\n"
            "print(t.gradient(output, v))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout == "tf.Tensor(2.0, shape=(), dtype=float32)\n"
