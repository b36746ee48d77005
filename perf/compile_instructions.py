"""Counts the instructions a case's first call executes, in a fresh process, under
callgrind (valgrind), which instruments that call alone: the count is the same from run
to run (to about a millionth), where times on a shared 2-core machine swing by a third.
For comparing two versions of a compile, not for reporting its time.

Cases are those of perf/compile.py (mlp, rnn, jacobian, unrolled), run with
TAPEFLOW_COMPILE=sync: with an empty cache directory, or with --new-graph the case's
"new graph" (its extra op) in a directory where the case ran first. valgrind runs code
about fifty times slower: a run takes minutes.

With --generation, what is counted is tapeflow's own work between the trace and Numba:
the graph passes, the generated-source cache's key, source generation and the module's
assembly (outlining, rolling), the case traced first: for an unrolled loop, the work
that grows with its steps.

Usage: python perf/compile_instructions.py CASE [--new-graph | --generation] [--steps T]
"""

import argparse
import functools
import linecache
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _first_call(case, extra_op, steps, instrument, generation=False):
    """In the child: builds the case and makes its first call, instrumented alone (or,
    with `generation`, the source generation of its traced graph)."""
    sys.path.insert(0, HERE)
    from compile import _SETUP
    # AutoGraph reads the function's source: the case's text, under a name of its own
    name = f"<compile.py {case}>"
    text = _SETUP[case]
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    namespace = {"EXTRA_OP": extra_op, "STEPS": steps}
    exec(compile(text, name, "exec"), namespace)  # noqa: S102 - perf/compile.py's cases
    control = ["callgrind_control", "-i"]
    run = functools.partial(namespace["fn"], *namespace["args"])
    if generation:
        run = _generation(namespace["fn"].get_concrete_function(*namespace["args"]))
    if instrument:
        subprocess.run([*control, "on", str(os.getpid())], capture_output=True, check=True)
    run()
    if instrument:
        subprocess.run([*control, "off", str(os.getpid())], capture_output=True, check=True)


def _generation(concrete):
    """What the compile of traced function `concrete` does before Numba, as a function
    (its modules imported first): the passes, the key, generation and assembly."""
    from tapeflow.backends import compiler
    from tapeflow.backends.numba_cpu import assemble, generated_cache, generator, loops
    graph = concrete._compilation.graph

    def run():
        optimized = compiler.optimize(graph)
        generated_cache.key(optimized)
        cg, _, _ = generator.generate(optimized, loops.emit_group)
        assemble(cg)
    return run


def count(case, new_graph=False, steps=30, generation=False):
    """The instructions of the first call of `case` (its new graph's with `new_graph`;
    its source generation's with `generation`)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt install valgrind)")
    cache_dir = tempfile.mkdtemp(prefix="tapeflow_instructions_")
    env = dict(os.environ, TAPEFLOW_CACHE_DIR=cache_dir, TAPEFLOW_COMPILE="sync",
               PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    child = [sys.executable, os.path.abspath(__file__), "--child", case, "--steps", str(steps)]
    if generation:
        child.append("--generation")
    try:
        if new_graph:  # the case itself first, uninstrumented
            subprocess.run(child, env=env, check=True, capture_output=True)
            child.append("--new-graph")
        out = os.path.join(cache_dir, "callgrind.out")
        done = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                               f"--callgrind-out-file={out}", *child, "--instrument"],
                              env=env, capture_output=True, text=True, check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode or not found:
            raise RuntimeError(f"the instrumented run failed:\n{done.stderr[-3000:]}")
        return int(found.group(1))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=["mlp", "rnn", "jacobian", "unrolled"])
    parser.add_argument("--new-graph", action="store_true")
    parser.add_argument("--generation", action="store_true",
                        help="count the source generation of the traced graph alone")
    parser.add_argument("--steps", type=int, default=30, help="the unrolled RNN's steps")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--instrument", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        os.chdir(HERE)  # the cases import perf/'s data makers
        _first_call(options.case, options.new_graph, options.steps, options.instrument,
                    options.generation)
        return
    if options.new_graph and options.generation:
        parser.error("--generation counts the case's own graph: no --new-graph")
    instructions = count(options.case, options.new_graph, options.steps, options.generation)
    if options.generation:
        print(f"{options.case}: {instructions:,} instructions in its source generation")
    else:
        graph = "new graph" if options.new_graph else "empty cache"
        print(f"{options.case} ({graph}): {instructions:,} instructions in its first call")


if __name__ == "__main__":
    main()
