"""The listing `print(graph)` gives: sub-graphs indented under their node, long nodes
wrapped at the listing's width, large attributes shortened, source comments kept."""

import inspect
import re

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.graph.ir import Graph
from tapeflow.graph.listing import WIDTH
from tapeflow.ops.registry import OPS

# Every node call in a listing: `= Op(` (after its outputs, or starting a continuation).
CALL = re.compile(r"= (\w+)\(")


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "off")
    monkeypatch.setattr(settings, "run_functions_eagerly", False)


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def source_comment(fn, text):
    """The listing's comment for the line of `fn` holding `text`."""
    lines, first = inspect.getsourcelines(fn)
    number = first + next(i for i, line in enumerate(lines) if text in line)
    return f"# {inspect.getsourcefile(fn)}:{number}: {text}"


def block_under(lines, header):
    """The body of the sub-graph whose header starts at lines[header] (after the header's
    continuation lines, indented 4 more), up to its return."""
    start = next(i for i in range(header + 1, len(lines))
                 if indent_of(lines[i]) != indent_of(lines[header]) + 4)
    end = next(i for i in range(start, len(lines))
               if indent_of(lines[i]) == indent_of(lines[header]) + 2
               and lines[i].lstrip().startswith("return"))
    return lines[start:end + 1]


def test_loop_and_its_gradient_list_their_bodies_under_their_nodes_within_the_width():
    @tf.function
    def gradient_of_loop(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y, i = x, tf.constant(0)
            while i < 3:
                y = tf.sin(y) * x
                i += 1
        return tape.gradient(y, x)

    graph = gradient_of_loop.get_concrete_function(tf.constant([1.0, 2.0])).graph
    listing = str(graph)
    lines = listing.splitlines()

    assert lines[0] == "graph gradient_of_loop(%x: float32[2])"
    assert lines[-1].startswith("  return %")
    assert "<graph" not in listing
    # Every node, those of the bodies included, once and in order: each body right after
    # the node that runs it.
    assert CALL.findall(listing) == [node.op.name for node in graph.all_nodes()]
    assert CALL.findall(listing).count("While") == 2

    for line in lines:
        # Only a source comment (a path and a line of code) may not fit.
        assert len(line) <= WIDTH or line.lstrip().startswith("# "), line

    # Each loop has more outputs (values, their histories, the trip count) than a line
    # holds: its outputs continue on lines indented 4 more, its call starts a line.
    calls = [i for i, line in enumerate(lines) if line.lstrip().startswith("= While(")]
    assert len(calls) == 2
    for call in calls:
        start = max(i for i in range(call) if indent_of(lines[i]) == 2)
        assert lines[start].startswith("  %while")
        assert all(indent_of(line) == 6 for line in lines[start + 1:call + 1])

    headers = [i for i, line in enumerate(lines) if re.match(r" {4}(cond|body): graph ", line)]
    assert [lines[i].split()[0] for i in headers] == ["cond:", "body:", "cond:", "body:"]
    for i in headers:
        block = block_under(lines, i)
        assert all(indent_of(line) in (6, 10) for line in block), block  # nodes, wraps
    forward_body = block_under(lines, headers[1])
    comment = source_comment(gradient_of_loop.python_function, "y = tf.sin(y) * x")
    assert "      " + comment in forward_body
    assert any(re.match(r" {6}%sin: float32\[2\] = Sin\(%loop_var", line)
               for line in forward_body)
    # The backward body reads the forward loop's saved values: inputs of its own.
    assert "%captured" in lines[headers[3]] + " ".join(block_under(lines, headers[3]))


def test_large_attributes_are_shortened_and_graph_lists_are_each_listed():
    outer = Graph("outer")
    x = outer.placeholder((3,), tf.float32)
    branches = []
    for name in ("first", "second"):
        branch = Graph(name)
        y = branch.placeholder((3,), tf.float32)
        branch.outputs = branch.add_node(OPS["Neg"], [y], {}, [((3,), tf.float32)], None)
        branches.append(branch)
    attrs = {"table": np.arange(1000.0), "small": np.array([1, 2]),
             "dims": tuple(range(100)), "branches": branches, "name": "n" * 200}
    outer.outputs = outer.add_node(OPS["Identity"], [x], attrs, [((3,), tf.float32)], None)
    lines = str(outer).splitlines()

    assert all(len(line) <= WIDTH for line in lines), lines
    call = " ".join(lines[:lines.index("    branches[0]: graph first(%x: float32[3])")])
    assert "table=float64[1000]" in call
    assert "small=[1, 2]" in call
    assert re.search(r"dims=\(0, 1, 2, .*, \.\.\. \d+ more\)", call)
    assert "n" * 50 in call and "n" * 100 not in call
    assert "    branches[1]: graph second(%x: float32[3])" in lines
    assert [node.op.name for node in outer.all_nodes()] == ["Identity", "Neg", "Neg"]
