"""What AutoGraph-converted code calls (as `ag__`): each helper runs the plain Python
statement on Python values and eager Tensors, and builds cond / while_loop nodes when the
condition (or the iterated value) is a symbolic Tensor, following TensorFlow's rules.
While tracing, a loop over any Tensor (a `tf.range` of Python ints, computed at trace
time, included) or a `while` on one is a graph loop too, as every tensor inside a
TensorFlow function is a graph tensor.

A statement reaches a helper as functions: its branches or loop body, and a
get_state()/set_state(values) pair over the variables it hands on (the variables it
assigns that are read afterwards, or in the next iteration). Eagerly, the helpers call the
branch or body exactly as the statement would have. On a symbolic condition:

- `if`: both branches are traced (each starting from the same state); the variables
  become the outputs of one If node. A variable must be defined in both branches, with the
  same structure and dtype (TensorFlow's errors, naming the user's line).
- `while` / `for`: the variables become loop variables of one While node. Their dtypes
  may not change in the body. `for x in tensor` loops over the leading axis,
  `for i in tf.range(n)` over a counter (without building the range). A Python list that
  the body appends to is carried as a stacked buffer (TensorListPushBack) and is a Tensor
  of shape [n, ...] after the loop. A variable first assigned inside the loop (and used
  after it), or None before it, gets its dtype and shape from a first trace of the body.
- `break`, `continue` and `return` arrive here as boolean variables set by the body.
- A `while` whose test assigns (`while (n := n - 1) > 0`) runs the test once per
  iteration, as Python: on tensors the condition is a loop variable, computed at the end
  of each iteration.
"""

import builtins
import contextvars
import functools
import importlib
import linecache
import operator
import types
import weakref

import numpy as np

from .. import context, nest
from ..ops.creation import RANGE
from ..tensor import Symbolic, Tensor, _Operators, convert_to_tensor, is_symbolic


class _Undefined:
    """The value of a variable that has no value yet (unbound in the original code)."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return self.what

    def __reduce__(self):
        return self.what


UNDEFINED = _Undefined("UNDEFINED")
UNDEFINED_RETURN = _Undefined("UNDEFINED_RETURN")  # retval_ before any `return` ran


def ld(read):
    """The value `read()` returns, or UNDEFINED if the variable (or attribute, or item) is
    unbound."""
    try:
        return read()
    except (NameError, AttributeError, LookupError):
        return UNDEFINED


def retval(value):
    """The function's return value: None where no `return` ran."""
    return None if value is UNDEFINED_RETURN else value


def get_no_state():
    return ()


def set_no_state(values):
    pass


# -- errors that name the user's line ----------------------------------------------------

def _where(loc):
    if loc is None:
        return "<unknown>"
    filename, line = loc
    text = linecache.getline(filename, line).strip()
    return f"{filename}:{line}: {text}" if text else f"{filename}:{line}"


def _error(cls, message, loc):
    return cls(f"{message}\n  in tf.function, at {_where(loc)}")


# -- values ---------------------------------------------------------------------------------

def _tracing():
    return context.current_graph.get() is not None


def _graph_valued(x):
    """Whether a loop over (or while) `x` is a graph loop: any Tensor while tracing, as in
    TensorFlow, where every tensor inside tf.function is a graph tensor. `tf.range(1000)`
    is computed at trace time here, yet its loop is one While node, not 1000 copies."""
    return is_symbolic(x) or (type(x) is Tensor and _tracing())


def _condition(x):
    """A Variable used as a condition while tracing is read, as TensorFlow does."""
    if isinstance(x, _Operators) and not isinstance(x, Tensor) and _tracing():
        return x.read_value()
    return x


def _verify_condition(cond, what, loc):
    """A scalar bool Tensor for cond/while_loop (TensorFlow's checks and messages)."""
    if not is_symbolic(cond):
        return convert_to_tensor(bool(cond))
    if not cond.dtype.is_bool:
        raise _error(ValueError, f"condition of {what} expected to be `tf.bool` scalar, got "
                                 f"{cond!r}; to use as boolean Tensor, use `tf.cast`; to "
                                 f"check for None, use `is not None`", loc)
    if cond._shape:
        known = [d for d in cond._shape if d is not None]
        if int(np.prod(known)) > 1 or len(known) < len(cond._shape):
            raise _error(ValueError, f"condition of {what} expected to be `tf.bool` scalar, "
                                     f"got {cond!r}", loc)
        cond = _shape_ops().reshape(cond, ())
    return cond


def _owned(tensors):
    """Outputs of the sub-graph being traced: a symbolic value of an enclosing graph that a
    branch or body hands on unchanged is captured (it is an input of the sub-graph)."""
    graph = context.current_graph.get()
    if graph is None:
        return tensors
    return [graph.capture(t) if isinstance(t, Symbolic) and t.graph is not graph else t
            for t in tensors]


