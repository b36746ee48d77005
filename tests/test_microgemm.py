"""The float32 matrix product of the generated kernels
(backends/numba_cpu/kernels/microgemm.py): every edge of its tiling, every layout, special values, the choice between it and OpenBLAS,
and a compiled gradient that runs through it."""

import ctypes
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.backends.numba_cpu.kernels import gemm, microgemm, numpy_blas

ROWS, WIDTH, DEPTH = microgemm.ROWS, microgemm.WIDTH, microgemm.DEPTH

# Shapes around each tiling boundary: whole tiles, one row or column more or less, depth
# blocks with a remainder, and products smaller than one tile.
SHAPES = [(1, 1, 1), (ROWS, DEPTH, WIDTH), (ROWS + 1, DEPTH + 1, WIDTH + 1),
          (ROWS - 1, DEPTH - 1, WIDTH - 1), (3 * ROWS + 5, 2 * DEPTH + 17, 2 * WIDTH + 3),
          (2, 5, 3), (17, 33, 70)]


def _operands(rng, m, k, n, transpose_a, transpose_b):
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    return (a.T if transpose_a else a), (b.T if transpose_b else b)


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matches_float64_product_at_every_tiling_edge(transpose_a, transpose_b):
    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        a, b = _operands(rng, m, k, n, transpose_a, transpose_b)
        out = np.full((m, n), np.nan, np.float32)  # every element must be written
        microgemm.matmul_into(a, b, out)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * np.sqrt(k),
                                   err_msg=f"{(m, k, n)}")


def test_empty_products():
    for m, k, n in [(0, 3, WIDTH), (ROWS, 3, 0), (ROWS, 0, WIDTH)]:
        out = np.full((m, n), np.nan, np.float32)
        microgemm.matmul_into(np.ones((m, k), np.float32), np.ones((k, n), np.float32), out)
        np.testing.assert_array_equal(out, np.zeros((m, n), np.float32))


def test_strided_operands():
    rng = np.random.default_rng(1)
    big = rng.standard_normal((2 * ROWS + 6, 2 * DEPTH)).astype(np.float32)
    a = big[::2, ::3]  # neither rows nor columns contiguous
    b = rng.standard_normal((a.shape[1], 3 * WIDTH)).astype(np.float32)[:, ::2]
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    microgemm.matmul_into(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)


def test_nan_and_inf_propagate_as_in_numpy():
    a = np.ones((ROWS + 1, 4), np.float32)
    a[0, 1], a[ROWS, 2] = np.inf, np.nan
    b = np.ones((4, WIDTH + 1), np.float32)
    b[3, WIDTH] = -np.inf
    out = np.empty((ROWS + 1, WIDTH + 1), np.float32)
    microgemm.matmul_into(a, b, out)
    with np.errstate(invalid="ignore"):
        expected = a @ b
    np.testing.assert_array_equal(out, expected)


@pytest.mark.skipif(not microgemm.ENABLED, reason="the kernel is built with 32-byte "
                    "vectors here; the test below covers that build")
def test_avx2_build_in_a_subprocess():
    """The 32-byte build (AVX2 targets) gives the same products: forced here through
    Numba's target features, AVX-512 off."""
    from llvmlite import binding
    features = ",".join(("+" if on else "-") + name
                        for name, on in binding.get_host_cpu_features().items()
                        if not name.startswith("avx512"))
    script = (
        "import numpy as np\n"
        "from tapeflow.backends.numba_cpu.kernels import microgemm\n"
        "assert microgemm.VECTOR_BYTES == 32 and not microgemm.ENABLED\n"
        "rng = np.random.default_rng(0)\n"
        "for m, k, n in [(13, 300, 40), (6, 256, 16), (1, 2, 3)]:\n"
        "    a = rng.standard_normal((k, m)).astype(np.float32).T\n"
        "    b = rng.standard_normal((k, n)).astype(np.float32)\n"
        "    out = np.empty((m, n), np.float32)\n"
        "    microgemm.matmul_into(a, b, out)\n"
        "    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)\n"
        "print('ok')\n")
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=features,
               NUMBA_CACHE_DIR=os.environ["TAPEFLOW_CACHE_DIR"])
    done = subprocess.run([sys.executable, "-c", script], check=False, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.fixture
def one_blas_thread():
    """NumPy's OpenBLAS on one thread (as the benchmarks run it), restored afterwards."""
    if numpy_blas.LIBRARY is None:
        pytest.skip("NumPy's bundled OpenBLAS is not present")
    path, = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs",
                                   numpy_blas.LIBRARY))
    library = ctypes.CDLL(path)
    before = library.scipy_openblas_get_num_threads64_()
    library.scipy_openblas_set_num_threads64_(1)
    yield
    library.scipy_openblas_set_num_threads64_(before)


