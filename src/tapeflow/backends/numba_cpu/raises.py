"""The generated checks' `raise ValueError(code, ...)` and `raise IndexError(code, ...)`
statements, as calls of kernels/failures.py (why: there), applied to a kernel's lines
once they are complete, so that every lowering writes its checks as plain Python."""

import re

_RAISE = re.compile(r"\braise (ValueError|IndexError)\(")
_FAILURE = {"ValueError": "fail_value", "IndexError": "fail_index"}


def as_calls(lines):
    return [_as_call(line) for line in lines]


def _as_call(line):
    found = _RAISE.search(line)
    if found is None:
        return line
    args, depth, start, i = [], 1, found.end(), found.end()
    while depth:
        c = line[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if (c == "," and depth == 1) or depth == 0:
            args.append(line[start:i].strip())
            start = i + 1
        i += 1
    code, values = args[0], [a for a in args[1:] if a]
    # Typed as int64, one tuple: a helper per arity, not per combination of int types.
    packed = "(" + "".join(f"np.int64({v}), " for v in values) + ")"
    return f"{line[:found.start()]}{_FAILURE[found.group(1)]}(np.int64({code}), {packed}){line[i:]}"