def _is_tensor_like(v):
    """Whether a loop or branch carries `v` as a tensor. A Variable is read, as in
    TensorFlow: `y = x` before `while y < 100.0: y = y * x` starts y from x's value."""
    return isinstance(v, (_Operators, np.ndarray, np.generic)) or type(v) in (bool, int, float)


def _as_tensor(v):
    return v if isinstance(v, Tensor) else convert_to_tensor(v)


class _Slot:
    """Where a tensor sits in a value's template."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


class _ListSlot:
    """A list accumulated in a tensor loop: its buffer is the tensor at `index`."""

    __slots__ = ("elem", "index", "owner")

    def __init__(self, index, elem, owner):
        self.index, self.elem, self.owner = index, elem, owner


class _Const:
    """A non-tensor Python value, carried unchanged."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _split(value):
    """(template, tensors): the tensors in a (nested) value, and how to rebuild it."""
    tensors = []

    def walk(v):
        if isinstance(v, _TensorList):
            if v.buffer is None:
                return _Const(v)
            tensors.append(v.buffer)
            return _ListSlot(len(tensors) - 1, v.elem, v.owner)
        if isinstance(v, (list, tuple)):
            items = [walk(x) for x in v]
            if isinstance(v, tuple) and hasattr(type(v), "_fields"):
                return type(v)(*items)
            return type(v)(items) if type(v) in (list, tuple) else list(items)
        if isinstance(v, dict):
            return type(v)((k, walk(v[k])) for k in v) if type(v) is dict else {
                k: walk(v[k]) for k in v}
        if _is_tensor_like(v):
            tensors.append(_as_tensor(v))
            return _Slot(len(tensors) - 1)
        if nest.composite_spec(v) is not None:  # a TensorArray: cond and while_loop
            tensors.append(v)                   # carry its tensors
            return _Slot(len(tensors) - 1)
        return _Const(v)

    return walk(value), tensors


def _join(template, tensors):
    def walk(t):
        if isinstance(t, _Slot):
            return tensors[t.index]
        if isinstance(t, _ListSlot):
            return _TensorList(tensors[t.index], t.elem, t.owner)
        if isinstance(t, _Const):
            return t.value
        if isinstance(t, (list, tuple)):
            items = [walk(x) for x in t]
            if isinstance(t, tuple) and hasattr(type(t), "_fields"):
                return type(t)(*items)
            return type(t)(items)
        if isinstance(t, dict):
            return type(t)((k, walk(t[k])) for k in t)
        return t

    return walk(template)


def _same_const(a, b):
    if a is b:
        return True
    if type(a) is not type(b) or not isinstance(a, (str, bytes, type(None), type(...))):
        return False
    return a == b


def _first_difference(a, b):
    """None if two templates match, else (part of a, part of b, description) for the
    first place where they differ."""
    if isinstance(a, (_Slot, _ListSlot)) or isinstance(b, (_Slot, _ListSlot)):
        if type(a) is not type(b):
            return a, b, f"{_describe(a)} vs. {_describe(b)}"
        return None
    if isinstance(a, _Const) or isinstance(b, _Const):
        if not (isinstance(a, _Const) and isinstance(b, _Const)) or \
                not _same_const(a.value, b.value):
            return a, b, f"{_describe(a)} vs. {_describe(b)}"
        return None
    if type(a) is not type(b):
        return a, b, f"{type(a).__name__} vs. {type(b).__name__}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return a, b, f"keys {sorted(a)} vs. {sorted(b)}"
        pairs = [(a[k], b[k]) for k in a]
    else:
        if len(a) != len(b):
            return a, b, f"{type(a).__name__} of length {len(a)} vs. length {len(b)}"
        pairs = list(zip(a, b))
    for x, y in pairs:
        difference = _first_difference(x, y)
        if difference is not None:
            return difference
    return None


def _none_where_other_has_tensors(difference):
    """Which side ("a" or "b") of a template difference is None where the other side
    holds tensors, or None. TensorFlow raises ValueError for such a None (a TypeError for
    other changes of structure)."""
    if difference is None:
        return None
    a, b, _ = difference
    for side, part, other in (("a", a, b), ("b", b, a)):
        if isinstance(part, _Const) and part.value is None and _holds_tensors(other):
            return side
    return None


def _holds_tensors(template):
    if isinstance(template, (_Slot, _ListSlot)):
        return True
    if isinstance(template, (list, tuple)):
        return any(_holds_tensors(t) for t in template)
    if isinstance(template, dict):
        return any(_holds_tensors(t) for t in template.values())
    return False


