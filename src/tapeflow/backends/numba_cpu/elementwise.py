"""Fused-loop members whose element is not their table template alone: Cast, Pow and
the integer divisions (with their run-time checks), and the entries that are no
`elementwise` op but read their inputs broadcast to their output (BroadcastTo,
ZerosLike, OnesLike, BiasAdd). Every other elementwise entry fuses by its `emit`
template (templates.py) with no lowering of its own."""

from ...ops.creation import ONES_LIKE, ZEROS_LIKE
from ...ops.elementwise import CAST, FLOOR_DIV, FLOOR_MOD, POW
from ...ops.nn import BIAS_ADD
from ...ops.shape import BROADCAST_TO
from . import generator, templates
from .generator import FusedMember, lowers
from .text import literal, np_name


def _never(node):
    return False


def _always(node):
    return True


def _expand(node, operands, constants):
    return templates.expand(node, operands, constants)


def _bool_template_uncast(node):
    """A comparison or logical template is bool already; others: as their dtypes say."""
    if node.outputs[0].dtype.is_bool and templates.yields_bool(node.op.emit):
        return False
    return None


# The lowering of every elementwise entry without one of its own: its template.
generator.elementwise_default = FusedMember(_expand, cast=_bool_template_uncast)


def _cast(node, operands, constants):
    out = node.outputs[0].dtype
    if out.is_bool:
        return f"({operands[0]} != 0)"
    if node.inputs[0].dtype.is_complex and not out.is_complex:
        return f"{np_name(out)}({operands[0]}.real)"  # TensorFlow keeps the real part
    return f"{np_name(out)}({operands[0]})"


lowers(CAST)(FusedMember(_cast, cast=_never))


def _pow(node, operands, constants):
    x, y = operands
    if templates.compute_dtype(node).is_integer:
        return f"ipow({x}, {y})"
    exponent = constants[1]
    if exponent is not None and exponent in (1.0, 2.0, 3.0):
        return " * ".join([x] * int(exponent))
    return f"{x} ** {y}"


def _check_exponent(cg, node, operands):
    if node.outputs[0].dtype.is_integer:
        code = cg.error("negative_power", node)
        cg.emit(f"if {operands[1]} < 0: raise ValueError({code})")


lowers(POW)(FusedMember(_pow, cast=_always, check=_check_exponent))


def _check_divisor(cg, node, operands):
    if node.outputs[0].dtype.is_integer:
        code = cg.error("division_by_zero", node)
        cg.emit(f"if {operands[1]} == 0: raise ValueError({code})")


lowers(FLOOR_DIV, FLOOR_MOD)(
    FusedMember(_expand, cast=_always, check=_check_divisor))


def _literal_of(value):
    return lambda node, operands, constants: literal(value, node.outputs[0].dtype)


lowers(ZEROS_LIKE)(FusedMember(_literal_of(0), cast=_never))
lowers(ONES_LIKE)(FusedMember(_literal_of(1), cast=_never))


lowers(BROADCAST_TO)(FusedMember(
    lambda node, operands, constants: operands[0],
    bound=lambda node, d: node.attrs["shape"][d]))


def _bias_dims(node, i, rank):
    """The bias of BiasAdd spans the channel dimension: the last, or 1 for NC* formats."""
    if i != 1:
        return None
    data_format = node.attrs.get("data_format")
    axis = 1 if data_format and data_format.startswith("NC") and rank > 2 else rank - 1
    return (axis,)


lowers(BIAS_ADD)(FusedMember(
    lambda node, operands, constants: f"{operands[0]} + {operands[1]}",
    operand_dims=_bias_dims))
