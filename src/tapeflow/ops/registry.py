"""The op table: one frozen OpDef per op, and bind(), the one entry point that runs an op."""

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import context, placement
from ..errors import InvalidArgumentError, OpError
from ..tensor import wrap

_NO_ATTRS = {}



def quiet_numpy_warnings():
    """TensorFlow computes inf and nan silently (log(0), 0 * inf, x / 0). NumPy's ufuncs
    warn instead, attributing the warning to the frame that called them: this filter
    ignores those raised from tapeflow's own modules. A filter costs nothing per op,
    unlike np.errstate (about 1 µs); kernels that call NumPy's Python-level functions
    still use np.errstate themselves. Installed at import; tests re-install it after
    turning warnings into errors."""
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tapeflow(\.|$)")


quiet_numpy_warnings()


@dataclass(frozen=True)
class OpDef:
    """Everything every mode needs to know about one op, side by side.

    name:   TensorFlow's op name ("AddV2", "MatMul"), used by RegisterGradient and dumps.
    args:   the names of the tensor inputs, in order.
    infer:  infer(*avals, **attrs) -> (shape, dtype), or a list of them when n_out != 1.
            Inputs are anything with `_shape` and `dtype`. The only place shape and dtype
            errors are raised (InvalidArgumentError, ValueError naming op and shapes).
    eager:  eager(*arrays, **attrs) -> array (or a sequence of arrays when n_out != 1).
    emit:   elementwise ops: their scalar expression template over "{0}", "{1}" (a
            fused loop's body, on any backend); random ops: their draw over a Generator
            "{g}" (inside a compiled branch or loop); None for the rest, which the
            backends lower by the op itself (`lowerings`).
    saves:  the names (from `args`, or "out" / "out0", "out1", ...) the gradient reads;
            a tape keeps only these alive.
    grad:   grad(ctx, *dys) -> one gradient (or None for zero) per input, written with
            public ops so the same rule serves eager, traced and higher-order use.
    draw:   random ops only: draw(gen, arrays, attrs) -> array, the op's numbers from a
            NumPy Generator. The eager kernel draws from the Generator its seed attrs make;
            inside branches and loops a graph run gives each op one Generator (a stream).
    lowerings: {backend name: lowering}, filled by each compiled backend as it loads
            (backends/numba_cpu/: `@lowers(SLICE)`): how that backend compiles the op.
    batch:  batch(op, inputs, attrs, batch_size) -> outputs: the op run once on inputs
            stacked along a new leading axis (some of them Batched), for a vectorized
            backward walk; attached by ops/batch_rules.py as it loads (`@batches(MATMUL)`).
            Elementwise ops and reductions without one get their flag's default rule.
    forget: random ops that keep state beyond their seed attrs (the learned unigram
            sampler's class counts) only: forget() drops that state, so that two
            evaluations with equal attrs from the same start draw the same numbers; None
            for the ops whose draws are a function of their inputs and attrs.
    reduction: reductions over `axis` only: how the op accumulates ("sum", "mean", "max",
            "min", "prod", "all", "any"), so that a fused loop can end in it and a batching
            rule shifts its axes; None for every other op.
    row_grad: ops that read rows of their first input (a gather, `x[t]`) only:
            row_grad(ctx, dy) -> (row indices, rows, rows of the input), that input's
            gradient as the rows `grad` would add into zeros, or None where that does not
            apply. A backward walk adds the rows of all of an input's uses into zeros
            once (autodiff/backprop.py), as TensorFlow's IndexedSlices do. Such an op's
            `grad` returns a tuple, one entry per input.
    """

    name: str
    args: tuple
    infer: Callable
    eager: Callable
    emit: str | None = None
    grad: Callable | None = None
    saves: tuple = ()
    n_out: int | None = 1  # None: as many outputs as infer says (Unpack, SplitV)
    differentiable: bool = True
    elementwise: bool = False
    broadcasts: bool = True  # elementwise inputs broadcast (False: TF's *Grad helpers)
    stateful: bool = False  # draws random numbers or touches state: never folded at trace time
    checks: bool = False  # stateful only in raising on bad values (CheckNumerics, Assert):
    # kept though its output is unused, yet compiled branches and loops may hold it
    none_dys: bool = False  # the rule takes None for outputs that got no gradient
    smooth: bool = True  # second derivatives are checked where smooth
    domain: tuple = (-2.0, 2.0)  # where the generated gradient tests draw inputs
    draw: Callable | None = None
    forget: Callable | None = None
    reduction: str | None = None
    variadic: bool = False  # takes any number of inputs (Pack, ConcatV2, Einsum)
    lowerings: dict = field(default_factory=dict, repr=False, compare=False)
    batch: Callable | None = field(default=None, repr=False, compare=False)
    row_grad: Callable | None = field(default=None, repr=False, compare=False)
    save_index: tuple = field(init=False, repr=False, compare=False)
    save_position: dict = field(init=False, repr=False, compare=False)
    structural = False  # ops/structural.py's entries: built and run by their own code

    def __post_init__(self):
        index = []
        for name in self.saves:
            if name == "out":
                index.append(-1)
            elif name.startswith("out") and name[3:].isdigit():
                index.append(-1 - int(name[3:]))
            else:
                index.append(self.args.index(name))
        object.__setattr__(self, "save_index", tuple(index))
        object.__setattr__(self, "save_position", {name: i for i, name in enumerate(self.saves)})
        if self.differentiable and self.grad is None:
            raise TypeError(f"op {self.name} is differentiable but has no gradient rule")


