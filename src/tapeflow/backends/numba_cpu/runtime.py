"""Running a compiled kernel: the arguments it takes on each call (inputs checked and
made C-contiguous, constants, random draws), and TensorFlow's error for one it raises."""

import numpy as np

from ...errors import InternalError, InvalidArgumentError, ResourceExhaustedError


class CompiledGraph:
    """A graph compiled to machine code; call it with the input and variable arrays."""

    def __init__(self, graph, kernel, params, cg, output_specs, assigned, source, digest,
                 module_source, dispatcher=None):
        self.graph = graph
        # source: the kernel as shown (names.py), or a function that makes it (the
        # `source` property); module_source: the module compiled
        self._shown = source
        self.module_source = module_source
        self.cache_key = digest
        # kernel: what runs it, the built-in function of its caller's compiled Python
        # wrapper with the kernel's address (kernel_caller.py); dispatcher: Numba's,
        # where Numba compiled or loaded it (None from a bundle)
        self._kernel = kernel
        self.dispatcher = dispatcher
        self._n_variables = len(graph.variables)
        self._outputs = output_specs
        self._assigned = assigned
        self._errors = cg.errors
        self._sites = cg.sites
        self._plan = []
        for p in params:
            if p.kind == "input":
                x = graph.inputs[p.ref]
                shape = tuple(x._shape)
                known = None if None in shape else shape
                self._plan.append((0, p.ref, p.dtype, shape, known))
            elif p.kind == "variable":
                self._plan.append((1, p.ref, p.dtype, None, None))
            elif p.kind == "scalars":
                values = np.array(cg.scalar_packs[p.ref], dtype=p.dtype)
                self._plan.append((2, values, None, None, None))
            elif p.kind == "array":
                self._plan.append((2, cg.arrays[p.ref], None, None, None))
            elif p.kind == "ints":
                self._plan.append((2, np.array(cg.ints, dtype=np.int64), None, None, None))
            elif p.kind == "random":
                self._plan.append((3, p.ref, p.dtype, None, None))
            elif p.kind == "stream":
                self._plan.append((5, p.ref, None, None, None))
            elif p.kind == "seeded":
                self._plan.append((7, p.ref, None, None, None))
            elif p.kind == "site":
                self._plan.append((6, None, None, None, None))
            else:
                self._plan.append((4, p.ref, None, None, None))

    @property
    def source(self):
        """The kernel's source as shown: readable names, the user's lines as comments."""
        if callable(self._shown):
            self._shown = self._shown()
        return self._shown

    def __call__(self, input_arrays, variable_arrays, streams=None):
        """streams: {stream key: Generator} for the random ops inside branches and loops
        (ops/random.py, streams); made here for those it does not name."""
        args = []
        site = None
        for kind, ref, dtype, shape, known in self._plan:
            if kind == 5:
                args.append(streams[ref] if streams and ref in streams else _stream(ref))
                continue
            if kind == 6:
                site = np.empty(1, np.int64)  # per call: kernels run in several threads
                args.append(site)
                continue
            if kind == 0:
                args.append(_input(input_arrays[ref], dtype, shape, known, ref))
            elif kind == 1:
                args.append(_canonical(variable_arrays[ref], dtype))
            elif kind == 2:
                args.append(ref)
            elif kind == 3:
                args.append(_draw(ref, dtype))
            elif kind == 7:
                args.append(_seeded(ref))
            else:
                args.append(_permutation(ref))
        try:
            result = self._kernel(*args)
        except (ValueError, IndexError, ArithmeticError, MemoryError) as e:
            raise self._translate(e, -1 if site is None else int(site[0])) from None
        outputs = [result[ref] if kind == "kernel" else ref for kind, ref in self._outputs]
        if self._assigned:
            new_values = list(variable_arrays)
            for index, k in self._assigned:
                new_values[index] = result[k]
        else:
            new_values = list(variable_arrays)
        return outputs, new_values

    def _translate(self, error, site):
        """TensorFlow's error for one a kernel raised: a check of ours raises a code
        (and values) naming its node; any other error is NumPy's (as Numba implements
        it) for the node that was running, which the kernel wrote in its `W` argument."""
        args = error.args
        if len(args) == 2 and type(args[1]) is tuple:  # kernels/failures.py: (code, values)
            args = (args[0], *args[1])
        if type(error) in (ValueError, IndexError) and args and type(args[0]) is int \
                and 0 <= args[0] < len(self._errors):
            kind, node, detail = self._errors[args[0]]
            return InvalidArgumentError(_message(kind, node, detail, args[1:]),
                                        op=_REPORTED_AS.get(kind, node.op.name))
        node = self._sites[site] if 0 <= site < len(self._sites) else None
        return _uncoded(error, node, self.graph.name)

    def __repr__(self):
        return f"<CompiledGraph {self.graph.name} {self.cache_key[:12]}>"


