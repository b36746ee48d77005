"""The package's structure, checked on its source: its layers import downward only, and
outside the op table nothing matches an op by its name (passes, backends and autodiff ask
the op: its flags, its methods, or its identity)."""

import ast
from pathlib import Path

import tapeflow
from tapeflow.ops.registry import OPS
from tapeflow.ops.structural import STRUCTURAL_OPS

PACKAGE = Path(tapeflow.__file__).parent


# -- layers ---------------------------------------------------------------------------------
# src/tapeflow's units (a subpackage, or a top-level module) import downward only, bottom
# first: a module may import modules of its own layer and of lower ones, at module level
# or inside a function alike (an import graph read with ast).
LAYERS = (
    ("errors", "dtypes", "context", "config", "nest", "source", "tensor", "version",
     "cache_store",
     "backend_registry", "placement", "device_tensor",
     "device_variable"),
    ("ops", "printing"),  # printing: tf.print's op
    ("autodiff", "graph"),
    ("backends",),
    ("variable", "tracking", "module", "math", "nn", "linalg", "signal", "random",
     "random_generator",
     "random_experimental", "autograph",
     "check_numerics", "debugging", "framework", "graph_hints", "grouping", "initializers",
     "scattering",
     "keras", "data",
     "saved_model", "train", "experimental",
     "__init__"),
)

def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imported_modules(name, is_package, text, modules):
    """The tapeflow modules that module `name` (source `text`) imports anywhere in it:
    `from . import x` is an import of module x where x is one, else of the package."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")
                source = ".".join(base[:len(base) - node.level + 1] + ([source] if source else []))
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules
                       else source for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in modules and target != name)
    return found


def _import_graph():
    modules = _modules()
    return {name: _imported_modules(name, path.name == "__init__.py", path.read_text(), modules)
            for name, path in modules.items()}


def _unit(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit):
    for level, units in enumerate(LAYERS):
        if unit in units:
            return level
    raise AssertionError(f"tapeflow.{unit} belongs to no layer of LAYERS")


def _cycle(edges):
    """One cycle of the directed graph `edges` (node -> nodes) as a path, or None."""
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_every_module_has_a_layer():
    for name in _modules():
        _layer(_unit(name))


def test_layers_import_downward_only():
    upward = sorted(f"{a} imports {b}" for a, bs in _import_graph().items()
                    for b in bs if _layer(_unit(b)) > _layer(_unit(a)))
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def test_no_import_cycle_between_subpackages():
    units = {}
    for a, bs in _import_graph().items():
        units.setdefault(_unit(a), set()).update(_unit(b) for b in bs if _unit(b) != _unit(a))
    cycle = _cycle(units)
    assert cycle is None, "an import cycle between units: " + " -> ".join(cycle)


def test_no_import_cycle_inside_backends():
    inside = {a: {b for b in bs if _unit(b) == "backends"}
              for a, bs in _import_graph().items() if _unit(a) == "backends"}
    cycle = _cycle(inside)
    assert cycle is None, "an import cycle inside backends/: " + " -> ".join(cycle)


def test_the_import_scan_sees_function_level_imports_and_cycles():
    modules = {"tapeflow.context", "tapeflow.graph", "tapeflow.graph.trace",
               "tapeflow.ops.control"}
    text = ("from .. import context\n\n"
            "def f():\n    from ..graph.trace import tracing\n    from ..graph import Graph\n")
    assert _imported_modules("tapeflow.ops.control", False, text, modules) == {
        "tapeflow.context", "tapeflow.graph.trace", "tapeflow.graph"}
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


# -- op names -----------------------------------------------------------------------------

OP_NAMES = frozenset(OPS) | frozenset(STRUCTURAL_OPS)


def _defines_entries(path, tree):
    """Whether a module of ops/ defines table entries: its ops may name themselves and
    each other (a kernel shared by two ops, an error message)."""
    return path.parent == PACKAGE / "ops" and any(
        isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
            "register", "register_structural") for node in ast.walk(tree))


def _is_op_name(expr, aliases):
    """`<...>.op.name`, `op.name`, or a local variable assigned one of them."""
    if isinstance(expr, ast.Attribute) and expr.attr == "name":
        inner = expr.value
        return (isinstance(inner, ast.Attribute) and inner.attr == "op") or (
            isinstance(inner, ast.Name) and inner.id in ("op", "opdef", "base"))
    return isinstance(expr, ast.Name) and expr.id in aliases


def _names_ops(expr):
    """A string literal naming an op, or a tuple/list/set literal of such."""
    if isinstance(expr, ast.Constant):
        return expr.value in OP_NAMES
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_ops(e) for e in expr.elts)
    return False


def _op_name_matches(tree):
    """(line, what) for each place that matches an op by its name."""
    found = []
    aliases = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and _is_op_name(node.value, ()) for target in node.targets
               if isinstance(target, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left] + node.comparators
            if any(_is_op_name(x, aliases) for x in operands) and any(
                    _names_ops(x) for x in operands):
                found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Dict) and any(k is not None and _names_ops(k)
                                              for k in node.keys):
            found.append((node.lineno, "a dict keyed by op names"))
        decorators = getattr(node, "decorator_list", ())
        for decorator in decorators:
            if isinstance(decorator, ast.Call) and any(_names_ops(a) for a in decorator.args):
                found.append((decorator.lineno, f"@{ast.unparse(decorator)}"))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
                "frozenset", "set") and any(_names_ops(a) for a in node.args):
            found.append((node.lineno, "a set of op names"))
    return found


def test_no_module_outside_the_table_matches_op_names():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        if _defines_entries(path, tree):
            continue
        offenders += [f"{path.relative_to(PACKAGE)}:{line}: {what}"
                      for line, what in _op_name_matches(tree)]
    assert not offenders, ("ask the op (a flag, a method, `node.op is ENTRY`) instead of "
                           "matching its name:\n" + "\n".join(offenders))


def test_the_scan_finds_name_matching():
    source = '''
from x import lowering
_ACC = {"Sum": "sum"}
@lowering("If")
def f(node, op):
    name = node.op.name
    if name in ("While", "Call"):
        pass
    return op.name == "Mean" or node.op.name != "Tanh" or frozenset({"Max"})
'''
    lines = [line for line, _ in _op_name_matches(ast.parse(source))]
    assert sorted(lines) == [3, 4, 7, 9, 9, 9], lines