def _describe(t):
    if isinstance(t, _Slot):
        return "a tensor"
    if isinstance(t, _ListSlot):
        return "a list accumulated in a tensor loop"
    if isinstance(t, _Const):
        if isinstance(t.value, _Undefined):
            return "undefined"
        return f"the Python value {t.value!r}"
    return type(t).__name__


def _fresh_copies(values):
    """Each traced branch starts from its own copies of mutable lists."""
    out = []
    for v in values:
        if type(v) is list:
            v = list(v)
        elif isinstance(v, _TensorList) and v.buffer is not None:
            v = _TensorList(v.buffer, v.elem, v.owner)
        out.append(v)
    return out


# -- lists accumulated in tensor loops ------------------------------------------------------

_STACKED = weakref.WeakValueDictionary()  # id -> Tensor: lists a tensor loop stacked


def _is_stacked(t):
    return isinstance(t, Tensor) and _STACKED.get(id(t)) is t


def _mark_stacked(t):
    _STACKED[id(t)] = t
    return t


class _Discovered(Exception):
    """Raised out of a first trace of a loop body: what the body showed about variables
    it defines (dtype, shape) that the loop needs before it can start. Not an error."""

    def __init__(self, owner, found):
        super().__init__("loop variable discovered")
        self.owner, self.found = owner, found


# The tensor loops being traced for the first time, innermost last: (token, {name: index})
# for their variables that are not defined before the loop.
_DISCOVERING = contextvars.ContextVar("tapeflow_autograph_discovering", default=())


def _discover_in_enclosing_loop(name, template, tensors):
    """A variable that a tensor `if` defines in one branch only, inside a tensor loop
    that is learning it (a `return` inside a loop): the defined branch tells the loop its
    dtype and shape; the loop then starts it from zeros, so both branches define it."""
    for token, undefined in reversed(_DISCOVERING.get()):
        if name in undefined:
            raise _Discovered(token, {undefined[name]: (
                "value", (template, [(t._shape, t.dtype) for t in tensors]))})


class _TensorList:
    """A Python list that a tensor loop appends to: a stacked buffer [n, *elem_shape]."""

    __slots__ = ("buffer", "elem", "owner")

    def __init__(self, buffer, elem, owner):
        self.buffer = buffer      # Tensor, or None while the element type is unknown
        self.elem = elem          # (shape, dtype) of one element
        self.owner = owner        # (loop token, variable index) that needs to learn elem

    def append(self, value):
        value = value.read_value() if isinstance(value, _Operators) and not isinstance(
            value, Tensor) else _as_tensor(value)
        if self.elem is None:
            token, index = self.owner
            raise _Discovered(token, {index: ("list", (value._shape, value.dtype))})
        shape, dtype = self.elem
        if value.dtype is not dtype or len(value._shape) != len(shape) or any(
                a is not None and b is not None and a != b
                for a, b in zip(value._shape, shape)):
            raise TypeError(
                f"cannot append a {value.dtype.name} tensor of shape {list(value._shape)} to "
                f"a list accumulated in a tensor loop whose elements are {dtype.name} of "
                f"shape {list(shape)}: all elements must have one dtype and shape")
        from ..ops.lists import list_push_back
        self.buffer = list_push_back(self.buffer, value)

    def stack(self):
        return self.buffer

    def pop(self, index=-1):
        raise TypeError("popping from a list that a tensor loop appends to is not "
                        "supported: read its rows (the_list[i]) or slice tf.stack(the_list) "
                        "instead")

    def __getitem__(self, index):
        if is_symbolic(index):
            from ..ops.indexing import gather
            return gather(self.buffer, index)
        return self.buffer[index]

    def __len__(self):
        raise TypeError("the length of a list built in a tensor loop is a tensor: use "
                        "tf.shape(tf.stack(the_list))[0]")

    def __iter__(self):
        raise TypeError("iterating over a list while a tensor loop builds it is not "
                        "supported; iterate over tf.stack(the_list) after the loop")

    def __repr__(self):
        return f"<list accumulated in a tensor loop: {self.buffer!r}>"


def _list_start(name, value, elem, loc):
    """(buffer, elem) for a list variable entering a tensor loop; buffer None while the
    element type is not known yet."""
    if isinstance(value, _TensorList):
        return value.buffer, value.elem
    if isinstance(value, Tensor):
        return value, (value._shape[1:], value.dtype)
    tensors = [_as_tensor(v) for v in value]
    if not tensors:
        if elem is None:
            return None, None
        shape, dtype = elem
        from ..ops.creation import zeros
        return zeros((0,) + tuple(0 if d is None else d for d in shape), dtype=dtype), elem
    first = tensors[0]
    for t in tensors[1:]:
        if t.dtype is not first.dtype or t._shape != first._shape:
            raise _error(TypeError, f"'{name}' is appended to in a tensor loop, so its "
                                    f"elements are stacked into one Tensor; they must have "
                                    f"one dtype and shape, got {first.dtype.name}"
                                    f"{list(first._shape)} and {t.dtype.name}"
                                    f"{list(t._shape)}", loc)
    return _shape_ops().stack(tensors), (first._shape, first.dtype)


