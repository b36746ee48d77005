"""Copy propagation on generated kernels (backends/numba_cpu/aliases.py): a line that only
gives a value a second name is dropped when that is plainly safe, and kept otherwise."""

import re

import numpy as np

import tapeflow as tf
from tapeflow.backends.numba_cpu import aliases
from tapeflow.config import settings


def _lines(text):
    return [f"    {line}" if line else line for line in text.strip("\n").split("\n")]


def test_a_second_name_is_dropped_and_its_reads_read_the_first():
    body = _lines("""
# MatMul
t9 = blas_gemm(x0, x1)
t20 = t9
for i in range(t9.shape[0]):
    t20[i, 0] = t9[i, 0] * 2.0
t21 = t20
return (t21,)
""")
    assert aliases.propagated(body, ["x0", "x1"]) == _lines("""
# MatMul
t9 = blas_gemm(x0, x1)
for i in range(t9.shape[0]):
    t9[i, 0] = t9[i, 0] * 2.0
return (t9,)
""")


def test_a_parameter_may_be_the_first_name_but_is_never_dropped():
    body = _lines("t1 = x0\nx1 = t1\nreturn (x1,)")
    assert aliases.propagated(body, ["x0", "x1"]) == _lines("x1 = x0\nreturn (x1,)")


def test_names_a_loop_carries_or_binds_twice_are_kept():
    # `w2` is bound twice (the value a loop carries); `t8` is read before its line (by
    # the next step); `t7` names `s6`, which is bound after it.
    body = _lines("""
w2 = x0
while True:
    e9 = t8 * 2.0
    e3 = w2 + 1.0
    t4 = w2
    t8 = e3
    t7 = s6
    s6 = e3
    w2 = t4
    if e3 > 3.0:
        break
return (w2, t7, e9)
""")
    assert aliases.propagated(body, ["x0"]) == body


def test_lines_of_forms_the_generator_never_writes_are_left_alone():
    for odd in ("f = lambda v: v", "del t1", "(a, b) = t1, t1", "t3 = (t4 := t1)"):
        body = _lines(f"t1 = x0\nt2 = t1\n{odd}\nreturn (t2,)")
        assert aliases.propagated(body, ["x0"]) == body
    quoted = _lines("t1 = x0\nt2 = t1\nraise_error('t2', t2)\nreturn (t2,)")
    assert aliases.propagated(quoted, ["x0"]) == _lines(
        "t2 = x0\nraise_error('t2', t2)\nreturn (t2,)")


def test_a_tensor_loops_kernel_drops_them_and_its_shown_source_keeps_them(monkeypatch):
    monkeypatch.setattr(settings, "compile_mode", "sync")

    @tf.function
    def f(xs, h):
        for t in tf.range(tf.shape(xs)[0]):
            h = tf.tanh(h * 0.5 + xs[t])
        return h

    xs = np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(np.float32)
    h = np.zeros(3, np.float32)
    expected = h
    for row in xs:
        expected = np.tanh(expected * 0.5 + row)
    np.testing.assert_allclose(f(xs, h).numpy(), expected, rtol=1e-6)
    compiled = f.get_concrete_function(xs, h)._compilation.kernel
    module = compiled.module_source
    shown = compiled.source
    alias = r"^\s*\w+ = \w+$"
    assert len(re.findall(alias, shown, re.MULTILINE)) > len(
        re.findall(alias, module, re.MULTILINE))
