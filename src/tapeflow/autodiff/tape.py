"""GradientTape: records ops on watched tensors and differentiates them, as in TensorFlow."""

import contextlib
import enum

import numpy as np

from .. import context, nest
from ..source import warn
from ..tensor import Tensor, _Operators, wrap
from .backprop import backprop


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def unconnected_mode(value):
    if isinstance(value, UnconnectedGradients):
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


def _source_id(x):
    if isinstance(x, Tensor):
        return x._id
    if isinstance(x, _Operators):  # Variable
        return x._id
    # TensorFlow checks each source's dtype first: as_dtype(3.0) raises TypeError.
    raise TypeError(f"Cannot convert value {x!r} to a TensorFlow DType: sources must be "
                    "tf.Tensor or tf.Variable")


def _ones_like(t):
    if None in t._shape:  # a shape known only when the traced graph runs
        from ..ops.creation import ones_like
        return ones_like(t)
    return wrap(np.ones(t._shape, dtype=t.dtype._np))


def _zeros_like(x):
    if None in x._shape:
        from ..ops.creation import zeros_like
        return zeros_like(x)
    return wrap(np.zeros(tuple(x.shape), dtype=x.dtype._np))


_GRADIENT_INSIDE_CONTEXT = (
    "Calling GradientTape.gradient on a persistent tape inside its context is "
    "significantly less efficient than calling it outside the context (it causes the "
    "gradient ops to be recorded on the tape, leading to increased CPU and memory usage). "
    "Only call GradientTape.gradient inside the context if you actually want to trace the "
    "gradient in order to compute higher order derivatives.")
_warned_inside_context = False


def _warn_gradient_inside_context():
    """TensorFlow's warning for gradient() on a persistent tape still recording, given
    once per process as TensorFlow logs it (absl's log_first_n, n = 1); here a Python
    warning at the user's line."""
    global _warned_inside_context
    if not _warned_inside_context:
        _warned_inside_context = True
        warn(_GRADIENT_INSIDE_CONTEXT, UserWarning)