# -- logical expressions --------------------------------------------------------------------

def not_(a):
    """`not a`; a symbolic Tensor gives tf.logical_not(a)."""
    if is_symbolic(a):
        return _elementwise().logical_not(a)
    return not a


def and_(a, b):
    """`a() and b()`, lazily; a symbolic `a` gives tf.logical_and(a, b())."""
    x = a()
    if is_symbolic(x):
        return _elementwise().logical_and(x, b())
    return b() if x else x


def or_(a, b):
    """`a() or b()`, lazily; a symbolic `a` gives tf.logical_or(a, b())."""
    x = a()
    if is_symbolic(x):
        return _elementwise().logical_or(x, b())
    return x if x else b()


_COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                ">": operator.gt, ">=": operator.ge, "is": operator.is_,
                "is not": operator.is_not, "in": lambda a, b: a in b,
                "not in": lambda a, b: a not in b}


def compare_chain(left, op, right, *later):
    """`left op right op2 c ...`, with `later` = ((op2, lambda: c), ...): as `left op
    right and right op2 c and ...` with `and_`, so tensor comparisons combine with
    tf.logical_and while Python values keep Python's short-circuit. Each operand is
    evaluated once, and only when the chain gets to it, as in Python."""
    result = _COMPARISONS[op](left, right)
    for next_op, operand in later:
        if not is_symbolic(result) and not result:
            return result
        left, right = right, operand()
        comparison = _COMPARISONS[next_op](left, right)
        # `result and comparison`, as and_ has it (result is true here, or a tensor)
        result = _elementwise().logical_and(result, comparison) if is_symbolic(result) \
            else comparison
    return result


def if_exp(cond, true_value, false_value, loc):
    """`true_value() if cond else false_value()`; a tf.cond on a symbolic condition."""
    cond = _condition(cond)
    if is_symbolic(cond):
        pred = _verify_condition(cond, "conditional expression", loc)
        return _control().cond(pred, true_value, false_value)
    return true_value() if cond else false_value()


# -- if ---------------------------------------------------------------------------------------

def if_stmt(cond, body, orelse, get_state, set_state, names, loc):
    """An `if` statement: Python's on Python values and eager Tensors, else a tf.cond
    whose outputs are the variables `names`."""
    cond = _condition(cond)
    if is_symbolic(cond):
        _tf_if(cond, body, orelse, get_state, set_state, names, loc)
    elif cond:
        body()
    else:
        orelse()


def _tf_if(cond, body, orelse, get_state, set_state, names, loc):
    pred = _verify_condition(cond, "if statement", loc)
    init = tuple(get_state())
    traced = {}

    def branch(fn, which):
        def run():
            set_state(_fresh_copies(init))
            fn()
            parts = [_split(v) for v in get_state()]
            traced[which] = parts
            if len(traced) == 2:
                _check_branches(names, traced["main"], traced["else"], loc)
            return _owned([t for _, tensors in parts for t in tensors])
        return run

    outputs = list(_control().cond(pred, branch(body, "main"), branch(orelse, "else")))
    values, pos = [], 0
    for template, tensors in traced["main"]:
        values.append(_join(template, outputs[pos:pos + len(tensors)]))
        pos += len(tensors)
    set_state(values)


def _check_branches(names, main, other, loc):
    """TensorFlow's checks of what the two branches of a tensor `if` hand on."""
    for name, (a, a_tensors), (b, b_tensors) in zip(names, main, other):
        for kind, message in ((UNDEFINED_RETURN,
                               "the {} branch must also have a return statement"),
                              (UNDEFINED, f"'{name}' must also be initialized in the {{}} branch")):
            missing = [br for br, t in (("main", a), ("else", b))
                       if isinstance(t, _Const) and t.value is kind]
            if len(missing) == 1:
                defined = (b, b_tensors) if missing[0] == "main" else (a, a_tensors)
                _discover_in_enclosing_loop(name, *defined)
                raise _error(ValueError, message.format(missing[0]), loc)
        difference = _first_difference(a, b)
        none_side = _none_where_other_has_tensors(difference)
        if none_side is not None:
            branch, other = ("main", "else") if none_side == "a" else ("else", "main")
            raise _error(ValueError, f"'{name}' is None at the end of the {branch} branch, "
                                     f"but holds tensors at the end of the {other} branch: "
                                     f"a tensor `if` needs tensors from both", loc)
        if difference is not None:
            raise _error(TypeError, f"'{name}' must have the same nested structure in the "
                                    f"main and else branches: {difference[2]}", loc)
        for x, y in zip(a_tensors, b_tensors):
            if not isinstance(x, Tensor) or not isinstance(y, Tensor):
                continue  # TensorArrays: tf.cond compares their tensors
            if x.dtype is not y.dtype:
                raise _error(TypeError, f"'{name}' has dtype {x.dtype.name} in the main "
                                        f"branch, but dtype {y.dtype.name} in the else branch",
                             loc)
            if len(x._shape) != len(y._shape):
                raise _error(TypeError, f"'{name}' has shape {tuple(x._shape)} in the main "
                                        f"branch, but shape {tuple(y._shape)} in the else "
                                        f"branch: the ranks must match", loc)


