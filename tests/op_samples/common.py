"""Shared pieces for the per-module op samplers: the Case record, array strategies and
the one per-dtype tolerance table the generated tests compare with.

A sampler is `sampler(draw) -> Case`, where `draw` is hypothesis' `data.draw`. Every op
in the table must have one (tests/test_op_table.py checks), so a new op without tests
makes the suite fail. Samplers of differentiable ops give float64 inputs inside the op's
`domain` and away from kinks and ties, so that finite differences are meaningful.
"""

import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@dataclass
class Case:
    """Inputs (NumPy arrays, in the op's `args` order) and attrs for one op call.

    wrt: indices of the inputs whose gradient is checked (default: every float input).
    outputs: indices of the outputs that gradient checks weigh (default: every float one).
    symmetric: indices of the inputs that finite differences perturb symmetrically (in
        their innermost matrices): ops such as Cholesky differentiate with respect to a
        symmetric matrix, as TensorFlow's gradients do.
    """

    inputs: list
    attrs: dict = field(default_factory=dict)
    wrt: tuple | None = None
    outputs: tuple | None = None
    symmetric: tuple = ()


# -- tolerances: one table, by the dtype being compared --------------------------------

# Comparing two computations of the same value (eager vs compiled, float32 vs float64
# runs): np.allclose-style rtol, and atol relative to the largest magnitude involved.
TOLERANCE = {
    "float16": {"rtol": 5e-3, "atol": 5e-3},
    "float32": {"rtol": 2e-5, "atol": 1e-5},
    "float64": {"rtol": 1e-9, "atol": 1e-12},
}

# Gradient checks against central finite differences: the step, and the tolerance on
# the projected derivative (atol is relative to sum |g * v|, the size of the terms).
# A step that suits float64 is far below float32's rounding noise, so ops whose inputs
# or outputs are narrower (Cast to float32) take the narrowest dtype's row.
FINITE_DIFFERENCE = {
    "float16": {"eps": 1e-1, "rtol": 5e-2, "atol": 5e-2},
    "float32": {"eps": 1e-3, "rtol": 2e-3, "atol": 1e-3},
    "float64": {"eps": 1e-6, "rtol": 1e-5, "atol": 1e-6},
}


def constant(value, dtype=None):
    """tf.constant, for the error cases' short lambdas."""
    import tapeflow as tf
    return tf.constant(value, dtype=dtype)


# -- strategies ------------------------------------------------------------------------

def shapes(draw, min_dims=0, max_dims=3, min_side=1, max_side=4):
    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                 max_side=max_side))


def broadcast_shapes(draw, n=2, min_dims=0, max_dims=3, max_side=4):
    result = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side))
    return list(result.input_shapes)


def full_and_broadcast(draw, max_dims=3, max_side=4):
    """(full, part): two shapes where `part` broadcasts to `full`, so values of `full`
    shape can be built from values of `part` shape (see `apart`)."""
    full = shapes(draw, max_dims=max_dims, max_side=max_side)
    keep = draw(st.integers(0, len(full)))
    tail = full[len(full) - keep:]
    part = tuple(d if draw(st.booleans()) else 1 for d in tail)
    return full, part


def seed(draw):
    return draw(st.integers(0, 2**32 - 1))


def floats(draw, shape, domain=(-2.0, 2.0), dtype=np.float64, avoid=()):
    """A float array with values in `domain`, kept at least 0.05 away from `avoid` points
    (kinks where finite differences are meaningless)."""
    lo, hi = domain
    rng = np.random.default_rng(seed(draw))
    x = rng.uniform(lo, hi, size=shape)
    for a in avoid:
        close = np.abs(x - a) < 0.05
        x = np.where(close, a + 0.1 * np.where(x >= a, 1, -1), x)
    return np.asarray(x, dtype=dtype)


