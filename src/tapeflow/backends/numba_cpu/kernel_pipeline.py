"""The Numba pipeline that compiles generated kernels: Numba's own passes, fewer of them.

A generated kernel is plain straight-line code and loops over names assigned once
(loop-carried values keep their type), so several of the passes Numba runs on any
Python function have nothing to do there, yet each walks the whole function:

- SSA reconstruction and its phi stripping (a kernel's names are already assigned once);
- the untyped rewrites of constants and of branches on constants;
- closure inlining and `with`-block lifting, unless the function makes a closure or
  enters `numba.objmode` (both found in its code object; a kernel with such a block is
  compiled again around it, on Numba's own pipeline).

Measured on the 100-step RNN gradient's kernel, compiled alone after Numba's set-up and
alternated with Numba's default pipeline: 1.08-1.12 s before, 0.97-1.06 s with this one.
The machine code is unchanged: LLVM's passes are Numba's (running its per-function
optimization at a lower level, or not at all, saved up to 0.06 s more, but made a batch
Jacobian's kernel from 7% to 2.7 times slower). Where this pipeline fails (a Numba
error: typing without SSA is stricter when a name changes type), Numba's default
pipeline compiles the function afresh, and its error is the one reported.
"""

from numba.core import typed_passes, untyped_passes
from numba.core.compiler import Compiler, CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import AnalysisPass, PassManager, register_pass

PIPELINE_NAME = "tapeflow kernel"


@register_pass(mutates_CFG=False, analysis_only=True)
class _FreshStart(AnalysisPass):
    """Drops what a failed attempt left: its IR, a half-lowered library and its error
    (which a compile result keeps, and the dispatcher would raise)."""

    _name = "tapeflow_fresh_start"

    def __init__(self):
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        state.func_ir = None
        state.library = None
        state.status.fail_reason = None
        return False


def _makes_closures(code):
    return any(hasattr(const, "co_code") for const in code.co_consts)


def _lean_pipeline(state):
    code = state.func_id.code
    closures = _makes_closures(code)
    passes = [untyped_passes.TranslateByteCode, untyped_passes.FixupArgs,
              untyped_passes.IRProcessing]  # from the bytecode: a function of its own
    if "objmode" in code.co_names:
        passes.append(untyped_passes.WithLifting)
    if closures:
        passes.append(untyped_passes.InlineClosureLikes)
    passes += [untyped_passes.GenericRewrites, untyped_passes.RewriteDynamicRaises]
    if closures:
        passes.append(untyped_passes.MakeFunctionToJitFunction)
    passes += [untyped_passes.InlineInlinables, untyped_passes.FindLiterallyCalls,
               untyped_passes.LiteralUnroll,
               untyped_passes.LiteralPropagationSubPipelinePass,
               typed_passes.NopythonTypeInference, typed_passes.InlineOverloads,
               typed_passes.NopythonRewrites,
               typed_passes.NoPythonSupportedFeatureValidation,
               typed_passes.IRLegalization,  # emits the deletions that free arrays
               typed_passes.AnnotateTypes, typed_passes.NativeLowering,
               typed_passes.NoPythonBackend]
    manager = PassManager(PIPELINE_NAME)
    for compiler_pass in passes:
        manager.add_pass(compiler_pass, compiler_pass.__name__)
    manager.finalize()
    return manager


def _default_pipeline(state):
    default = DefaultPassBuilder.define_nopython_pipeline(state)
    manager = PassManager(default.pipeline_name)
    manager.add_pass(_FreshStart, "forget the failed attempt")
    for compiler_pass, description in default.passes:
        manager.add_pass(compiler_pass, description)
    manager.finalize()
    return manager


class KernelCompiler(CompilerBase):
    """`pipeline_class` of the generated kernels' `njit`."""

    def define_pipelines(self):
        if self.state.func_ir is not None:
            # A `numba.objmode` block lifted out of a kernel, or the kernel compiled again
            # around it: Numba's own pipelines.
            return Compiler.define_pipelines(self)
        return [_lean_pipeline(self.state), _default_pipeline(self.state)]