# -- while ------------------------------------------------------------------------------------

def while_stmt(test, body, get_state, set_state, names, head, lists, loc,
               test_assigns=False, extra_test=None):
    """A `while` loop: Python's on Python values and eager Tensors, else a tf.while_loop
    over the variables `names` (those in `head` must be defined before the loop; those
    in `lists` are lists the body appends to).

    `test_assigns`: the test assigns variables (a walrus, `while (n := n - 1) > 0`), so
    it must run exactly once per iteration, as in Python; `extra_test()` (false once a
    `break` or `return` ran) is then separate, and the test does not run after it."""
    if test_assigns:
        def next_condition():
            return _assigning_condition(test, extra_test, get_state, set_state, names, loc)
    else:
        def next_condition():
            return _condition(test())
    cond = next_condition()
    while True:
        if _graph_valued(cond):
            if test_assigns:
                _tf_loop_testing_in_body(cond, next_condition, body, get_state, set_state,
                                         names, head, lists, loc)
            else:
                _tf_loop(lambda extra: test(), lambda extra: (body(), ())[1], (),
                         get_state, set_state, names, head, lists, loc)
            return
        if not cond:
            return
        body()
        cond = next_condition()


def _assigning_condition(test, extra_test, get_state, set_state, names, loc):
    """The condition of a `while` whose test assigns variables. After a tensor `break`
    the test runs under a tf.cond, so where the loop stops, its assignments do not
    happen (Python does not evaluate the test after a break)."""
    go_on = True if extra_test is None else _condition(extra_test())
    if not is_symbolic(go_on):
        return _condition(test()) if go_on else go_on
    holder = [None]  # the condition, an output of the cond next to the variables

    def run_test():
        holder[0] = _verify_condition(_condition(test()), "while loop", loc)

    def stop():
        holder[0] = convert_to_tensor(False)

    def get_state_and_condition():
        return tuple(get_state()) + (holder[0],)

    def set_state_and_condition(values):
        set_state(values[:-1])
        holder[0] = values[-1]

    _tf_if(go_on, run_test, stop, get_state_and_condition, set_state_and_condition,
           tuple(names) + ("the loop condition",), loc)
    return holder[0]


def _tf_loop_testing_in_body(cond, next_condition, body, get_state, set_state, names,
                             head, lists, loc):
    """A tensor `while` whose test assigns variables, rotated: the condition is a loop
    variable, evaluated before the loop and at the end of each iteration (where its
    assignments are seen by the next iteration and after the loop), never twice."""
    def step(extra):
        body()
        return (_verify_condition(next_condition(), "while loop", loc),)

    _tf_loop(lambda extra: extra[0], step, (_verify_condition(cond, "while loop", loc),),
             get_state, set_state, names, head, lists, loc)


# -- for --------------------------------------------------------------------------------------

def for_stmt(iterable, extra_test, body, get_state, set_state, names, head, lists, loc):
    """A `for` loop. Over a symbolic Tensor it is a tf.while_loop over the leading axis
    (over a counter for tf.range); over anything else it is Python's loop, unrolled while
    tracing. `extra_test()` is false once a `break` or `return` ran."""
    if isinstance(iterable, _TensorList):
        iterable = iterable.buffer
    if _graph_valued(iterable):
        _tf_for(iterable, extra_test, body, get_state, set_state, names, head, lists, loc)
        return
    if _tracing() and hasattr(iterable, "_graph_iterator"):
        _tf_for_iterator(iterable._graph_iterator(), extra_test, body, get_state, set_state,
                         names, head, lists, loc)
        return
    items = iter(iterable)
    for item in items:
        body(item)
        if extra_test is None:
            continue
        go_on = extra_test()
        if is_symbolic(go_on):
            # A tensor-dependent break in a Python loop: the remaining iterations run
            # under tf.cond, so after the break they change nothing.
            for rest in items:
                _tf_if(go_on, functools.partial(body, rest), _nothing, get_state, set_state,
                       names, loc)
                go_on = extra_test()
            return
        if not go_on:
            return


