"""What a Numba compile skips (backends/numba_cpu/compile_costs.py): garbage collection
while the caller waits, and SciPy's import where no kernel needs Numba's BLAS."""

import ast
import gc
import math
import os
import subprocess
import sys
import textwrap
import threading

import pytest

pytest.importorskip("numba")

from tapeflow.backends.numba_cpu.compile_costs import collector_paused


def test_the_collector_pauses_on_the_main_thread_only_and_comes_back():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the outer pause restores it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()

    seen = []

    def in_a_thread():
        with collector_paused():
            seen.append(gc.isenabled())
    worker = threading.Thread(target=in_a_thread)
    worker.start()
    worker.join()
    assert seen == [True]

    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed compile")
    assert gc.isenabled()

    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_scipy_is_imported_only_by_a_kernel_that_uses_numbas_linear_algebra(tmp_path):
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import tapeflow as tf

        @tf.function
        def step(x):
            return tf.reduce_sum(tf.tanh(x) * x)

        print(float(step(tf.constant([1.0, 2.0]))), "scipy.linalg" in sys.modules)

        @tf.function
        def inverse(a):
            return tf.linalg.inv(a)

        print(inverse(tf.constant([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist(),
              "scipy.linalg" in sys.modules)
    """)
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=str(tmp_path), TAPEFLOW_COMPILE="sync")
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=600, check=True)
    first, second = result.stdout.splitlines()
    value, imported = first.split()
    assert float(value) == pytest.approx(math.tanh(1.0) + 2.0 * math.tanh(2.0), rel=1e-6)
    assert imported == "False"
    matrix, imported = second.rsplit(" ", 1)
    assert ast.literal_eval(matrix) == [[0.5, 0.0], [0.0, 0.25]] and imported == "True"
