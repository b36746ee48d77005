"""Dataset.cache(filename): the elements of a first complete pass written to one file,
which later passes — and later runs of the program — read instead of the input.

The file is tapeflow's own: an `.npz` archive (`<filename>.tapeflow-cache.npz`) of each
element's tensors, read with allow_pickle=False, so reading it runs nothing; its
elements must match the dataset's element_spec (structure, dtypes, shapes), or reading
fails with DataLossError naming the file.
"""

import os
import tempfile

import numpy as np

from .. import errors, nest
from ..tensor import constant

SUFFIX = ".tapeflow-cache.npz"


def cache_path(filename):
    return os.fspath(filename) + SUFFIX


def read(path, element_spec):
    """The elements stored at `path`, checked against `element_spec`."""
    specs = nest.flatten(element_spec)
    try:
        with np.load(path, allow_pickle=False) as archive:
            count = int(archive["count"])
            leaves = [[archive[f"e{i}_{k}"] for k in range(len(specs))] for i in range(count)]
    except (OSError, ValueError, KeyError, EOFError) as error:
        raise errors.DataLossError(f"{path}: not a readable dataset cache ({error})") from None
    elements = []
    for i, arrays in enumerate(leaves):
        for array, spec in zip(arrays, specs):
            if array.dtype != spec.dtype.as_numpy_dtype or len(array.shape) != len(spec.shape) \
                    or any(s is not None and s != a for s, a in zip(spec.shape, array.shape)):
                raise errors.DataLossError(
                    f"{path}: element {i} holds a {array.dtype}{list(array.shape)} where the "
                    f"dataset's element_spec has {spec}")
        elements.append(nest.pack_sequence_as(element_spec, [constant(a) for a in arrays]))
    return elements


def write(path, elements):
    """Writes the elements to `path` atomically (a reader never sees half a file)."""
    arrays = {"count": np.asarray(len(elements))}
    for i, element in enumerate(elements):
        for k, leaf in enumerate(nest.flatten(element)):
            arrays[f"e{i}_{k}"] = np.asarray(leaf.numpy())
    directory = os.path.dirname(os.path.abspath(path))
    fd, partial = tempfile.mkstemp(dir=directory, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.remove(partial)
        raise
