"""How a reduction is spread over a real GPU's threads (an H100's width: 132
multiprocessors x 16 blocks of 256 threads), computed without one. A sum of a whole
4096x4096 matrix once ran on one block of 256 threads (8.2 ms on an H100, against 47 us
for PyTorch), because its split was sized for its one output."""

import itertools

import pytest

import tapeflow as tf
from tapeflow.backends.numba_cuda import device, kernels, reduce

H100_WIDTH = (132 * 16, 256)


@pytest.fixture
def h100_width(monkeypatch):
    monkeypatch.setattr(device, "_launch_width", H100_WIDTH)


def _threads(m, k):
    blocks, threads = device.launch_shape(m * reduce._parts(m, k))
    return blocks * threads


def test_a_whole_matrix_sum_fills_the_gpu(h100_width):
    parts = reduce._parts(1, 4096 * 4096)
    assert parts == 4096 * 4096 // reduce._GRAIN  # every thread sums _GRAIN elements
    assert _threads(1, 4096 * 4096) == 4096 * 4096 // reduce._GRAIN


def test_few_long_rows_are_split_and_many_rows_are_not(h100_width):
    assert reduce._parts(8, 1 << 24) == 132 * 16 * 256 // 8  # capped by the GPU's width
    assert reduce._parts(4096, 4096) == 4096 // reduce._GRAIN
    assert reduce._parts(1 << 20, 4096) == 1  # enough outputs: one thread each
    assert reduce._parts(1, 10) == 1  # too short to split


def test_the_levels_end_in_one_value_per_output(h100_width, monkeypatch):
    launched = []

    def first_level(targets, parts, last):
        launched.append(parts)

    monkeypatch.setattr(device, "empty", lambda n, dtype: None)
    monkeypatch.setattr(device, "launch", lambda kernel, n, *args: launched.append(n))
    monkeypatch.setattr(reduce.kernels, "kernel", lambda key: None)
    reduce.reduce_levels(first_level, 1, 4096 * 4096, [("sum", "float64", None, tf.float32)])
    # 262144 slices, then 4096, then 64, then the sum: each level _GRAIN times fewer.
    assert launched == [262144, 4096, 64, 1]


@pytest.mark.parametrize("kstride", [(1,), (4096,), (0,)])
def test_each_thread_has_one_slice_of_one_output(kstride):
    m, parts = 6, 4
    code = "\n".join(line.strip() for line in kernels.thread_lines(kstride == (1,)))
    seen = []
    for t in range(m * parts):
        names = {"t": t, "m": m, "parts": parts}
        exec(code, {}, names)  # noqa: S102 - the kernel's own lines, on plain ints
        assert names["at"] == names["j"] * parts + names["c"]
        seen.append((names["j"], names["c"]))
    assert sorted(seen) == [(j, c) for j in range(m) for c in range(parts)]
    # Neighbouring threads take neighbouring outputs where the last dimension is kept
    # (their elements are neighbours in memory), else neighbouring slices of one output.
    steps = {(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(seen)}
    by_output = (1, 0) in steps and (0, 1) not in steps
    assert by_output == (kstride == (1,))
