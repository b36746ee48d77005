"""AutoGraph: rewrites a Python function's if/while/for statements into calls of runtime
helpers (autograph_runtime) that run plain Python on Python values and eager Tensors, and
build cond/while_loop nodes when the condition is a symbolic Tensor (TensorFlow's rules).

The converted function is compiled from the user's own source with the user's file name
and line numbers, so graph nodes, tracebacks and error messages name the user's lines. It
shares the original's globals, closure cells and defaults.

What the rewrite does, per function scope (nested `def`s get their own):
1. `global`/`nonlocal` declarations move to the top of the function (they apply to all of
   it, and the statements they sit in may move into helper functions).
2. Returns inside control flow become `do_return = True; retval_ = value`; the statements
   after one that may return run under `if not do_return`, loops also test `not
   do_return`, and the function ends with `return retval_`. `if c: return a` followed by
   more statements first becomes `if c: return a` / `else: <the rest>`, as TensorFlow does,
   so both branches of a tensor `if` return.
3. `break`/`continue` become boolean flags in the same way; a loop's `else:` runs after
   the loop when no `break` happened.
4. Liveness analysis decides what each statement hands on: an `if`'s outputs are the
   variables it assigns that are read later; a loop's variables are those it assigns that
   are read in the loop before being assigned, or after it.
5. Each if/while/for becomes nested functions for its branches (or body), a
   get_state/set_state pair over those variables, and one call of `ag__.if_stmt`,
   `ag__.while_stmt` or `ag__.for_stmt`. The nested functions declare the variables they
   assign `nonlocal`, so they update the function's own locals, as the statement did.
6. `a and b`, `a or b`, `not a`, `a if c else b` and chained comparisons (`a < b < c`,
   as `a < b and b < c` with `b` evaluated once) call helpers that build logical ops or
   a cond on symbolic Tensors; every call `f(x)` becomes `ag__.converted_call(f, (x,),
   None)`, which converts user functions the first time they are called while tracing.
"""

import __future__

import ast
import functools
import inspect
import linecache
import operator
import os
import sys
import types
import warnings
import weakref

from . import autograph_runtime, conversion_cache

AG = "ag__"

# Calls that depend on their caller's frame; they keep their direct form.
_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir",
                             "breakpoint"})
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Expressions that mean something else inside a lambda: a walrus would bind the lambda's
# own variable, a yield or await would make the lambda a generator or fail.
_SCOPE_SENSITIVE = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)
_COMPARISON_NAMES = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
                     ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                     ast.NotIn: "not in"}


class AutoGraphError(Exception):
    """AutoGraph cannot convert a function (the message names the user's line)."""


class UnsupportedLanguageElementError(AutoGraphError, NotImplementedError):
    """The function uses Python that cannot be traced into a graph (generators, async)."""


class _NoSource(AutoGraphError):
    pass


def _where(filename, node):
    line = getattr(node, "lineno", None)
    if line is None:
        return filename
    text = linecache.getline(filename, line).strip()
    return f"{filename}:{line}: {text}" if text else f"{filename}:{line}"


# -- names: what a statement binds and reads ------------------------------------------------

