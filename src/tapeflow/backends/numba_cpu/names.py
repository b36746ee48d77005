"""The kernel as people read it: the compiled module names values by position (x0, t12,
e31), so that every function of one structure, dtypes and ranks shares one module and its
cached machine code whatever its parameter names, and whatever lines of the user's file it
came from. The text shown (`kernel_source`) is that module with each generated name
replaced by the graph value's it holds (`matmul_3`, the Python parameter `images`, the
Variable `dense/kernel` as `dense_kernel`) and a comment with the user's line above the
code of each node group."""

import keyword
import re
from typing import NamedTuple

# Starts a line of the generator's output that names the user's source line: kept out of
# the compiled module (so moving a line does not recompile), shown as a comment.
SOURCE_COMMENT = "#@ "

IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*")


class Derived(NamedTuple):
    """The shown name of a variable made from another (`x_chunk`, a slice of `x`): the
    other's shown name, which is only known once names are made unique, and a suffix."""

    of: str
    suffix: str


def is_source_comment(line):
    return line.lstrip().startswith(SOURCE_COMMENT)


def module_lines(lines):
    """The lines that the compiled module holds."""
    return [line for line in lines if not is_source_comment(line)]


def shown_lines(lines, readable):
    """`lines` with generated names replaced by readable ones (unique, never a name the
    code uses otherwise or a keyword) and the source comments shown."""
    code = [line for line in lines if not is_source_comment(line)]
    used = set()
    for line in code:
        used.update(IDENTIFIER.findall(line))
    renamed = {}
    taken = (used - readable.keys()) | set(keyword.kwlist)

    def rename(name):
        if name not in renamed:
            shown = readable[name]
            if isinstance(shown, Derived):
                of = rename(shown.of) if shown.of in readable else shown.of
                shown = of + shown.suffix
            renamed[name] = _unique(shown, taken)
            taken.add(renamed[name])
        return renamed[name]

    for line in code:  # in order of first use, so the same code gets the same names
        for name in IDENTIFIER.findall(line):
            if name in readable:
                rename(name)
    shown = []
    for line in lines:
        if is_source_comment(line):
            indent = line[:len(line) - len(line.lstrip())]
            shown.append(indent + "# " + line.lstrip()[len(SOURCE_COMMENT):])
        else:
            shown.append(IDENTIFIER.sub(lambda m: renamed.get(m.group(), m.group()), line))
    return shown


_OUTPUT_INDEX = re.compile(r":\d+$")
_NOT_WORD = re.compile(r"\W+")


def identifier(name):
    """A graph or Variable name as a Python identifier: `dense/kernel:0` -> dense_kernel."""
    name = _OUTPUT_INDEX.sub("", name)
    if not (name.isascii() and name.isidentifier()):  # else nothing to replace (most)
        name = _NOT_WORD.sub("_", name)
    name = name.strip("_") or "value"
    return "_" + name if name[0].isdigit() else name


def _unique(name, taken):
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"
