"""The scalar expression of an elementwise entry from its `emit` template ("{0} + {1}",
"exp_f({0})", "({0} if {0} > 0 else {0} * alpha)"): operands substituted, numbers and
numeric attrs typed as the computation's dtype, `*_f` helpers resolved to the
scalar-math helper of that dtype (kernels/scalar_math.py)."""

import functools
import re

from .text import FLOAT_SUFFIX, Unsupported, literal

_ARG = re.compile(r"\{(\d+)\}")
_NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?(?![\w.])")
_HELPER = re.compile(r"\b([a-z0-9]+)_f\(")
# A template whose value is a comparison or a logical operation: bool in Numba too.
_BOOL_VALUED = re.compile(r"^(\{0\} (<|<=|>|>=|==|!=|and|or) \{1\}|not \{0\})$")


def compute_dtype(node):
    """The dtype a template's literals take: its first non-bool input's."""
    for x in node.inputs:
        if not x.dtype.is_bool:
            return x.dtype
    return node.outputs[0].dtype


def yields_bool(template):
    """Whether the template's value is bool whatever its operands' types."""
    return bool(_BOOL_VALUED.match(template))


def expand(node, operands, constants):
    """The scalar expression of elementwise `node` over operand variables."""
    dt = compute_dtype(node)
    # (with their text: 0.0 and -0.0, or 1 and 1.0, equal as keys, are two literals)
    numeric = tuple((key, value, repr(value)) for key, value in node.attrs.items()
                    if isinstance(value, (int, float)) and not isinstance(value, bool))
    template = _typed(node.op.emit, dt, numeric)
    return _OPERAND.sub(lambda m: operands[int(m.group(1))], template)


_OPERAND = re.compile(r"ARG(\d+)_")


@functools.lru_cache(maxsize=1024)
def _typed(emit, dt, numeric_attrs):
    """Template `emit` for dtype `dt` with its numeric attrs' values ((key, value, repr)
    each) in it and the operands left as ARG<k>_: the same for every node of one op,
    dtype and attrs (an unrolled loop's code has thousands)."""
    template = _ARG.sub(lambda m: f"ARG{m.group(1)}_", emit)
    template = _NUMBER.sub(lambda m: literal(float(m.group(0)) if dt.is_floating or dt.is_complex
                                             else int(float(m.group(0))), dt), template)
    for key, value, _ in numeric_attrs:
        template = re.sub(rf"\b{re.escape(key)}\b", literal(value, dt), template)
    template = template.replace("max(", "maximum(").replace("min(", "minimum(")
    template = _HELPER.sub(lambda m: _helper_name(m.group(1), dt), template)
    return _macros(template, dt)


# The helpers a template of an op that takes complex numbers calls: NumPy's functions,
# which Numba compiles for complex scalars.
_COMPLEX_HELPERS = {"exp": "np.exp(", "log": "np.log(", "sqrt": "np.sqrt(",
                    "conj": "np.conjugate("}


def _helper_name(base, dt):
    if dt.is_complex:
        if base not in _COMPLEX_HELPERS:
            raise Unsupported(f"{base} of {dt.name}")
        return _COMPLEX_HELPERS[base]
    if base == "conj":  # a real number is its own conjugate
        return "("
    if base == "sign":
        return f"sign_{FLOAT_SUFFIX.get(dt.name, 'int')}("
    if base in ("round", "floor", "ceil"):
        return {"round": "rint(", "floor": "floor(", "ceil": "ceil("}[base] \
            if dt.is_floating else "("
    suffix = FLOAT_SUFFIX.get(dt.name)
    if suffix is None:
        raise Unsupported(f"{base} of {dt.name}")
    return f"{base}_{suffix}("


def _macros(text, dt):
    # sign: inline and typed, so that float32 stays float32.
    one = literal(1, dt)
    text = re.sub(r"sign_(?:f32|f64|int)\((ARG\d+_)\)",
                  lambda m: f"({one} if {m.group(1)} > 0 else (-{one} if {m.group(1)} < 0 "
                            f"else {m.group(1)}))", text)
    # softplus_f32: two helpers LLVM inlines, not one it does not (see scalar_math.py).
    return re.sub(r"softplus_f32\((ARG\d+_)\)",
                  lambda m: f"softplus_tail_f32({m.group(1)}, exp_f32(-abs({m.group(1)})))",
                  text)
