"""TensorFlow 2.21's exception classes and words in corner cases: values no tensor can
hold, Python values an operator cannot convert, outputs too large to allocate, ops
unsigned or narrow integers do not have, and matmul of a vector."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError

_NONE = (r"^Attempt to convert a value \(None\) with an unsupported type "
         r"\(<class 'NoneType'>\) to a Tensor\.$")
_MIXED = r"^Can't convert Python sequence with mixed types to Tensor\.$"


@pytest.mark.parametrize("make, error, pattern", [
    (lambda: tf.constant(None), ValueError, _NONE),
    (lambda: tf.convert_to_tensor([None], tf.float32), ValueError, _NONE),
    (lambda: tf.constant([[None]]), ValueError, _NONE),
    (lambda: tf.constant({1, 2}), ValueError, r"value \(\{1, 2\}\) with an unsupported "
                                              r"type \(<class 'set'>\)"),
    (lambda: tf.constant([1.5, None]), ValueError, _MIXED),
    (lambda: tf.constant([1, "a"], tf.float32), ValueError, _MIXED),
    (lambda: tf.constant([[1.0], [2.0, 3.0]]), ValueError,
     r"^Can't convert non-rectangular Python sequence to Tensor\.$"),
    (lambda: tf.constant(2**70), ValueError, r"out-of-range integer"),
    (lambda: tf.constant(2**63, tf.int64), ValueError, r"out-of-range integer"),
    (lambda: tf.constant(np.array([object()])), ValueError,
     r"^Failed to convert a NumPy array to a Tensor \(Unsupported object type object\)\.$"),
    (lambda: tf.constant(np.array([1.0, 2.0], dtype=object)), ValueError,
     r"\(Unsupported object type float\)"),
    (lambda: tf.constant(1 + 2j, tf.float32), TypeError,
     r"^Cannot convert \(1\+2j\) to EagerTensor of dtype float$"),
    (lambda: tf.constant("x", tf.float64), TypeError,
     r"^Cannot convert 'x' to EagerTensor of dtype double$"),
    (lambda: tf.constant(1.5, tf.int32), TypeError,
     r"^Cannot convert 1\.5 to EagerTensor of dtype int32$"),
])
def test_values_no_tensor_holds(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_python_ints_wrap_into_narrow_dtypes_as_tensorflow_converts_them():
    assert tf.constant(300, tf.uint8).numpy() == 44
    assert tf.constant(-1, tf.uint8).numpy() == 255
    assert tf.constant(2**40, tf.int32).numpy() == 0
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant(2**70, tf.float32).numpy() == np.float32(2.0**70)


def test_operators_convert_python_values_as_tensorflow():
    a = tf.constant([1.0, 2.0])
    i = tf.constant([1, 2])
    with pytest.raises(ValueError, match=_NONE):
        a + None
    with pytest.raises(ValueError, match=_NONE):
        None * a
    # add takes the tensor's dtype as a hint only: AddV2 then rejects the other one...
    with pytest.raises(InvalidArgumentError,
                       match=r"^cannot compute AddV2 as input #1\(zero-based\) was expected "
                             r"to be a float32 tensor but is a complex128 tensor \[Op:AddV2\]"):
        a + (1 + 2j)
    with pytest.raises(InvalidArgumentError, match=r"float32 tensor but is a string tensor"):
        tf.add(a, "x")
    with pytest.raises(InvalidArgumentError, match=r"int32 tensor but is a float32 tensor"):
        i + 1.5
    # ... the others (and the reflected add) convert to it
    for operation in (lambda: a - (1 + 2j), lambda: a * (1 + 2j), lambda: (1 + 2j) + a,
                      lambda: tf.maximum(a, 1 + 2j)):
        with pytest.raises(TypeError, match=r"^Cannot convert \(1\+2j\) to EagerTensor of "
                                            r"dtype float$"):
            operation()
    assert (i + 2**40).numpy().tolist() == [1, 2]  # 2**40 wraps to int32's 0


def test_traced_add_of_a_complex_is_a_type_error_naming_the_line():
    @tf.function
    def shifted(x):
        return x + (1 + 2j)

    with pytest.raises(TypeError, match=r"(?s)complex128 tensor.*test_error_classes\.py"):
        shifted(tf.constant([1.0]))


@pytest.mark.parametrize("make, op, shape, type_name", [
    (lambda: tf.zeros([2**40]), "Fill", "[1099511627776]", "float"),
    (lambda: tf.ones([2**20, 2**20], tf.float64), "Fill", "[1048576,1048576]", "double"),
    (lambda: tf.fill([2**40], 1), "Fill", "[1099511627776]", "int32"),
    (lambda: tf.one_hot([0], 2**40), "OneHot", "[1,1099511627776]", "float"),
    (lambda: tf.eye(2**20), "MatrixDiagV3", "[1048576,1048576]", "float"),
    (lambda: tf.eye(4, batch_shape=[2**40]), "MatrixDiagV3", "[1099511627776,4,4]", "float"),
    (lambda: tf.range(2**40), "Range", "[1099511627776]", "int64"),
    (lambda: tf.range(0.0, 2.0**40), "Range", "[1099511627776]", "float"),
])
def test_huge_creations_are_resource_exhausted_naming_the_op(make, op, shape, type_name):
    message = (f"OOM when allocating tensor with shape{shape} and type {type_name} on "
               f"/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu [Op:{op}]")
    with pytest.raises(ResourceExhaustedError) as info:
        make()
    assert str(info.value) == message
    assert info.value.op == op


def test_creations_past_int64_elements_are_invalid_arguments():
    with pytest.raises(InvalidArgumentError,
                       match=r"^Shape \[4294967296,4294967296\] would have more than "
                             r"2\*\*63 - 1 elements \[Op:Fill\]$"):
        tf.zeros([2**32, 2**32])


def test_one_hot_allocates_only_its_output():
    out = tf.one_hot([[0, 2], [-1, 3]], 3, on_value=5, off_value=-1, axis=1)
    expected = np.full((2, 3, 2), -1)
    expected[0, 0, 0] = expected[0, 2, 1] = 5
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(tf.one_hot(1, 3).numpy(), [0.0, 1.0, 0.0])


@pytest.mark.parametrize("make, op", [
    (lambda u: -u, "Neg"),
    (lambda u: tf.abs(u), "Abs"),
    (lambda u: tf.sign(u), "Sign"),
    (lambda u: u ** u, "Pow"),
    (lambda u: tf.math.squared_difference(u, u), "SquaredDifference"),
])
def test_ops_tensorflow_has_no_uint8_kernel_for(make, op):
    u = tf.constant([1, 2], tf.uint8)
    with pytest.raises(InvalidArgumentError,
                       match=rf"^Value for attr 'T' of uint8 is not in the list .*\[Op:{op}\]$"):
        make(u)
    assert tf.square(u).numpy().tolist() == [1, 4]  # Square has one


def test_traced_negation_of_uint8_is_a_type_error():
    @tf.function
    def negated(x):
        return -x

    with pytest.raises(TypeError, match=r"uint8.*\[Op:Neg\]"):
        negated(tf.constant([1], tf.uint8))


def test_products_of_dtypes_without_a_cpu_kernel():
    u = tf.ones([2, 2], tf.uint8)
    with pytest.raises(NotFoundError, match=r"^Could not find device for node: \{\{node "
                                            r"MatMul\}\} = MatMul\[T=DT_UINT8\]"):
        tf.matmul(u, u)
    with pytest.raises(NotFoundError, match=r"Einsum\[T=DT_INT16\]"):
        tf.einsum("ij,jk->ik", tf.ones([2, 2], tf.int16), tf.ones([2, 2], tf.int16))
    with pytest.raises(InvalidArgumentError, match=r"attr 'T' of int8 .*\[Op:MatMul\]"):
        tf.matmul(tf.ones([2, 2], tf.int8), tf.ones([2, 2], tf.int8))
    batched = tf.ones([1, 2, 2], tf.int16)
    assert tf.matmul(batched, batched).numpy().tolist() == [[[2, 2], [2, 2]]]


@pytest.mark.parametrize("a, b, message", [
    ([1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]], "In[0] and In[1] has different ndims: [2] vs. [2,2]"),
    ([[1.0, 2.0], [3.0, 4.0]], 1.0, "In[0] and In[1] has different ndims: [2,2] vs. []"),
    ([1.0, 2.0], [1.0, 2.0], "In[0] and In[1] ndims must be == 2: 1"),
])
def test_matmul_of_other_ranks_says_tensorflows_words(a, b, message):
    with pytest.raises(InvalidArgumentError) as info:
        tf.matmul(tf.constant(a), tf.constant(b))
    assert str(info.value) == f"{message} [Op:MatMul]"
