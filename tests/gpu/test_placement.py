"""tf.device, tf.DeviceSpec and tf.config's devices under the simulator (one GPU), as
TensorFlow 2.21 names and refuses them."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.device_tensor import DeviceTensor

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_the_simulator_is_one_gpu_and_the_default_device():
    assert tf.config.list_physical_devices("GPU") == [
        tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")]
    assert [d.name for d in tf.config.list_logical_devices()] == ["/device:CPU:0",
                                                                  "/device:GPU:0"]
    assert tf.config.list_physical_devices("gpu") == []  # compared as given, as TF
    x = tf.constant([1.0, 2.0])
    assert type(x) is DeviceTensor and x.device == GPU0
    assert (x * 2).device == GPU0
    assert tf.Variable(1.0).device == GPU0


@pytest.mark.parametrize("name", ["/GPU:0", "GPU:0", "gpu:0", "/device:GPU:0", "GPU",
                                  "/job:localhost/replica:0/task:0/device:GPU:0",
                                  tf.DeviceSpec(device_type="GPU", device_index=0)])
def test_every_name_form_of_the_gpu(name):
    with tf.device("/CPU:0"):
        x = tf.constant([1.0, 2.0])
    with tf.device(name):
        y = x + 1.0
        v = tf.Variable([3.0])
    assert x.device == CPU0
    assert y.device == GPU0 and v.device == GPU0
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])


@pytest.mark.parametrize("name", ["/CPU:0", "cpu:0", "/device:CPU:0", CPU0])
def test_cpu_scopes_run_on_the_host(name):
    x = tf.constant([1.0, 2.0])
    with tf.device(name):
        y = tf.exp(x)
        c = tf.constant(1.0)
        v = tf.Variable(1.0)
    assert type(y) is not DeviceTensor and y.device == CPU0
    assert c.device == CPU0 and v.device == CPU0
    with tf.device(name), tf.device(None):  # None clears the scope: the default, GPU:0
        assert tf.exp(x).device == GPU0


def test_device_spec_as_tensorflow():
    spec = tf.DeviceSpec.from_string("/job:w/device:GPU:1")
    assert repr(spec) == ("<DeviceSpec(job=w, replica=None, task=None, device_type=GPU, "
                          "device_index=1)>")
    assert spec.replace(device_index=2).to_string() == "/job:w/device:GPU:2"
    assert spec.make_merged_spec(tf.DeviceSpec(device_type="CPU")).to_string() == \
        "/job:w/device:CPU:1"
    assert tf.DeviceSpec.from_string("/job:a/replica:1/task:2/cpu:3").to_string() == \
        "/job:a/replica:1/task:2/device:CPU:3"
    assert tf.DeviceSpec.from_string("/device:GPU:*").to_string() == "/device:GPU:*"
    assert tf.DeviceSpec(device_type="gpu").device_type == "GPU"
    assert spec == tf.DeviceSpec.from_string("/job:w/device:GPU:1") and hash(spec)


@pytest.mark.parametrize("name, error, message", [
    ("/GPU:x", ValueError, "invalid literal for int"),
    ("foo", ValueError, "Unknown attribute 'foo' is encountered while parsing the device "
                        "spec: 'foo'."),
    ("GPU:0:1", ValueError, "Unknown attribute 'GPU'"),
    (3, ValueError, r"Expecting a string device name. Got <class 'int'>\(3\)"),
    (lambda op: "/CPU:0", RuntimeError, "tf.device does not support functions."),
])
def test_bad_device_names(name, error, message):
    with pytest.raises(error, match=message):
        tf.device(name)


def test_a_missing_device_without_soft_placement_is_tensorflows_error():
    x = tf.constant([1.0])
    tf.config.set_soft_device_placement(False)
    try:
        with tf.device("/GPU:3"):
            with pytest.raises(tf.errors.InvalidArgumentError) as raised:
                x + 1.0
            with pytest.raises(tf.errors.InvalidArgumentError):
                tf.Variable(1.0)
    finally:
        tf.config.set_soft_device_placement(True)
    assert str(raised.value) == (
        "Could not satisfy device specification '/job:localhost/replica:0/task:0/device:"
        "GPU:3'. enable_soft_placement=0. Supported device types [GPU, CPU]. All available "
        f"devices [{GPU0}, {CPU0}].")
    assert tf.config.get_soft_device_placement()
    with tf.device("/GPU:3"):  # soft placement: the first GPU
        assert (x + 1.0).device == GPU0


def test_soft_placement_runs_an_op_without_gpu_kernel_on_the_cpu_once_noted(notes):
    a = tf.constant([[1, 2], [3, 4]])  # integer products have no GPU kernel
    y = tf.matmul(a, a)
    tf.matmul(a, a)
    assert y.device == CPU0
    np.testing.assert_array_equal(y.numpy(), np.array([[7, 10], [15, 22]]))
    assert notes() == ["tapeflow: MatMul has no GPU kernel for (int32, int32) yet; it runs "
                       "on the CPU (inputs copied to the host, outputs on the CPU)"]
    half = tf.constant([1.0], dtype=tf.float16)
    assert (half * half).device == CPU0  # no float16 kernels
    assert notes() == ["tapeflow: Mul has no GPU kernel for (float16, float16) yet; it runs on "
                       "the CPU (inputs copied to the host, outputs on the CPU)"]
    assert (y + 1).device == GPU0  # the next op copies it back
    tf.config.set_soft_device_placement(False)
    try:
        with tf.device("/GPU:0"), pytest.raises(tf.errors.InvalidArgumentError,
                                                match=r"Supported device types \[CPU\]"):
            tf.matmul(a, a)
    finally:
        tf.config.set_soft_device_placement(True)


def test_log_device_placement(capfd):
    x = tf.constant([1.0])
    tf.debugging.set_log_device_placement(True)
    try:
        x + 1.0
        with tf.device("/CPU:0"):
            x * 2.0
    finally:
        tf.debugging.set_log_device_placement(False)
    assert capfd.readouterr().err.splitlines() == [
        f"Executing op AddV2 in device {GPU0}", f"Executing op Mul in device {CPU0}"]


def test_host_copies_only_when_asked():
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = tf.reshape(x * 2.0, (3, 2))
    assert type(y) is DeviceTensor and y._host is None  # nothing copied back yet
    assert np.asarray(y).shape == (3, 2) and y._host is not None
    assert "numpy=\narray([[ 0.,  2.]," in repr(y)
    assert float(tf.reduce_sum(y)) == 30.0


def test_visible_devices_are_fixed_once_ops_ran():
    assert tf.config.get_visible_devices("GPU") == tf.config.list_physical_devices("GPU")
    with pytest.raises(RuntimeError, match="Visible devices cannot be modified after being "
                                           "initialized"):
        tf.config.set_visible_devices([], "GPU")
    tf.config.set_visible_devices(tf.config.list_physical_devices("GPU"), "GPU")  # unchanged


def _run_fresh(code, simulator):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_hiding_the_gpu_gives_cpu_only_behaviour():
    out = _run_fresh(
        "import tapeflow as tf\n"
        "tf.config.set_visible_devices([], 'GPU')\n"
        "x = tf.constant([1.0]) + 1.0\n"
        "print(x.device, tf.Variable(1.0).device, len(tf.config.list_logical_devices('GPU')),"
        " len(tf.config.list_physical_devices('GPU')))", simulator=True)
    assert out == [CPU0, CPU0, "0", "1"]


def test_the_simulator_is_never_the_default_without_the_variable():
    out = _run_fresh(
        "import tapeflow as tf\n"
        "x = tf.constant([1.0]) + 1.0\n"
        "from numba import config, cuda\n"
        "real = len(cuda.gpus) if cuda.is_available() else 0\n"
        "print(x.device, bool(config.ENABLE_CUDASIM), len(tf.config.list_physical_devices("
        "'GPU')) == real, real)", simulator=False)
    assert out[1:3] == ["False", "True"]
    assert out[0] == (GPU0 if out[3] != "0" else CPU0)
