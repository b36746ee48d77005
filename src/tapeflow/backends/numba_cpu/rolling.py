"""Consecutive calls of one outlined function (outline.py) rolled back into a loop, so that
a Python loop unrolled at trace time compiles to kernel code of one size whatever its
length.

A run of calls rolls when each argument, from one call to the next, is one of: the same
variable; a site or error-code number, or an index into the ints `I`, that grows by the
same step (`np.int64(12 + 7 * step)`); the previous call's result (a value the loop
carries); or the values an earlier rolled loop kept, read at an index that moves by a
fixed step (the backward pass reads the forward steps' values in reverse). A result that
code after the loop reads is kept in a list; code that is not rolled gets the value it
names back from that list just before it runs.
"""

import re

from . import names

# Fewer calls than this stay calls: a loop saves nothing on two.
MIN_CALLS = 3
_NUMBERED = ((re.compile(r"^np\.int64\((\d+)\)$"), "np.int64({})"),
             (re.compile(r"^I\[(\d+)\]$"), "I[{}]"))


class Call:
    """One call of an outlined function: argument and result expressions, the source
    comments shown above it."""

    __slots__ = ("args", "comments", "function", "results")

    def __init__(self, function, args, results, comments):
        self.function, self.args, self.results, self.comments = function, args, results, comments

    def lines(self):
        call = f"{self.function.name}({', '.join(self.args)})"
        return self.comments + ["    " + _assigned(self.results, call)]

    def reads(self):
        return {name for arg in self.args for name in names.IDENTIFIER.findall(arg)}


def _linear(start, step):
    """The text of start + step * the loop's counter."""
    moved = "step" if abs(step) == 1 else f"{abs(step)} * step"
    if not start:
        return moved if step > 0 else f"-{moved}"
    return f"{start} {'+' if step > 0 else '-'} {moved}"


def _assigned(results, call):
    if not results:
        return call
    return f"{', '.join(results)}{',' if len(results) == 1 else ''} = {call}"


class _Roller:
    def __init__(self, items, readable):
        self.items = items
        self.readable = readable
        self.reads = [item.reads() if isinstance(item, Call) else
                      {n for line in item for n in names.IDENTIFIER.findall(line)
                       if not names.is_source_comment(line)} for item in items]
        self.last_read = {}
        for index, read in enumerate(self.reads):
            for name in read:
                self.last_read[name] = index
        self.kept = {}      # a rolled result's name -> (its list, its step)
        self.pending = {}   # a kept name that later code reads -> the list item holding it
        self.fresh = 0
        self.out = []

    def new_name(self, shown_as, suffix):
        name = f"rolled_{self.fresh}"
        self.fresh += 1
        if shown_as in self.readable:
            self.readable[name] = names.Derived(shown_as, suffix)
        return name

    def roll(self):
        i = 0
        while i < len(self.items):
            item = self.items[i]
            j = i + 1
            if isinstance(item, Call):
                while j < len(self.items) and isinstance(self.items[j], Call) \
                        and self.items[j].function is item.function:
                    j += 1
                if j - i >= MIN_CALLS and self.loop(i, j):
                    i = j
                    continue
                j = i + 1
            self.restore(self.reads[i])
            self.out += item.lines() if isinstance(item, Call) else item
            i = j
        return self.out

    def restore(self, read):
        """Defines the kept values that `read` names, from their lists."""
        for name in sorted(read & self.pending.keys()):
            self.out.append(f"    {name} = {self.pending.pop(name)}")

    def loop(self, i, j):
        """Emits calls i..j-1 as one loop; False (nothing emitted) where they differ in a
        way it cannot express."""
        calls = self.items[i:j]
        args, carried = [], {}
        for p in range(len(calls[0].args)):
            arg = self.argument([call.args[p] for call in calls], calls)
            if arg is None:
                return False
            if isinstance(arg, tuple):  # carried: (result position, first value)
                carried[arg[0]] = (p, arg[1])
                arg = None
            args.append(arg)
        self.restore({n for arg in args if arg for n in names.IDENTIFIER.findall(arg)}
                     | {n for _, value in carried.values()
                        for n in names.IDENTIFIER.findall(value)})
        first = calls[0]
        results = [self.new_name(name, "") for name in first.results]
        kept = {}
        for q, name in enumerate(first.results):
            read_after = [self.last_read.get(call.results[q], -1) >= j for call in calls]
            if any(read_after[:-1]):
                kept[q] = self.new_name(name, "_steps")
                self.out.append(f"    {kept[q]} = []")
            elif read_after[-1]:  # the last value only: the loop's variable holds it
                self.pending[calls[-1].results[q]] = results[q]
        for q, (p, value) in carried.items():
            self.out.append(f"    {results[q]} = {value}")
            args[p] = results[q]
        self.out += first.comments
        self.out.append(f"    for step in range({len(calls)}):")
        self.out.append("        " + _assigned(results, f"{first.function.name}({', '.join(args)})"))
        for q, listed in kept.items():
            self.out.append(f"        {listed}.append({results[q]})")
            for k, call in enumerate(calls):
                self.kept[call.results[q]] = (listed, k)
                self.pending[call.results[q]] = f"{listed}[{k}]"
        return True

    def argument(self, values, calls):
        """The loop's expression for one argument, a (result, first value) pair for one
        the loop carries, or None."""
        if all(v == values[0] for v in values):
            return values[0]
        for pattern, form in _NUMBERED:
            numbers = [m and int(m.group(1)) for m in map(pattern.match, values)]
            if all(n is not None for n in numbers):
                step = numbers[1] - numbers[0]
                if all(n == numbers[0] + k * step for k, n in enumerate(numbers)):
                    return form.format(_linear(numbers[0], step))
                return None
        for q in range(len(calls[0].results)):
            if all(values[k] == calls[k - 1].results[q] for k in range(1, len(values))):
                return q, values[0]
        places = [self.kept.get(v) for v in values]
        if all(places) and len({listed for listed, _ in places}) == 1:
            at = [k for _, k in places]
            step = at[1] - at[0]
            if all(n == at[0] + k * step for k, n in enumerate(at)):
                return f"{places[0][0]}[{_linear(at[0], step)}]"
        return None


def roll(items, readable):
    """The kernel lines for `items` (each a Call or a list of lines), runs of calls of one
    function rolled into loops; `readable` (names.py) gets the names of the loops'
    variables."""
    return _Roller(items, readable).roll()