def _scope_nodes(node):
    """The nodes of `node` (or a list of them) that belong to the current scope: nested
    functions, lambdas and classes are yielded but not entered."""
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, _NESTED_SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _bound_names(node):
    """Names the statement(s) bind in the current scope (assign, del, def, import, ...)."""
    names = set()
    for n in _scope_nodes(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if not _inside_comprehension_target(n):
                names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                if alias.name != "*":
                    names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return names


def _inside_comprehension_target(name_node):
    return getattr(name_node, "_ag_comprehension_target", False)


def _mark_comprehension_targets(tree):
    """Comprehension variables live in the comprehension's own scope: mark them."""
    for n in ast.walk(tree):
        if isinstance(n, _COMPREHENSIONS):
            for gen in n.generators:
                for t in ast.walk(gen.target):
                    if isinstance(t, ast.Name):
                        t._ag_comprehension_target = True


def _reads(node):
    """Every name loaded in `node`, nested scopes included (a safe over-approximation)."""
    if node is None:
        return set()
    nodes = node if isinstance(node, list) else [node]
    return {n.id for root in nodes for n in ast.walk(root)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _appended_names(node):
    """Names `x` with an `x.append(value)` statement: lists a loop may accumulate."""
    names = set()
    for n in _scope_nodes(node):
        if (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "append"
                and isinstance(n.value.func.value, ast.Name) and len(n.value.args) == 1
                and not n.value.keywords):
            names.add(n.value.func.value.id)
    return names


def _composite_targets(node):
    """Attributes and constant-key items the statement(s) assign (`self.steps = ...`,
    `d["a"] += ...`, `rows[0] = ...`), as source text: like TensorFlow's AutoGraph, a tensor
    loop or `if` carries them as it carries local variables."""
    found = set()
    for n in _scope_nodes(node):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            base = n
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                if isinstance(base, ast.Subscript) and not isinstance(base.slice, ast.Constant):
                    break
                base = base.value
            if isinstance(base, ast.Name):
                found.add(ast.unparse(n))
    return found


def _is_composite(name):
    return not name.isidentifier()


def _expression(text, store=False):
    """The expression `text` (a name or composite target) to load, or to assign to."""
    expr = ast.parse(text, mode="eval").body
    if store:
        expr.ctx = ast.Store()
    return expr


def _contains(stmts, kinds, into_loops=True):
    """True if a node of `kinds` occurs in `stmts` (current scope; optionally not inside
    nested loops, whose break/continue are their own)."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _NESTED_SCOPES):
            continue
        if not into_loops and isinstance(n, (ast.For, ast.While, ast.AsyncFor)):
            stack.extend(n.orelse)  # a loop's else belongs to the enclosing loop
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


# -- AST building -------------------------------------------------------------------------

def _name(id_, store=False, delete=False):
    return ast.Name(id=id_, ctx=ast.Del() if delete else ast.Store() if store else ast.Load())


def _ag(attr):
    return ast.Attribute(value=_name(AG), attr=attr, ctx=ast.Load())


def _call(func, *args):
    return ast.Call(func=func, args=list(args), keywords=[])


def _const(value):
    return ast.Constant(value=value)


def _assign(name, value):
    return ast.Assign(targets=[_name(name, store=True)], value=value)


def _lambda(body):
    return ast.Lambda(args=_no_args(), body=body)


def _no_args():
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _def(name, params, body):
    args = _no_args()
    args.args = [ast.arg(arg=p) for p in params]
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()], decorator_list=[],
                           returns=None, type_comment=None)


def _not(expr):
    return _call(_ag("not_"), expr)


def _all_of(exprs):
    """`e1 and e2 and ...` with the runtime's tensor-aware `and_`."""
    result = exprs[-1]
    for e in reversed(exprs[:-1]):
        result = _call(_ag("and_"), _lambda(e), _lambda(result))
    return result


def _located(nodes, origin):
    """Gives every node without a position the first line of `origin` (the user's line
    that the generated code stands for). Only that line: a call placed on a multi-line
    `for` would otherwise report the `for` statement's last line."""
    for root in nodes:
        for n in ast.walk(root):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                n.lineno, n.col_offset = origin.lineno, origin.col_offset
                n.end_lineno, n.end_col_offset = origin.lineno, origin.col_offset
    return nodes


def _in_place_of(new, old):
    """An expression that replaces `old`: it takes `old`'s whole position."""
    ast.copy_location(new, old)
    return _located([new], old)[0]


# -- per-function rewriting ------------------------------------------------------------

class _Names:
    """Fresh identifiers that collide with no name in the converted source."""

    def __init__(self, tree):
        self.used = {AG}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name):
                self.used.add(n.id)
            elif isinstance(n, ast.arg):
                self.used.add(n.arg)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.used.add(n.name)
            elif isinstance(n, ast.alias):
                self.used.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                self.used.update(n.names)

    def fresh(self, base):
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name


def _is_generator(fndef):
    return _contains(fndef.body, (ast.Yield, ast.YieldFrom, ast.Await))


class _FunctionConverter:
    """Rewrites one function scope (its nested functions first)."""

    def __init__(self, names, filename):
        self.names = names
        self.filename = filename

    def convert(self, fndef):
        self.fndef = fndef
        for child in list(_scope_nodes(fndef.body)):
            if isinstance(child, (ast.FunctionDef,)) and not _is_generator(child):
                _FunctionConverter(self.names, self.filename).convert(child)
        body = fndef.body
        doc = []
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            doc, body = body[:1], body[1:]
        declarations, body = self._hoist_declarations(body)
        self.globals = {n for d in declarations if isinstance(d, ast.Global) for n in d.names}
        self.declared_nonlocal = {n for d in declarations if isinstance(d, ast.Nonlocal)
                                  for n in d.names}
        params = fndef.args
        positional = params.posonlyargs + params.args
        self.first_param = positional[0].arg if positional else None
        self.params = {a.arg for a in params.posonlyargs + params.args + params.kwonlyargs}
        for extra in (params.vararg, params.kwarg):
            if extra is not None:
                self.params.add(extra.arg)
        body = self._rewrite_returns(body)
        body = self._rewrite_jumps(body)
        self.locals = (_bound_names(body) | self.params) - self.globals - self.declared_nonlocal
        _Liveness(self._escaping(body)).block(body, set(), None, None)
        self.nonlocal_names = set()
        body = _ControlFlow(self).visit_block(body)
        dead = sorted(self.nonlocal_names & (self.locals - self.params))
        prelude = []
        if dead:
            # `nonlocal x` in the helpers needs x bound here; this binding never runs.
            prelude = [ast.If(test=_const(False), body=[ast.Assign(
                targets=[_name(n, store=True) for n in dead], value=_const(None))], orelse=[])]
        fndef.body = doc + declarations + _located(prelude, fndef) + body
        return fndef

    @staticmethod
    def _hoist_declarations(body):
        declarations = []

        class Hoist(ast.NodeTransformer):
            def visit_Global(self, node):
                declarations.append(node)
                return ast.copy_location(ast.Pass(), node)

            visit_Nonlocal = visit_Global

            def visit_AnnAssign(self, node):
                # An annotated name cannot be declared nonlocal in a helper; a local
                # variable's annotation has no effect at run time anyway.
                if not isinstance(node.target, ast.Name):
                    return node
                if node.value is None:
                    return ast.copy_location(ast.Pass(), node)
                return ast.copy_location(ast.Assign(targets=[node.target], value=node.value),
                                         node)

            def generic_visit(self, node):
                if isinstance(node, _NESTED_SCOPES):
                    return node
                return super().generic_visit(node)

        module = ast.Module(body=body, type_ignores=[])
        Hoist().visit(module)
        return declarations, module.body

    def _escaping(self, body):
        """Names always live: read by nested functions (which may run at any later
        time), or shared with other scopes through global/nonlocal."""
        names = set(self.globals) | set(self.declared_nonlocal)
        for n in _scope_nodes(body):
            if isinstance(n, _NESTED_SCOPES):
                names |= _reads(n)
        return names

    # -- returns ----------------------------------------------------------------------------
    def _rewrite_returns(self, body):
        if not self._returns_in_control_flow(body):
            return body
        body = _restructure_returns(body)
        do_return = self.names.fresh("do_return")
        retval = self.names.fresh("retval_")
        self.do_return, self.retval = do_return, retval
        init = _located([_assign(do_return, _const(False)),
                         _assign(retval, _ag("UNDEFINED_RETURN"))], self.fndef)
        final = _located([ast.Return(value=_call(_ag("retval"), _name(retval)))],
                         body[-1] if body else self.fndef)
        return init + self._lower(body, _ReturnJump(self)) + final

    @staticmethod
    def _returns_in_control_flow(body):
        return any(isinstance(n, (ast.If, ast.For, ast.While))
                   and _contains(_sub_blocks(n), ast.Return) for n in _scope_nodes(body))

    # -- break / continue -----------------------------------------------------------------
    def _rewrite_jumps(self, body):
        out = []
        for stmt in body:
            for block in _blocks_of(stmt):
                setattr(stmt, block, self._rewrite_jumps(getattr(stmt, block)))
            if isinstance(stmt, (ast.For, ast.While)):
                out.extend(self._rewrite_loop(stmt))
            else:
                out.append(stmt)
        return out

    def _rewrite_loop(self, loop):
        before, after = [], []
        if _contains(loop.body, ast.Continue, into_loops=False):
            flag = self.names.fresh("continue_")
            loop.body = _located([_assign(flag, _const(False))], loop) + self._lower(
                loop.body, _FlagJump(ast.Continue, flag))
        if _contains(loop.body, ast.Break, into_loops=False):
            flag = self.names.fresh("break_")
            loop.body = self._lower(loop.body, _FlagJump(ast.Break, flag))
            before = _located([_assign(flag, _const(False))], loop)
            _add_loop_flag(loop, flag)
            if loop.orelse:
                after = _located([ast.If(test=_not(_name(flag)), body=loop.orelse, orelse=[])],
                                 loop.orelse[0])
        elif loop.orelse:
            after = loop.orelse
        loop.orelse = []
        return before + [loop] + after

    # -- the shared lowering: a jump sets a flag; what follows runs under `if not flag` ---
    def _lower(self, block, jump):
        out = []
        for i, stmt in enumerate(block):
            if jump.matches(stmt):
                out.extend(jump.replacement(stmt))
                return out  # the rest of the block is unreachable
            if not jump.occurs_in(stmt):
                out.append(stmt)
                continue
            for name in _blocks_of(stmt, loops=jump.into_loops):
                if name in ("handlers", "cases"):
                    for part in getattr(stmt, name):
                        part.body = self._lower(part.body, jump)
                else:
                    setattr(stmt, name, self._lower(getattr(stmt, name), jump))
            if isinstance(stmt, (ast.For, ast.While)):
                _add_loop_flag(stmt, jump.flag)
            out.append(stmt)
            rest = block[i + 1:]
            if rest:
                guard = ast.If(test=_not(_name(jump.flag)), body=self._lower(rest, jump),
                               orelse=[])
                out.extend(_located([guard], rest[0]))
            return out
        return out


def _add_loop_flag(loop, flag):
    """The loop also stops when `flag` is set (a break, or a return inside it)."""
    flags = getattr(loop, "_ag_flags", [])
    if flag not in flags:
        loop._ag_flags = flags + [flag]


class _ReturnJump:
    into_loops = True

    def __init__(self, converter):
        self.flag = converter.do_return
        self.retval = converter.retval

    @staticmethod
    def matches(stmt):
        return isinstance(stmt, ast.Return)

    def occurs_in(self, stmt):
        return _contains([stmt], ast.Return)

    def replacement(self, stmt):
        value = stmt.value if stmt.value is not None else _const(None)
        return _located([_assign(self.flag, _const(True)), _assign(self.retval, value)], stmt)


class _FlagJump:
    into_loops = False

    def __init__(self, kind, flag):
        self.kind, self.flag = kind, flag

    def matches(self, stmt):
        return isinstance(stmt, self.kind)

    def occurs_in(self, stmt):
        if isinstance(stmt, (ast.For, ast.While)):
            return False  # a nested loop's break/continue are its own
        return _contains([stmt], self.kind, into_loops=False)

    def replacement(self, stmt):
        return _located([_assign(self.flag, _const(True))], stmt)


def _blocks_of(stmt, loops=True):
    """Names of the statement-list fields of a compound statement."""
    if isinstance(stmt, (ast.For, ast.While)):
        return ("body", "orelse") if loops else ()
    if isinstance(stmt, ast.If):
        return ("body", "orelse")
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return ("body",)
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return ("body", "orelse", "finalbody", "handlers")
    if isinstance(stmt, ast.Match):
        return ("cases",)
    if isinstance(stmt, (ast.ExceptHandler, ast.match_case)):
        return ("body",)
    return ()


def _sub_blocks(stmt):
    out = []
    for name in _blocks_of(stmt):
        out.extend(getattr(stmt, name))
    return out


def _definitely_returns(block):
    for stmt in block:
        if isinstance(stmt, ast.Return):
            return True
        if isinstance(stmt, ast.If) and _definitely_returns(stmt.body) and \
                _definitely_returns(stmt.orelse):
            return True
    return False


def _restructure_returns(block):
    """`if c: ...return` followed by more statements: the rest moves into `else:` (or
    into the body, when the `else:` is the branch that returns)."""
    out = []
    for i, stmt in enumerate(block):
        if isinstance(stmt, ast.If):
            body_returns, else_returns = (_definitely_returns(stmt.body),
                                          _definitely_returns(stmt.orelse))
            rest = block[i + 1:]
            if rest and (body_returns or else_returns):
                if not (body_returns and else_returns):
                    if body_returns:
                        stmt.orelse = stmt.orelse + rest
                    else:
                        stmt.body = stmt.body + rest
                stmt.body = _restructure_returns(stmt.body)
                stmt.orelse = _restructure_returns(stmt.orelse)
                out.append(stmt)
                return out
        for name in _blocks_of(stmt):
            if name not in ("handlers", "cases"):
                setattr(stmt, name, _restructure_returns(getattr(stmt, name)))
        out.append(stmt)
        if isinstance(stmt, ast.Return):
            return out
    return out


# -- liveness ----------------------------------------------------------------------------

class _Liveness:
    """Backward liveness over one scope's statements. Annotates each statement with
    `_ag_live_out` and each loop with `_ag_head` (the names live where the loop tests its
    condition); `always` names are live everywhere."""

    def __init__(self, always):
        self.always = frozenset(always)

    def block(self, stmts, live, brk, cont):
        live = frozenset(live) | self.always
        for stmt in reversed(stmts):
            stmt._ag_live_out = live
            live = frozenset(self.stmt(stmt, live, brk, cont)) | self.always
        return live

    def _loop_head(self, s, after, exit_live):
        """Names live where the loop tests whether to run the body again."""
        flags = set(getattr(s, "_ag_flags", ()))
        test = _reads(s.test) if isinstance(s, ast.While) else set()
        if isinstance(s, ast.For):  # the target is assigned before each run of the body
            targets, exit_kills, target_reads = _bound_names(s.target), set(), _reads(s.target)
        else:  # a walrus in the test assigns before the body runs, and before the exit
            targets = exit_kills = _bound_names(s.test)
            target_reads = set()
        head = frozenset(test | flags | (after - exit_kills))
        while True:
            body_in = self.block(s.body, head, exit_live, head)
            new = frozenset(test | flags | (after - exit_kills) | (body_in - targets)
                            | target_reads)
            if new == head:
                return head
            head = new

    def stmt(self, s, live, brk, cont):
        if isinstance(s, ast.If):
            branches = self.block(s.body, live, brk, cont) | self.block(s.orelse, live, brk,
                                                                        cont)
            return _reads(s.test) | (branches - _bound_names(s.test))
        if isinstance(s, (ast.While, ast.For)):
            # First the names the loop itself reads before assigning them (they must be
            # defined before a tensor loop), then the real pass, whose annotations stay.
            s._ag_reads_first = self._loop_head(s, frozenset(), frozenset()) - self.always
            after = self.block(s.orelse, live, brk, cont)
            s._ag_head = self._loop_head(s, after, live)
            return s._ag_head | (_reads(s.iter) if isinstance(s, ast.For) else set())
        if isinstance(s, ast.Break):
            return live if brk is None else brk
        if isinstance(s, ast.Continue):
            return live if cont is None else cont
        if isinstance(s, ast.Return):
            return _reads(s.value)
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.Delete, ast.Import, ast.ImportFrom,
                          ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return (live - _bound_names(s)) | _reads(s)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            body_in = self.block(s.body, live, brk, cont)
            bound = set()
            for item in s.items:
                if item.optional_vars is not None:
                    bound |= _bound_names(item.optional_vars)
            return (body_in - bound) | _reads([i.context_expr for i in s.items])
        if _blocks_of(s):
            # try / match: no kills, everything read anywhere stays live throughout.
            conservative = live | _reads(s)
            for name in _blocks_of(s):
                for part in getattr(s, name):
                    sub = part.body if isinstance(part, (ast.ExceptHandler,
                                                         ast.match_case)) else [part]
                    self.block(sub, conservative, brk, cont)
            return conservative
        if isinstance(s, ast.AugAssign):
            return live | _reads(s) | _bound_names(s.target)
        return live | _reads(s)  # expressions, assert, raise, pass, ...


# -- the rewrite into runtime calls ---------------------------------------------------------

class _ControlFlow(ast.NodeTransformer):
    """Turns if/while/for into runtime calls and converts expressions (calls, and/or/not,
    conditional expressions). Post-order: inner statements are rewritten first."""

    def __init__(self, converter):
        self.cv = converter
        self.names = converter.names

    def visit_block(self, stmts):
        module = ast.Module(body=stmts, type_ignores=[])
        self.generic_visit(module)
        return module.body

    # nested scopes keep their own conversion (functions) or none (classes); a lambda's
    # body is an expression of this function, converted in place as TensorFlow does
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.generic_visit(node)
        return node

    # -- statements ---------------------------------------------------------------------
    def _modified(self, stmts, node):
        """Names the statements assign (locals, or declared global), and the lists they
        append to."""
        bound = _bound_names(stmts) | _composite_targets(stmts)
        appended = _appended_names(stmts) & (self.cv.locals | self.cv.globals)
        return bound | appended, appended

    def _declare(self, names):
        """`nonlocal` / `global` statements for a helper that assigns `names`."""
        out = []
        names = [n for n in names if not _is_composite(n)]
        nonlocal_ = sorted(n for n in names if n not in self.cv.globals)
        global_ = sorted(n for n in names if n in self.cv.globals)
        if nonlocal_:
            self.cv.nonlocal_names.update(n for n in nonlocal_ if n in self.cv.locals)
            out.append(ast.Nonlocal(names=nonlocal_))
        if global_:
            out.append(ast.Global(names=global_))
        return out

    def _state_functions(self, names, origin):
        """get_state()/set_state(values) over `names`, tolerant of unbound names."""
        if not names:
            return [], _ag("get_no_state"), _ag("set_no_state")
        get_name = self.names.fresh("get_state")
        set_name = self.names.fresh("set_state")
        values = self.names.fresh("vars_")
        getter = _def(get_name, [], [ast.Return(value=ast.Tuple(
            elts=[_call(_ag("ld"), _lambda(_expression(n))) for n in names], ctx=ast.Load()))])
        body = self._declare(names)
        for i, n in enumerate(names):
            item = ast.Subscript(value=_name(values), slice=_const(i), ctx=ast.Load())
            if _is_composite(n):  # an attribute or item that was never set stays unset
                body.append(ast.If(
                    test=ast.Compare(left=item, ops=[ast.IsNot()],
                                     comparators=[_ag("UNDEFINED")]),
                    body=[ast.Assign(targets=[_expression(n, store=True)], value=item)],
                    orelse=[]))
                continue
            body.append(ast.If(
                test=ast.Compare(left=item, ops=[ast.Is()], comparators=[_ag("UNDEFINED")]),
                body=[ast.Try(body=[ast.Delete(targets=[_name(n, delete=True)])],
                              handlers=[ast.ExceptHandler(type=_name("NameError"), name=None,
                                                          body=[ast.Pass()])],
                              orelse=[], finalbody=[])],
                orelse=[_assign(n, item)]))
        setter = _def(set_name, [values], body)
        return _located([getter, setter], origin), _name(get_name), _name(set_name)

    def _loc(self, node):
        return _const((self.cv.filename, node.lineno))

    def visit_If(self, node):
        modified, _ = self._modified(node.body + node.orelse, node)  # before the rewrite
        self.generic_visit(node)
        outputs = sorted(n for n in modified if n in node._ag_live_out or _is_composite(n))
        body_name = self.names.fresh("if_body")
        else_name = self.names.fresh("else_body")
        branches = [_def(body_name, [], self._declare(modified) + node.body),
                    _def(else_name, [], self._declare(modified) + node.orelse)]
        state, get_state, set_state = self._state_functions(outputs, node)
        call = ast.Expr(value=_call(_ag("if_stmt"), node.test, _name(body_name),
                                    _name(else_name), get_state, set_state,
                                    _const(tuple(outputs)), self._loc(node)))
        return _located(branches, node) + state + _located([call], node)

    def _loop_parts(self, node, stmts, carried=()):
        modified, appended = self._modified(stmts, node)
        head = node._ag_head
        loop_vars = sorted(n for n in modified if n in head or n in node._ag_live_out
                           or n in carried or _is_composite(n))
        reads_first = node._ag_reads_first
        return (modified, loop_vars, tuple(n for n in loop_vars if n in reads_first),
                tuple(n for n in loop_vars if n in appended))

    def visit_While(self, node):
        # A walrus in the test assigns too. Its target is a loop variable even where only
        # the body reads it: a tensor loop evaluates the test at the end of the previous
        # iteration.
        test_assigns = sorted(_bound_names(node.test))
        modified, loop_vars, head, lists = self._loop_parts(node, node.body + [node.test],
                                                            carried=test_assigns)
        self.generic_visit(node)
        flags = getattr(node, "_ag_flags", [])
        test = node.test
        test_name = self.names.fresh("loop_test")
        body_name = self.names.fresh("loop_body")
        defs = [_def(test_name, [], self._declare(test_assigns) + [ast.Return(value=test)]),
                _def(body_name, [], self._declare(modified) + node.body)]
        options = []
        if test_assigns:
            # The test runs once per iteration, after the break/return flags say the loop
            # goes on: the runtime gets them apart (in one `and_`, the walrus would sit in
            # a lambda and assign the lambda's own variable).
            options.append(ast.keyword(arg="test_assigns", value=_const(True)))
            if flags:
                extra_name = self.names.fresh("extra_test")
                defs.append(_def(extra_name, [], [ast.Return(
                    value=_all_of([_not(_name(f)) for f in flags]))]))
                options.append(ast.keyword(arg="extra_test", value=_name(extra_name)))
        elif flags:
            defs[0].body[-1].value = _all_of([_not(_name(f)) for f in flags] + [test])
        state, get_state, set_state = self._state_functions(loop_vars, node)
        call = ast.Expr(value=_call(_ag("while_stmt"), _name(test_name), _name(body_name),
                                    get_state, set_state, _const(tuple(loop_vars)),
                                    _const(head), _const(lists), self._loc(node)))
        call.value.keywords = options
        return _located(defs, node) + state + _located([call], node)

    def visit_For(self, node):
        target_assign = ast.copy_location(
            ast.Assign(targets=[node.target], value=None), node.target)
        modified, loop_vars, head, lists = self._loop_parts(node, [target_assign] + node.body)
        self.generic_visit(node)
        flags = getattr(node, "_ag_flags", [])
        item = self.names.fresh("itr")
        target_assign.value = _name(item)
        body_name = self.names.fresh("loop_body")
        defs = [_def(body_name, [item], self._declare(modified) + [target_assign] + node.body)]
        extra_test = _const(None)
        if flags:
            test_name = self.names.fresh("extra_test")
            defs.append(_def(test_name, [], [ast.Return(
                value=_all_of([_not(_name(f)) for f in flags]))]))
            extra_test = _name(test_name)
        state, get_state, set_state = self._state_functions(loop_vars, node)
        call = ast.Expr(value=_call(_ag("for_stmt"), node.iter, extra_test, _name(body_name),
                                    get_state, set_state, _const(tuple(loop_vars)),
                                    _const(head), _const(lists), self._loc(node)))
        return _located(defs, node) + state + _located([call], node)

    # -- expressions ----------------------------------------------------------------------
    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id == "super" and not node.args \
                and not node.keywords and self.cv.first_param is not None:
            # Zero-argument super() finds its class and instance through the calling
            # frame; inside a helper function it must name them.
            node.args = [_in_place_of(_name("__class__"), func),
                         _in_place_of(_name(self.cv.first_param), func)]
            return node
        if isinstance(func, ast.Name) and func.id in _FRAME_BUILTINS:
            return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == AG:
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        if node.keywords:
            kwargs = ast.Dict(keys=[None if k.arg is None else _const(k.arg)
                                    for k in node.keywords],
                              values=[k.value for k in node.keywords])
        else:
            kwargs = _const(None)
        return _in_place_of(ast.Call(func=_ag("converted_call"), args=[func, args, kwargs],
                                     keywords=[]), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        # Every operand, the first too, goes into a lambda below, where a `:=` would bind
        # the lambda's local instead of the function's: leave such an expression as is.
        if _contains(node.values, _SCOPE_SENSITIVE):
            return node
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(_ag(helper), _lambda(value), _lambda(result))
        return _in_place_of(result, node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or _contains(node.comparators[1:], _SCOPE_SENSITIVE):
            return node
        # `a < b < c` is `a < b and b < c` with `b` evaluated once. Python always
        # evaluates the first two operands; each later one comes as a thunk, called only
        # when the chain gets that far.
        ops = [_const(_COMPARISON_NAMES[type(op)]) for op in node.ops]
        later = [ast.Tuple(elts=[op, _lambda(operand)], ctx=ast.Load())
                 for op, operand in zip(ops[1:], node.comparators[1:])]
        return _in_place_of(_call(_ag("compare_chain"), node.left, ops[0],
                                  node.comparators[0], *later), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _in_place_of(_not(node.operand), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if _contains([node.body, node.orelse], _SCOPE_SENSITIVE):
            return node
        return _in_place_of(_call(_ag("if_exp"), node.test, _lambda(node.body),
                                  _lambda(node.orelse), self._loc(node)), node)


# -- from a function object to its converted twin -------------------------------------------

def _defining_class(fn):
    """The name of the class whose body defines `fn` (private names are mangled with it)."""
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None


# The name a converted function's def gets inside its factory: its own name there would
# shadow the global a recursive function calls itself through.
_CONVERTED_NAME = "ag__converted"


def _compiled_lambda(lam, code, filename):
    """The code object of the Lambda node `lam` compiled as `code` was: inside a function
    whose locals are `code`'s free variables, so that a lambda closing over its
    enclosing function's variables reads them as cells there too (compiled alone, it
    would read globals, and its bytecode would not match)."""
    if code.co_freevars:
        enclosing = ast.FunctionDef(
            name="enclosing", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                 kw_defaults=[], defaults=[]),
            body=[ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                             value=ast.Constant(value=None)) for name in code.co_freevars]
            + [ast.Return(value=lam)], decorator_list=[], returns=None, type_params=[])
        tree = ast.Module(body=[enclosing], type_ignores=[])
        mode = "exec"
    else:
        tree, mode = ast.Expression(body=lam), "eval"
    ast.fix_missing_locations(tree)
    probe = compile(tree, filename, mode, flags=code.co_flags & _FUTURE_FLAGS,
                    dont_inherit=True)
    if code.co_freevars:
        probe = next((c for c in probe.co_consts if isinstance(c, types.CodeType)), None)
        if probe is None:
            return None
    return next((c for c in probe.co_consts if isinstance(c, types.CodeType)), None)


def _parse_lambda(fn, lines, first, filename):
    """A lambda's source as `def ...(args): return body`: the Lambda node on the
    code's first line with the same arguments and bytecode (several lambdas may share a
    line). The smallest run of lines from there that parses holds it."""
    code = fn.__code__
    for end in range(first + 1, min(len(lines), first + 50) + 1):
        text = "".join(lines[first:end])
        indented = text[:1] in (" ", "\t")  # parsed inside `if 1:`, as in _parse
        try:
            tree = ast.parse(("if 1:\n" if indented else "") + text, filename=filename)
        except SyntaxError:
            continue
        ast.increment_lineno(tree, first - 1 if indented else first)
        found = []
        for n in ast.walk(tree):
            if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno:
                inner = _compiled_lambda(n, code, filename)
                if inner is not None and inner.co_code == code.co_code and \
                        inner.co_varnames == code.co_varnames:
                    found.append(n)
        if len(found) != 1:
            break
        lam = found[0]
        node = ast.FunctionDef(name=_CONVERTED_NAME, args=lam.args,
                               body=[ast.Return(value=lam.body)], decorator_list=[],
                               returns=None, type_params=[])
        ast.copy_location(node, lam)
        ast.copy_location(node.body[0], lam.body)
        return node, filename
    raise _NoSource(f"cannot find the source of {fn.__qualname__}")


def _indented_block(lines, first):
    """The lines from `first` to the next line indented no deeper than it (blank lines and
    comments aside). Parsing tells whether that is the whole definition: a cut inside a
    bracket, a string or a continued line does not parse. inspect.getblock tokenizes
    instead, which costs more than the rest of a small function's conversion on its
    first use in a process (tokenize compiles its patterns)."""
    head = lines[first]
    indent = len(head) - len(head.lstrip(" \t"))
    end = first + 1
    while end < len(lines):
        line = lines[end]
        text = line.lstrip(" \t")
        if text.strip() and not text.startswith("#") and len(line) - len(text) <= indent:
            break
        end += 1
    return lines[first:end]


def _parsed_block(block, filename):
    """(module, indent) for a def's lines; raises SyntaxError."""
    source = "".join(block)
    indent = len(source) - len(source.lstrip(" \t"))
    # An indented def (a method, a nested function) parses inside `if 1:`, which keeps
    # every column (and multi-line string) exactly as in the file.
    wrapped = ("if 1:\n" + source) if indent else source
    return ast.parse(wrapped, filename=filename), indent


def _source(fn):
    """(the lines of fn's file, the index of its first line, the file's name)."""
    code = fn.__code__
    filename = code.co_filename
    if code.co_name != "<lambda>" and not filename.startswith("<"):
        # A def's code starts at its first line (or decorator), so only the lines are
        # needed: inspect.findsource would search back for it with a pattern that it
        # compiles on its first use in a process.
        linecache.checkcache(filename)
        lines = linecache.getlines(filename, fn.__globals__)
        first = code.co_firstlineno - 1
        if 0 <= first < len(lines) and lines[first].lstrip().startswith(("def ", "@", "async ")):
            return lines, first, filename
    try:
        # The function, not its code: from a code object, inspect finds the module by
        # scanning every loaded module's file (about 50 ms, on a first trace).
        lines, first = inspect.findsource(fn)
    except (OSError, TypeError) as e:
        raise _NoSource(f"source of {fn.__qualname__} is not available ({e})") from None
    return lines, first, fn.__code__.co_filename


def _parse(fn, lines, first, filename):
    """(fn's FunctionDef, whether the lines `_indented_block` gives are the whole of
    it)."""
    code = fn.__code__
    if code.co_name == "<lambda>":
        return _parse_lambda(fn, lines, first, filename)[0], False
    whole = True
    try:
        tree, indent = _parsed_block(_indented_block(lines, first), filename)
    except SyntaxError:
        whole = False
        try:
            tree, indent = _parsed_block(inspect.getblock(lines[first:]), filename)
        except SyntaxError as e:
            raise _NoSource(f"cannot parse the source of {fn.__qualname__}: {e}") from None
    node = tree.body[0].body[0] if indent else tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            node.name != code.co_name:
        raise _NoSource(f"the source found for {fn.__qualname__} does not define it "
                        f"(was the file changed after it was imported?)")
    ast.increment_lineno(node, first - (1 if indent else 0))
    return node, whole


_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, f).compiler_flag for f in __future__.all_feature_names))
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_CONVERTED_CODES = set()      # code objects compiled by AutoGraph: already converted
_CODE_CACHE = {}              # original code object -> converted code object
_FUNCTION_CACHE = weakref.WeakKeyDictionary()  # function -> converted function


