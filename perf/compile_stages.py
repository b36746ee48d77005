"""Where a first compiled call's time goes: tracing, tapeflow's passes, source generation,
the kernel module's load, Numba's front end and type inference, lowering to LLVM IR, LLVM
optimization, machine code, and Numba's disk cache.

Each stage is timed around the function that does it, exclusive of the stages nested in
it (a helper's whole compile runs inside the kernel's type inference, say), so the rows
add up to the call. Run in a fresh process per case, with its own cache directory:

    export TAPEFLOW_CACHE_DIR=$(mktemp -d) TAPEFLOW_COMPILE=sync
    python perf/compile_stages.py mlp               # empty cache directory
    python perf/compile_stages.py mlp --extra-op    # a new graph, one-time kernels cached
    python perf/compile_stages.py unrolled --steps 30
"""

import functools
import linecache
import sys
import time
from collections import defaultdict

# Numba's pipeline passes, by stage (anything else counts as the front end).
_TYPING = {"nopython_type_inference", "partial_type_inference", "annotate_types",
           "nopython_rewrites", "pre_parfor_pass", "parfor_pass", "parfor_fusion_pass",
           "parfor_prelowering_pass", "nopython_supported_feature_validation",
           "ir_legalization", "inline_overloads", "dead_code_elimination"}
_LOWERING = {"native_lowering", "native_parfor_lowering", "nopython_backend"}


class StageClock:
    """Exclusive seconds per stage: time spent in a stage minus the stages inside it."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.counts = defaultdict(int)
        self._stack = []  # [stage, start, seconds of nested stages]

    def enter(self, stage):
        self._stack.append([stage, time.perf_counter(), 0.0])

    def leave(self):
        stage, start, nested = self._stack.pop()
        spent = time.perf_counter() - start
        self.seconds[stage] += spent - nested
        self.counts[stage] += 1
        if self._stack:
            self._stack[-1][2] += spent

    def wrap(self, owner, attribute, stage):
        original = getattr(owner, attribute)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            self.enter(stage)
            try:
                return original(*args, **kwargs)
            finally:
                self.leave()

        setattr(owner, attribute, timed)


def install():
    """Times every stage of the compiles from now on; returns the clock."""
    from numba.core import base, caching, codegen, event
    from numba.core.typing import context as typing_context

    import tapeflow.backends.numba_cpu as backend
    from tapeflow.backends import compiler
    from tapeflow.backends.numba_cpu import cache, generator, outline
    from tapeflow.backends.numba_cpu.kernels import microgemm
    from tapeflow.graph import function

    clock = StageClock()
    clock.wrap(function.Function, "_trace", "trace (Python function -> graph)")
    clock.wrap(compiler, "optimize", "passes (inline, fold, CSE, DCE)")
    # Source generation in its parts: at a large unrolled T these grow with T.
    clock.wrap(generator, "generate", "source generation: the nodes' code")
    clock.wrap(generator, "without_dead_views", "source generation: dropping dead views")
    clock.wrap(outline, "outline", "source generation: outlining repeated code")
    clock.wrap(backend, "assemble", "source generation: the module's text")
    clock.wrap(cache, "load", "kernel module: write + exec")
    clock.wrap(microgemm, "register", "matrix kernel (microgemm) compile/load")
    clock.wrap(codegen.CPUCodeLibrary, "_optimize_functions", "LLVM optimization")
    clock.wrap(codegen.CPUCodeLibrary, "_optimize_final_module", "LLVM optimization")
    clock.wrap(codegen.JITCodeLibrary, "_finalize_specific", "LLVM machine code")
    clock.wrap(base.BaseContext, "refresh", "Numba's set-up (its typings, lowerings)")
    clock.wrap(typing_context.BaseContext, "refresh", "Numba's set-up (its typings, lowerings)")
    clock.wrap(caching.Cache, "load_overload", "Numba cache: load")
    clock.wrap(caching.Cache, "save_overload", "Numba cache: save")

    class PassListener(event.Listener):
        def on_start(self, ev):
            name = ev.data["name"].split(" [")[0]
            clock.enter("Numba type inference" if name in _TYPING
                        else "Numba lowering to LLVM IR" if name in _LOWERING
                        else "Numba front end (bytecode -> IR)")

        def on_end(self, ev):
            clock.leave()

    per_function = StageClock()

    class CompileListener(event.Listener):
        def on_start(self, ev):
            per_function.enter(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            per_function.leave()

    event.register("numba:run_pass", PassListener())
    event.register("numba:compile", CompileListener())
    clock.per_function = per_function
    return clock


def report(clock, total, title):
    print(f"{title}: {total:.3f} s in all")
    accounted = sum(clock.seconds.values())
    rows = sorted(clock.seconds.items(), key=lambda kv: -kv[1])
    rows.append(("other (tapeflow calls, imports inside the call)", total - accounted))
    for stage, seconds in rows:
        count = clock.counts.get(stage, "")
        print(f"  {stage:50} {seconds:8.3f} s  {100 * seconds / total:5.1f}%  {count}")
    functions = sorted(clock.per_function.seconds.items(), key=lambda kv: -kv[1])
    print(f"  Numba compiled {len(functions)} functions; the longest, excluding the "
          f"functions they call:")
    for name, seconds in functions[:12]:
        print(f"    {name:48} {seconds:8.3f} s")


def main(argv):
    """argv: a case of compile.py (mlp, rnn, unrolled), then `--extra-op` for its other
    graph, `--steps N` for the unrolled loop's length."""
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compile import _SETUP
    case = argv[0] if argv else "mlp"
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else 10
    namespace = {"EXTRA_OP": "--extra-op" in argv, "STEPS": steps}
    # AutoGraph reads the function's source: linecache holds it for the compiled text.
    filename = f"<compile.py {case}>"
    linecache.cache[filename] = (len(_SETUP[case]), None, _SETUP[case].splitlines(True),
                                 filename)
    exec(compile(_SETUP[case], filename, "exec"), namespace)  # noqa: S102 - our own setup
    # `import tapeflow` imports neither Numba nor kernels/: the first compiled call does.
    start = time.perf_counter()
    clock = install()
    clock.seconds["imports of Numba and kernels/"] += time.perf_counter() - start
    clock.counts["imports of Numba and kernels/"] = 1
    namespace["fn"](*namespace["args"])
    total = time.perf_counter() - start
    report(clock, total, f"{' '.join(argv)}: first call, TAPEFLOW_COMPILE="
                         f"{os.environ.get('TAPEFLOW_COMPILE', 'tiered')}")


if __name__ == "__main__":
    main(sys.argv[1:])