OPS = {}


def never_bound(kind):
    """infer/eager of an OpDef outside the table (a function call, If, While, a variable
    read, a custom gradient): such nodes are built and run by their own code, never by
    bind(), and reaching bind() with one is a tapeflow bug."""
    def refuse(*args, **attrs):
        raise TypeError(f"{kind} nodes are built by their own code, not by bind()")
    return refuse

# Gradient functions registered with RegisterGradient, by op name: they replace the
# table's rule, so the tape saves every input and output of such an op for them.
GRADIENT_OVERRIDES = {}


def register(op):
    """Adds an OpDef to the table; one entry per TensorFlow op name."""
    if op.name in OPS:
        raise KeyError(f"op {op.name!r} is registered twice")
    OPS[op.name] = op
    return op


def lookup(name):
    try:
        return OPS[name]
    except KeyError:
        raise LookupError(f"No op named {name!r} in the tapeflow op table") from None


class TracedShape(tuple):
    """An input's shape with dimensions unknown while tracing (None), and the symbolic
    tensor `of` which it is the shape: rules such as unbroadcast read the unknown
    dimensions in the running graph."""

    def __new__(cls, shape, of):
        self = super().__new__(cls, shape)
        self.of = of
        return self


class TapeEntry:
    """One recorded op: only ids, shapes and the values its gradient rule declared.

    It is also what the gradient rule receives as `ctx`: the declared saves by name
    (`ctx.x`, `ctx.out`), `ctx.attrs`, the input `ctx.shapes` / `ctx.dtypes`,
    `ctx.out_shapes`, and `ctx.needs` (which inputs want a gradient). A shape with a
    dimension unknown while tracing is a TracedShape, which holds its (symbolic) tensor:
    nothing concrete is kept alive.
    """

    __slots__ = ("op", "attrs", "in_ids", "out_ids", "saved", "shapes", "dtypes",
                 "out_shapes", "out_dtypes", "needs")

    def __init__(self, op, attrs, inputs, outputs, saved):
        self.op = op
        self.attrs = attrs
        self.saved = saved
        if len(inputs) == 1:  # the common arities, spelled out: this runs for every op
            x = inputs[0]
            self.in_ids, self.shapes, self.dtypes = (x._id,), (x._shape,), (x.dtype,)
            if None in x._shape:
                self._traced(inputs)
        elif len(inputs) == 2:
            x, y = inputs
            self.in_ids = (x._id, y._id)
            self.shapes = (x._shape, y._shape)
            self.dtypes = (x.dtype, y.dtype)
            if None in x._shape or None in y._shape:
                self._traced(inputs)
        else:
            self.in_ids = tuple([x._id for x in inputs])
            self.shapes = tuple([x._shape for x in inputs])
            self.dtypes = tuple([x.dtype for x in inputs])
            if any(None in s for s in self.shapes):
                self._traced(inputs)
        if len(outputs) == 1:
            self.out_ids = (outputs[0]._id,)
            self.out_shapes = self.out_dtypes = None  # a single dy always arrives
        else:
            self.out_ids = tuple([y._id for y in outputs])
            self.out_shapes = tuple([y._shape for y in outputs])
            self.out_dtypes = tuple([y.dtype for y in outputs])

    def _traced(self, inputs):
        self.shapes = tuple(TracedShape(x._shape, x) if None in x._shape else x._shape
                            for x in inputs)

    def __getattr__(self, name):
        # Only called for names that are not slots: the declared saves.
        try:
            return self.saved[self.op.save_position[name]]
        except KeyError:
            raise AttributeError(f"the gradient of {self.op.name} reads {name!r}, which the "
                                 f"op does not declare in `saves` {self.op.saves}") from None


def record(op, attrs, inputs, outputs, tapes):
    """Appends one entry to every recording tape that watches one of `inputs`."""
    saved = None
    for tape in tapes:
        watched = tape._watched
        for x in inputs:
            if x._id in watched:
                break
        else:
            continue
        if saved is None:
            if GRADIENT_OVERRIDES and op.name in GRADIENT_OVERRIDES:
                saved = tuple(inputs) + tuple(outputs)
            else:
                saved = tuple([inputs[i] if i >= 0 else outputs[-1 - i]
                               for i in op.save_index])
            entry = TapeEntry(op, attrs, inputs, outputs, saved)
        tape._entries.append(entry)
        for y in outputs:
            watched.add(y._id)