def _converted_code(fn):
    code = fn.__code__
    cached = _CODE_CACHE.get(code)
    if cached is not None:
        return cached
    lines, first, filename = _source(fn)
    owner = _defining_class(fn)
    digest = None
    if code.co_name != "<lambda>":
        digest = conversion_cache.key(_indented_block(lines, first), first, filename, code,
                                      owner)
        module_code = conversion_cache.load(digest)
        if module_code is not None:
            return _extract(code, module_code, owner, None)
    node, module_code, whole = _converted_tree(fn, lines, first, filename, owner)
    if digest is not None and whole:
        conversion_cache.save(digest, module_code)
    return _extract(code, module_code, owner, node)


def _converted_tree(fn, lines, first, filename, owner):
    """(the converted FunctionDef, the compiled module that defines its factory, whether
    the source was `_indented_block`'s lines)."""
    code = fn.__code__
    node, whole = _parse(fn, lines, first, filename)
    if isinstance(node, ast.AsyncFunctionDef) or _is_generator(node):
        bad = next(n for n in _scope_nodes(node.body) if isinstance(
            n, (ast.Yield, ast.YieldFrom, ast.Await))) if _is_generator(node) else node
        what = {ast.Yield: "'yield'", ast.YieldFrom: "'yield from'",
                ast.Await: "'await'"}.get(type(bad), "'async def'")
        raise UnsupportedLanguageElementError(
            f"tf.function cannot convert {fn.__qualname__}: {what} is not supported (a "
            f"generator or coroutine cannot be traced into a graph), at "
            f"{_where(filename, bad)}")
    if any(isinstance(n, ast.Name) and n.id == AG for n in ast.walk(node)):
        raise AutoGraphError(f"{fn.__qualname__} uses the name {AG!r}, which AutoGraph "
                             f"reserves, at {_where(filename, node)}")
    node.decorator_list = []
    node.name = _CONVERTED_NAME
    _mark_comprehension_targets(node)
    names = _Names(node)
    _FunctionConverter(names, filename).convert(node)
    freevars = [v for v in code.co_freevars if v != "__class__"]
    body = [node]
    if owner is not None:
        body = [ast.ClassDef(name=owner, bases=[], keywords=[], body=[node],
                             decorator_list=[])]
    factory = _def("ag__factory", [AG] + freevars, body)
    module = ast.Module(body=[_located([factory], node)[0]], type_ignores=[])
    ast.fix_missing_locations(module)
    module_code = compile(module, filename, "exec", flags=code.co_flags & _FUTURE_FLAGS,
                          dont_inherit=True)
    return node, module_code, whole


