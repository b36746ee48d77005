"""Compiled backends: graph -> generated source -> machine code (Numba on the CPU).

compiler.py holds what every backend shares (passes, the fusion plan, lowerings attached
to op-table entries); numba_cpu/ is the Numba CPU backend. Each backend package registers
its backend as it loads (tapeflow.backend_registry) and tapeflow/__init__.py imports it:
that is how tf.function finds it. Loading a backend loads no compiler: Numba loads on the
first compile.
"""
