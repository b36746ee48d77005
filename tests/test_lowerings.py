"""Every op is lowered through its table entry: the CPU backend's lowerings live on the
OpDefs (`op.lowerings["numba_cpu"]`), elementwise entries fuse by their template, and
the backend's modules import one another downward only (no cycles). No compile here."""

import ast
import pathlib

import pytest

pytest.importorskip("numba")

from tapeflow.backends import numba_cpu
from tapeflow.backends.numba_cpu.generator import BACKEND, FusedMember, fusible, lowering_of
from tapeflow.graph.identity_n import IDENTITY_N, identity_n
from tapeflow.graph.variables import ASSIGN_VARIABLE, READ_VARIABLE
from tapeflow.ops.control import IF, WHILE
from tapeflow.ops.registry import OPS

BACKEND_DIR = pathlib.Path(numba_cpu.__file__).parent


def test_every_elementwise_op_fuses_through_its_entry():
    elementwise = [op for op in OPS.values() if op.elementwise]
    assert elementwise
    for op in elementwise:
        assert isinstance(lowering_of(op), FusedMember), op.name


def test_every_table_op_and_structural_op_has_a_cpu_lowering():
    missing = [name for name, op in OPS.items()
               if lowering_of(op) is None and op.reduction is None]
    assert missing == []
    for op in (IF, WHILE, READ_VARIABLE, ASSIGN_VARIABLE, IDENTITY_N):
        assert callable(op.lowerings[BACKEND]), op.name


def test_every_custom_gradient_shares_the_identity_n_lowering():
    op = identity_n(1, (0,), 0, None)
    assert op is not IDENTITY_N and op.lowerings[BACKEND] is IDENTITY_N.lowerings[BACKEND]


def test_reductions_fuse_by_their_kind():
    from tapeflow.graph.ir import Graph
    from tapeflow.graph.trace import tracing
    import tapeflow as tf
    graph = Graph("g")
    x = graph.placeholder((3, 4), tf.float32)
    with tracing(graph):
        total = tf.reduce_sum(tf.exp(x), axis=1)
        arg = tf.argmax(x, axis=1)
    kinds = {node.op.name: fusible(node) for node in graph.nodes}
    assert kinds == {"Exp": "elementwise", "Sum": "reduction", "ArgMax": None}
    assert total.dtype == tf.float32 and arg.dtype == tf.int64


def _local_imports(path):
    """The modules of numba_cpu/ (by file stem) that `path` imports at module level."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_the_backend_modules_import_downward_only():
    modules = {path.stem: _local_imports(path) for path in BACKEND_DIR.glob("*.py")}
    # The generator knows no lowering: each lowering module imports it.
    assert modules["generator"] <= {"text", "templates", "names", "site_marks"}
    seen, done = [], set()

    def visit(name):
        assert name not in seen, f"import cycle: {' -> '.join(seen + [name])}"
        if name in done or name not in modules:
            return
        seen.append(name)
        for imported in modules[name]:
            visit(imported)
        seen.pop()
        done.add(name)

    for name in modules:
        visit(name)
