"""Time to compiled speed: how long a tf.function's first call takes, each case in a fresh
process — with an empty compile cache directory, then a new graph in that directory
(what it holds from the first run is reused: the matrix kernel, shared helpers), then the
same graph again (warm cache) — and whether tiered mode ever loses to running eagerly.
The empty cache's first call is split into the one-time kernels compiled in it (the
matrix kernel and the helpers, compiled once per cache directory and signature and
shared by all kernels) and the graph's own kernel, which the targets are about.

Cases: the MLP gradient step (perf/mlp.py), the RNN gradient with a tensor loop
(perf/rnn.py), the 256 x 256 Jacobian of perf/jacobians.py computed row by row
(`experimental_use_pfor=False`), the same RNN unrolled by a Python `for` (T=10 and T=30
by default; pass `--unrolled 100` for the T=100 figure: minutes before this work), and a
Dense + Adam training loop, tiered against eager at 10, 200 and 5,000 steps. JAX's `jit` and
TensorFlow's `tf.function` join, each first call in a fresh process of its own, where
importable: from this interpreter (`make perf-peers` installs JAX), or from the one
`--peer-python` names (a virtual environment of its own, say, as TensorFlow's wheels are
600 MB). Times are medians of `--repeat` fresh processes.

Usage: python perf/compile.py [--repeat N] [--unrolled T ...] [--skip-training]
                              [--peer-python PATH]
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import Result

HERE = os.path.dirname(os.path.abspath(__file__))

# Each case: a script that builds `fn` and `args`; EXTRA_OP adds one op to the loss for
# the "new graph" run: another kernel (a constant alone would not do: constants are the
# kernel's arguments, not part of its code).
_RNN = """
import tapeflow as tf
import rnn
@tf.function
def fn(xs, w, u, b):
    with tf.GradientTape() as tape:
        tape.watch([w, u, b])
        h = tf.zeros((rnn.BATCH, rnn.HIDDEN))
        for t in {loop}:
            h = tf.tanh(h @ w + xs[t] @ u + b)
        loss = tf.reduce_sum(h * h)
        if EXTRA_OP:
            loss = tf.abs(loss)
    return tape.gradient(loss, [w, u, b])
args = [tf.constant(a) for a in rnn.make_data({steps})]
"""
_SETUP = {
    "mlp": """
import tapeflow as tf
from mlp import make_data
x, labels, params = make_data()
variables = [tf.Variable(p) for p in params]
@tf.function
def fn(x, labels):
    with tf.GradientTape() as tape:
        w1, b1, w2, b2 = variables  # mlp.loss_fn's words: the same text runs under TensorFlow
        logits = tf.nn.relu(x @ w1 + b1) @ w2 + b2
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, logits))
        if EXTRA_OP:
            loss = tf.abs(loss)
    return tape.gradient(loss, variables)
args = (tf.constant(x), tf.constant(labels))
""",
    # The RNN of perf/rnn.py with a tensor loop, and unrolled by a Python loop.
    "rnn": _RNN.format(loop="tf.range(tf.shape(xs)[0])", steps="rnn.T"),
    "unrolled": _RNN.format(loop="range(STEPS)", steps="STEPS"),
    # perf/jacobians.py's 256 x 256 Jacobian, row by row: a tensor loop of backward
    # passes, as in TensorFlow's graph.
    "jacobian": """