def _extract(code, module_code, owner, node):
    """The converted function's code object, out of the module that defines its
    factory; remembered for `code` (and `node`, its source, for to_source)."""
    factory_code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    scope_code = factory_code
    if owner is not None:
        scope_code = next(c for c in factory_code.co_consts
                          if isinstance(c, types.CodeType) and c.co_name == owner)
    new_code = next(c for c in scope_code.co_consts if isinstance(c, types.CodeType)
                    and c.co_name == _CONVERTED_NAME)
    names = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):  # Python 3.11+
        names["co_qualname"] = code.co_qualname
    new_code = new_code.replace(**names)
    _remember_codes(new_code)
    _CODE_CACHE[code] = new_code
    if node is not None:
        _SOURCE_CACHE[new_code] = node
    else:
        _FROM_DISK.add(new_code)
    return new_code


_SOURCE_CACHE = {}  # converted code object -> the converted FunctionDef (for to_source)
_FROM_DISK = set()  # converted code objects loaded from conversion_cache (no FunctionDef)


def _remember_codes(code):
    _CONVERTED_CODES.add(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _remember_codes(c)


def _rebuild(fn, new_code):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = []
    for name in new_code.co_freevars:
        if name == AG:
            closure.append(types.CellType(autograph_runtime))
        else:
            closure.append(cells[name])
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(closure) or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__doc__ = fn.__doc__
    new.__annotations__ = getattr(fn, "__annotations__", {})
    new.__dict__.update(fn.__dict__)
    return new


def is_converted(fn):
    """True for functions AutoGraph produced (or defined inside converted code)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code in _CONVERTED_CODES


def do_not_convert(fn):
    """Marks `fn` to be called as-is from converted code (`tf.autograph.experimental.
    do_not_convert`)."""
    fn.__ag_do_not_convert__ = True
    return fn


def convert(fn, _strict=True):
    """The AutoGraph version of `fn`, converted once per function object.

    Bound methods and functools.partial objects convert their function; lambdas, builtins,
    tapeflow's own functions, the standard library's and NumPy's, and functions marked
    with `do_not_convert` come back unchanged. A function whose source
    is unavailable runs as-is (with a warning), as in TensorFlow. A generator or
    coroutine raises UnsupportedLanguageElementError naming the line.
    """
    if isinstance(fn, types.MethodType):
        converted = convert(fn.__func__, _strict)
        return fn if converted is fn.__func__ else types.MethodType(converted, fn.__self__)
    if isinstance(fn, functools.partial):
        converted = convert(fn.func, _strict)
        return fn if converted is fn.func else functools.partial(converted, *fn.args,
                                                                 **fn.keywords)
    if not isinstance(fn, (types.FunctionType, type)) and callable(fn):
        call = getattr(type(fn), "__call__", None)  # a callable object: its __call__
        if isinstance(call, types.FunctionType):
            converted = convert(call, _strict)
            return fn if converted is call else types.MethodType(converted, fn)
    if not isinstance(fn, types.FunctionType) or not _convertible(fn):
        return fn
    try:
        return _FUNCTION_CACHE[fn]
    except KeyError:
        pass
    if not _strict and fn.__code__.co_flags & _GENERATOR_FLAGS:
        return fn  # called from converted code: a generator runs as-is, as in TensorFlow
    try:
        new_code = _converted_code(fn)
    except _NoSource as e:
        if fn.__name__ != "<lambda>":  # a lambda typed at a prompt: nothing to say
            _warn_once(fn, f"AutoGraph could not transform {fn.__qualname__} and will run "
                           f"it as-is: {e}")
        _FUNCTION_CACHE[fn] = fn
        return fn
    except AutoGraphError:
        if _strict:
            raise
        _FUNCTION_CACHE[fn] = fn
        return fn
    except Exception as e:  # noqa: BLE001 (a construct the rewrite gets wrong: run as-is)
        _warn_once(fn, f"AutoGraph could not transform {fn.__qualname__} and will run it "
                       f"as-is (please report this tapeflow bug): {type(e).__name__}: {e}")
        _FUNCTION_CACHE[fn] = fn
        return fn
    converted = _rebuild(fn, new_code)
    _FUNCTION_CACHE[fn] = converted
    return converted


_WARNED = set()


def _warn_once(fn, message):
    key = getattr(fn, "__code__", fn)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(message, AutoGraphWarning, stacklevel=3)


class AutoGraphWarning(UserWarning):
    """AutoGraph runs a function as-is because it could not convert it."""


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_MODULE_PREFIXES = ("numpy", "scipy", "numba", "llvmlite", "builtins",
                         "functools", "collections", "abc", "typing", "inspect",
                         "pytest", "_pytest", "hypothesis", "pluggy", "contextlib", "copy",
                         "threading", "weakref", "warnings", "math", "random", "itertools",
                         "operator", "re", "enum", "dataclasses", "tensorflow", "jax",
                         "torch")


def _convertible(fn):
    if fn.__code__ in _CONVERTED_CODES:
        return False
    if getattr(fn, "__ag_do_not_convert__", False):
        return False
    if fn.__code__.co_filename.startswith(_PACKAGE_DIR):
        return False  # tapeflow's own functions
    module = fn.__module__ or fn.__globals__.get("__name__", "") or ""
    top = module.split(".")[0]
    return not (top in _SKIP_MODULE_PREFIXES or top in _STDLIB)


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__", "test"}


def to_source(fn):
    """The converted source of `fn`, as text (`tf.autograph.to_code`)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    converted = convert(fn)
    converted_code = getattr(converted, "__code__", None)
    node = _SOURCE_CACHE.get(converted_code)
    if node is None and converted_code in _FROM_DISK:
        node = _SOURCE_CACHE[converted_code] = _converted_tree(
            fn, *_source(fn), _defining_class(fn))[0]
    if node is None:
        return inspect.getsource(fn)
    return ast.unparse(node)


__all__ = [
    "AutoGraphError",
    "AutoGraphWarning",
    "UnsupportedLanguageElementError",
    "convert",
    "do_not_convert",
    "is_converted",
    "to_source",
]