def _nothing():
    pass


def _tf_for(iterable, extra_test, body, get_state, set_state, names, head, lists, loc):
    if not iterable._shape:
        raise _error(TypeError, "Cannot iterate over a scalar tensor.", loc)
    elementwise = _elementwise()
    bounds = _range_bounds(iterable)
    if bounds is not None:
        start, limit, delta = bounds
        if not is_symbolic(delta):
            step_up = float(delta._value) > 0
            more = (lambda i: elementwise.less(i, limit)) if step_up else (
                lambda i: elementwise.greater(i, limit))
        else:
            more = (lambda i: elementwise.where(elementwise.greater(delta, 0),
                                                elementwise.less(i, limit),
                                                elementwise.greater(i, limit)))

        def step(extra):
            body(extra[0])
            return (extra[0] + delta,)

        first = start
    else:
        # The length as a tensor even when the shape is static: the loop is one While
        # node however long the tensor is (and serves every length under relaxed shapes).
        n = _shape_ops().shape(iterable)[0]

        def more(i):
            return elementwise.less(i, n)

        def step(extra):
            from ..ops.indexing import gather
            body(gather(iterable, extra[0]))
            return (extra[0] + 1,)

        first = convert_to_tensor(0)

    def cond(extra):
        go_on = more(extra[0])
        if extra_test is not None:
            go_on = and_(lambda: go_on, extra_test)
        return go_on

    _tf_loop(cond, step, (first,), get_state, set_state, names, head, lists, loc)


def _tf_for_iterator(iterator, extra_test, body, get_state, set_state, names, head, lists,
                     loc):
    """A `for` over a tf.data.Dataset while tracing: a graph loop whose extra variables
    are whether there was a next element and that element, asked of the dataset's
    iterator before the loop and at the end of each step (data/iteration.py)."""
    spec = iterator.element_spec

    def with_next():
        has_value, element = iterator.get_next_as_optional()
        return (has_value,) + tuple(nest.flatten(element))

    def cond(extra):
        go_on = extra[0]
        if extra_test is not None:
            go_on = and_(lambda: go_on, extra_test)
        return go_on

    def step(extra):
        body(nest.pack_sequence_as(spec, list(extra[1:])))
        return with_next()

    _tf_loop(cond, step, with_next(), get_state, set_state, names, head, lists, loc)


def _range_bounds(t):
    """(start, limit, delta) when `t` is the output of a Range node (tf.range), or a
    constant integer progression (tf.range of constants, computed at trace time)."""
    graph = getattr(t, "graph", None)
    if graph is None:
        return _progression(t)
    for node in reversed(graph.nodes):
        if node.outputs and node.outputs[0] is t:
            if node.op is RANGE:
                return tuple(node.inputs)
            return None
    return None


def _progression(t):
    values = t._value
    if values.ndim != 1 or values.dtype.kind not in "iu" or len(values) < 2:
        return None
    start, delta = values[0], values[1] - values[0]
    if delta == 0 or not np.array_equal(values, start + delta * np.arange(len(values))):
        return None
    return tuple(convert_to_tensor(np.asarray(v, values.dtype))
                 for v in (start, start + delta * len(values), delta))


# -- the tensor loop ------------------------------------------------------------------------

class _Entry:
    """How one loop variable travels through the While node."""

    __slots__ = ("count", "elem", "kind", "template", "value")

    def __init__(self, kind, template=None, count=0, elem=None, value=None):
        self.kind = kind          # "value", "list", "list?", "same", "undefined"
        self.template = template  # "value": how to rebuild it from its tensors
        self.count = count        # number of tensors it contributes
        self.elem = elem          # "list": element (shape, dtype)
        self.value = value        # "same"/"undefined"/"list?": the value it keeps


def _tf_loop(cond_fn, step_fn, extra_init, get_state, set_state, names, head, lists, loc):
    """Runs the loop as one tf.while_loop. `cond_fn(extra)` and `step_fn(extra)` see the
    user's variables set from the loop variables; `extra` are the helper's own (a
    counter). Variables whose dtype only the body reveals are found by a first trace
    that stops early (`_Discovered`), after which the loop is traced again."""
    init = tuple(get_state())
    token = object()
    known = {}
    for _ in range(len(names) + 2):
        try:
            return _tf_loop_once(cond_fn, step_fn, extra_init, get_state, set_state, names,
                                 head, lists, loc, init, token, known)
        except _Discovered as found:
            if found.owner is not token:
                raise
            known.update(found.found)
    raise _error(RuntimeError, "AutoGraph could not determine the loop variables", loc)


