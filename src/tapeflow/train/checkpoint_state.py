"""The `checkpoint` file of a directory, as TensorFlow writes it: text naming the latest
checkpoint and those a CheckpointManager keeps (relative paths for those inside it)."""

import json
import logging
import os
import re

from . import checkpoint_file

STATE_FILENAME = "checkpoint"
_LINE = re.compile(r"(\w+): (.*)")
_logger = logging.getLogger("tapeflow")


class CheckpointState:
    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths=(),
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp


def _relative(directory, path):
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def write_state(directory, state):
    """Writes `directory`'s `checkpoint` file (atomically)."""
    lines = [f"model_checkpoint_path: {json.dumps(_relative(directory, state.model_checkpoint_path))}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(_relative(directory, p))}"
              for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}"
              for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {state.last_preserved_timestamp!r}")
    checkpoint_file.write_atomically(os.path.join(directory, STATE_FILENAME),
                                     ("\n".join(lines) + "\n").encode("utf-8"))


def _parse(text):
    fields = {"model_checkpoint_path": None, "all_model_checkpoint_paths": [],
              "all_model_checkpoint_timestamps": [], "last_preserved_timestamp": None}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line.strip())
        if match is None or match[1] not in fields:
            raise ValueError(f"line {number}: {line!r}")
        name, value = match[1], match[2]
        value = json.loads(value) if name.endswith("path") or name.endswith("paths") \
            else float(value)
        if not isinstance(value, (str, float)):
            raise ValueError(f"line {number}: {line!r}")
        if isinstance(fields[name], list):
            fields[name].append(value)
        else:
            fields[name] = value
    return fields


def read_state(directory, latest_filename=None):
    """The CheckpointState of `directory` (its paths joined to it when relative), or None
    when it has no readable `checkpoint` file; a damaged one is logged and ignored, as
    TensorFlow does."""
    path = os.path.join(directory, latest_filename or STATE_FILENAME)
    try:
        with open(path, encoding="utf-8") as f:
            fields = _parse(f.read())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        _logger.warning("%s: %s: Checkpoint ignored", path, e)
        return None
    if not fields["model_checkpoint_path"]:
        return None
    for name in ("model_checkpoint_path", "all_model_checkpoint_paths"):
        value = fields[name]
        fields[name] = [os.path.join(directory, p) for p in value] if isinstance(value, list) \
            else os.path.join(directory, value)
    return CheckpointState(**fields)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the latest checkpoint saved in `checkpoint_dir` (as its `checkpoint`
    file names it), or None when there is none, as `tf.train.latest_checkpoint`."""
    state = read_state(os.fspath(checkpoint_dir), latest_filename)
    if state is None:
        return None
    if checkpoint_file.exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    _logger.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None