# What a compiled kernel's error codes mean: `raise ValueError(code, value)` in the
# generated source (a call of kernels/failures.py in the kernel) names one of these, with
# the node it checks.
_MESSAGES = {
    "check": "{detail} (at {where})",
    "shape": "Incompatible shapes at run time in {op} at {where}",
    "negative_power": "Integers to negative integer powers are not allowed",
    "division_by_zero": "Integer division by zero (at {where})",
    "index": "slice index {value} of dimension {detail} out of bounds. (at {where})",
    "gather": "indices{index} = {value} is not in [0, {values[1]}) (at {where})",
    "segment": "segment_ids{index} = {value} is out of range [0, {values[1]}) (at {where})",
    "segment_size": "segment_ids should be the same size as dimension 0 of input. (at {where})",
    "segment_negative": "Segment id {value} out of range [0, 1), possibly because "
                        "'segment_ids' input is not sorted. (at {where})",
    "segment_order": "segment ids are not increasing (at {where})",
    "nd_index": "{nd} (at {where})",
    "label": "Received a label value of {value} which is outside the valid range "
             "(at {where})",
    "reshape": "Input to reshape is a tensor with {value} values, but the requested shape "
               "has {values[1]} (at {where})",
    "reshape_unknowns": "Only one input size may be -1, not both {value} and {values[1]} "
                        "(at {where})",
    "reshape_negative": "Size {value} must be non-negative, not {values[1]} (at {where})",
    "dimension": "Dimension {value} must be >= 0 (at {where})",
    "loop_shape": "a loop variable changed shape between iterations, which its gradient "
                  "does not support: build such values in a list with .append (at {where})",
    "list_element": "cannot append an element whose shape differs from the list's elements "
                    "(at {where})",
    "empty_list": "trying to pop from an empty list (at {where})",
    "range": "Requires delta != 0 and start <= limit when delta > 0 (at {where})",
    "linspace_count": "Number of samples, {value}, must be non-negative. (at {where})",
    "slice_rank": "Expected begin and size arguments to be 1-D tensors of size {values[2]}, "
                  "but got shapes [{value}] and [{values[1]}] instead. (at {where})",
    "slice_empty": "Expected begin[{value}] == 0 (got {values[1]}) and size[{value}] == 0 "
                   "(got {values[2]}) when input.dim_size({value}) == 0 (at {where})",
    "slice_begin": "Expected begin[{value}] in [0, {values[2]}], but got {values[1]} "
                   "(at {where})",
    "slice_size": "Expected size[{value}] in [0, {values[2]}], but got {values[1]} "
                  "(at {where})",
    "pad_rank": "The first dimension of paddings must be the rank of inputs{dims[0:2]} "
                "{dims[2:]} (at {where})",
    "pad_negative": "Paddings must be non-negative: {value} {values[1]} (at {where})",
    "mirror_reflect": "paddings must be less than the dimension size: {value}, {values[1]} "
                      "not less than {values[2]} (at {where})",
    "mirror_symmetric": "paddings must be no greater than the dimension size: {value}, "
                        "{values[1]} greater than {values[2]} (at {where})",
    "split": "Determined shape must either match input shape along split_dim exactly if "
             "fully specified, or be less than the size of the input along split_dim if not "
             "fully specified.  Got: {value} (at {where})",
    "unpack": "Input shape axis {detail[0]} must equal {detail[1]}, got shape {dims[0:]} "
              "(at {where})",
    "reshape_multiple": "Input to reshape is a tensor with {value} values, but the requested "
                        "shape requires a multiple of {values[1]} (at {where})",
    "matmul_size": "Matrix size-incompatible: In[0]: {dims[:split]}, In[1]: "
                   "{dims[split:]}{detail[flags]} (at {where})",
    "batch_dims": "In[0] and In[1] must have compatible batch dimensions: {dims[:split]} vs. "
                  "{dims[split:]} (at {where})",
    "einsum_dim": "Expected dimension {value} at axis {detail} of the input shaped {dims[2:]} "
                  "but got dimension {values[1]} (at {where})",
}