def test_gemm_chooses_microgemm_for_large_float32_products_on_one_thread(one_blas_thread):
    pays = gemm.microgemm_pays
    assert pays(128, 256, 784) == microgemm.ENABLED
    assert not pays(128, 10, 784)  # narrower than two tiles
    assert not pays(16, 256, 784)  # too few rows
    assert not pays(64, 64, 64)  # too small to pay
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 784)).astype(np.float32)  # x, as in dW = x.T @ dy
    b = rng.standard_normal((128, 256)).astype(np.float32)
    product = np.empty((784, 256), np.float32)
    microgemm.matmul_into(a.T, b, product)
    got = gemm.gemm(a, b, True, False)
    np.testing.assert_allclose(got, a.T.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    if microgemm.ENABLED:  # the same bits: it went through microgemm
        np.testing.assert_array_equal(got, product)


def test_gemm_of_other_dtypes_takes_openblas_and_microgemm_refuses_them(one_blas_thread):
    from numba import errors, njit
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((128, 784)), rng.standard_normal((128, 256))  # float64
    np.testing.assert_allclose(gemm.gemm(a, b, True, False), a.T @ b, rtol=1e-12)

    @njit
    def float64_product(a, b, out):
        gemm._microgemm(a, 784, 1, b, 256, 1, out, 128, 784, 256)
    with pytest.raises(errors.TypingError):
        float64_product(a, b.T.copy(), np.empty((128, 256)))


def test_kernels_of_small_products_do_not_link_microgemm(monkeypatch):
    """Codegen calls OpenBLAS directly where the sizes are known and microgemm cannot pay
    (or the CPU lacks AVX-512), so those kernels neither link to microgemm nor wait for
    its first compile."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")
    f = tf.function(tf.matmul)
    small = f.get_concrete_function(tf.ones([16, 32]), tf.ones([32, 64]))
    large = f.get_concrete_function(tf.ones([128, 784]), tf.ones([784, 256]))
    unknown = tf.function(tf.matmul, input_signature=[tf.TensorSpec([None, 784]),
                                                      tf.TensorSpec([784, 256])])
    assert "blas_gemm(" in small.kernel_source
    # Without AVX-512, microgemm is never used: every product calls OpenBLAS directly.
    helper = " gemm(" if microgemm.ENABLED else "blas_gemm("
    assert helper in large.kernel_source
    assert helper in unknown.get_concrete_function().kernel_source
    if microgemm.ENABLED:
        assert "blas_gemm(" not in large.kernel_source
    doubles = f.get_concrete_function(tf.ones([128, 784], tf.float64),
                                      tf.ones([784, 256], tf.float64))
    assert "blas_gemm(" in doubles.kernel_source


def test_compiled_mlp_gradient_agrees_with_eager(one_blas_thread, monkeypatch):
    """The benchmark's model: both large products of the compiled gradient go through
    microgemm (on AVX-512), and agree with the eager (NumPy) gradient."""
    monkeypatch.setattr(tf.config.settings, "compile_mode", "sync")
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((128, 784)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((784, 256)).astype(np.float32) * 0.05)
    b = tf.Variable(np.zeros(256, np.float32))

    def loss_and_grads(x):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w) + b)
            loss = tf.reduce_mean(h * h)
        return loss, tape.gradient(loss, [w, b])

    eager = loss_and_grads(x)
    compiled = tf.function(loss_and_grads)(x)
    for got, want in zip(tf.nest.flatten(compiled), tf.nest.flatten(eager)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    if microgemm.ENABLED:  # the compiled product is microgemm's, to the last bit
        product = np.empty((128, 256), np.float32)
        microgemm.matmul_into(x.numpy(), w.numpy(), product)
        np.testing.assert_array_equal(tf.function(tf.matmul)(x, w).numpy(), product)


def test_products_run_as_python_under_numba_disable_jit():
    """NUMBA_DISABLE_JIT=1 (debugging: kernels run as Python) computes compiled products
    with NumPy instead of the intrinsics, which only exist in compiled code."""
    script = (
        "import numpy as np, tapeflow as tf\n"
        "tf.config.settings.compile_mode = 'sync'\n"
        "a = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "f = tf.function(lambda x, y: tf.matmul(x, y, transpose_b=True))\n"
        "np.testing.assert_allclose(f(a, a).numpy(), a @ a.T)\n"
        "print('ok')\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", script], check=False, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.skipif(not microgemm.ENABLED, reason="microgemm runs on AVX-512 CPUs only")
def test_a_cached_helper_that_calls_microgemm_registers_it_as_it_loads(tmp_path):
    """gemm's machine code calls microgemm's product by symbol: a later process that
    loads gemm from the cache, before anything registered the symbol, must register it
    first (its cache entry says so) rather than leave LLVM an unresolved call, which
    aborts the process."""
    script = (
        "import sys\n"
        "import numpy as np\n"
        "from numba import types\n"
        "from tapeflow.backends.numba_cpu import numba_cache\n"
        "from tapeflow.backends.numba_cpu.kernels import gemm, microgemm\n"
        "numba_cache.cache_helpers()\n"
        "matrix = types.Array(types.float32, 2, 'C')\n"
        "gemm.gemm.compile((matrix, matrix, types.boolean, types.boolean))\n"
        "a = np.ones((128, 64), np.float32)\n"
        "print(microgemm._entry_point is not None,\n"
        "      float(gemm.gemm(a, a.T.copy(), False, False)[0, 0]))\n")
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path), OPENBLAS_NUM_THREADS="1")
    runs = [subprocess.run([sys.executable, "-c", script], check=False, env=env,
                           capture_output=True, text=True, timeout=600) for _ in range(2)]
    for done in runs:  # the first compiles gemm into the cache, the second loads it
        assert done.returncode == 0 and done.stdout.split() == ["True", "64.0"], \
            done.stderr[-2000:]
