"""AutoGraph: converted functions behave exactly like the originals on Python values and
eager Tensors, and build If/While nodes (with TensorFlow's errors) on symbolic Tensors."""

import functools
import inspect

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.config import settings
from tapeflow.graph import autograph
from tapeflow.graph.autograph import UnsupportedLanguageElementError

HERE = __file__


@pytest.fixture(autouse=True)
def interpreted():
    """These tests are about tracing: run graphs with the NumPy interpreter, no compiles."""
    old = settings.compile_mode
    settings.compile_mode = "off"
    yield
    settings.compile_mode = old


def _value(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_value(v) for v in x)
    return x.numpy() if hasattr(x, "numpy") else x


def same(a, b):
    a, b = _value(a), _value(b)
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
        return
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               rtol=1e-6)


def line_of(fn, text):
    """The file line number of the first line of `fn`'s source containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return first + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def graph_of(fn, *args):
    return tf.function(fn).get_concrete_function(*args).graph


def node_ops(graph):
    """Every op name in a graph and in its sub-graphs."""
    return [node.op.name for node in graph.all_nodes()]


# == functions used by several tests ===================================================

def if_elif_else(x):
    if x > 2:
        y = x * 2
    elif x > 0:
        y = x + 10
    else:
        y = -x
    return y


def while_count(n):
    i = 0
    total = 0
    while i < n:
        total = total + i
        i = i + 1
    return total


def for_range_with_continue_and_break(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        if total > 20:
            break
        total += i
    return total


def for_else(xs, target):
    for x in xs:
        if x == target:
            found = 1
            break
    else:
        found = 0
    return found


def while_else(n):
    i = 0
    while i < n:
        i += 1
        if i == 7:
            break
    else:
        i = -i
    return i


def early_return(x):
    if x > 5:
        return x * 2
    if x < -5:
        return -x
    return x + 100


def return_in_loop(xs, limit):
    for x in xs:
        if x > limit:
            return x
    return -1


def nested_loops(n, m):
    total = 0
    for i in range(n):
        j = 0
        while j < m:
            if j == i:
                break
            total += i * 10 + j
            j += 1
    return total


def list_append(n):
    out = []
    for i in range(n):
        if i % 2:
            out.append(i * i)
    return out


def logic(a, b):
    if (a > 0 and b > 0) or not a < -3:
        return 1
    return 0


def conditional_expression(x):
    return x * 2 if x > 0 else x - 1


def tuple_state(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a, b


EAGER_CASES = [
    (if_elif_else, [(3,), (1,), (-4,), (0.5,)]),
    (while_count, [(0,), (5,), (10,)]),
    (for_range_with_continue_and_break, [(0,), (5,), (20,)]),
    (for_else, [([1, 2, 3], 2), ([1, 2, 3], 7), ([], 1)]),
    (while_else, [(3,), (9,)]),
    (early_return, [(6,), (-6,), (0,)]),
    (return_in_loop, [([1, 5, 9], 4), ([1, 2], 4)]),
    (nested_loops, [(3, 4), (0, 2), (4, 1)]),
    (list_append, [(0,), (7,)]),
    (logic, [(1, 1), (-1, 1), (-5, 1), (1, -1)]),
    (conditional_expression, [(3,), (-3,)]),
    (tuple_state, [(0,), (10,)]),
]


def _eager_tensor(v):
    if isinstance(v, list):
        return tf.constant(v, dtype=tf.int32) if v else v
    return tf.constant(v)


# == eagerly, a converted function is the original =====================================

@pytest.mark.parametrize("fn,calls", EAGER_CASES, ids=[f.__name__ for f, _ in EAGER_CASES])
def test_converted_matches_original_on_python_values(fn, calls):
    converted = autograph.convert(fn)
    assert converted is not fn
    for args in calls:
        assert converted(*args) == fn(*args), args


@pytest.mark.parametrize("fn,calls", EAGER_CASES, ids=[f.__name__ for f, _ in EAGER_CASES])
def test_converted_matches_original_on_eager_tensors(fn, calls):
    converted = autograph.convert(fn)
    for args in calls:
        args = [_eager_tensor(a) for a in args]
        same(converted(*args), fn(*args))


def test_python_loop_over_eager_tensor_and_list_of_tensors():
    def f(xs):
        total = tf.constant(0.0)
        for x in xs:
            if x > 1.5:
                total = total + x
        return total

    converted = autograph.convert(f)
    t = tf.constant([1.0, 2.0, 3.0])
    same(converted(t), f(t))
    same(converted([tf.constant(2.0), tf.constant(1.0)]), 2.0)


def test_side_effects_run_in_the_original_order():
    log = []

    def f(n):
        i = 0
        while log.append(("test", i)) or i < n:
            if i % 2 == 0:
                log.append(("even", i))
            i += 1
        log.append(("end", i))

    f(3)
    expected, log[:] = list(log), []
    autograph.convert(f)(3)
    assert log == expected


def test_break_does_not_consume_an_extra_item():
    def f(it):
        for x in it:
            if x == 2:
                break
        return next(it)

    assert autograph.convert(f)(iter([1, 2, 3, 4])) == f(iter([1, 2, 3, 4])) == 3


def test_short_circuit_is_preserved():
    calls = []

    def right():
        calls.append(1)
        return True

    def f(a):
        return a and right(), a or right(), not a

    assert autograph.convert(f)(0) == f(0)
    assert autograph.convert(f)(1) == f(1)
    assert len(calls) == 4


def test_unbound_variable_still_raises():
    def f(c):
        if c:
            y = 1
        return y

    converted = autograph.convert(f)
    assert converted(True) == 1
    with pytest.raises(NameError):
        converted(False)


def test_try_with_and_del_inside_loops():
    class Ctx:
        entered = 0

        def __enter__(self):
            Ctx.entered += 1

        def __exit__(self, *exc):
            return False

    def f(xs):
        total = 0
        for x in xs:
            with Ctx():
                try:
                    total += 10 // x
                except ZeroDivisionError:
                    continue
                finally:
                    total += 1
            tmp = x
            del tmp
        return total

    assert autograph.convert(f)([1, 0, 2]) == f([1, 0, 2])


def test_global_and_nonlocal_assignments():
    def outer():
        count = 0

        def bump(n):
            nonlocal count
            for _ in range(n):
                if count < 100:
                    count += 1
            return count

        return bump, lambda: count

    bump, read = outer()
    converted = autograph.convert(bump)
    assert converted(3) == 3 and read() == 3
    assert bump(2) == 5 and converted(1) == 6 and read() == 6

    global _GLOBAL_COUNTER
    _GLOBAL_COUNTER = 0
    autograph.convert(_bump_global)(4)
    assert _GLOBAL_COUNTER == 4


_GLOBAL_COUNTER = 0


def _bump_global(n):
    global _GLOBAL_COUNTER
    for _ in range(n):
        if n > 0:
            _GLOBAL_COUNTER += 1


# == the function object: closures, defaults, methods, decorators ==========================

def test_closures_defaults_and_attributes():
    evaluated = []

    def make(k):
        def default():
            evaluated.append(1)
            return 5

        def f(x, y=default(), *, z=2):  # noqa: B008 (evaluated once, at def time)
            """Docstring."""
            if x > 0:
                return x * k + y + z
            return k

        f.custom = "kept"
        return f

    f = make(10)
    assert evaluated == [1]
    converted = autograph.convert(f)
    assert evaluated == [1]  # defaults are the original's, not re-evaluated
    assert converted(1) == f(1) == 17 and converted(1, 0, z=0) == 10 and converted(-1) == 10
    assert converted.__name__ == "f" and converted.__doc__ == "Docstring."
    assert converted.custom == "kept" and converted.__defaults__ == f.__defaults__
    assert autograph.convert(make(3))(1) == 10  # same code, new closure


def test_conversion_is_cached_per_function_object():
    assert autograph.convert(if_elif_else) is autograph.convert(if_elif_else)
    assert autograph.is_converted(autograph.convert(if_elif_else))
    assert not autograph.is_converted(if_elif_else)


class Model:
    def __init__(self, scale):
        self.scale = scale
        self.__private = 3

    def __call__(self, x):
        if x > 0:
            return x * self.scale + self.__private
        return x


class Child(Model):
    def __call__(self, x):
        total = 0
        for i in range(2):
            total = total + super().__call__(x + i)
        return total


def test_methods_super_and_private_names():
    m = Child(2)
    converted = autograph.convert(m.__call__)
    assert converted.__self__ is m
    assert converted(1) == m(1) == (1 * 2 + 3) + (2 * 2 + 3)
    assert converted(-5) == m(-5)


def counting_decorator(fn):
    counting_decorator.calls += 1
    return fn


counting_decorator.calls = 0


@tf.function
@counting_decorator
def decorated(x):
    if x > 0:
        return x
    return -x


def test_decorators_are_not_reapplied():
    before = counting_decorator.calls
    converted = autograph.convert(decorated.python_function)
    assert converted(-3) == 3
    assert counting_decorator.calls == before
    same(decorated(tf.constant(-3.0)), 3.0)


def test_builtins_and_tapeflow_functions_are_left_alone():
    assert autograph.convert(len) is len
    assert autograph.convert(tf.reduce_sum) is tf.reduce_sum
    assert autograph.convert(np.sum) is np.sum

    @autograph.do_not_convert
    def plain(x):
        return x

    assert autograph.convert(plain) is plain


def test_source_is_unavailable_runs_as_is():
    namespace = {}
    exec("def made(x):\n    return x + 1\n", namespace)  # noqa: S102
    with pytest.warns(autograph.AutoGraphWarning, match="could not transform"):
        assert autograph.convert(namespace["made"]) is namespace["made"]


def test_to_source_shows_the_runtime_calls():
    text = autograph.to_source(for_range_with_continue_and_break)
    assert "ag__.for_stmt" in text and "ag__.if_stmt" in text and "continue_" in text
    assert "break_" in text


def test_line_numbers_are_the_users():
    def f(x):
        y = x + 1
        if y > 0:
            raise RuntimeError("boom")
        return y

    converted = autograph.convert(f)
    assert converted.__code__.co_filename == HERE
    with pytest.raises(RuntimeError) as info:
        converted(1)
    frames = [(e.filename, e.lineno) for e in __import__("traceback").extract_tb(
        info.value.__traceback__)]
    assert (HERE, line_of(f, 'raise RuntimeError("boom")')) in frames


# == calls: user functions are converted when called from converted code ==================

def helper_with_tensor_if(x):
    if x > 0:
        x = x * 3.0
    return x


def test_callees_are_converted_recursively():
    def f(x):
        return helper_with_tensor_if(x) + 1.0

    graph = graph_of(f, tf.constant(1.0))
    assert "If" in node_ops(graph)
    fn = tf.function(f)
    same(fn(tf.constant(2.0)), 7.0)
    same(fn(tf.constant(-2.0)), -1.0)


def test_nested_functions_partials_and_callable_objects():
    class Doubler:
        def __call__(self, x):
            if x > 0:
                return x * 2.0
            return x

    def f(x):
        def inner(v, bias):
            if v < 0:
                v = -v
            return v + bias

        g = functools.partial(inner, bias=1.0)
        return Doubler()(g(x))

    fn = tf.function(f)
    for v in (-3.0, 3.0):
        same(fn(tf.constant(v)), f(v))
    assert node_ops(graph_of(f, tf.constant(1.0))).count("If") == 2


def _loop_twice(x, n):
    for _ in tf.range(n):
        x = x * 2.0
    return x


class _Model:
    def __call__(self, x, n):
        return _loop_twice(x, n)


def test_lambdas_and_callable_objects_are_converted():
    # As in TensorFlow: tf.function(lambda ...) and tf.function(obj) convert what they
    # call, and a conditional expression in a lambda is a tf.cond.
    by_lambda = tf.function(lambda x, n: _loop_twice(x, n))
    absolute = tf.function(lambda x: x * 2.0 if x > 0 else -x)  # noqa: E731
    pair = lambda x: x, lambda x: -x  # noqa: E731 (two lambdas on a line: each its own)

    @tf.function
    def mapped(x):
        return tf.nest.map_structure(lambda v: v * 2.0 if v > 0 else -v, [x, -x])

    same(by_lambda(tf.constant(1.0), tf.constant(3)), 8.0)
    same(tf.function(_Model())(tf.constant(1.0), tf.constant(3)), 8.0)
    same(absolute(tf.constant(-2.0)), 2.0)
    same(absolute(tf.constant(3.0)), 6.0)
    assert absolute.experimental_get_tracing_count() == 1
    same(mapped(tf.constant(1.0)), [2.0, 1.0])
    same([tf.function(p)(tf.constant(1.0)) for p in pair], [1.0, -1.0])
    assert autograph.is_converted(autograph.convert(pair[1]))


def test_a_lambda_closing_over_a_local_is_converted():
    # tf.function(lambda x: model(x, training)) inside a function: the lambda reads
    # `factor` and `steps` from its enclosing scope, and what it calls loops on a tensor.
    def make(factor, steps):
        return tf.function(lambda x: _loop_twice(x * factor, tf.constant(steps)))

    same(make(2.0, 3)(tf.constant(1.0)), 16.0)
    nested = [lambda y: y + offset for offset in (1.0, 2.0)]
    assert autograph.is_converted(autograph.convert(nested[1]))
    same(tf.function(nested[1])(tf.constant(1.0)), 3.0)


@tf.function
def _halvings(x, n):
    if n > 0:
        return _halvings(x * 0.5, n - 1)     # recursion on a Python int unrolls
    return x


def test_recursive_function_converts():
    same(_halvings(tf.constant(8.0), 3), 1.0)
    assert autograph.convert(_halvings.python_function).__name__ == "_halvings"


def test_range_and_len_of_symbolic_tensors():
    def f(n, xs):
        total = tf.constant(0)
        for i in range(n):
            total += i
        return total, len(xs)

    fn = tf.function(f)
    out = fn(tf.constant(5), tf.constant([1.0, 2.0]))
    same(out, (10, 2))
    assert "While" in node_ops(graph_of(f, tf.constant(5), tf.constant([1.0])))


# == symbolic conditions: If and While nodes ==============================================

def traced_agrees(fn, *value_sets):
    """tf.function(fn) on tensors gives what fn gives eagerly, with one trace."""
    compiled = tf.function(fn)
    for values in value_sets:
        args = [tf.constant(v) for v in values]
        same(compiled(*args), fn(*args))
    assert compiled.experimental_get_tracing_count() == 1
    return compiled


def test_symbolic_if_elif_else():
    traced_agrees(if_elif_else, (3.0,), (1.0,), (-4.0,))
    graph = graph_of(if_elif_else, tf.constant(1.0))
    assert node_ops(graph).count("If") == 2
    if_node = next(n for n in graph.nodes if n.op.name == "If")
    assert if_node.source == (HERE, line_of(if_elif_else, "if x > 2"))
    mul = next(n for n in if_node.attrs["then"].nodes if n.op.name == "Mul")
    assert mul.source == (HERE, line_of(if_elif_else, "y = x * 2"))


def test_symbolic_while_and_for_range():
    traced_agrees(while_count, (0,), (5,), (10,))

    def f(n):
        total = 0
        for i in tf.range(n):
            total += i
        return total

    traced_agrees(f, (0,), (4,), (7,))
    graph = graph_of(f, tf.constant(3))
    while_node = next(n for n in graph.nodes if n.op.name == "While")
    assert while_node.source == (HERE, line_of(f, "for i in tf.range(n)"))
    # the counter runs from range's own arguments: the body does not read the range
    body_ops = node_ops(while_node.attrs["body"])
    assert "GatherV2" not in body_ops


def test_loops_over_tensors_made_from_constants_are_one_while_node():
    # As in TensorFlow, where every tensor inside tf.function is a graph tensor: tf.range
    # of a Python int, a constant counter, or a constant tensor give a While node, not
    # copies of the body (a 5000-step loop traced 5000 bodies).
    def over_range(x):
        for i in tf.range(300):
            x = x + tf.cast(i, tf.float32)
        return x

    def counter(x):
        i = tf.constant(0)
        while i < 3:
            x = x * 2.0
            i += 1
        return x

    def over_constant(x):
        seen = []
        for v in tf.constant([1.0, 2.0, 4.0]):
            x = x + v
            seen.append(x)
        return seen                     # a list appended in a graph loop: a stacked Tensor

    def early_return(x):
        for _ in tf.range(10):
            x = x * 1.5
            if tf.reduce_sum(x) > 20.0:
                return x * x
        return x

    for fn, x in ((over_range, 0.0), (counter, 1.0), (over_constant, 0.0),
                  (early_return, [1.0, 2.0])):
        graph = graph_of(fn, tf.constant(x))
        assert node_ops(graph).count("While") == 1, fn.__name__
        assert len(graph.nodes) < 10, fn.__name__
    same(tf.function(over_range)(tf.constant(0.0)), 44850.0)
    same(tf.function(counter)(tf.constant(1.0)), 8.0)
    same(tf.function(over_constant)(tf.constant(0.0)), [1.0, 3.0, 7.0])
    same(tf.function(early_return)(tf.constant([1.0, 2.0])), early_return(tf.constant(
        [1.0, 2.0])))


def test_tf_while_loop_on_constants_in_a_function_is_one_node():
    def power(x):
        _, y = tf.while_loop(lambda i, y: i < 200, lambda i, y: (i + 1, y * x),
                             [tf.constant(0), tf.constant(1.0)])
        return y

    def retyped():
        return tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32) + 1.0,
                             [tf.constant(0)])

    assert node_ops(graph_of(power, tf.constant(1.0))).count("Mul") == 1
    same(tf.function(power)(tf.constant(1.01)), power(tf.constant(1.01)))
    with pytest.raises(TypeError, match="dtype from int32 to float32"):
        tf.function(retyped)()


def test_symbolic_for_over_tensor():
    def f(xs):
        total = tf.constant(0.0)
        biggest = xs[0]
        for x in xs:
            total += x
            if x > biggest:  # noqa: PLR1730 (a tensor `if` is the point)
                biggest = x
        return total, biggest

    traced_agrees(f, ([1.0, 5.0, 2.0],), ([3.0, 1.0, 0.0],))
    assert "While" in node_ops(graph_of(f, tf.constant([1.0, 2.0])))


def test_loops_over_inputs_of_unknown_length():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(xs):
        total = 0.0
        for x in xs:
            if x > 1.0:
                total += x
        count = 0
        for _ in range(len(xs)):  # len() is tf.shape(xs)[0], range() is tf.range
            count += 1
        return total, count

    same(f(tf.constant([1.0, 2.0, 3.0])), (5.0, 3))
    same(f(tf.constant([5.0])), (5.0, 1))
    assert f.experimental_get_tracing_count() == 1


def test_symbolic_break_continue():
    def f(n):
        total = 0
        i = 0
        while i < n:
            i += 1
            if i % 3 == 0:
                continue
            if total > 12:
                break
            total += i
        return total, i

    traced_agrees(f, (0,), (5,), (30,))


def test_symbolic_break_inside_python_loop():
    def f(x):
        total = 0.0
        for i in range(5):
            if x * i > 6.0:
                break
            total += x
        return total

    traced_agrees(f, (1.0,), (2.0,), (10.0,))


def test_symbolic_early_return():
    traced_agrees(early_return, (6,), (-6,), (0,))

    def find(xs, limit):
        for x in xs:
            if x > limit:
                return x * 10.0
        return -1.0

    traced_agrees(find, ([1.0, 5.0, 9.0], 4.0), ([1.0, 2.0, 3.0], 4.0))


def test_symbolic_nested_loops_and_logic():
    def f(n, m):
        total = 0
        for i in tf.range(n):
            j = 0
            while j < m and not j > i:
                total += i * 10 + j
                j += 1
        return total

    traced_agrees(f, (3, 4), (0, 2), (4, 1))
    traced_agrees(logic, (1, 1), (-1, 1), (-5, 1), (1, -1))
    traced_agrees(conditional_expression, (3.0,), (-3.0,))


def test_python_loop_that_turns_into_a_tensor_loop():
    def f(x):
        i = 0
        while i < 3:  # a Python bool at first; after one iteration a tensor
            i = i + x
        return i

    traced_agrees(f, (1,), (2,), (5,))
    assert "While" in node_ops(graph_of(f, tf.constant(1)))


def test_variable_as_condition_is_read_at_run_time():
    flag = tf.Variable(True)

    def f(x):
        if flag:
            x = x + 1.0
        return x

    compiled = tf.function(f)
    same(compiled(tf.constant(1.0)), 2.0)
    flag.assign(False)
    same(compiled(tf.constant(1.0)), 1.0)
    assert compiled.experimental_get_tracing_count() == 1


class _Counter:
    def __init__(self):
        self.steps = tf.constant(0)

    def run(self, n):
        for _ in tf.range(n):
            self.steps = self.steps + 1
        return self.steps


def test_attributes_and_items_assigned_in_tensor_control_flow_are_carried():
    # TensorFlow's composite loop variables: self.steps, d["a"] and rows[0] leave a tensor
    # loop or `if` with their final values (they were lost, or leaked out of the body).
    def items(x, n):
        d, rows = {"a": x}, [x]
        for _ in tf.range(n):
            d["a"] = d["a"] * 2.0
            rows[0] += 1.0
        if x > 0:
            d["a"] = d["a"] + 0.5
        return d["a"], rows[0]

    def count(n):
        return _Counter().run(n)

    traced_agrees(count, (0,), (4,))
    traced_agrees(items, (1.0, 3), (-1.0, 2))
    same(tf.function(items)(tf.constant(1.0), tf.constant(3)), (8.5, 4.0))


def test_variable_first_assigned_in_the_loop_is_found():
    def f(xs):
        for x in xs:
            last = x * 2.0
        return last

    traced_agrees(f, ([1.0, 4.0],), ([3.0, -1.0],))


def test_python_values_become_tensors_in_tensor_control_flow():
    def f(x):
        flag = False
        count = 0
        if x > 0:
            flag = True
            count = 1
        return flag, count

    fn = tf.function(f)
    flag, count = fn(tf.constant(2.0))
    assert flag.dtype == tf.bool and count.dtype == tf.int32
    assert bool(flag.numpy()) and int(count.numpy()) == 1


def test_lists_in_tensor_if_are_merged_elementwise():
    def f(x):
        out = [x]
        if x > 0:
            out.append(x * 2.0)
        else:
            out.append(x - 1.0)
        return out

    traced_agrees(f, (3.0,), (-3.0,))


def test_gradients_flow_through_converted_control_flow():
    def f(x):
        y = x
        for i in tf.range(3):
            if y > 1.0:
                y = y * x
            else:
                y = y + x
        return y

    fn = tf.function(f)
    for value in (0.5, 2.0):
        x = tf.constant(value)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        with tf.GradientTape() as eager_tape:
            eager_tape.watch(x)
            y_eager = f(x)
        same(y, y_eager)
        same(tape.gradient(y, x), eager_tape.gradient(y_eager, x))


# == lists appended to in tensor loops ===================================================

def appends_in_tensor_loop(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x * 2.0)
    return tf.stack(out)


def test_list_append_in_tensor_loop_builds_a_buffer():
    graph = graph_of(appends_in_tensor_loop, tf.constant([1.0, -2.0, 3.0]))
    while_node = next(n for n in graph.nodes if n.op.name == "While")
    assert "TensorListPushBack" in node_ops(while_node.attrs["body"])
    (out,) = graph.outputs
    assert out.dtype == tf.float32 and out._shape == (None,)


def test_list_append_in_tensor_loop_runs():
    fn = tf.function(appends_in_tensor_loop)
    same(fn(tf.constant([1.0, -2.0, 3.0])), [2.0, 6.0])


def test_list_append_in_python_loop_is_unrolled():
    def f(x):
        out = []
        for i in range(3):
            out.append(x * i)
        return tf.stack(out)

    graph = graph_of(f, tf.constant(2.0))
    assert "While" not in node_ops(graph) and "TensorListPushBack" not in node_ops(graph)
    same(tf.function(f)(tf.constant(2.0)), [0.0, 2.0, 4.0])


# == errors name the user's line ==========================================================

def _raises(error, pattern, fn, *args, line_text=None):
    with pytest.raises(error, match=pattern) as info:
        tf.function(fn)(*args)
    if line_text is not None:
        where = f"{HERE}:{line_of(fn, line_text)}"
        assert where in str(info.value), str(info.value)
    return info


def test_error_variable_defined_in_one_branch():
    def f(x):
        if x > 0:
            y = x
        return y

    _raises(ValueError, "'y' must also be initialized in the else branch", f, tf.constant(1.0),
            line_text="if x > 0")


def test_error_return_in_one_branch_only():
    def f(x):
        if x > 0:
            return x

    _raises(ValueError, "the else branch must also have a return statement", f,
            tf.constant(1.0), line_text="if x > 0")


def test_error_branches_disagree():
    def structure(x):
        if x > 0:
            y = (x, x)
        else:
            y = x
        return y

    def dtype(x):
        if x > 0:
            y = 1
        else:
            y = 1.0
        return y

    def python_value(x):
        if x > 0:
            mode = "up"
        else:
            mode = "down"
        return mode

    _raises(TypeError, "'y' must have the same nested structure", structure, tf.constant(1.0),
            line_text="if x > 0")
    _raises(TypeError, "'y' has dtype int32 in the main branch, but dtype float32", dtype,
            tf.constant(1.0), line_text="if x > 0")
    _raises(TypeError, "'mode' must have the same nested structure.*'up'", python_value,
            tf.constant(1.0))


def test_error_loop_variable_changes_dtype():
    def f(n):
        s = 0
        for i in tf.range(n):
            s = tf.cast(s, tf.float32) + 1.5
        return s

    _raises(TypeError, "'s' has dtype int32 before the loop, but dtype float32 after one "
                       "iteration", f, tf.constant(3), line_text="for i in tf.range(n)")


def test_error_loop_variable_used_before_definition():
    def f(n):
        i = 0
        while i < n:
            acc = acc + 1  # noqa: F821 (the error under test)
            i += 1
        return acc

    _raises(ValueError, "'acc' must be defined before the loop", f, tf.constant(3),
            line_text="while i < n")


def test_error_condition_must_be_a_bool_scalar():
    def f(x):
        if x:
            x = x + 1.0
        return x

    _raises(ValueError, "expected to be `tf.bool` scalar", f, tf.constant(1.0),
            line_text="if x:")


def test_error_list_elements_disagree_in_tensor_loop():
    def f(xs):
        out = []
        for x in xs:
            out.append(x)
            out.append(tf.stack([x, x]))
        return tf.stack(out)

    with pytest.raises(TypeError, match="cannot append a float32 tensor of shape \\[2\\]"):
        tf.function(f)(tf.constant([1.0, 2.0]))



def test_error_list_methods_after_or_inside_the_loop_that_stacks_it():
    def after(x, n):
        out = []
        for i in tf.range(n):
            out.append(x * tf.cast(i, tf.float32))
        out.append(x)
        return tf.stack(out)

    def pop(x, n):
        out = []
        for i in tf.range(n):
            out.append(x)
            out.pop()
        return tf.stack(out)

    x, n = tf.constant([1.0, 2.0]), tf.constant(3)
    with pytest.raises(AttributeError, match=r"no \.append\(\) \(at .*out\.append\(x\)\)"
                                             r".*stacked into one Tensor"):
        tf.function(after)(x, n)
    with pytest.raises(TypeError, match="popping from a list that a tensor loop appends to"):
        tf.function(pop)(x, n)

def test_error_generators_cannot_be_converted():
    def gen(x):
        for i in range(3):
            yield x * i

    with pytest.raises(UnsupportedLanguageElementError, match="'yield' is not supported") as e:
        autograph.convert(gen)
    assert f"{HERE}:{line_of(gen, 'yield x * i')}" in str(e.value)
    with pytest.raises(UnsupportedLanguageElementError):
        tf.function(gen)(tf.constant(1.0))

    def uses_generator(x):
        return sum(gen(x))  # a generator called from converted code runs as-is

    same(autograph.convert(uses_generator)(2), uses_generator(2))


# == less common syntax ==================================================================

def test_annotations_walrus_and_match():
    def f(xs, cmd):
        total: float = 0.0
        for x in xs:
            if (y := x * 2) > 3:
                kept: int = 1
                total += y + kept
        match cmd:
            case "neg":
                if total > 0:
                    total = -total
            case _:
                pass
        return total, y

    converted = autograph.convert(f)
    for cmd in ("neg", "keep"):
        assert converted([1, 2, 3], cmd) == f([1, 2, 3], cmd)
    same(tf.function(f)(tf.constant([1.0, 2.0, 3.0]), "neg"), f([1.0, 2.0, 3.0], "neg"))


def test_callable_objects_and_partials_given_to_tf_function():
    class Scaled:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            if x > 0:
                return x * self.k
            return x

    class Static:
        @staticmethod
        def __call__(x):
            if x > 0:
                return x + 1.0
            return x

    def f(x):
        return Scaled(3.0)(x) + Static()(x)

    compiled = tf.function(f)
    same(compiled(tf.constant(2.0)), 9.0)
    assert node_ops(graph_of(f, tf.constant(1.0))).count("If") == 2

    def g(x, n):
        for _ in tf.range(n):
            x = x * 2.0
        return x

    same(tf.function(functools.partial(g, n=tf.constant(3)))(tf.constant(1.0)), 8.0)


def test_a_construct_the_rewrite_cannot_handle_runs_as_is(monkeypatch):
    def f(x):
        if x > 0:
            return x
        return -x

    def broken(*args, **kwargs):
        raise RuntimeError("rewrite failed")

    monkeypatch.setattr(autograph._FunctionConverter, "convert", broken)
    with pytest.warns(autograph.AutoGraphWarning, match="please report"):
        assert autograph.convert(f) is f
    assert f(-2) == 2


@pytest.mark.parametrize("compiled", ["off", "sync"])
def test_variables_assigned_in_tensor_branches_and_loops(compiled, monkeypatch):
    from tapeflow.config import settings
    monkeypatch.setattr(settings, "compile_mode", compiled)
    count = tf.Variable(0.0)
    scale = tf.Variable([1.0, 2.0])

    @tf.function
    def step(n, x):
        for i in tf.range(n):
            count.assign_add(tf.cast(i, tf.float32))
            seen = count.read_value()  # a read after the assignment sees it
        if x > 0:
            scale.assign(scale * x)
            after = scale.read_value()
        else:
            after = scale.read_value() - 1.0
        return seen, after

    def reference(n, x, c, s):
        for i in range(n):
            c += i
        s = s * x if x > 0 else s
        return c, (s if x > 0 else s - 1.0)

    c, s = 0.0, np.array([1.0, 2.0])
    for n, x in [(3, 2.0), (4, -1.0), (1, 0.5)]:
        seen, after = step(tf.constant(n), tf.constant(x))
        c_ref, after_ref = reference(n, x, c, s)
        s = s * x if x > 0 else s
        c = c_ref
        assert float(seen) == c_ref and float(count.numpy()) == c_ref
        np.testing.assert_allclose(after.numpy(), after_ref)
        np.testing.assert_allclose(scale.numpy(), s)
    assert step.experimental_get_tracing_count() == 1


def test_variable_assigned_in_a_loop_condition_is_refused():
    v = tf.Variable(0)

    def cond(i):
        v.assign(i)
        return i < 3

    @tf.function
    def f(n):
        return tf.while_loop(cond, lambda i: i + 1, [n])

    with pytest.raises(tf.errors.UnimplementedError, match="condition cannot assign"):
        f(tf.constant(0))


def test_a_tensor_loop_over_an_empty_range_runs_no_step():
    # The range is only counted through, never built: TensorFlow's tf.range(1, 0) would
    # raise "Requires start <= limit", the loop does not.
    @tf.function
    def f(n):
        total = tf.constant(0)
        for i in tf.range(1, n):
            total += i
        return total

    assert f(tf.constant(0)).numpy() == 0
    assert f(tf.constant(4)).numpy() == 6
    assert f(tf.constant(-3)).numpy() == 0


# == chained comparisons, None before a loop, walrus in a `while` test ====================

def chained_comparison(x, y):
    if 0 < x < 10:
        inside = 1
    else:
        inside = 0
    both_two = 1 if x == y == 2 else 0
    return inside, both_two


def test_chained_comparison_on_python_values_is_pythons():
    converted = autograph.convert(chained_comparison)
    for args in ((5, 2), (2, 2), (-1, 3), (15, 2)):
        assert converted(*args) == chained_comparison(*args), args
    assert "compare_chain" in autograph.to_source(chained_comparison)


def test_chained_comparison_on_tensors():
    # TensorFlow: [0, 1, 0] for the `if`, [-1, 192, 150] for the `while`, [1, 0, 0] for
    # the conditional expression, and bool tensors False/True/False for the plain value.
    @tf.function
    def in_range(x):
        if 0 < x < 10:
            return tf.constant(1)
        return tf.constant(0)

    @tf.function
    def double_while_in_range(x):
        while 0 < x < 100:
            x = x * 2
        return x

    @tf.function
    def both_two(x, y):
        return tf.constant(1) if x == y == 2 else tf.constant(0)

    @tf.function
    def in_range_value(x):
        b = 0 < x < 10
        return b

    assert [int(in_range(tf.constant(v))) for v in (-1, 5, 15)] == [0, 1, 0]
    assert [int(double_while_in_range(tf.constant(v))) for v in (-1, 3, 150)] == [-1, 192, 150]
    assert [int(both_two(tf.constant(a), tf.constant(b)))
            for a, b in ((2, 2), (2, 3), (1, 1))] == [1, 0, 0]
    values = [in_range_value(tf.constant(v)) for v in (-1, 5, 15)]
    assert all(v.dtype == tf.bool and v.shape == () for v in values)
    assert [bool(v) for v in values] == [False, True, False]


def test_chained_comparison_evaluates_each_operand_once_and_short_circuits():
    calls = []

    def middle(x):
        calls.append("middle")
        return x

    def last():
        calls.append("last")
        return 10

    @tf.function
    def in_range(x):
        return 0 < middle(x) < last()

    @tf.function
    def python_false_first(x):
        return 5 < 3 < last() + x

    assert bool(in_range(tf.constant(5)))
    # Python evaluates the middle operand once (TensorFlow's conversion, twice)
    assert calls == ["middle", "last"]
    calls.clear()
    assert not bool(python_false_first(tf.constant(1)))  # TensorFlow: False
    assert calls == []


def test_variable_that_is_none_before_a_tensor_loop_gets_its_first_value_in_it():
    # TensorFlow: 2 for n=3 (for and while), 4.0 for the float, (2, 4) for the tuple,
    # 22 for nested loops, (1, 2) for the variable the body tests against None.
    @tf.function
    def last_of_for(n):
        x = None
        for i in tf.range(n):
            x = i
        return x

    @tf.function
    def last_of_while(n):
        x = None
        i = tf.constant(0)
        while i < n:
            x = i
            i += 1
        return x

    @tf.function
    def last_float_and_tuple(n):
        x, pair = None, None
        for i in tf.range(n):
            x = tf.cast(i, tf.float32) * 2.0
            pair = (i, i * 2)
        return x, pair

    @tf.function
    def last_of_nested(n):
        x = None
        for i in tf.range(n):
            for j in tf.range(n):
                x = i * 10 + j
        return x

    @tf.function
    def sum_of_previous(n):
        x = None
        s = tf.constant(0)
        for i in tf.range(n):
            if x is not None:  # a Python test: None only in the body's first trace
                s += x
            x = i
        return s, x

    assert last_of_for(tf.constant(3)).numpy() == 2
    assert last_of_while(tf.constant(3)).numpy() == 2
    x, (a, b) = last_float_and_tuple(tf.constant(3))
    assert x.dtype == tf.float32 and x.numpy() == 4.0 and (a.numpy(), b.numpy()) == (2, 4)
    assert last_of_nested(tf.constant(3)).numpy() == 22
    same(sum_of_previous(tf.constant(3)), (1, 2))
    # No iteration: zeros. TensorFlow raises InvalidArgumentError when the function runs
    # ("loop must iterate at least once to initialize x"); tapeflow has no run-time assert.
    assert last_of_for(tf.constant(0)).numpy() == 0


def test_error_none_against_tensors_in_tensor_control_flow():
    def tensor_then_none(n):
        x = tf.constant(1)
        for _ in tf.range(n):
            x = None
        return x

    def none_inside_a_structure(n):
        x = (None, tf.constant(1))
        for i in tf.range(n):
            x = (i, x[1])
        return x[1]

    def none_in_one_branch(c):
        x = None
        if c > 0:
            x = tf.constant(1)
        return x

    # TensorFlow: ValueError "'x' is None at the end of the iteration.", "None values not
    # supported.", "'x' is None at the end of the else branch."
    _raises(ValueError, "'x' is None at the end of the iteration", tensor_then_none,
            tf.constant(3), line_text="for _ in tf.range(n)")
    _raises(ValueError, "'x' holds None before the loop", none_inside_a_structure,
            tf.constant(3), line_text="for i in tf.range(n)")
    _raises(ValueError, "'x' is None at the end of the else branch", none_in_one_branch,
            tf.constant(3), line_text="if c > 0")


def walrus_countdown(n):
    total = 0
    while (n := n - 1) > 0:
        if n == 5:
            continue
        total += n
        if total > 12:
            break
    return total, n


def test_walrus_in_while_test_on_python_values_is_pythons():
    converted = autograph.convert(walrus_countdown)
    for n in (0, 3, 7, 20):
        assert converted(n) == walrus_countdown(n), n


def test_walrus_in_while_test_on_tensors():
    # TensorFlow cannot convert a function with `:=` (OperatorNotAllowedInGraphError on a
    # tensor); tapeflow runs the test once per iteration, as Python does.
    f = tf.function(walrus_countdown)
    for n in (0, 3, 7, 20):  # a tensor `break` and `continue` as well
        same(f(tf.constant(n)), walrus_countdown(n))

    @tf.function
    def body_reads_the_target(n):
        total = tf.constant(0)
        while (m := n - 1) > 0:
            n = m
            total += m
        return total, n, m

    same(body_reads_the_target(tf.constant(4)), (6, 1, 0))

    counter = tf.Variable(0)

    @tf.function
    def count_tests(n):
        steps = tf.constant(0)
        while (k := counter.assign_add(1).read_value()) < n:
            steps += 1
        return steps, k

    same(count_tests(tf.constant(5)), (4, 5))
    assert counter.numpy() == 5  # five evaluations of the test, the last one false


def walrus_in_first_operand_of_or(x):
    r = (n := x + 1) or 5
    return r, n


def walrus_in_first_operand_of_while_and(n):
    steps = 0
    while (n := n - 1) > 0 and n != 50:
        steps += 1
    return steps, n


def test_walrus_in_first_operand_of_and_or_binds_the_functions_name():
    # TensorFlow runs these unconverted: on Python values they are Python's,
    # (4, 4), (5, 0), (4, 0) and (9, 50). (Put in a lambda, as the other operands of
    # and/or are, the `:=` bound the lambda's own `n`: NameError, UnboundLocalError.)
    f = tf.function(walrus_in_first_operand_of_or)
    for x in (3, -1):
        same(f(x), walrus_in_first_operand_of_or(x))
    assert walrus_in_first_operand_of_or(3) == (4, 4)
    assert walrus_in_first_operand_of_or(-1) == (5, 0)
    g = tf.function(walrus_in_first_operand_of_while_and)
    for n in (5, 60):
        same(g(n), walrus_in_first_operand_of_while_and(n))
    assert walrus_in_first_operand_of_while_and(60) == (9, 50)


def test_walrus_in_first_operand_of_and_or_on_tensors_is_a_python_bool():
    # TensorFlow (which leaves the function unconverted): OperatorNotAllowedInGraphError,
    # "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed", for both.
    _raises(tf.errors.OperatorNotAllowedInGraphError, "as a Python bool",
            walrus_in_first_operand_of_or, tf.constant(3),
            line_text="r = (n := x + 1) or 5")
    _raises(tf.errors.OperatorNotAllowedInGraphError, "as a Python bool",
            walrus_in_first_operand_of_while_and, tf.constant(5),
            line_text="while (n := n - 1) > 0 and n != 50")


def test_symbolic_tensor_as_bool_or_iterated_raises_operator_not_allowed_in_graph():
    # TensorFlow's class, a TypeError, for each of these
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)

    def as_bool(x):
        return bool(x > 0)

    def in_assert(x):
        assert x > 0
        return x

    def unpack(x):
        first, _ = x
        return first

    def iterate_scalar(x):
        return [v for v in x]

    _raises(tf.errors.OperatorNotAllowedInGraphError, "as a Python bool", as_bool,
            tf.constant(1.0), line_text="return bool(x > 0)")
    _raises(tf.errors.OperatorNotAllowedInGraphError, "as a Python bool", in_assert,
            tf.constant(1.0), line_text="assert x > 0")
    _raises(tf.errors.OperatorNotAllowedInGraphError, "Iterating over a scalar",
            iterate_scalar, tf.constant(1.0), line_text="return [v for v in x]")
    def unpack_stacked_list(n):
        rows = []
        for i in tf.range(n):
            rows.append(i)
        first, _ = tf.stack(rows)  # a length known only when the function runs
        return first

    _raises(tf.errors.OperatorNotAllowedInGraphError, "Iterating over a symbolic Tensor of "
            "unknown length", unpack_stacked_list, tf.constant(2),
            line_text="first, _ = tf.stack(rows)")
    assert tf.function(unpack)(tf.constant([1.0, 2.0])).numpy() == 1.0  # a known length


def _power_until_100(x):
    y = x
    while y < 100.0:
        y = y * x
    return y


def _power_until_50_or_n(x, n):
    s = x
    for i in tf.range(n):
        s = s * x
        if s > 50.0:
            break
    return s


@pytest.mark.parametrize("compiled", ["off", "sync"])
def test_loop_variable_starting_as_a_variable_carries_its_value(compiled, monkeypatch):
    """As TensorFlow: a loop variable first bound to a tf.Variable is read and carried as
    a tensor (128 with dy/dx 448, and 64 with 192, as TensorFlow 2.21), equal to eager."""
    monkeypatch.setattr(settings, "compile_mode", compiled)
    x = tf.Variable(2.0)
    for fn, args, expected in [(_power_until_100, (), (128.0, 448.0)),
                               (_power_until_50_or_n, (tf.constant(10),), (64.0, 192.0))]:
        results = []
        for run in (fn, tf.function(fn)):
            with tf.GradientTape() as tape:
                y = run(x, *args)
            results.append((float(y), float(tape.gradient(y, x))))
        assert results == [expected, expected], fn.__name__


def test_loop_variable_bound_to_a_variable_in_the_body_becomes_a_tensor():
    x = tf.Variable(3.0)

    @tf.function
    def last(n):
        y = np.float32(1.0)
        for _ in tf.range(n):
            y = x
        return y

    result = last(tf.constant(2))
    assert isinstance(result, tf.Tensor) and float(result) == 3.0


# == finding the source, and the conversions kept on disk ==================================

def black_style_header(
    x,
    y=1,
):
    if x > 0:
        return x + y
    return -x


def string_at_column_zero(x):
    text = """