def apart(draw, base, shape, gap=(0.1, 1.0), dtype=np.float64):
    """Values of `shape` that differ from `base` (broadcast to `shape`) by at least
    gap[0] and at most gap[1], in either direction: ties are kept out of reach of
    finite differences (maximum, minimum, clip bounds)."""
    rng = np.random.default_rng(seed(draw))
    offset = rng.uniform(*gap, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(np.broadcast_to(base, shape) + offset, dtype=dtype)


def complexes(draw, shape, domain=(-2.0, 2.0), imag=(-1.0, 1.0)):
    """A complex128 array: real parts in `domain` (where the op's real domain keeps it
    off a branch cut: Log's and Sqrt's are the negative reals), imaginary parts in
    `imag`."""
    return floats(draw, shape, domain) + 1j * floats(draw, shape, imag)


def sometimes_complex(sampler):
    """`sampler`, whose float64 inputs are in one case out of four made complex128 (real
    parts as drawn, imaginary parts in [-1, 1]): the op's complex path, through every
    generated test. Its `complex_cases` attribute draws only such cases (an integer case
    drawn stays as it is), for the tests that check complex paths every time."""
    def complex_cases(draw):
        case = sampler(draw)
        case.inputs = [a + 1j * floats(draw, np.shape(a), (-1.0, 1.0))
                       if np.asarray(a).dtype == np.float64 else a for a in case.inputs]
        return case

    def sample(draw):
        return complex_cases(draw) if draw(st.integers(0, 3)) == 0 else sampler(draw)
    sample.__name__ = getattr(sampler, "__name__", "sample")
    sample.complex_cases = complex_cases
    return sample


def ints(draw, shape, lo=-5, hi=5, dtype=np.int32):
    return np.random.default_rng(seed(draw)).integers(lo, hi, size=shape).astype(dtype)


def nonzero_ints(draw, shape, lo=-5, hi=5, dtype=np.int32):
    x = ints(draw, shape, lo, hi, dtype)
    return np.where(x == 0, np.ones((), dtype), x).astype(dtype)


def bools(draw, shape):
    return np.random.default_rng(seed(draw)).random(size=shape) < 0.5


def scalar(value, dtype):
    return np.asarray(value, dtype=dtype)


# -- harness: what the generated tests share -------------------------------------------

class Aval:
    """An abstract value: only what `infer` may look at (shape and dtype, no data)."""

    __slots__ = ("_shape", "dtype")

    def __init__(self, shape, dtype):
        self._shape = tuple(shape)
        self.dtype = dtype

    def __repr__(self):
        return f"Aval({self.dtype.name}{list(self._shape)})"


def draw_case(data, name, complex_only=False):
    """Draws one Case for op `name` from its sampler (tests.op_samples.SAMPLES); with
    `complex_only`, from its sampler of complex cases (see sometimes_complex)."""
    from . import SAMPLES
    sampler = SAMPLES[name].complex_cases if complex_only else SAMPLES[name]
    case = sampler(data.draw)
    case.inputs = [np.asarray(a) for a in case.inputs]
    return case


def dtype_of(array):
    from tapeflow import dtypes
    return dtypes.from_numpy(np.asarray(array).dtype)


def differentiable(array):
    """Whether gradients flow through `array`'s dtype: floats and complex numbers."""
    return np.asarray(array).dtype.kind in "fc"


def wrt_indices(case):
    """The inputs whose gradient is checked: `case.wrt`, else every float or complex
    input."""
    if case.wrt is not None:
        return tuple(case.wrt)
    return tuple(i for i, a in enumerate(case.inputs) if differentiable(a))


def random_like(rng, array):
    """Standard normal values of `array`'s shape, float64, or complex128 (both parts
    drawn) where `array` is complex."""
    v = rng.standard_normal(np.shape(array))
    if np.asarray(array).dtype.kind == "c":
        v = v + 1j * rng.standard_normal(np.shape(array))
    return v


def inner(a, b):
    """The real inner product sum(Re(conj(a) * b)) of two arrays, float64: a complex
    number counts as the pair of its parts, so that tf.GradientTape's gradient g of a
    real loss L (TensorFlow's conjugate form, dL/dRe + i dL/dIm) gives inner(g, v) =
    the derivative of L along v."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        return float(np.sum(a.astype(np.float64) * b.astype(np.float64)))
    return float(np.sum(np.real(np.conj(a.astype(np.complex128)) * b)))


def directions(case, wrt, rng):
    """Random float64 (complex128 for complex inputs) perturbations of inputs `wrt`,
    symmetric where the case says so."""
    found = []
    for i in wrt:
        v = random_like(rng, case.inputs[i])
        found.append((v + np.swapaxes(v, -1, -2)) / 2 if i in case.symmetric else v)
    return found


def nonempty_wrt(case):
    """The inputs whose gradient is checked and that have elements: an empty input's
    gradient is trivially empty."""
    return tuple(i for i in wrt_indices(case) if case.inputs[i].size)


def draw_rng(data):
    """A NumPy generator seeded from hypothesis (so a failure reproduces)."""
    from hypothesis import strategies as st
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="rng seed"))


def as_outputs(op, result):
    """An op's result (bind's or eager's) as a list, one entry per output."""
    return [result] if op.n_out == 1 else list(result)


def with_float_dtype(case, dtype):
    """The same case with every float64 input cast to `dtype`, and every complex128 one
    to the complex dtype of `dtype` parts (attrs untouched)."""
    parts = np.complex64 if np.dtype(dtype) == np.float32 else np.complex128
    inputs = [a.astype(dtype) if a.dtype == np.float64 else
              a.astype(parts) if a.dtype == np.complex128 else a for a in case.inputs]
    return Case(inputs, dict(case.attrs), case.wrt, case.outputs, case.symmetric)


def forget_state(op):
    """Restarts the state `op` keeps beyond its seed attrs (OpDef.forget), so that two
    evaluations of one case (eager and bound, eager and compiled) start alike."""
    if op.forget is not None:
        op.forget()


def attrs_name_a_dtype(attrs):
    from tapeflow.dtypes import DType
    return any(isinstance(v, DType) for v in attrs.values())


def sampled_ops(predicate=None):
    """Names of the registered ops that have a sampler (and satisfy `predicate(op)`),
    sorted: what the generated tests are parametrized over. Ops without a sampler fail
    one test, test_op_table.py::test_every_op_has_a_sampler, instead of every test."""
    from tapeflow.ops.registry import OPS

    from . import SAMPLES
    return sorted(name for name, op in OPS.items()
                  if name in SAMPLES and (predicate is None or predicate(op)))


def differentiable_ops():
    return sampled_ops(lambda op: op.differentiable)


def complex_sampled_ops(predicate=None):
    """The ops whose samplers also draw complex cases (sometimes_complex) and satisfy
    `predicate(op)`."""
    from . import SAMPLES
    return [name for name in sampled_ops(predicate)
            if hasattr(SAMPLES[name], "complex_cases")]


def smooth_ops():
    """The differentiable ops whose gradients are differentiable too (second order)."""
    return sampled_ops(lambda op: op.differentiable and op.smooth)


def arg_name(op, i):
    """The name of input `i` (a variadic op like Pack names all its inputs by one arg)."""
    return op.args[i] if i < len(op.args) else f"{op.args[-1]}[{i}]"


@contextlib.contextmanager
def strict_warnings():
    """Every warning is an error, except what tapeflow itself chooses to silence: the
    NumPy RuntimeWarnings of its own kernels (inf/nan, as TensorFlow computes silently),
    which registry.quiet_numpy_warnings() filters. What a user would see still fails."""
    from tapeflow.ops import registry
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = getattr(registry, "quiet_numpy_warnings", None)
        if quiet is not None:
            quiet()
        yield
