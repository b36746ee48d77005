"""Compiled backends: graph -> generated source -> machine code (Numba on the CPU).

compiler.py holds what every backend shares (passes, the fusion plan, lowerings attached
to op-table entries); numba_cpu/ is the Numba CPU backend. Importing this package is
free; Numba and SciPy load on the first compile
(`from tapeflow.backends.numba_cpu import compile_graph`).
"""
