"""Repeated code compiled once: a run of identical node groups in a kernel (a Python loop
unrolled at trace time makes one per step) becomes one function that the kernel calls.

The kernel's body is cut into blocks, one per node or fused group (each starts where the
generator writes the node's site into `W`). Two runs of blocks are the same when their
text is, up to the names of the kernel's variables, the sites and error codes they
number, and the indices into the shape-like ints `I` they read: those become the
function's arguments (`site_base`, `code_base`, `int_0`, ...), so that the function's
text is one for all of them. Consecutive repeats of a run are found first (the steps of
an unrolled loop), then single blocks repeated anywhere.

Numba compiles each function once, for all of its calls, and LLVM optimizes it once:
without this, an unrolled loop's T copies of the same loops were each lowered and
optimized, and the compile grew faster than T. LLVM did not inline the functions back
into the kernel when they were linked in (a function of loops costs more than its
inliner's threshold at each call: the kernel's optimized IR of the unrolled RNN at T=30,
before rolling.py, kept its 59 calls), but it optimized and compiled their code a second
time in the kernel's module; the kernel now calls them by symbol (machine.py).
"""

import re

from . import names, rolling

# A store of the running node's site, a check's error code, an index into the ints.
_SITE = re.compile(r"^(\s*W\[0\] = )(\d+)$")
# A check's error code: `raise E(<code>, ...)`, or the first argument of a check helper.
_CODE = re.compile(r"\b(raise \w+|check_row|checked_position)\((np\.int64\()?(\d+)")
_INT = re.compile(r"\bI\[(\d+)\]")
# The names a generated line binds: `a = ...`, `a, b = ...`, `a += ...`, `for i in ...`.
# Found in all of a block's lines at once: no part of the pattern crosses a line's end.
_STORED = re.compile(r"^[^\S\n]*(?:for[^\S\n]+)?(\w+(?:[^\S\n]*,[^\S\n]*\w+)*)[^\S\n]*,?"
                     r"[^\S\n]*(?:in\b|(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=))", re.MULTILINE)
# IDENTIFIER's names, kept by re.split: [text, name, text, name, ..., text].
_WORDS = re.compile(r"\b([A-Za-z_]\w*)")
_BASES = ("site_base", "code_base")
# A statement that cannot move into a function: its first word is one of these.
_UNMOVABLE = re.compile(r"^\s*(?:return|yield|global|nonlocal)(?:\s|$)", re.MULTILINE)
# The outlined functions' names: PREFIX_0, PREFIX_1, ...
PREFIX = "repeated"
# The longest run of blocks looked for (an unrolled step of a few dozen nodes).
MAX_RUN = 48
# What is worth a function: at least this many lines of code in one occurrence.
MIN_LINES = 4


class _Block:
    """The lines of one node or group at the kernel's top level, and the names they
    bind."""

    __slots__ = ("code_lines", "key", "lines", "shape", "stored")

    def __init__(self, lines):
        self.lines = lines
        self.code_lines = [line for line in lines
                           if (stripped := line.lstrip()) and stripped[0] != "#"]
        self.stored = _stored_names(self.code_lines)
        self.key = None


def _stored_names(code_lines):
    """The names the lines bind."""
    return {name.strip() for bound in _STORED.findall("\n".join(code_lines))
            for name in bound.split(",")}


class Outlined:
    """A function made of repeated code: its name, its text (as the kernel's lines are,
    with the generator's names, so names.shown_lines shows it readably) and its calls."""

    def __init__(self, name, lines):
        self.name = name
        self.lines = lines
        self.calls = 0