class GradientTape:
    """Records operations for automatic differentiation (`tf.GradientTape`).

    >>> import tapeflow as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> g.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._watched = set()  # ids of watched sources and of everything computed from them
        self._watched_vars = {}  # id -> Variable, in the order they were first watched
        self._entries = None  # None: no tape yet (never entered, or used up)
        self._recording = False
        self._used = False

    # -- recording ----------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        if self._entries is None:  # TensorFlow pushes a fresh tape
            self._entries = []
        self._push()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._recording:
            self._pop()

    def _push(self):
        context.recording_tapes.set(context.recording_tapes.get() + (self,))
        self._recording = True

    def _pop(self):
        context.recording_tapes.set(
            tuple(t for t in context.recording_tapes.get() if t is not self))
        self._recording = False

    def watch(self, tensor):
        """Ensures `tensor` (a Tensor, Variable or nested structure of them) is traced."""
        for x in nest.flatten(tensor):
            if not isinstance(x, _Operators):
                raise ValueError(f"Passed in object of type {type(x)!r}, not tf.Tensor or "
                                 "tf.Variable")
            if not x.dtype.is_differentiable:  # TensorFlow logs this; its gradient is None
                warn(f"The dtype of the watched tensor must be floating (e.g. tf.float32), "
                     f"got {x.dtype!r}", UserWarning)
        self._watch_all(tensor)

    def _watch_all(self, tensor):
        """watch() without its checks: tapeflow's own tapes watch whatever they need."""
        for x in nest.flatten(tensor):
            if isinstance(x, Tensor):
                self._watched.add(x._id)
            else:
                self._watch_variable(x)

    def _watch_variable(self, var):
        self._watched.add(var._id)
        self._watched_vars.setdefault(var._id, var)

    def watched_variables(self):
        """The Variables this tape watches, in order of construction (as TensorFlow)."""
        return tuple(sorted(self._watched_vars.values(), key=lambda v: v._id))

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops recording operations on this tape."""
        if self._entries is None:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        if not self._recording:  # TensorFlow: exited tapes fail in _pop_tape
            raise ValueError("Tape is not recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self):
        """Clears everything recorded; a tape inside its `with` keeps recording."""
        if not self._recording:
            # TensorFlow's reset() pops the tape first.
            raise ValueError("Tape is not recording.")
        self._watched = set()
        self._watched_vars = {}
        self._entries = []
        self._used = False

    # -- differentiation ----------------------------------------------------------------
    def _begin_use(self, what):
        if self._entries is None:
            raise RuntimeError(
                f"A non-persistent GradientTape can only be used to compute one set of "
                f"gradients (or jacobians); this one already computed {what} or never "
                f"recorded.")
        if self._recording and not self._persistent:
            # TensorFlow stops recording a non-persistent tape once it is differentiated.
            self._pop()

    def _end_use(self):
        if not self._persistent:
            self._entries = None
            self._watched = set()

    def _run_backprop(self, targets, seeds, source_ids):
        # As TensorFlow, a source the tape never watched gets no gradient, even when a
        # recorded op used it; a target that is itself a source still gets its seed.
        watched = self._watched
        live = [i for i in source_ids if i in watched]
        grads = backprop(self._entries, targets, seeds, live)
        if len(live) != len(source_ids):
            unwatched = set(source_ids) - watched
            for t, seed in zip(targets, seeds):
                if t._id in unwatched and t.dtype.is_differentiable:
                    old = grads.get(t._id)
                    grads[t._id] = seed if old is None else old + seed
        return grads

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """Gradients of `target` (Tensor or nested structure) w.r.t. `sources`.

        The result has the structure of `sources`. Unconnected sources give None, or
        zeros with `unconnected_gradients=tf.UnconnectedGradients.ZERO`.
        """
        if self._recording and self._persistent:
            _warn_gradient_inside_context()
        mode = unconnected_mode(unconnected_gradients)
        # Bad targets and sources fail before the tape is used up: TensorFlow lets you
        # call again. (TensorFlow checks the targets first.)
        for t in nest.flatten(target):
            if not isinstance(t, (Tensor, _Operators)):
                _read(t)  # raises TensorFlow's TypeError
        flat_sources = nest.flatten(sources)
        source_ids = [_source_id(s) for s in flat_sources]
        self._begin_use("gradients")
        try:
            flat_targets = [t if isinstance(t, Tensor) else _read(t) for t in nest.flatten(target)]
            if output_gradients is None:
                seeds = [_ones_like(t) for t in flat_targets]
            else:
                from ..tensor import convert_to_tensor
                flat_out = nest.flatten(output_gradients)
                if len(flat_out) != len(flat_targets):
                    raise ValueError(
                        f"output_gradients has {len(flat_out)} entries, but target has "
                        f"{len(flat_targets)}")
                seeds = [_ones_like(t) if g is None else convert_to_tensor(g, dtype=t.dtype)
                         for t, g in zip(flat_targets, flat_out)]
            grads = self._run_backprop(flat_targets, seeds, source_ids)
        finally:
            self._end_use()
        result = []
        for s, sid in zip(flat_sources, source_ids):
            g = grads.get(sid)
            if g is None and mode is UnconnectedGradients.ZERO:
                g = _zeros_like(s)
            result.append(g)
        return nest.pack_sequence_as(sources, result)

    def _check_pfor(self, what, experimental_use_pfor):
        # Inside tf.function TensorFlow allows it: the graph's loop needs no second pass.
        if not experimental_use_pfor and not self._persistent and \
                context.current_graph.get() is None:
            raise RuntimeError(
                f"GradientTape must be created with persistent=True to compute the {what} "
                f"with eager execution enabled and with experimental_use_pfor set to False.")

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The Jacobian of `target` w.r.t. each source: shape target.shape + source.shape."""
        from .jacobian import full_jacobian
        mode = unconnected_mode(unconnected_gradients)
        self._check_pfor("jacobian", experimental_use_pfor)
        self._begin_use("jacobians")
        try:
            return full_jacobian(self, target, sources, mode, parallel_iterations,
                                 experimental_use_pfor)
        finally:
            self._end_use()

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobian: result[i] is the Jacobian of target[i] w.r.t. source[i]."""
        from .jacobian import batch_jacobian
        mode = unconnected_mode(unconnected_gradients)
        self._check_pfor("batch_jacobian", experimental_use_pfor)
        self._begin_use("jacobians")
        try:
            return batch_jacobian(self, target, source, mode, parallel_iterations,
                                  experimental_use_pfor)
        finally:
            self._end_use()


def _read(x):
    if isinstance(x, _Operators):
        return x._read_as_itself()
    # TensorFlow checks the target's dtype first: as_dtype(None) raises TypeError.
    raise TypeError(f"Cannot convert value {x!r} to a TensorFlow DType: targets must be "
                    "tf.Tensor or tf.Variable")
