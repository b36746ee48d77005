"""Runs every benchmark in perf/ and prints times and ratios to hand-written NumPy.

Peers (PyTorch, JAX) join the table when they are installed (`make perf-peers`).
Usage: python perf/run.py [benchmark ...]
"""

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TAPEFLOW_COMPILE", "sync")  # steady state: compile before timing
# One BLAS thread for everyone (NumPy, Numba's np.dot, JAX, PyTorch): on a shared 2-core
# machine, threaded BLAS times swing by 10x from run to run.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
# XLA still runs some work on a second thread with those flags; one core for the whole
# process (and the subprocesses it starts) makes "one thread each" hold for every library.
if hasattr(os, "sched_setaffinity") and os.environ.get("TAPEFLOW_PERF_ALL_CORES") != "1":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

BENCHMARKS = ["eager_chain", "small_graphs", "mlp", "matmul", "elementwise", "rnn", "rnn_outputs",
              "jacobians", "conv", "ctc", "first_call", "cold_start", "compile",
              "compile_parts"]


def _peers():
    peers = {}
    for name in ("torch", "jax"):
        try:
            peers[name] = importlib.import_module(name)
        except ImportError:
            continue
        if name == "torch":
            peers[name].set_num_threads(1)
    return peers


def _fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:9.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:9.3f} ms"
    return f"{seconds:9.3f} s "


def main(names):
    peers = _peers()
    print(f"peers: {', '.join(peers) or 'none (make perf-peers installs torch and jax)'}")
    print(f"{'benchmark':34} {'impl':16} {'time':>12} {'vs numpy':>9}  note")
    for name in names:
        module = importlib.import_module(name)
        for r in module.run(peers):
            print(f"{r.benchmark:34} {r.impl:16} {_fmt(r.seconds):>12} {r.ratio:8.2f}x  "
                  f"{r.note}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or BENCHMARKS)