class _Dims:
    """`{dims[a:b]}` in a message: the values a to b as TensorFlow prints a shape;
    `split` in a bound is where the first operand's dimensions end (the detail's)."""

    def __init__(self, values, detail):
        self.values = values
        self.split = str(detail.get("split", "")) if isinstance(detail, dict) else ""

    def __getitem__(self, key):
        start, _, stop = key.replace("split", self.split).partition(":")
        part = self.values[int(start or 0):int(stop) if stop else None]
        return "[" + ",".join(str(int(v)) for v in part) + "]"


# Error kinds that are another op's check, by the op TensorFlow names (x[k] for a tensor
# k checks k in a node of its own).
_REPORTED_AS = {"index": "StridedSlice"}


def _message(kind, node, detail, values):
    op = _REPORTED_AS.get(kind, node.op.name)
    template = _MESSAGES.get(kind, kind + " (at {where})")
    value = values[0] if values else None
    text = template.format(op=op, where=node.where(), detail=detail, value=value,
                           values=values, index=_index_text(detail, values),
                           dims=_Dims(values, detail), nd=_nd_text(node, detail, values))
    return f"{text} [Op:{op}]"


def _nd_text(node, detail, values):
    """An "nd_index" error's words: values are the bad row's flat position, its
    coordinates, then the shape it indexes into."""
    if not isinstance(detail, dict) or "depth" not in detail:
        return ""
    from ...ops.indexing import nd_index_message
    flat, depth, rows = int(values[0]), detail["depth"], detail["rows"]
    position = [flat] if None in rows else [int(i) for i in np.unravel_index(flat, rows)]
    row = [int(v) for v in values[1:1 + depth]]
    return nd_index_message(node.op.name, position, row, values[1 + depth:])


def _index_text(shape, values):
    """Where in an index tensor of `shape` (known while tracing, or not) the bad entry
    is, from its flat position (the last value): "[1,0]" as TensorFlow writes it, "[5]"
    in flat order where a dimension is unknown, "" for a scalar index."""
    if not isinstance(shape, tuple) or len(values) < 3 or not shape:
        return ""
    flat = int(values[-1])
    if None in shape:
        return f"[{flat}]"
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]"


def _uncoded(error, node, graph_name):
    """The error NumPy (as Numba implements it) raised inside `node`'s code, as
    TensorFlow's class and words for that op."""
    if node is None:  # before the first node: cannot happen unless codegen is wrong
        return InternalError(f"the compiled kernel of {graph_name} failed: {error}")
    from ...ops.linalg import NOT_INVERTIBLE
    op, where = node.op.name, node.where()
    if isinstance(error, np.linalg.LinAlgError) and op in NOT_INVERTIBLE:
        return InvalidArgumentError(f"{NOT_INVERTIBLE[op]} (at {where}) [Op:{op}]", op=op)
    if isinstance(error, MemoryError) or "array is too big" in str(error):
        dtype = node.outputs[0].dtype.name if node.outputs else "the output"
        return ResourceExhaustedError(f"OOM when allocating a {dtype} tensor for {op} "
                                      f"(at {where}) [Op:{op}]", op=op)
    return InvalidArgumentError(f"{op} failed: {error} (at {where}) [Op:{op}]", op=op)


def _canonical(a, dtype):
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    flags = a.flags
    if a.dtype != dtype or not flags.c_contiguous or not flags.writeable:
        a = np.array(a, dtype=dtype, order="C")
    return a


def _input(a, dtype, shape, known, index):
    a = _canonical(a, dtype)
    if a.shape != known and (len(a.shape) != len(shape) or any(
            d is not None and d != e for d, e in zip(shape, a.shape))):
        raise InvalidArgumentError(f"input {index} has shape {list(a.shape)}, the compiled "
                                   f"graph expects {list(shape)}")
    return a


def _draw(node, dtype):
    from ...ops.random import fresh_generator
    attrs = node.attrs
    return _canonical(node.op.draw(fresh_generator(attrs["seed"], attrs["seed2"]), (), attrs),
                      dtype)


def _stream(key):
    from ...ops.random import fresh_generator
    return fresh_generator(key[0], key[1])


def _seeded(seed):
    from ...ops.shaped_draws import stateless_generator
    return stateless_generator(seed)


def _permutation(node):
    from ...ops.random import fresh_generator
    n = node.inputs[0]._shape[0]
    return fresh_generator(node.attrs["seed"], node.attrs["seed2"]).permutation(n).astype(
        np.int64)
