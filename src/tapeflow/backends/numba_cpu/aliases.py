"""Copy propagation on a generated function's lines: `a = b`, a second name for a value
(a fused loop that writes its output into its input's buffer, a gather's index, the
values a tensor loop carries to its next step), is dropped, and the lines after it read
`b`. Numba lowered each such line (a load, a reference count's increment and decrement)
and LLVM optimized what it left, for nothing: the RNN gradient's tensor loop had 15 of
its 170 lines so.

Only what is plainly safe is dropped: `a` is bound once and read nowhere before that
line (a loop's next step would read the previous step's `a`), and `b` is a parameter or
a name bound once, before. Lines of forms the generator never writes (a lambda, `:=`,
`del`, ...) leave the lines as they are.
"""

import collections
import keyword
import re

from . import names

_ALIAS = re.compile(r"^[^\S\n]*([A-Za-z_]\w*) = ([A-Za-z_]\w*)$", re.MULTILINE)
_UNSAFE = re.compile(r":=|\b(?:lambda|del|global|nonlocal|as|import|def|class|with|try"
                     r"|except|yield)\b|^\s*[(\[*]", re.MULTILINE)


def _is_code(line):
    stripped = line.lstrip()
    return bool(stripped) and not stripped.startswith("#")


def propagated(lines, parameters=()):
    """`lines` (the body of one function, whose parameters are `parameters`) less the
    lines that only give a value a second name, each later read of that name reading the
    first instead."""
    text = "\n".join(line for line in lines if _is_code(line))
    if not _ALIAS.search(text) or _UNSAFE.search(text):
        return lines
    bound = collections.Counter()
    bound_at, first_seen, quoted = {}, {}, set()
    for i, line in enumerate(lines):
        if not _is_code(line):
            continue
        words = names.IDENTIFIER.findall(line)
        for word in words:
            first_seen.setdefault(word, i)
        if "'" in line or '"' in line:
            quoted.update(words)
        stored = names.STORED.match(line)
        if stored:
            for name in stored.group(1).split(","):
                bound[name.strip()] += 1
                bound_at[name.strip()] = i
    parameters = set(parameters)

    def droppable(i, alias, value):
        return (alias not in parameters and bound[alias] == 1 and first_seen[alias] == i
                and alias not in quoted and not keyword.iskeyword(value)
                and (bound[value] == 0 or (bound[value] == 1 and bound_at[value] < i)))

    renamed, kept = {}, []
    for i, line in enumerate(lines):
        if _is_code(line):
            alias = _ALIAS.match(line)
            if alias and droppable(i, *alias.groups()):
                renamed[alias.group(1)] = renamed.get(alias.group(2), alias.group(2))
                continue
            if renamed:
                line = names.IDENTIFIER.sub(lambda m: renamed.get(m.group(0), m.group(0)),
                                            line)
        kept.append(line)
    return kept
