"""The last axis's softmax and cross-entropy helpers (kernels/arrays.py: softmax_rows,
xent_rows, sparse_xent2) give exactly the numbers of the (outer, axis, inner) ones that
serve every other axis, NaN and infinities included."""

import numpy as np
import pytest

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu.kernels import arrays


def _logits(dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 5)) * 4).astype(dtype)
    x[1, 2] = np.nan
    x[2, 0] = np.inf
    x[3, :] = -np.inf
    x[4, 1] = 80.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_rows_helpers_match_the_general_ones_bit_for_bit(dtype):
    x = _logits(dtype)
    labels = np.abs(np.random.default_rng(4).standard_normal(x.shape)).astype(dtype)
    for log in (False, True):
        np.testing.assert_array_equal(arrays.softmax_rows(x, log),
                                      arrays.softmax3(x[:, :, None], log)[:, :, 0])
    loss, back = arrays.xent_rows(x, labels)
    loss3, back3 = arrays.xent3(x[:, :, None], labels[:, :, None])
    np.testing.assert_array_equal(loss, loss3[:, 0])
    np.testing.assert_array_equal(back, back3[:, :, 0])
    ids = np.array([0, 4, 2, 1, 3, 0], np.int64)
    sparse_loss, sparse_back = arrays.sparse_xent2(x, ids, 0)
    one_hot = np.eye(x.shape[1], dtype=dtype)[ids]
    loss3, back3 = arrays.xent3(x[:, :, None], one_hot[:, :, None])
    finite = np.isfinite(x).all(axis=1)  # (xent3 multiplies -inf by a zero label: NaN)
    np.testing.assert_allclose(sparse_loss[finite], loss3[finite, 0], rtol=1e-6)
    np.testing.assert_allclose(sparse_back[finite], back3[finite, :, 0], rtol=1e-6,
                               atol=1e-7)