first line
"""
    if x > 0:
        return len(text) + x
    return 0


def test_definitions_whose_lines_go_back_to_their_indentation_convert():
    # The closing parenthesis and the string's lines are at the def's own indentation:
    # the block is found by tokenizing instead of by indentation.
    for fn, args, expected in ((black_style_header, (2,), 3), (black_style_header, (-2,), 2),
                               (string_at_column_zero, (1,), 13)):
        autograph._CODE_CACHE.pop(fn.__code__, None)
        same(autograph.convert(fn)(*args), expected)
        same(tf.function(fn)(tf.constant(args[0])), expected)


def _uncached(fn):
    autograph._CODE_CACHE.pop(fn.__code__, None)
    autograph._FUNCTION_CACHE.pop(fn, None)


def test_a_conversion_is_loaded_from_the_cache_in_a_later_process(monkeypatch):
    _uncached(for_range_with_continue_and_break)
    first = autograph.convert(for_range_with_continue_and_break)
    # As a new process would: nothing converted in memory, and no converting possible.
    _uncached(for_range_with_continue_and_break)
    monkeypatch.setattr(autograph, "_converted_tree", None)
    loaded = autograph.convert(for_range_with_continue_and_break)
    assert loaded is not first and autograph.is_converted(loaded)
    for n in (0, 3, 7):
        same(loaded(n), first(n))
    monkeypatch.undo()
    assert "ag__.for_stmt" in autograph.to_source(for_range_with_continue_and_break)


def _entry(fn):
    from tapeflow.graph import conversion_cache
    lines, first, filename = autograph._source(fn)
    return conversion_cache.key(autograph._indented_block(lines, first), first, filename,
                                fn.__code__, None)


def test_only_definitions_found_by_indentation_are_kept(monkeypatch):
    from tapeflow.graph import conversion_cache
    saved = []
    monkeypatch.setattr(conversion_cache, "load", lambda digest: None)  # convert each
    monkeypatch.setattr(conversion_cache, "save", lambda *args: saved.append(args))
    for fn in (black_style_header, string_at_column_zero, for_range_with_continue_and_break):
        _uncached(fn)
        assert autograph.is_converted(autograph.convert(fn))
    assert len(saved) == 1  # the last only: the others' lines were found by tokenizing


def test_a_tampered_conversion_is_converted_again(monkeypatch):
    from tapeflow import cache_store
    from tapeflow.graph import conversion_cache
    fn = for_range_with_continue_and_break
    _uncached(fn)
    autograph.convert(fn)
    digest = _entry(fn)
    path = conversion_cache._path(digest)
    with open(path, "rb") as f:
        content = f.read()
    cache_store.write_private(path, content[:-1] + bytes([content[-1] ^ 1]))
    monkeypatch.setattr(cache_store, "_damage_reported", False)
    with pytest.warns(RuntimeWarning, match="damaged or unverifiable"):
        assert conversion_cache.load(digest) is None  # the signature no longer matches
    _uncached(fn)
    same(autograph.convert(fn)(7), fn(7))
    assert conversion_cache.load(digest) is not None  # converted again, and signed


def test_an_edited_function_is_converted_again_not_loaded(tmp_path, monkeypatch):
    """The conversion cache's key is the function's text where it stands in its file: a
    process that imports the edited file converts it anew."""
    import importlib.util
    import linecache

    path = tmp_path / "edited_module.py"

    def load(body):
        path.write_text(f"def f(x):\n    if x > 0:\n        return {body}\n    return 0\n")
        linecache.checkcache(str(path))
        spec = importlib.util.spec_from_file_location("edited_module", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.f

    first = load("x + 1")
    same(autograph.convert(first)(2), 3)
    edited = load("x * 10")  # the same file, name and line: another body
    same(autograph.convert(edited)(2), 20)
    again = load("x * 10")
    _uncached(again)
    monkeypatch.setattr(autograph, "_converted_tree", None)  # must come from the cache
    converted = autograph.convert(again)
    assert autograph.is_converted(converted)
    same(converted(2), 20)
