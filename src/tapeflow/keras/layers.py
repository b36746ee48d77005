"""`tf.keras.layers`: Dense and BatchNormalization, built on first call."""

from .. import context, dtypes, ops
from ..module import Module
from ..tensor import _Operators, convert_to_tensor
from ..variable import Variable
from . import activations, initializers, naming
from ._arguments import reject_unimplemented
from .variables import KerasVariable


def executing_eagerly():
    return context.current_graph.get() is None


class Layer(Module):
    """A callable holding Variables; `build(input_shape)` runs on the first call.

    A `tf.Module` (so Checkpoints and SavedModels track it, and `submodules` lists the
    layers it holds), with Keras 3's lists for `variables` and its names: unique default
    names (`dense`, `dense_1`), variables named `kernel` with a `path` (`dense/kernel`).
    """

    def __init__(self, *, activity_regularizer=None, trainable=True, dtype=None,
                 autocast=True, name=None, **kwargs):
        # Keras uses `input_shape`/`input_dim` only to start a Sequential model, which
        # tapeflow has not: on a lone layer they change nothing, as in Keras. `autocast`
        # only matters under mixed precision policies, which tapeflow has not either.
        kwargs.pop("input_shape", None)
        kwargs.pop("input_dim", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments passed to "
                             f"{type(self).__name__}: {kwargs}")
        reject_unimplemented(type(self).__name__,
                             activity_regularizer=(activity_regularizer, None))
        if not isinstance(trainable, bool):
            # ValueError, not the usual TypeError: Keras' class.
            raise ValueError(f"Expected `trainable` to be a boolean. Received: "  # noqa: TRY004
                             f"trainable={trainable} (of type {type(trainable)})")
        if name is None:
            name = naming.auto_name(type(self).__name__)
        naming.check_name(name)
        self._set_name(name)
        self.dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self.autocast = autocast
        self._trainable = trainable
        self.built = False
        self._weights = []

    @property
    def trainable(self):
        """Whether the layer's weights are trained: False moves them all to
        `non_trainable_weights`, in this layer and the layers it holds, as in Keras.

        Unlike Keras 3, the Variables keep their own `trainable` flag (tapes watch by it,
        and Keras 3's tapes still watch a frozen layer's variables)."""
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)
        for layer in self._tracked():
            if isinstance(layer, Layer):
                layer.trainable = value

    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True,
                   autocast=True, regularizer=None, constraint=None, aggregation="none",
                   overwrite_with_gradient=False, name=None):
        """A new KerasVariable of this layer, as Keras 3's: `initializer` defaults to
        glorot_uniform for a float dtype, zeros otherwise; its path is under the layer's
        name (and the layers whose call builds it)."""
        reject_unimplemented(type(self).__name__, regularizer=(regularizer, None),
                             constraint=(constraint, None),
                             overwrite_with_gradient=(overwrite_with_gradient, False))
        dtype = dtypes.as_dtype(dtype or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        with naming.name_scope(self.name, self):
            var = KerasVariable(initializers.get(initializer), shape=tuple(shape or ()),
                                dtype=dtype, trainable=trainable, name=name)
        self._weights.append(var)
        return var

    def build(self, input_shape):
        self.built = True

    def _to_input(self, inputs):
        if isinstance(inputs, _Operators):
            t = convert_to_tensor(inputs)
            return ops.cast(t, self.dtype) if t.dtype.is_floating and t.dtype != self.dtype \
                else t
        return convert_to_tensor(inputs, dtype=self.dtype)

    def __call__(self, inputs, *args, **kwargs):
        inputs = self._to_input(inputs)
        # Layers built inside this call get paths under this layer's name, as in Keras.
        with naming.name_scope(self.name, self):
            if not self.built:
                self.build(tuple(inputs.shape))
                self.built = True
            call = self.call
            if not executing_eagerly():
                # Inside tf.function, Python control flow in `call` becomes graph control
                # flow, as Keras converts layers' call methods.
                from ..graph.autograph import convert
                call = convert(call, _strict=False)
            return call(inputs, *args, **kwargs)

    def _tracked(self):
        """Its own weights, then the Variables and layers it holds as attributes (in
        attribute order, also inside lists, tuples and dicts), as Keras tracks them."""
        def walk(value):
            if isinstance(value, Variable) or isinstance(value, Layer) and value is not self:
                yield value
            elif isinstance(value, (list, tuple)):
                for item in value:
                    yield from walk(item)
            elif isinstance(value, dict):
                for item in value.values():
                    yield from walk(item)

        yield from self._weights
        for value in vars(self).values():
            yield from walk(value)

    def _collect(self, variables_of):
        """The Variables `variables_of(item)` gives for each tracked item, each once."""
        found = {}
        for item in self._tracked():
            for var in variables_of(item):
                found.setdefault(id(var), var)
        return list(found.values())

    @property
    def weights(self):
        """Every Variable `_tracked` finds, those of the layers it holds included."""
        return self._collect(lambda item: item.weights if isinstance(item, Layer) else [item])

    variables = weights

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return self._collect(lambda item: item.trainable_weights if isinstance(item, Layer)
                             else [item] if item.trainable else [])

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in self.weights if id(w) not in trainable]

    non_trainable_variables = non_trainable_weights


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`, as `tf.keras.layers.Dense`.

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.Dense(2, activation="relu")
    >>> layer(tf.ones((4, 3))).shape
    TensorShape([4, 2])
    >>> [v.name for v in layer.variables]
    ['kernel', 'bias']
    >>> layer.kernel.path  # doctest: +ELLIPSIS
    'dense.../kernel'
    """

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None,
                 lora_alpha=None, quantization_config=None, **kwargs):
        if int(units) <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        # lora_alpha only scales a LoRA update, which lora_rank would enable.
        reject_unimplemented(
            type(self).__name__, kernel_regularizer=(kernel_regularizer, None),
            bias_regularizer=(bias_regularizer, None),
            kernel_constraint=(kernel_constraint, None),
            bias_constraint=(bias_constraint, None), lora_rank=(lora_rank, None),
            quantization_config=(quantization_config, None))
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = None
        self.bias = None

    def _check_rank(self, shape):
        # Keras' InputSpec(min_ndim=2): a vector is not a batch of rows.
        if len(shape) < 2:
            raise ValueError(f"Input 0 of layer \"{self.name}\" is incompatible with the "
                             f"layer: expected min_ndim=2, found ndim={len(shape)}. Full "
                             f"shape received: {tuple(shape)}")

    def build(self, input_shape):
        self._check_rank(input_shape)
        self.kernel = self.add_weight((input_shape[-1], self.units), self.kernel_initializer,
                                      name="kernel")
        if self.use_bias:
            self.bias = self.add_weight((self.units,), self.bias_initializer, name="bias")
        self.built = True

    def call(self, inputs):
        self._check_rank(inputs.shape)
        if inputs.dtype != self.dtype:  # Keras' Dense casts every input dtype, ints too
            inputs = ops.cast(inputs, self.dtype)
        if inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"Input 0 of layer \"{self.name}\" is incompatible with the layer: expected "
                f"axis -1 of input shape to have value {self.kernel.shape[0]}, but received "
                f"input with shape {tuple(inputs.shape)}")
        y = ops.matmul(inputs, self.kernel)  # batch dims of rank > 2 inputs broadcast
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)


class BatchNormalization(Layer):
    """Normalizes with batch statistics when `training=True` (and the layer is
    trainable), moving ones otherwise.

    moving = moving * momentum + batch * (1 - momentum), as Keras does.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, synchronized=False, **kwargs):
        super().__init__(**kwargs)
        # renorm_clipping and renorm_momentum only tune renorm.
        reject_unimplemented(
            type(self).__name__, beta_regularizer=(beta_regularizer, None),
            gamma_regularizer=(gamma_regularizer, None),
            beta_constraint=(beta_constraint, None),
            gamma_constraint=(gamma_constraint, None), renorm=(renorm, False),
            synchronized=(synchronized, False))
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale = center, scale
        self._initializers = (beta_initializer, gamma_initializer, moving_mean_initializer,
                              moving_variance_initializer)
        self.gamma = self.beta = None

    def build(self, input_shape):
        axis = self.axis % len(input_shape)
        shape = (input_shape[axis],)
        beta_init, gamma_init, mean_init, var_init = self._initializers
        if self.scale:
            self.gamma = self.add_weight(shape, gamma_init, name="gamma")
        if self.center:
            self.beta = self.add_weight(shape, beta_init, name="beta")
        self.moving_mean = self.add_weight(shape, mean_init, trainable=False,
                                           name="moving_mean")
        self.moving_variance = self.add_weight(shape, var_init, trainable=False,
                                               name="moving_variance")
        self._reduce_axes = [i for i in range(len(input_shape)) if i != axis]
        self._param_shape = [input_shape[i] if i == axis else 1
                             for i in range(len(input_shape))]
        self.built = True

    def call(self, inputs, training=None):
        if not self.trainable:
            # As Keras since TF 2.0: a frozen layer keeps its statistics when the model
            # around it is fine-tuned.
            training = False
        if training:
            mean = ops.reduce_mean(inputs, axis=self._reduce_axes, keepdims=True)
            variance = ops.reduce_mean(ops.square(inputs - mean), axis=self._reduce_axes,
                                       keepdims=True)
            m = self.momentum
            self.moving_mean.assign(self.moving_mean * m +
                                    ops.reshape(mean, [-1]) * (1.0 - m))
            self.moving_variance.assign(self.moving_variance * m +
                                        ops.reshape(variance, [-1]) * (1.0 - m))
        else:
            mean = ops.reshape(self.moving_mean, self._param_shape)
            variance = ops.reshape(self.moving_variance, self._param_shape)
        y = (inputs - mean) * ops.rsqrt(variance + self.epsilon)
        if self.scale:
            y = y * ops.reshape(self.gamma, self._param_shape)
        if self.center:
            y = y + ops.reshape(self.beta, self._param_shape)
        return y