import tapeflow as tf
from jacobians import jacobian_data
a, x = jacobian_data()
a = tf.constant(a)
@tf.function
def fn(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tanh(tf.linalg.matvec(a, x))
        if EXTRA_OP:
            y = tf.abs(y)
    return tape.jacobian(y, x, experimental_use_pfor=False)
args = (tf.constant(x),)
""",
}

# The first call, timed; the one-time kernels' shares: the matrix kernel's compile or
# load, and the helpers' compiles (kernels/: each compiled once per signature and cache
# directory, then loaded from it), each inclusive of what it compiles in turn. The clock
# starts before the timing's own imports of Numba and of kernels/: `import tapeflow`
# imports neither, and a first compile imports both. The warm run times nothing inside
# (INSTRUMENT false): its kernel loads without Numba, and it reports whether Numba was
# imported all the same.
_FIRST_CALL = """
import time
_start = time.perf_counter()
import tapeflow
_imported = time.perf_counter()
{setup}
_start_call, _start_cpu = time.perf_counter(), time.process_time()
_matrix, _helpers = [0.0], [0.0]
if INSTRUMENT:
    import functools
    from numba.core import event
    from tapeflow.backends.numba_cpu.kernels import microgemm
    _numba_imported = time.perf_counter()
    _register = microgemm.register
    @functools.wraps(_register)  # its marks too: a cached kernel's load asks for them
    def _timed_register():
        start = time.perf_counter()
        try:
            return _register()
        finally:
            _matrix[0] += time.perf_counter() - start
    microgemm.register = _timed_register
    class _HelperCompiles(event.Listener):
        def __init__(self):
            self.open = []  # the compiles in progress: (helper or matrix kernel?, start)
        def on_start(self, ev):
            module = ev.data["dispatcher"].py_func.__module__
            one_time = module.startswith(microgemm.__package__)
            self.open.append((one_time, time.perf_counter()))
            if one_time and module == microgemm.__name__:
                self.open[-1] = (True, None)  # timed as the matrix kernel's
        def on_end(self, ev):
            one_time, start = self.open.pop()
            if one_time and start is not None and not any(t for t, _ in self.open):
                _helpers[0] += time.perf_counter() - start
    event.register("numba:compile", _HelperCompiles())
else:  # a warm cache: nothing here may import Numba
    _numba_imported = _start_call
fn(*args)
_done, _done_cpu = time.perf_counter(), time.process_time()
print(json.dumps({{"import": _imported - _start, "first": _done - _start_call,
                  "first cpu": _done_cpu - _start_cpu, "matrix": _matrix[0],
                  "helpers": _helpers[0], "numba import": _numba_imported - _start_call,
                  "numba loaded": "numba" in sys.modules}}))
"""

# A peer's first call: JAX's jit or TensorFlow's tf.function, in a fresh process, its
# results brought back to NumPy (JAX dispatches asynchronously).
_PEER_FIRST_CALL = """
import time
import numpy as np
{setup}
_start_call = time.perf_counter()
[np.asarray(value) for value in {flatten}(fn(*args))]
print(json.dumps({{"first": time.perf_counter() - _start_call}}))
"""

_JAX_SETUP = {
    "mlp": """
import jax, jax.numpy as jnp
from mlp import make_data
x, labels, params = make_data()
def loss(params, x, labels):
    w1, b1, w2, b2 = params
    logits = jnp.maximum(x @ w1 + b1, 0) @ w2 + b2
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), axis=1))
fn = jax.jit(jax.grad(loss))
args = ([jnp.asarray(p) for p in params], jnp.asarray(x), jnp.asarray(labels))
""",
    "rnn": """
import jax, jax.numpy as jnp
import rnn
xs, w, u, b = rnn.make_data(rnn.T)
def loss(params, xs):
    w, u, b = params
    def cell(h, x):
        return jnp.tanh(h @ w + x @ u + b), None
    h, _ = jax.lax.scan(cell, jnp.zeros((rnn.BATCH, rnn.HIDDEN), jnp.float32), xs)
    return jnp.sum(h * h)
fn = jax.jit(jax.grad(loss))
args = ([jnp.asarray(a) for a in (w, u, b)], jnp.asarray(xs))
""",
    # Unrolled by a Python loop at trace time, as the tapeflow and TensorFlow cases are.
    "unrolled": """
import jax, jax.numpy as jnp
import rnn
xs, w, u, b = rnn.make_data(STEPS)
def loss(params, xs):
    w, u, b = params
    h = jnp.zeros((rnn.BATCH, rnn.HIDDEN), jnp.float32)
    for t in range(STEPS):
        h = jnp.tanh(h @ w + xs[t] @ u + b)
    return jnp.sum(h * h)
fn = jax.jit(jax.grad(loss))
args = ([jnp.asarray(a) for a in (w, u, b)], jnp.asarray(xs))
""",
    # Row by row too: lax.map of the pullback over the unit seeds.
    "jacobian": """
import jax, jax.numpy as jnp
from jacobians import jacobian_data
a, x = jacobian_data()
def rows(x):
    y, pullback = jax.vjp(lambda x: jnp.tanh(a @ x), x)
    return jax.lax.map(lambda k: pullback(jax.nn.one_hot(k, y.shape[0], dtype=y.dtype))[0],
                       jnp.arange(y.shape[0]))