def _zeros_like_aval(shape, dtype):
    from ..ops.creation import zeros
    return zeros(tuple(0 if d is None else d for d in shape), dtype=dtype)


def _tf_loop_once(cond_fn, step_fn, extra_init, get_state, set_state, names, head, lists,
                  loc, init, token, known):
    extra_init = [_as_tensor(x) for x in extra_init]
    flat_init = list(extra_init)
    entries = []
    for i, (name, value) in enumerate(zip(names, init)):
        # None before the loop is a value to come, as in TensorFlow: the body's first
        # trace shows its dtype and shape, and the loop starts it from zeros.
        if isinstance(value, _Undefined) or value is None:
            if i in known:
                template, avals = known[i][1]
                tensors = [_zeros_like_aval(s, d) for s, d in avals]
                entries.append(_Entry("value", template=template, count=len(tensors)))
                flat_init.extend(tensors)
            elif name in head and value is not None:
                raise _error(ValueError, f"'{name}' must be defined before the loop", loc)
            else:
                entries.append(_Entry("undefined", value=value))
        elif name in lists and (type(value) is list or isinstance(value, _TensorList)
                                or _is_stacked(value)):
            elem = known[i][1] if i in known else None
            buffer, elem = _list_start(name, value, elem, loc)
            if buffer is not None:
                entries.append(_Entry("list", elem=elem, value=value))
                flat_init.append(buffer)
            elif isinstance(value, _TensorList):
                entries.append(_Entry("same", value=value))  # an outer loop learns it
            else:
                entries.append(_Entry("list?", value=value))
        else:
            template, tensors = _split(value)
            entries.append(_Entry("value", template=template, count=len(tensors)))
            flat_init.extend(tensors)
    n_extra = len(extra_init)

    def unpack(flat):
        flat = list(flat)
        pos, values = n_extra, []
        for i, e in enumerate(entries):
            if e.kind == "value":
                values.append(_join(e.template, flat[pos:pos + e.count]))
                pos += e.count
            elif e.kind == "list":
                values.append(_TensorList(flat[pos], e.elem, None))
                pos += 1
            elif e.kind == "list?":
                values.append(_TensorList(None, None, (token, i)))
            else:
                values.append(e.value)
        return flat[:n_extra], values

    def loop_cond(*flat):
        extra, values = unpack(flat)
        set_state(values)
        return _verify_condition(_condition(cond_fn(extra)), "while loop", loc)

    def loop_body(*flat):
        extra, values = unpack(flat)
        before = values
        set_state(values)
        new_extra = step_fn(extra)
        after = tuple(get_state())
        out = [_as_tensor(x) for x in new_extra]
        found = {}
        for i, (e, name, old, new) in enumerate(zip(entries, names, before, after)):
            if e.kind == "value":
                template, tensors = _split(new)
                difference = _first_difference(e.template, template)
                none_side = _none_where_other_has_tensors(difference)
                if none_side == "b":
                    raise _error(ValueError, f"'{name}' is None at the end of the iteration, "
                                             f"where it held tensors before the loop", loc)
                if none_side == "a":
                    raise _error(ValueError, f"'{name}' holds None before the loop where it "
                                             f"holds tensors after one iteration: only a "
                                             f"variable that is None as a whole gets its "
                                             f"first tensor value in a tensor loop", loc)
                if difference is not None:
                    raise _error(TypeError, f"'{name}' must keep its nested structure in the "
                                            f"loop: {difference[2]} (before the loop vs. after "
                                            f"one iteration)", loc)
                for a, b in zip(_split(old)[1], tensors):
                    _check_loop_tensor(name, a, b, loc)
                out.extend(tensors)
            elif e.kind == "list":
                if not isinstance(new, _TensorList):
                    raise _error(TypeError, f"'{name}' is a list the loop appends to; it "
                                            f"cannot also be reassigned in the loop "
                                            f"(got {new!r})", loc)
                out.append(new.buffer)
            elif e.kind == "undefined" and not isinstance(new, _Undefined) \
                    and new is not e.value:  # a None that stays None stays a Python value
                template, tensors = _split(new)
                found[i] = ("value", (template, [(t._shape, t.dtype) for t in tensors]))
        if found:
            raise _Discovered(token, found)
        return _owned(out)

    undefined = {names[i]: i for i, e in enumerate(entries)
                 if e.kind == "undefined" and e.value is not None}
    reset = _DISCOVERING.set(_DISCOVERING.get() + ((token, undefined),)) if undefined else None
    try:
        final = _control().while_loop(loop_cond, loop_body, flat_init)
    finally:
        if reset is not None:
            _DISCOVERING.reset(reset)
    _, values = unpack(final)
    for i, e in enumerate(entries):
        if e.kind == "list":
            buffer = values[i].buffer
            values[i] = (_TensorList(buffer, e.elem, e.value.owner)
                         if isinstance(e.value, _TensorList) else _mark_stacked(buffer))
        elif e.kind == "list?":
            values[i] = e.value
    set_state(values)


