"""`tf.keras.optimizers`: SGD and Adam with `apply_gradients(zip(grads, vars))`."""

import re
import warnings

import numpy as np

from .. import dtypes, ops
from ..tensor import _Operators, convert_to_tensor
from . import naming
from ._arguments import reject_unimplemented
from .variables import KerasVariable


def _is_schedule(learning_rate):
    """A learning rate schedule: any callable of the step counter but a Variable."""
    return callable(learning_rate) and not isinstance(learning_rate, _Operators)


def _clip_by_global_norm(grads, clip_norm):
    """Keras' clip_by_global_norm: every gradient times clip_norm / max(norm, clip_norm),
    norm over all of them; an inf or NaN norm makes every gradient NaN, as in Keras."""
    # Gradients of float32 and float64 variables: the norm in the wider dtype.
    norm_dtype = max((g.dtype for g in grads), key=lambda dtype: dtype.size)
    norm = ops.global_norm([ops.cast(g, norm_dtype) for g in grads])
    scale = clip_norm * ops.minimum(1.0 / norm, 1.0 / clip_norm) + (norm - norm)
    return [g * ops.cast(scale, g.dtype) for g in grads]


class Optimizer:
    """Updates variables in place from their gradients; skips variables with None.

    As Keras 3, before each update it unscales the gradients (`loss_scale_factor`), clips
    them (`clipnorm` per variable, `global_clipnorm` over all, or `clipvalue` per element)
    and decays the variables (`weight_decay`: var -= var * weight_decay * learning_rate).
    """

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, name=None, **kwargs):
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.")
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        # ema_momentum and ema_overwrite_frequency only tune use_ema.
        reject_unimplemented(type(self).__name__, use_ema=(use_ema, False),
                             gradient_accumulation_steps=(gradient_accumulation_steps, None))
        if sum(arg is not None for arg in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(f"Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can "
                             f"be set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                             f"global_clipnorm={global_clipnorm}")
        self.name = name or naming.auto_name(type(self).__name__)
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.use_ema, self.ema_momentum = use_ema, ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self._slots = {}  # (id(variable), slot name) -> (variable, slot), in creation order
        self._deferred_slots = {}  # the same keys -> (variable, restore) from a checkpoint
        self.iterations = self._new_variable(0, dtypes.int64, "iteration")
        self._learning_rate = self._build_learning_rate(learning_rate)
        self._decay_excluded_ids = set()
        self._decay_excluded_names = None

    def _new_variable(self, value, dtype, name):
        """A non-trainable KerasVariable with a path under the optimizer's name, as Keras'
        `adam/iteration`; made eagerly, also while a tf.function is traced."""
        from ..graph.trace import init_scope
        with init_scope(), naming.name_scope(self.name, self):
            return KerasVariable(value, dtype=dtype, trainable=False, name=name)

    def _build_learning_rate(self, learning_rate):
        # As Keras: a schedule (a callable of the step) is kept; a number becomes a float32
        # Variable, so that setting `learning_rate` later is seen by an already traced
        # training step (the Variable is captured by reference).
        if _is_schedule(learning_rate):
            return learning_rate
        return self._new_variable(ops.cast(convert_to_tensor(learning_rate), dtypes.float32),
                                  dtypes.float32, "learning_rate")

    @property
    def variables(self):
        """Its Variables, as Keras': the step counter, the learning rate (unless a
        schedule), then the slots in the order they were made."""
        own = [self.iterations] + ([] if _is_schedule(self._learning_rate)
                                   else [self._learning_rate])
        return own + [slot for _, slot in self._slots.values()]

    @property
    def learning_rate(self):
        """The learning rate: a float32 Variable (or the schedule it was created with)."""
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        if _is_schedule(learning_rate):
            self._learning_rate = learning_rate
        elif _is_schedule(self._learning_rate):
            raise TypeError("This optimizer was created with a learning rate schedule as "
                            "its `learning_rate` constructor argument, hence its learning "
                            "rate is not settable. If you need the learning rate to be "
                            "settable, you should instantiate the optimizer with a float "
                            "`learning_rate` argument.")
        else:
            self._learning_rate.assign(ops.cast(convert_to_tensor(learning_rate),
                                                dtypes.float32))

    lr = learning_rate

    def _lr(self, dtype):
        """The learning rate as a tensor: a schedule is evaluated on the step counter, so a
        traced training step reads the step when it runs, not when it was traced."""
        lr = self._learning_rate
        if _is_schedule(lr):
            lr = lr(self.iterations)
        return ops.cast(convert_to_tensor(lr), dtype)

    def _slot(self, var, name):
        key = (id(var), name)
        if key not in self._slots:
            zeros = np.zeros(tuple(var.shape), dtype=var.dtype.as_numpy_dtype)
            slot = self._new_variable(zeros, var.dtype, f"{_slot_prefix(var)}_{name}")
            self._slots[key] = (var, slot)
            deferred = self._deferred_slots.pop(key, None)
            if deferred is not None and deferred[0] is var:
                deferred[1](slot)  # restored from a checkpoint before the slot existed
        return self._slots[key][1]

    # -- what tf.train.Checkpoint saves and restores ----------------------------------
    def _checkpoint_children(self):
        children = {"iterations": self.iterations}
        if not _is_schedule(self._learning_rate):
            children["learning_rate"] = self._learning_rate
        return children

    def _checkpoint_slots(self):
        """(variable, slot name, slot) for each slot made so far."""
        return [(var, name, slot) for (_, name), (var, slot) in self._slots.items()]

    def _restore_slot(self, var, name, restore):
        """Calls `restore(slot)` with slot `name` of `var` now, or when it is made (the
        restore came before the first step): TensorFlow's deferred slot restoration."""
        key = (id(var), name)
        if key in self._slots:
            restore(self._slots[key][1])
        else:
            self._deferred_slots[key] = (var, restore)

    def apply_gradients(self, grads_and_vars, name=None):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("No gradients provided for any variable.")
        variables = [v for _, v in pairs]
        # As Keras: a gradient of another dtype (float64, int) is cast to the variable's.
        grads = [ops.cast(convert_to_tensor(g), v.dtype) for g, v in pairs]
        grads = self._clip_gradients(self._unscale(grads))
        self.iterations.assign_add(1)
        self._apply_weight_decay(variables)
        for grad, var in zip(grads, variables):
            self._update(grad, var)
        return self.iterations

    def scale_loss(self, loss):
        """The loss times `loss_scale_factor` (if set), as Keras: `apply_gradients`
        divides the gradients by it again."""
        if self.loss_scale_factor is None:
            return loss
        return loss * self.loss_scale_factor

    def _unscale(self, grads):
        if self.loss_scale_factor is None:
            return grads
        return [g / ops.cast(self.loss_scale_factor, g.dtype) for g in grads]

    def _clip_gradients(self, grads):
        # Keras' tests (`x and x > 0`): a clip of 0 or below clips nothing.
        if self.clipnorm and self.clipnorm > 0:
            return [ops.clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue and self.clipvalue > 0:
            return [ops.clip_by_value(g, ops.cast(-self.clipvalue, g.dtype),
                                      ops.cast(self.clipvalue, g.dtype)) for g in grads]
        return grads

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Exempts from `weight_decay` the Variables in `var_list` and those whose name
        contains one of `var_names` (a regular expression each), as in Keras."""
        self._decay_excluded_ids = {id(v) for v in var_list or ()}
        self._decay_excluded_names = re.compile("|".join(set(var_names))) if var_names \
            else None

    def _use_weight_decay(self, var):
        if id(var) in self._decay_excluded_ids:
            return False
        names = self._decay_excluded_names
        return names is None or names.search(var.name) is None

    def _apply_weight_decay(self, variables):
        if self.weight_decay is None:
            return
        for var in variables:
            if self._use_weight_decay(var):
                decay = ops.cast(self.weight_decay, var.dtype) * self._lr(var.dtype)
                var.assign_sub(var * decay)

    def minimize(self, loss, var_list, tape=None):
        from ..autodiff.tape import GradientTape
        if tape is None:
            with GradientTape() as recording:
                value = loss()
            tape = recording
        else:
            value = loss
        if callable(var_list):  # as Keras: variables the loss may just have created
            var_list = var_list()
        grads = tape.gradient(value, var_list)
        return self.apply_gradients(zip(grads, var_list))


class SGD(Optimizer):
    """var -= lr * grad (with momentum: velocity = momentum * velocity - lr * grad)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum, self.nesterov = momentum, nesterov

    def _update(self, grad, var):
        lr = self._lr(var.dtype)
        if not self.momentum:
            var.assign_sub(grad * lr)
            return
        velocity = self._slot(var, "momentum")  # Keras' slot names
        velocity.assign(velocity * self.momentum - grad * lr)
        if self.nesterov:
            var.assign_add(velocity * self.momentum - grad * lr)
        else:
            var.assign_add(velocity)


class Adam(Optimizer):
    """Adam as Keras implements it: bias correction folded into the step size,
    epsilon added to sqrt(v)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad

    def _update(self, grad, var):
        step = ops.cast(self.iterations, var.dtype)
        m, v = self._slot(var, "momentum"), self._slot(var, "velocity")
        m.assign_add((grad - m) * (1.0 - self.beta_1))
        v.assign_add((ops.square(grad) - v) * (1.0 - self.beta_2))
        beta_1 = ops.cast(self.beta_1, var.dtype)
        beta_2 = ops.cast(self.beta_2, var.dtype)
        alpha = self._lr(var.dtype) * ops.sqrt(1.0 - beta_2 ** step) / (1.0 - beta_1 ** step)
        if self.amsgrad:
            v_hat = self._slot(var, "velocity_hat")
            v_hat.assign(ops.maximum(v_hat, v))
            v = v_hat
        var.assign_sub((m * alpha) / (ops.sqrt(v) + self.epsilon))


def _slot_prefix(var):
    """Keras' name for a variable's slots: its path (or TensorFlow name) with `/` and `:`
    made `_`: `dense_kernel_momentum`, `Variable_0_momentum`."""
    name = getattr(var, "path", None) or var.name
    return name.replace("/", "_").replace(":", "_")
