"""`tf.train`: checkpoints of Modules, Keras layers and optimizers, and Variables."""

import os

from .checkpoint import Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus  # noqa: F401
from .checkpoint_file import read as _read
from .checkpoint_state import latest_checkpoint
from .manager import CheckpointManager


def list_variables(ckpt_dir_or_file):
    """(key, shape) of each value in a checkpoint (a prefix, or a directory: its latest),
    sorted by key, as `tf.train.list_variables`."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        path = latest_checkpoint(path) or path
    data = _read(path)
    return sorted((var["key"], list(var["shape"])) for var in data.index["variables"])


__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "list_variables"]