def _check_loop_tensor(name, before, after, loc):
    if not isinstance(before, Tensor) or not isinstance(after, Tensor):
        return  # TensorArrays: tf.while_loop checks their tensors
    if before.dtype is not after.dtype:
        raise _error(TypeError, f"'{name}' has dtype {before.dtype.name} before the loop, but "
                                f"dtype {after.dtype.name} after one iteration", loc)
    if len(before._shape) != len(after._shape):
        raise _error(ValueError, f"'{name}' has shape {tuple(before._shape)} before the loop, "
                                 f"but shape {tuple(after._shape)} after one iteration: a "
                                 f"loop variable keeps its rank", loc)


# -- calls ------------------------------------------------------------------------------------

_autograph = None


def _convert(fn):
    global _autograph
    if _autograph is None:
        from . import autograph as _autograph_module
        _autograph = _autograph_module
    return _autograph.convert(fn, _strict=False)


def converted_call(f, args, kwargs):
    """`f(*args, **kwargs)`, with `f` converted first when it is the user's function."""
    if kwargs is None:
        kwargs = {}
    override = _OVERRIDES.get(id(f))
    if override is not None and override[0] is f:
        return override[1](*args, **kwargs)
    if isinstance(f, (types.FunctionType, types.MethodType)):
        return _convert(f)(*args, **kwargs)
    if isinstance(f, functools.partial):
        return converted_call(f.func, tuple(f.args) + tuple(args), {**f.keywords, **kwargs})
    if not isinstance(f, type):
        call = getattr(f, "__call__", None)  # noqa: B004 (a callable object's bound __call__)
        if isinstance(call, (types.FunctionType, types.MethodType)):
            return _convert(call)(*args, **kwargs)
    return f(*args, **kwargs)


def _range(*args):
    if any(is_symbolic(a) for a in args):
        from ..ops.creation import range as tf_range
        return tf_range(*args)
    return builtins.range(*args)


def _len(obj):
    if isinstance(obj, _TensorList):
        return _shape_ops().shape(obj.buffer)[0]
    if is_symbolic(obj):
        if not obj._shape:
            raise TypeError("len() of a scalar tensor")
        if obj._shape[0] is None:
            return _shape_ops().shape(obj)[0]
    return builtins.len(obj)


def _int(x=0, *args, **kwargs):
    if is_symbolic(x) and not args and not kwargs:
        from .. import dtypes
        return _elementwise().cast(x, dtypes.int32)
    return builtins.int(x, *args, **kwargs)


def _float(x=0.0):
    if is_symbolic(x):
        from .. import dtypes
        return _elementwise().cast(x, dtypes.float32)
    return builtins.float(x)


def _stacked_value(values):
    if isinstance(values, _TensorList):
        return values.buffer
    if _is_stacked(values):
        return values
    return None


def _stack(values, axis=0, name="stack"):
    stacked = _stacked_value(values)
    if stacked is None:
        return _shape_ops().stack(values, axis=axis, name=name)
    rank = len(stacked._shape)
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return stacked
    perm = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, rank))
    return _shape_ops().transpose(stacked, perm)


def _concat(values, axis, name="concat"):
    stacked = _stacked_value(values)
    if stacked is None:
        return _shape_ops().concat(values, axis, name=name)
    element = tuple(stacked._shape[1:])
    if not element:
        raise ValueError("ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    axis = axis + len(element) if axis < 0 else axis
    target = element[:axis] + (-1,) + element[axis + 1:]
    if None in target:
        raise ValueError(f"tf.concat of a list built in a tensor loop needs the other "
                         f"dimensions of its elements known, got {list(element)}")
    return _shape_ops().reshape(_stack(values, axis=axis), target)


def _convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    stacked = _stacked_value(value)
    if stacked is not None and dtype is None:
        return stacked
    return convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint, name=name)


def _overrides():
    from .. import tensor
    shape_ops = _shape_ops()
    table = {builtins.range: _range, builtins.len: _len, builtins.int: _int,
             builtins.float: _float, shape_ops.stack: _stack, shape_ops.concat: _concat,
             tensor.convert_to_tensor: _convert_to_tensor}
    return {id(f): (f, handler) for f, handler in table.items()}


# -- lazy module access (ops import tensor, which this module also imports) --------------

def _control():
    from ..ops import control
    return control


def _elementwise():
    from ..ops import elementwise
    return elementwise


def _shape_ops():
    return importlib.import_module("tapeflow.ops.shape")  # `ops.shape` is also a function


_OVERRIDES = _overrides()