fn = jax.jit(rows)
args = (jnp.asarray(x),)
""",
}

# TensorFlow runs tapeflow's own cases: the same text, TensorFlow imported as `tf`.
_TF_SETUP = {case: text.replace("import tapeflow as tf", "import tensorflow as tf")
             for case, text in _SETUP.items()}
_PEERS = {"jax": ("jax jit", _JAX_SETUP, "jax.tree_util.tree_leaves"),
          "tensorflow": ("tensorflow fn", _TF_SETUP, "tf.nest.flatten")}

# A Dense + Adam training loop: `steps` calls of a step function (tf.function or plain),
# import excluded, the first call's trace and the tiered first calls included.
_TRAINING = """
import time
import numpy as np
import tapeflow as tf
rng = np.random.default_rng(0)
x = tf.constant(rng.normal(size=(64, 32)).astype(np.float32))
y = tf.constant(rng.normal(size=(64, 1)).astype(np.float32))
layer = tf.keras.layers.Dense(1)
layer.build((None, 32))
optimizer = tf.keras.optimizers.Adam(0.01)
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((layer(x) - y) ** 2)
    grads = tape.gradient(loss, layer.trainable_variables)
    optimizer.apply_gradients(zip(grads, layer.trainable_variables))
    return loss
if COMPILED:
    step = tf.function(step)
start = time.perf_counter()
for _ in range(STEPS):
    loss = step(x, y)
float(loss)
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

# The same loop for SECONDS (or until it has run compiled for a while): when its calls
# switched to the compiled kernel, and how many interpreted calls it made per second
# until then, to compare with TAPEFLOW_COMPILE=off (the background compile's cost to the
# calls running beside it).
_BESIDE_COMPILE = _TRAINING.split("start = time.perf_counter()")[0] + """
step(x, y)  # the trace
durations, start = [], time.perf_counter()
switched = None
while time.perf_counter() - start < SECONDS:
    begun = time.perf_counter()
    step(x, y)
    durations.append(time.perf_counter() - begun)
    if switched is None and len(durations) > 50 and durations[-1] < 0.3 * sorted(
            durations[:50])[25]:
        switched, interpreted = time.perf_counter() - start, durations[:-1]
        break
if switched is None:
    interpreted = durations
print(json.dumps({"switched": switched, "interpreted per second":
                  len(interpreted) / sum(interpreted)}))
"""


def _all_cpus():
    # perf/run.py pins itself (and so the processes it starts) to one CPU; the background
    # compile's row is about a machine with a second one, where it runs beside the calls.
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except (AttributeError, OSError):
        pass


