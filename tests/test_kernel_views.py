"""The reshape, transpose, dtype cast, flattening and region copy that kernels and helpers use
(kernels/views.py) give NumPy's results: views of C-contiguous arrays, an inferred -1,
NumPy's ValueError for a size that does not fit, Numba's own code for the layouts they do
not build in place, and copies in C order of strided arrays."""

import numpy as np
import pytest
from numba import njit

from tapeflow.backends.numba_cpu.kernels.views import (c_order, cast_array, contiguous,
                                                       copy_elements, copy_of, reshaped,
                                                       transposed)


@njit
def _reshape_cases(a, rows):
    flat = reshaped(a, a.size)
    inferred = reshaped(a, (rows, -1))
    scalar = reshaped(np.full(1, 5.0), ())
    flat[0] = 7.0  # a view: writes through
    fortran = reshaped(np.asfortranarray(inferred), (rows, -1))  # F layout: Numba's reshape
    return flat, inferred, scalar, fortran


def test_reshaped_is_numpys_reshape_of_contiguous_arrays():
    a = np.arange(12.0).reshape(3, 4)
    flat, inferred, scalar, fortran = _reshape_cases(a.copy(), 2)
    assert flat.shape == (12,) and flat[0] == 7.0
    assert inferred.shape == (2, 6) and inferred[0, 0] == 7.0
    np.testing.assert_array_equal(inferred.ravel()[1:], np.arange(1.0, 12.0))
    assert scalar.shape == () and scalar[()] == 5.0
    assert fortran.flags.f_contiguous
    np.testing.assert_array_equal(fortran, inferred)


def test_reshaped_raises_numpys_error_for_a_size_that_does_not_fit():
    with pytest.raises(ValueError, match="total size"):
        _reshape_cases(np.arange(12.0).reshape(3, 4), 5)


@njit
def _cast_cases(f64, flags, ints, z, strided):
    return (cast_array(f64, np.float32), cast_array(flags, np.float64),
            cast_array(ints, np.bool_), cast_array(z, np.complex64),
            cast_array(strided, np.int64))


def test_cast_array_is_numpys_astype():
    f64 = np.linspace(-2.0, 2.0, 6).reshape(2, 3)
    flags = np.array([True, False, True])
    ints = np.array([[0, 3], [-1, 0]], np.int32)
    z = np.array([1.5 + 2j, -3.0 - 1j])
    strided = np.arange(10.0)[::3]
    got = _cast_cases(f64, flags, ints, z, strided)
    expected = (f64.astype(np.float32), flags.astype(np.float64), ints.astype(np.bool_),
                z.astype(np.complex64), strided.astype(np.int64))
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape and g.flags.c_contiguous
        np.testing.assert_array_equal(g, e)


@njit
def _c_order_cases(contiguous, transposed, strided, scalar):
    view = c_order(contiguous)
    view[0] = -1.0  # a C-contiguous array's elements are a view: writes through
    return view, c_order(transposed), c_order(strided), c_order(scalar)


def test_c_order_is_a_view_of_contiguous_arrays_and_a_copy_in_c_order_of_others():
    a = np.arange(12.0).reshape(3, 4)
    cube = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    view, transposed, strided, scalar = _c_order_cases(
        a, a.T, cube[:, ::2, 1:3], np.array(True))
    assert view.shape == (12,) and a[0, 0] == -1.0
    for got, source in ((transposed, a.T), (strided, cube[:, ::2, 1:3]),
                        (scalar, np.array(True))):
        assert got.dtype == source.dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, np.ascontiguousarray(source).ravel())


@njit
def _copy_cases(dst, src):
    copy_elements(dst[1:3, 1:], src.T)
    copy_elements(dst[0, 0:1], src[0, :1])
    return dst


def test_copy_elements_copies_between_strided_regions_and_checks_their_shapes():
    src = np.arange(6, dtype=np.int64).reshape(3, 2)
    got = _copy_cases(np.zeros((4, 4)), src)
    expected = np.zeros((4, 4))
    expected[1:3, 1:] = src.T
    expected[0, 0:1] = src[0, :1]
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="shapes of a copied region differ"):
        _copy_cases(np.zeros((4, 3)), src)


@njit
def _copy_kinds(a):
    same = contiguous(a)
    same[0, 0] = 5.0  # a C-contiguous array is returned as it is
    return same, contiguous(a.T), copy_of(a), copy_of(a[:, ::2])


def test_contiguous_copies_only_other_layouts_and_copy_of_always_copies():
    a = np.arange(6.0).reshape(2, 3)
    same, transposed, copied, strided = _copy_kinds(a)
    assert a[0, 0] == 5.0 and same[0, 0] == 5.0
    for got, source in ((transposed, a.T), (copied, a), (strided, a[:, ::2])):
        assert got.flags.c_contiguous and got.shape == source.shape
        np.testing.assert_array_equal(got, source)
    copied[0, 0] = -1.0  # a copy: the original keeps its value
    assert a[0, 0] == 5.0


@njit
def _transpose_cases(a, b):
    view = transposed(a, (1, 0))
    view[0, 1] = -1.0  # a view: writes through
    return view, transposed(b, (2, 0, 1)), transposed(b[:, ::-1, ::2], (1, 2, 0)), \
        transposed(a[0], (0,))


def test_transposed_is_numpys_transpose_of_any_layout():
    a, b = np.arange(12.0).reshape(3, 4), np.arange(24.0).reshape(2, 3, 4)
    view, moved, strided, vector = _transpose_cases(a, b)
    assert a[1, 0] == -1.0
    np.testing.assert_array_equal(view, a.T)
    np.testing.assert_array_equal(moved, b.transpose(2, 0, 1))
    np.testing.assert_array_equal(strided, b[:, ::-1, ::2].transpose(1, 2, 0))
    np.testing.assert_array_equal(vector, a[0])
    assert moved.strides == b.transpose(2, 0, 1).strides
