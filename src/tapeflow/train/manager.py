"""`tf.train.CheckpointManager`: numbered saves in one directory, keeping the latest few."""

import collections
import os
import time

from ..tensor import _Operators
from . import checkpoint_file
from .checkpoint_state import CheckpointState, read_state, write_state


class CheckpointManager:
    """Saves `checkpoint` as `<directory>/<checkpoint_name>-<n>`, deleting the oldest
    beyond `max_to_keep` (None keeps all) except one every `keep_checkpoint_every_n_hours`,
    and keeps the directory's `checkpoint` file, as TensorFlow's. A new manager on the
    same directory takes over the checkpoints listed there.

    >>> import tempfile, tapeflow as tf
    >>> ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    >>> manager = tf.train.CheckpointManager(ckpt, tempfile.mkdtemp(), max_to_keep=2)
    >>> paths = [manager.save() for _ in range(3)]
    >>> [os.path.basename(p) for p in manager.checkpoints]
    ['ckpt-2', 'ckpt-3']
    >>> manager.latest_checkpoint == paths[-1]
    True
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is "
                             "not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = None
        self._init_fn = init_fn
        self._maybe_delete = collections.OrderedDict()  # path -> when it was saved
        self._recover(time.time())

    def _recover(self, now):
        state = read_state(self._directory)
        if state is None:
            self._latest_checkpoint = None
            # A little in the past: a manager made again at once still keeps its first.
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        # As TensorFlow: checkpoints listed without times (Checkpoint.save's) are not
        # this manager's to delete; a clock gone back never makes old ones look new.
        preserved = min(state.last_preserved_timestamp or 0.0, now)
        self._last_preserved_timestamp = preserved
        paths = state.all_model_checkpoint_paths
        stamps = state.all_model_checkpoint_timestamps
        if len(stamps) != len(paths):
            stamps = [preserved] * len(paths)
        for path, stamp in zip(paths, stamps):
            if min(stamp, now) > preserved:
                self._maybe_delete[path] = min(stamp, now)

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The prefixes of the checkpoints it may still delete, oldest first."""
        return list(self._maybe_delete)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Saves a new checkpoint and returns its prefix (None when `checkpoint_interval`
        steps have not passed since the last save). It is numbered `checkpoint_number`
        (an int, or a Variable such as a step counter) or else by the checkpoint's
        `save_counter`, which each save increments."""
        if self._checkpoint_interval is not None:
            step = int(self._step_counter)
            if check_interval and self._last_checkpoint_step is not None and \
                    step < self._last_checkpoint_step + self._checkpoint_interval:
                return None
            if checkpoint_number is None:
                checkpoint_number = step
            self._last_checkpoint_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        if checkpoint_number is None:
            checkpoint_number = counter
        if isinstance(checkpoint_number, _Operators):
            checkpoint_number = checkpoint_number.numpy()
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}")
        # Saved again under an old number: it is the newest now.
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        # Named before the sweep, so an interrupted sweep still finds the new one.
        self._record_state()
        self._sweep()
        self._record_state()
        return path

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            hours = self._keep_checkpoint_every_n_hours
            if hours and stamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp  # kept, no longer listed
                continue
            checkpoint_file.remove(path)

    def _record_state(self):
        write_state(self._directory, CheckpointState(
            self._latest_checkpoint, list(self._maybe_delete),
            list(self._maybe_delete.values()), self._last_preserved_timestamp))

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its prefix, or runs `init_fn` (if
        given) and returns None when there is none."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None
