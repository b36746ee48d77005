"""The graph IR: Nodes that apply op-table entries to symbolic Tensors, and a printer."""

import linecache

from ..tensor import Symbolic


class Node:
    """One op application: `outputs = op(*inputs, **attrs)`.

    inputs are Symbolic tensors of the same graph or concrete Tensors (constants).
    source is (filename, lineno) of the user's line that created the node.
    """

    __slots__ = ("op", "inputs", "attrs", "outputs", "source")

    def __init__(self, op, inputs, attrs, outputs, source):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs
        self.source = source

    def where(self):
        """'file.py:12: y = x * 2' — the user's line, for error messages and listings."""
        if self.source is None:
            return "<unknown>"
        filename, lineno = self.source
        text = linecache.getline(filename, lineno).strip()
        return f"{filename}:{lineno}: {text}" if text else f"{filename}:{lineno}"


class Graph:
    """A traced function body: placeholders in, nodes in program order, outputs out.

    variables: the Variables the body reads or assigns, captured by reference; their
    current values are supplied at every run.
    """

    def __init__(self, name="graph"):
        self.name = name
        self.inputs = []
        self.nodes = []
        self.outputs = []
        self.variables = []
        self._variable_index = {}
        self._names = {}
        # Symbolic values of an enclosing graph used here (a cond branch reading the
        # function's tensors): (placeholder here, value there). The enclosing node passes
        # them in as extra inputs.
        self.captures = []
        self._capture_index = {}
        # True when a custom_gradient ran while tracing: its grad_fn is Python code
        # closing over this trace, so a backward must retrace rather than replay.
        self.has_custom_gradient = False
        # Ids of concrete tensors that tapes outside this (branch or loop body) graph
        # watch: ops on them become nodes, so gradients can reach them.
        self.lift_ids = frozenset()
        self.created_variables = 0  # Variables created while tracing this graph
        # Set when a branch or loop body has been traced: its values exist only inside
        # the node that runs it.
        self.closed = False
        self.forbid_variables = False

    def placeholder(self, shape, dtype, name="x"):
        t = self._symbolic(shape, dtype, name)
        self.inputs.append(t)
        return t

    def placeholders_like(self, values, name="x"):
        """One placeholder per value, of its shape and dtype."""
        return [self.placeholder(v._shape, v.dtype, name) for v in values]

    def _symbolic(self, shape, dtype, name):
        count = self._names.get(name, 0)
        self._names[name] = count + 1
        return Symbolic(tuple(shape), dtype, self, name if count == 0 else f"{name}_{count}")

    def capture(self, outer):
        placeholder = self._capture_index.get(id(outer))
        if placeholder is None:
            placeholder = self._symbolic(outer._shape, outer.dtype, "captured")
            placeholder._var = outer._var
            self._capture_index[id(outer)] = placeholder
            self.captures.append((placeholder, outer))
            # The same value under another name: a tape inside the sub-graph that watches
            # the enclosing value must see its uses here.
            placeholder._id = outer._id
        return placeholder

    def variable_index(self, var):
        index = self._variable_index.get(id(var))
        if index is None:
            index = self._variable_index[id(var)] = len(self.variables)
            self.variables.append(var)
        return index

    def add_node(self, op, inputs, attrs, avals, source):
        """Appends `op(inputs)`; `avals` are infer's (shape, dtype) per output."""
        base = op.name.lower()
        outputs = [self._symbolic(shape, dtype, base) for shape, dtype in avals]
        self.nodes.append(Node(op, tuple(inputs), attrs, outputs, source))
        return outputs

    # -- what the op table's If and While entries ask of a graph: ops/ sits below graph/,
    # so their rules and replays run their sub-graphs, and trace new ones into the graph
    # being built, through these ----------------------------------------------------------
    def run(self, args, substitute=None):
        """This graph's outputs on `args`, with its variables' current values; through
        bind(), so eagerly, traced into the graph being built, or recorded by tapes
        alike. substitute: see execute.run_graph."""
        from .execute import run_graph
        outputs, _ = run_graph(self, args, [v.read_value() for v in self.variables],
                               substitute)
        return outputs

    def run_differentiated(self, args, wrt, output_gradients, substitute=None, row_reads=()):
        """(outputs, the gradients of the outputs with respect to `wrt`, some of `args`,
        each weighted by its output gradient): see execute.run_differentiated."""
        from .execute import run_differentiated
        return run_differentiated(self, args, wrt, output_gradients, substitute, row_reads)

    def live_nodes(self):
        """The nodes a run of this graph runs: those its outputs need, and the effectful
        ones, in order."""
        from .execute import _live_nodes
        return _live_nodes(self)[0]

    def trace_cond(self, pred, true_fn, false_fn):
        """tf.cond on `pred` while this graph is being traced: an If node of it."""
        from .control_flow import trace_cond
        return trace_cond(self, pred, true_fn, false_fn)

    def trace_while(self, cond, body, loop_vars):
        """tf.while_loop while this graph is being traced: a While node of it."""
        from .control_flow import trace_while
        return trace_while(self, cond, body, loop_vars)

    def trace_while_node(self, cond, body, values):
        """A While node of tapeflow's own `cond` and `body` over the flat `values`; its
        outputs as the node has them (values, histories, trip count)."""
        from .control_flow import trace_while_node
        return trace_while_node(self, cond, body, values)

    # -- reading it -----------------------------------------------------------------------
    def producers(self):
        """id(value) -> (node, k): the node of this graph whose k-th output it is."""
        return {id(y): (node, k) for node in self.nodes for k, y in enumerate(node.outputs)}

    def all_nodes(self):
        """Every node, those of branch, loop-body and call sub-graphs included."""
        for node in self.nodes:
            yield node
            for value in node.attrs.values():
                for graph in graphs_in(value):
                    yield from graph.all_nodes()

    def __str__(self):
        from .listing import format_graph
        return format_graph(self)

    __repr__ = __str__


def graphs_in(value):
    """The Graphs a node attribute holds: itself, or the items of a list/tuple of Graphs."""
    if isinstance(value, Graph):
        return [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(g, Graph) for g in value):
        return list(value)
    return []
