"""Moving blocks of the spatial dimensions into the batch and back: space_to_batch_nd,
batch_to_space_nd (tf.space_to_batch, tf.batch_to_space, tf.nn.space_to_batch),
required_space_to_batch_paddings and tf.nn.with_space_to_batch, which runs an operation
with dilation as TensorFlow's atrous convolutions did. Each is a pad or slice, reshapes
and a transpose, so gradients, batching and compiled code are those ops'."""

import numpy as np

from . import rules
from .shape import pad, reshape, shape, transpose


def _static(value, what, op_name, rank=None):
    """A block shape, paddings or crops argument as NumPy integers."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"Value passed to parameter '{what}' has DataType {array.dtype} not "
                        f"in list of allowed values: int32, int64")
    if rank is not None and array.ndim != rank:
        raise rules.op_error(op_name, f"{what} must be {'a vector' if rank == 1 else 'a matrix'}"
                                      f", got shape {list(array.shape)}")
    return array.astype(np.int64)


def _blocks(input, block_shape, pairs, op_name, pairs_name):
    x = rules.as_tensor(input)
    block = _static(block_shape, "block_shape", op_name, 1)
    pairs = _static(pairs, pairs_name, op_name, 2)
    m = block.size
    if pairs.shape != (m, 2):
        raise rules.op_error(op_name, f"{pairs_name} should have shape [{m}, 2] instead of "
                                      f"{list(pairs.shape)}")
    if len(x._shape) < m + 1:
        raise rules.op_error(op_name, f"input rank should be >= {m + 1} instead of "
                                      f"{len(x._shape)}")
    if (block < 1).any():
        raise rules.op_error(op_name, f"All values in block_shape must be positive, got "
                                      f"value, {block.min()} at index {int(block.argmin())}.")
    if (pairs < 0).any():
        raise rules.op_error(op_name, f"All values in {pairs_name} must be non-negative")
    return x, block, pairs, m


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """The M spatial dimensions after the batch, zero-padded, cut into block_shape blocks
    whose positions become batch entries: [prod(block) * B, padded / block, ...]
    (tf.space_to_batch_nd)."""
    op_name = "SpaceToBatchND"
    x, block, paddings, m = _blocks(input, block_shape, paddings, op_name, "paddings")
    padded = pad(x, [[0, 0]] + paddings.tolist() + [[0, 0]] * (len(x._shape) - m - 1))
    dims = shape(padded)
    sizes = padded._shape
    for k in range(m):
        if sizes[k + 1] is not None and sizes[k + 1] % block[k]:
            raise rules.op_error(op_name, f"padded_shape[{k}]={sizes[k + 1]} is not "
                                          f"divisible by block_shape[{k}]={block[k]}")
    split = [dims[0]]
    for k in range(m):
        split += [dims[k + 1] // int(block[k]), int(block[k])]
    rest = [dims[a] for a in range(m + 1, len(sizes))]
    blocks = reshape(padded, split + rest)
    perm = [2 * k + 2 for k in range(m)] + [0] + [2 * k + 1 for k in range(m)] + \
        list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    moved = transpose(blocks, perm)
    return reshape(moved, [dims[0] * int(block.prod())] +
                   [dims[k + 1] // int(block[k]) for k in range(m)] + rest)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of space_to_batch_nd: batch entries back into blocks of the spatial
    dimensions, then `crops` cut off (tf.batch_to_space)."""
    op_name = "BatchToSpaceND"
    x, block, crops, m = _blocks(input, block_shape, crops, op_name, "crops")
    dims = shape(x)
    count = int(block.prod())
    batch = x._shape[0]
    if batch is not None and batch % count:
        raise rules.op_error(op_name, f"Input batch dimension ({batch}) is not divisible by "
                                      f"product of block sizes ({count})")
    rest = [dims[a] for a in range(m + 1, len(x._shape))]
    blocks = reshape(x, [int(b) for b in block] + [dims[0] // count] +
                     [dims[k + 1] for k in range(m)] + rest)
    perm = [m]
    for k in range(m):
        perm += [m + 1 + k, k]
    perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    spread = reshape(transpose(blocks, perm), [dims[0] // count] +
                     [dims[k + 1] * int(block[k]) for k in range(m)] + rest)
    for k in range(m):
        size = x._shape[k + 1]
        if size is not None and crops[k].sum() > size * block[k]:
            raise rules.op_error(op_name, f"Crops must be non-negative and no larger than "
                                          f"the output: crop_start[{k}]={crops[k][0]}, "
                                          f"crop_end[{k}]={crops[k][1]}, "
                                          f"block_shape[{k}]={block[k]}, input_shape[{k + 1}]"
                                          f"={size}")
    if not crops.any():
        return spread
    index = [slice(None)]
    for k in range(m):
        end = int(crops[k][1])
        index.append(slice(int(crops[k][0]), -end if end else None))
    return spread[tuple(index)]


def space_to_batch(input, block_shape, paddings, name=None):  # noqa: A002
    """tf.space_to_batch and tf.nn.space_to_batch in TensorFlow 2: space_to_batch_nd."""
    return space_to_batch_nd(input, block_shape, paddings)


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """tf.batch_to_space in TensorFlow 2: batch_to_space_nd."""
    return batch_to_space_nd(input, block_shape, crops)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) making input_shape plus base_paddings divisible by block_shape,
    the extra padding at the end (tf.required_space_to_batch_paddings)."""
    from ..tensor import constant
    sizes = _static(input_shape, "input_shape", "required_space_to_batch_paddings", 1)
    block = _static(block_shape, "block_shape", "required_space_to_batch_paddings", 1)
    base = np.zeros((block.size, 2), np.int64) if base_paddings is None else \
        _static(base_paddings, "base_paddings", "required_space_to_batch_paddings", 2)
    start, end = base[:, 0], base[:, 1]
    full = sizes + start + end
    extra_end = (block - full % block) % block
    paddings = np.stack([start, end + extra_end], axis=1)
    crops = np.stack([np.zeros_like(extra_end), extra_end], axis=1)
    return constant(paddings.astype(np.int32)), constant(crops.astype(np.int32))


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """op(converted_input, num_spatial_dims, padding) run on the input cut into
    dilation_rate blocks (space_to_batch_nd), the result put back (batch_to_space_nd):
    op applied with its taps dilation_rate apart (tf.nn.with_space_to_batch)."""
    x = rules.as_tensor(input)
    rate = _static(dilation_rate, "dilation_rate", "with_space_to_batch", 1)
    n = rate.size
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"`padding` must be 'SAME' or 'VALID'. Received: padding={padding}")
    if spatial_dims is None:
        first = 2 if data_format is not None and data_format.startswith("NC") else 1
        spatial_dims = list(range(first, first + n))
    spatial_dims = sorted(int(d) for d in spatial_dims)
    if spatial_dims != list(range(spatial_dims[0], spatial_dims[0] + n)):
        raise ValueError("spatial_dims must be a contiguous range here")
    if (rate == 1).all():
        return op(x, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        window = _static(filter_shape, "filter_shape", "with_space_to_batch", 1)
        effective = (window - 1) * rate + 1
        total = effective - 1
        base = np.stack([total // 2, total - total // 2], axis=1)
    else:
        base = np.zeros((n, 2), np.int64)
    first = spatial_dims[0]
    moved = x
    if first != 1:
        perm = [0] + spatial_dims + [a for a in range(1, len(x._shape))
                                     if a not in spatial_dims]
        moved = transpose(x, perm)
    sizes = [moved._shape[1 + k] for k in range(n)]
    if None in sizes:
        raise ValueError("the spatial dimensions must be known when the function is traced")
    paddings, crops = required_space_to_batch_paddings(sizes, rate, base)
    blocked = space_to_batch_nd(moved, rate, paddings)
    if first != 1:
        blocked = transpose(blocked, np.argsort(perm).tolist())
    result = op(blocked, n, "VALID")
    if first != 1:
        result = transpose(result, perm)
    out = batch_to_space_nd(result, rate, crops)
    return transpose(out, np.argsort(perm).tolist()) if first != 1 else out


__all__ = ["batch_to_space", "batch_to_space_nd", "required_space_to_batch_paddings",
           "space_to_batch", "space_to_batch_nd", "with_space_to_batch"]