def _run_script(script, cache_dir, mode="sync", script_dir=None, all_cpus=False,
                python=None, **constants):
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache_dir, TAPEFLOW_COMPILE=mode,
               TF_CPP_MIN_LOG_LEVEL="2")
    if python:  # another interpreter: perf/'s data makers import tapeflow from here
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(os.path.dirname(HERE), "src")]
            + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    prelude = (f"import json, sys\nsys.path.insert(0, {HERE!r})\n"
               + "".join(f"{k} = {v!r}\n" for k, v in constants.items()))
    # A file, not `-c`: AutoGraph reads the function's source to convert its loops. With
    # `script_dir`, the same file for the same script, as a user's script is (AutoGraph
    # caches its conversion under its path); not in the cache directory, which would be
    # on sys.path then, and its kernel modules importable.
    text = prelude + script
    folder = script_dir or tempfile.mkdtemp(prefix="tapeflow_bench_")
    path = os.path.join(folder, f"script_{hashlib.sha256(text.encode()).hexdigest()[:16]}.py")
    with open(path, "w") as file:
        file.write(text)
    try:
        out = subprocess.run([python or sys.executable, path], cwd=HERE, env=env, check=False,
                             capture_output=True, text=True,
                             preexec_fn=_all_cpus if all_cpus else None)
    finally:
        if script_dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    if out.returncode:
        raise RuntimeError(f"a benchmark process failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_calls(case, **constants):
    """{run: seconds} for one fresh cache directory: the graph with an empty cache, a
    new graph in the same directory, then the first graph again (warm)."""
    script = _FIRST_CALL.format(setup=_SETUP[case])
    with tempfile.TemporaryDirectory() as cache_dir:
        empty = _run_script(script, cache_dir, EXTRA_OP=False, INSTRUMENT=True, **constants)
        new_graph = _run_script(script, cache_dir, EXTRA_OP=True, INSTRUMENT=True,
                                **constants)
        warm = _run_script(script, cache_dir, EXTRA_OP=False, INSTRUMENT=False, **constants)
    return {"empty": empty["first"], "matrix": empty["matrix"], "helpers": empty["helpers"],
            "numba import": empty["numba import"],
            "new graph": new_graph["first"], "warm": warm["first"],
            "warm import": warm["import"], "empty cpu": empty["first cpu"],
            "new graph cpu": new_graph["first cpu"], "warm cpu": warm["first cpu"],
            "warm numba": float(warm["numba loaded"])}


def peer_first_call(peer, case, python=None, **constants):
    """Seconds of `peer`'s ("jax" or "tensorflow") first call of `case`, in a fresh
    process of `python` (default: this interpreter)."""
    _, setups, flatten = _PEERS[peer]
    script = _PEER_FIRST_CALL.format(setup=setups[case], flatten=flatten)
    with tempfile.TemporaryDirectory() as cache_dir:
        return _run_script(script, cache_dir, python=python, EXTRA_OP=False,
                           **constants)["first"]


def training_seconds(steps, compiled, cache_dir, mode="tiered", script_dir=None):
    mode = mode if compiled else "off"
    return _run_script(_TRAINING, cache_dir, mode, script_dir, STEPS=steps,
                       COMPILED=compiled)["seconds"]


def beside_compile(seconds=15.0):
    """{"switched": seconds until the loop ran compiled (None: not within `seconds`),
    "interpreted": its interpreted calls per second until then, "off": calls per second
    with compiling off (before and after, averaged)}, with an empty cache: the compile,
    helpers included, happens while the loop runs, on all the machine's CPUs."""
    def off():
        with tempfile.TemporaryDirectory() as cache_dir:
            return _run_script(_BESIDE_COMPILE, cache_dir, "off", all_cpus=True, SECONDS=2.0,
                               COMPILED=True)["interpreted per second"]
    before = off()
    with tempfile.TemporaryDirectory() as cache_dir:
        tiered = _run_script(_BESIDE_COMPILE, cache_dir, "tiered", all_cpus=True,
                             SECONDS=seconds, COMPILED=True)
    return {"switched": tiered["switched"], "interpreted": tiered["interpreted per second"],
            "off": (before + off()) / 2}


# The fewest alternated pairs of processes behind the 10- and 200-step rows.
SHORT_LOOP_PAIRS = 5
# The fewest runs behind the background compile's row: single runs gave 3% to 33%.
BESIDE_COMPILE_RUNS = 3


def _median_of(repeat, measure):
    """The median of each key over `repeat` calls of `measure` (a dict of seconds)."""
    runs = [measure() for _ in range(repeat)]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def _importable(module, python=None):
    return subprocess.run([python or sys.executable, "-c", f"import {module}"],
                          capture_output=True, check=False).returncode == 0


def _first_call_rows(name, times, peer_seconds=(), target=""):
    # The CPU time too: on a busy machine it moves much less than the wall time. The
    # target is the graph's own compile: the empty cache's first call less the one-time
    # costs paid in it (Numba's import, the matrix kernel, the helpers), and the new
    # graph's, which pays Numba's import and its own kernel.
    numba_import = times["numba import"]
    own = times["empty"] - times["matrix"] - times["helpers"] - numba_import
    rows = [Result(f"{name}, empty cache", "tapeflow fn", times["empty"], times["empty"],
                   f"CPU {times['empty cpu']:.2f} s; all of the next rows"),
            Result(f"{name}, empty cache", "Numba import", numba_import, times["empty"],
                   "one-time, per process (with the matrix kernel's module): `import "
                   "tapeflow` leaves it to the first compiled call"),
            Result(f"{name}, empty cache", "helpers", times["helpers"], times["empty"],
                   "one-time, per cache dir and signature: shared by all kernels"),
            Result(f"{name}, empty cache", "its kernel", own, times["empty"],
                   f"the first call less the one-time costs; {target}"),
            Result(f"{name}, new graph, used cache", "tapeflow fn", times["new graph"],
                   times["empty"], f"CPU {times['new graph cpu']:.2f} s; Numba's import "
                   f"and its kernel: one-time kernels cached; {target}"),
            Result(f"{name}, warm cache", "tapeflow fn", times["warm"], times["empty"],
                   f"CPU {times['warm cpu']:.2f} s; new process; import "
                   f"{times['warm import']:.2f} s before it; "
                   + ("Numba imported in it" if times["warm numba"] else
                      "Numba not imported (native_loader)"))]
    if times["matrix"] > 0.01:
        rows.insert(2, Result(f"{name}, empty cache", "matrix kernel", times["matrix"],
                              times["empty"], "one-time, per cache dir: shared by all kernels"))
    for impl, seconds in peer_seconds:
        rows.append(Result(f"{name}, fresh process", impl, seconds, times["empty"],
                           "its import and the data's set-up before the clock"))
    return rows


def run(peers, repeat=1, unrolled=(10, 30), training=True, peer_python=None):
    present = [peer for peer in _PEERS
               if (peer in peers and not peer_python) or _importable(peer, peer_python)]

    def peer_rows(case, **constants):
        return [(_PEERS[peer][0], statistics.median(
                    peer_first_call(peer, case, peer_python, **constants)
                    for _ in range(repeat)))
                for peer in present]

    results = []
    for case, name, target in (
            ("mlp", "MLP step first call", "target <= 1.0 s"),
            ("rnn", "RNN tf.range T=100 first call", "target <= 1.0 s"),
            ("jacobian", "jacobian 256x256 use_pfor=False",
             "no target (86 s when its rows were unrolled)")):
        times = _median_of(repeat, lambda case=case: first_calls(case))
        results += _first_call_rows(name, times, peer_rows(case), target)
    for steps in unrolled:
        times = _median_of(repeat, lambda steps=steps: first_calls("unrolled", STEPS=steps))
        results += _first_call_rows(f"RNN unrolled T={steps} first call", times,
                                    peer_rows("unrolled", STEPS=steps),
                                    target="target T=100 <= 3 s, T=1000 <= 2x T=100")
    if training:
        with tempfile.TemporaryDirectory() as cache_dir, \
                tempfile.TemporaryDirectory() as scripts:
            training_seconds(3, True, cache_dir, "sync")  # the compile, into the cache
            for steps in (10, 200, 5000):
                # A loop of tens of milliseconds swings by half from one process to the
                # next here: the short rows take at least SHORT_LOOP_PAIRS pairs.
                pairs = max(repeat, SHORT_LOOP_PAIRS) if steps < 5000 else repeat
                runs = [{"eager": training_seconds(steps, False, cache_dir, script_dir=scripts),
                         "tiered": training_seconds(steps, True, cache_dir, script_dir=scripts)}
                        for _ in range(pairs)]
                ratios = sorted(r["tiered"] / r["eager"] for r in runs)
                eager = statistics.median(r["eager"] for r in runs)
                tiered = statistics.median(r["tiered"] for r in runs)
                name = f"Dense+Adam loop, {steps} steps, warm"
                results += [Result(name, "tapeflow eager", eager, eager),
                            Result(name, "tapeflow tiered", tiered, eager,
                                   f"target <= 1.0x eager (vs numpy: eager); each of {pairs} "
                                   f"alternated pairs: median {statistics.median(ratios):.2f}x, "
                                   f"{ratios[0]:.2f}-{ratios[-1]:.2f}x")]
        runs = [beside_compile() for _ in range(max(repeat, BESIDE_COMPILE_RUNS))]
        switched = [r["switched"] for r in runs if r["switched"] is not None]
        slowdowns = sorted(1 - r["interpreted"] / r["off"] for r in runs)
        results.append(Result(
            "Dense+Adam loop, empty cache: compiled after", "tapeflow tiered",
            statistics.median(switched) if switched else float("nan"), 1.0,
            f"interpreted calls {100 * statistics.median(slowdowns):.0f}% slower than with "
            f"compiling off until then (each run: "
            f"{', '.join(f'{100 * d:.0f}%' for d in slowdowns)}); target <= 10%"))
    return results


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per row")
    parser.add_argument("--unrolled", type=int, nargs="*", default=[10, 30],
                        help="steps of the unrolled RNN (T=100 takes minutes)")
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--peer-python", metavar="PATH",
                        help="an interpreter with JAX and/or TensorFlow, for their rows")
    options = parser.parse_args(argv)
    from run import _fmt
    for r in run({}, options.repeat, options.unrolled, not options.skip_training,
                 options.peer_python):
        print(f"{r.benchmark:42} {r.impl:15} {_fmt(r.seconds):>12} {r.ratio:6.2f}x  {r.note}",
              flush=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main(sys.argv[1:])
