"""The reshape and dtype cast generated kernels use (kernels/views.py) give NumPy's
results: views of C-contiguous arrays, an inferred -1, NumPy's ValueError for a size that
does not fit, and Numba's own code for the layouts they do not build in place."""

import numpy as np
import pytest
from numba import njit

from tapeflow.backends.numba_cpu.kernels.views import cast_array, reshaped


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