def outline(body, parameters, readable, prefix=PREFIX):
    """(new kernel body lines, [Outlined]) for the kernel body `body` (its lines, at one
    level of indentation) whose parameters are named `parameters`; `readable` (names.py)
    gets the names of the variables of rolled loops (rolling.py).

    Lines before the first site store (the prologue) and the final return stay as they
    are; so does everything when nothing repeats."""
    start, blocks, end = _blocks(body)
    if len(blocks) < 2:
        return body, []
    defined_first = set(parameters) | _Block(start).stored
    kernel_names = set(defined_first)
    for block in blocks:
        kernel_names |= block.stored
    for block in blocks:
        block.shape = _Shape(block.lines, kernel_names, block.stored)
        block.key = block.shape.key
    # Where each name is first defined (-1: before the first block) and last read
    # (len(blocks): by the final lines). The names a block mentions, its shape's `order`,
    # stand for those it reads: the generator's names never collide with attributes or
    # globals, and a wider set only keeps more values alive.
    defined_at = dict.fromkeys(defined_first, -1)
    last_read = {}
    for index, block in enumerate(blocks):
        for name in block.stored:
            defined_at.setdefault(name, index)
        for name in block.shape.order:
            last_read[name] = index
    for name in names.IDENTIFIER.findall("\n".join(_Block(end).code_lines)):
        last_read[name] = len(blocks)

    functions = []
    by_key = {}
    items = [start]
    runs = _runs([b.key for b in blocks])
    singles = _repeated_singles(blocks, runs)
    i = 0
    while i < len(blocks):
        run = runs.get(i) or ((i, 1, 1) if i in singles else None)
        if run is None or sum(len(b.code_lines) for b in blocks[i:i + run[1]]) < MIN_LINES:
            length, count = (1, 1) if run is None else run[1:]
            items += [b.lines for b in blocks[i:i + length * count]]
            i += length * count
            continue
        _, length, count = run
        shapes = [_Joined([b.shape for b in blocks[i + k * length:i + (k + 1) * length]])
                  for k in range(count)]
        outputs = {}  # shape key -> positions (in shape.order) read after some repeat
        for k, shape in enumerate(shapes):
            after = i + (k + 1) * length
            stored = shape.stored
            outputs.setdefault(shape.key, set()).update(
                [p for p, name in enumerate(shape.order)
                 if name in stored and last_read.get(name, -1) >= after])
        for k, shape in enumerate(shapes):
            first = i + k * length

            def before(name, first=first):
                return defined_at.get(name, first) < first
            wanted = outputs[shape.key]
            function = by_key.get((shape.key, frozenset(wanted)))
            if function is None:
                whole = _Shape(shape.lines, kernel_names)
                assert (whole.order, whole.ints, whole.bases) == (
                    shape.order, shape.ints, shape.bases), "a run's shape differs from its blocks'"
                function = _function(f"{prefix}_{len(functions)}", whole, wanted, before)
                by_key[(shape.key, frozenset(wanted))] = function
                functions.append(function)
            items.append(_call(function, shape, wanted, before))
            function.calls += 1
        i += length * count
    items.append(end)
    return rolling.roll(items, readable), functions


def _blocks(body):
    """(prologue lines, [_Block], final lines): blocks start at a top-level site store,
    with the comments just above it."""
    statements = []  # each: the lines of one top-level statement
    for line in body:
        if statements and (line.startswith("     ") or not line.strip()
                           or line.lstrip().startswith(("else:", "elif ", "except", "finally:"))):
            statements[-1].append(line)
        else:
            statements.append([line])
    starts = [k for k, st in enumerate(statements) if st[0].startswith("    W[0] = ")
              and _SITE.match(st[0])]
    end_at = len(statements)
    if statements and statements[-1][0].lstrip().startswith("return"):
        end_at -= 1
    starts = [k for k in starts if k < end_at]
    if not starts:
        return body, [], []
    begins = []
    for k in starts:
        while k and statements[k - 1][0].lstrip().startswith("#") and (
                not begins or k - 1 > begins[-1]):
            k -= 1
        begins.append(k)
    spans = [[line for st in statements[a:b] for line in st]
             for a, b in zip(begins, begins[1:] + [end_at])]
    if _UNMOVABLE.search("\n".join(line for lines in spans for line in lines)):
        return body, [], []
    blocks = [_Block(lines) for lines in spans]
    start = [line for st in statements[:begins[0]] for line in st]
    end = [line for st in statements[end_at:] for line in st]
    return start, blocks, end


class _Shape:
    """A run of lines less what differs between repeats: `key` is its text with the
    kernel's variables renamed by order of first use and the site and error-code
    literals made relative; `order` lists the variables in that order, `ints` the
    indices into I it reads, `bases` the first site and code."""

    def __init__(self, lines, kernel_names, stored=None):
        self.lines = lines
        self.ints = []
        self.comments = []  # the source comments, shown above a call of the function
        relative = []
        code = []
        numbered = []  # where the lines with a site, an error code or an int are
        sites, codes = [], []
        for line in lines:
            stripped = line.lstrip()
            if stripped.startswith("#"):
                relative.append(line)
                if stripped.startswith(names.SOURCE_COMMENT):
                    self.comments.append(line)
                continue
            # (most lines have nothing to make relative)
            if "W[0]" in line or "I[" in line or "raise" in line or "check" in line:
                numbered.append((len(relative), len(code)))
                if "W[0]" in line and (m := _SITE.match(line)):
                    sites.append(int(m.group(2)))
                elif "raise" in line or "check" in line:
                    codes += [int(c) for _, _, c in _CODE.findall(line)]
            relative.append(line)
            code.append(line)
        self.bases = (min(sites) if sites else None, min(codes) if codes else None)
        for at, at_code in numbered:
            relative[at] = code[at_code] = self._relative(relative[at])
        self.relative = relative
        # All lines at once: a loop of 1,000 unrolled steps has 80,000 (each split and
        # renamed on its own, this was most of the outlining's time).
        parts = _WORDS.split("\n".join(code))
        words = parts[1::2]
        self.order = [w for w in dict.fromkeys(words) if w in kernel_names]
        renames = dict(zip(self.order, _renamed(len(self.order))))
        parts[1::2] = map(renames.get, words, words)
        self.key = "".join(parts)
        # (a block's, when given: making lines relative changes no name they bind)
        self.stored = stored if stored is not None else _stored_names(code)

    def _relative(self, line):
        site, code = self.bases
        if "W[0]" in line and (m := _SITE.match(line)) is not None:
            return f"{m.group(1)}site_base + {int(m.group(2)) - site}"
        if "raise" in line or "check" in line:
            line = _CODE.sub(lambda m: f"{m.group(1)}({m.group(2) or ''}code_base + "
                                       f"{int(m.group(3)) - code}", line)
        if "I[" not in line:
            return line

        def index(m):
            k = int(m.group(1))
            if k not in self.ints:
                self.ints.append(k)
            return f"int_{self.ints.index(k)}"
        return _INT.sub(index, line)