class Interpreter:
    """What bind() hands each op to: the innermost of a stack kept per thread and task
    (context.interpreter). Each one's process(op, inputs, attrs) -> outputs decides
    whether the inputs are its own (symbolic values for a graph builder, Batched stacks
    for the batching interpreter) and otherwise hands the op to `parent`, the interpreter
    it was pushed over; the eager interpreter at the bottom runs every op it gets."""

    parent = None


class EagerInterpreter(Interpreter):
    """The bottom of the stack: runs the op's NumPy kernel at once; tapes record it."""

    @staticmethod
    def process(op, inputs, attrs):
        return run_eagerly(op, inputs, attrs)


EAGER = EagerInterpreter()


@contextlib.contextmanager
def interpreting(interpreter):
    """Makes `interpreter` the innermost one (bind() hands it every op) for the block,
    over the one that was innermost, which becomes its parent."""
    interpreter.parent = context.interpreter.get() or EAGER
    token = context.interpreter.set(interpreter)
    try:
        yield interpreter
    finally:
        context.interpreter.reset(token)


# tf.debugging.enable_check_numerics's checks (check_numerics.py), or None: called with
# (op, inputs, outputs) after each eager op, and after each op traced into a graph (which
# returns the outputs its users see).
eager_numerics_check = None
traced_numerics_check = None


def set_numerics_checks(eager, traced):
    global eager_numerics_check, traced_numerics_check
    eager_numerics_check, traced_numerics_check = eager, traced


def bind(op, inputs, attrs=_NO_ATTRS):
    """Runs `op` on Tensors `inputs` by the innermost interpreter: eagerly (infer's
    checks, the NumPy kernel, then tape records) unless one was pushed over that: while
    a tf.function is being traced, the graph builder makes ops on symbolic inputs graph
    nodes; inside a vectorized backward walk, an op on a Batched input runs its batching
    rule."""
    interpreter = context.interpreter.get()
    if interpreter is None:  # eager: the hot path, without a method call
        if placement.active:  # a GPU may be visible: the op runs where it is placed
            outputs = placement.run_placed(op, inputs, attrs, run_on_host)
        else:
            outputs = run_on_host(op, inputs, attrs)
        if eager_numerics_check is not None:
            eager_numerics_check(op, inputs, outputs)
        return outputs
    return interpreter.process(op, inputs, attrs)


def run_eagerly(op, inputs, attrs=_NO_ATTRS):
    """The eager interpreter's work: the op runs where placement.py places it; on the
    CPU by run_on_host."""
    if placement.active:
        outputs = placement.run_placed(op, inputs, attrs, run_on_host)
    else:
        outputs = run_on_host(op, inputs, attrs)
    if eager_numerics_check is not None:  # an op on constants while tracing runs here
        eager_numerics_check(op, inputs, outputs)
    return outputs


def run_on_host(op, inputs, attrs=_NO_ATTRS):
    """An op on the CPU: infer (checks), the NumPy kernel, tape records."""
    if attrs:
        op.infer(*inputs, **attrs)
    else:  # the common case, without building keyword dicts
        op.infer(*inputs)
    out, outputs = run_inferred(op, inputs, attrs)
    if op.differentiable:
        tapes = context.recording_tapes.get()
        if tapes:
            record(op, attrs, inputs, outputs, tapes)
    return out


def run_inferred(op, inputs, attrs=_NO_ATTRS):
    """The NumPy kernel of an op whose inputs infer has accepted (eagerly, or when the
    graph that holds it was traced with these very shapes): (its output, or the list of
    them; the tuple of outputs). Nothing is recorded."""
    try:
        if attrs:
            result = op.eager(*[x._value for x in inputs], **attrs)
        else:
            result = op.eager(*[x._value for x in inputs])
    except OpError:
        raise
    except (ValueError, IndexError, TypeError, ArithmeticError, np.linalg.LinAlgError) as e:
        _kernel_failed(op, inputs, e)
    except MemoryError:
        _out_of_memory(op, inputs, attrs)
    if op.n_out == 1:
        out = wrap(result if isinstance(result, (np.ndarray, np.generic)) else np.asarray(result))
        return out, (out,)
    outputs = tuple([wrap(np.asarray(r)) for r in result])
    return list(outputs), outputs


def _out_of_memory(op, inputs, attrs):
    """TensorFlow's ResourceExhaustedError naming the op and the output it could not
    allocate (infer runs again for its shape: only on this path)."""
    from .creation import out_of_memory
    avals = op.infer(*inputs, **attrs)
    shape, dtype = avals if op.n_out == 1 else max(
        avals, key=lambda a: np.prod(a[0], dtype=float))
    raise out_of_memory(op.name, shape, dtype) from None


def _kernel_failed(op, inputs, error):
    """A kernel raised although infer accepted the inputs: report it as TensorFlow would,
    naming the op and the inputs, never as a raw NumPy traceback."""
    shapes = ", ".join(f"{x.dtype.name}{list(x._shape)}" for x in inputs)
    raise InvalidArgumentError(f"{op.name} failed on inputs ({shapes}): {error} "
                               f"[Op:{op.name}]", op=op.name) from None