_RENAMED = ()


def _renamed(count):
    """The names v0, v1, ... that a shape's variables take in its key: the first `count`.
    Made once, and replaced whole when more are wanted: kernels may be generated in two
    threads at once, and a list grown in place could be read half grown."""
    global _RENAMED
    renamed = _RENAMED
    if len(renamed) < count:
        renamed = _RENAMED = tuple(f"v{k}" for k in range(max(count, 2 * len(renamed))))
    return renamed[:count]


class _Joined:
    """The shape of a run of blocks, made of its blocks' shapes: what _Shape of all their
    lines gives (`order`, `ints`, `bases`, `stored`, `lines`), with a `key` that is the
    same for two runs only if their _Shape keys are: each block's key, where its variables
    and ints fall in the run's order, and how far its site and code bases lie from the
    run's. The run's text is made (_Shape) once per function, not once per repeat."""

    def __init__(self, shapes):
        sites = [s.bases[0] for s in shapes if s.bases[0] is not None]
        codes = [s.bases[1] for s in shapes if s.bases[1] is not None]
        self.bases = (min(sites) if sites else None, min(codes) if codes else None)
        variables, ints, parts = {}, {}, []
        self.stored = set()
        self.lines = []
        self.comments = []
        for s in shapes:
            offsets = tuple(None if mine is None else mine - run
                            for mine, run in zip(s.bases, self.bases))
            parts.append((s.key, tuple([variables.setdefault(n, len(variables)) for n in s.order]),
                          tuple([ints.setdefault(k, len(ints)) for k in s.ints]), offsets))
            self.stored |= s.stored
            self.lines += s.lines
            self.comments += s.comments
        self.order = list(variables)
        self.ints = list(ints)
        self.key = tuple(parts)


def _arguments(shape, before):
    """The variables a run reads that the kernel defined before it, in order of use."""
    return [name for name in shape.order if before(name)]


def _function(name, shape, outputs, before):
    params = _arguments(shape, before)
    params += [base for base, at in zip(_BASES, shape.bases) if at is not None]
    params += [f"int_{k}" for k in range(len(shape.ints))]
    results = [shape.order[p] for p in sorted(outputs)]
    lines = [f"def {name}({', '.join(params)}):"] + shape.relative
    if results:
        lines.append(f"    return {', '.join(results)}{',' if len(results) == 1 else ''}")
    return Outlined(name, lines)


def _call(function, shape, outputs, before):
    """The call that runs one occurrence, with the source comments shown above it."""
    args = _arguments(shape, before)
    # np.int64, not a literal: Numba would compile the function once per literal value.
    args += [f"np.int64({at})" for at in shape.bases if at is not None]
    args += [f"I[{k}]" for k in shape.ints]
    results = [shape.order[p] for p in sorted(outputs)]
    comments = list(dict.fromkeys(shape.comments))
    return rolling.Call(function, args, results, comments)


def _repeated_singles(blocks, runs):
    """The blocks outside `runs` whose code another such block repeats."""
    covered = {i + k for i, length, count in runs.values() for k in range(length * count)}
    seen = {}
    for i, block in enumerate(blocks):
        if i not in covered:
            seen.setdefault(block.key, []).append(i)
    return {i for group in seen.values() if len(group) > 1 for i in group}


def _runs(keys):
    """{first block: (first block, blocks per repeat, repeats)} for the consecutive
    repeats found left to right, each covering as many blocks as it can."""
    runs = {}
    i = 0
    n = len(keys)
    while i < n:
        best = None
        for length in range(1, min(MAX_RUN, (n - i) // 2) + 1):
            if keys[i:i + length] != keys[i + length:i + 2 * length]:
                continue
            count = 2
            while keys[i:i + length] == keys[i + count * length:i + (count + 1) * length]:
                count += 1
            if best is None or length * count > best[1] * best[2]:
                best = (i, length, count)
        if best is None:
            i += 1
            continue
        runs[i] = best
        i += best[1] * best[2]
    return runs
