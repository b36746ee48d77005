"""Helpers that kernels call by symbol instead of linking their code in.

Numba links a called function's LLVM IR into the caller and optimizes and compiles it
again there: a kernel calling `xent3` re-optimized its 370 KB of IR, about 0.4 s of
every such kernel's first compile, although the helper's machine code already existed.
The array helpers marked `by_symbol` (kernels/) are compiled once per signature (and
cached on disk with the other helpers); their machine code is given to LLVM under a
name of tapeflow's, stable across processes (`symbol`), and kernels call that name.
Scalar helpers stay linked: LLVM must inline them into the loops it vectorizes. A
kernel's own functions made of its repeated code (outline.py) are called the same way
(machine.py), each cached beside the kernel.

A kernel compiled this way needs its helpers' symbols before its machine code can be
loaded, also from the disk cache in a later process. So each compiled library records
what it calls (`requirements`), the cache stores that list next to the machine code, and
loading it first compiles or loads the helpers (`provide`); a list naming anything but a
marked helper of kernels/ or of the kernel's own module is refused, and the entry is
compiled again.
"""

import hashlib
import importlib
import sys
import weakref

from llvmlite import binding
from numba.core import cgutils, imputils

_MARK = "_tapeflow_by_symbol"
_ENABLED = "_tapeflow_symbols_enabled"
_PROVIDER = "_tapeflow_symbol_provider"
# code library -> {(module, qualname, argument types)} of the helpers it calls by symbol
_called = weakref.WeakKeyDictionary()


def symbol_provider(symbol_name):
    """Marks a function of kernels/ that gives LLVM `symbol_name`, a symbol machine code
    calls by name, and returns the compiled function behind it (microgemm.register): a
    library that calls the symbol records it (`requires`), and loading that library
    from the cache calls the function first."""
    def mark(fn):
        setattr(fn, _PROVIDER, symbol_name)
        return fn
    return mark


def requires(context, provider):
    """Records, while `context` lowers a library, that its machine code calls a symbol
    that `provider` (a symbol_provider) makes known."""
    _called.setdefault(context.active_code_library, set()).add(
        (provider.__module__, provider.__qualname__, ()))


def by_symbol(dispatcher):
    """Marks a helper dispatcher of kernels/ to be called by symbol (module docstring)."""
    setattr(dispatcher, _MARK, True)
    return dispatcher


def symbol(dispatcher, argtypes):
    """The name under which this helper's machine code for `argtypes` is known."""
    func = dispatcher.py_func
    signature = hashlib.sha256(repr(tuple(map(str, argtypes))).encode()).hexdigest()[:20]
    return f"tapeflow.helper.{func.__module__}.{func.__qualname__}.{signature}"


def enable(dispatcher):
    """Makes calls to a marked dispatcher, from any jitted code compiled from now on, go
    by symbol: its present overloads and those compiled or loaded later."""
    if not getattr(dispatcher, _MARK, False) or getattr(dispatcher, _ENABLED, False):
        return
    add_overload = dispatcher.add_overload

    def add_overload_by_symbol(cres):
        add_overload(cres)
        _publish(dispatcher, cres)

    dispatcher.add_overload = add_overload_by_symbol
    setattr(dispatcher, _ENABLED, True)
    for cres in list(dispatcher.overloads.values()):
        _publish(dispatcher, cres)


def _publish(dispatcher, cres):
    if cres.objectmode:
        return
    fndesc = cres.fndesc
    name = symbol(dispatcher, fndesc.argtypes)
    binding.add_symbol(name, cres.library.get_pointer_to_function(fndesc.mangled_name))
    context = dispatcher.targetctx
    # Numba registered the overload as a call that links its library; replace it.
    context.remove_user_function(cres.entry_point)
    call = _call(name, fndesc, (dispatcher.py_func.__module__,
                                dispatcher.py_func.__qualname__, tuple(fndesc.argtypes)))
    context._defns[cres.entry_point].append(call, call.signature)


def _call(name, fndesc, requirement):
    def call(context, builder, sig, args):
        fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        context.apply_target_attributes(fn, fndesc.argtypes, fndesc.restype)
        context.call_conv.decorate_function(fn, fndesc.args, fndesc.argtypes,
                                            noalias=fndesc.noalias)
        status, value = context.call_conv.call_function(builder, fn, fndesc.restype,
                                                        fndesc.argtypes, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        value = imputils.fix_returning_optional(context, builder, sig, status, value)
        _called.setdefault(context.active_code_library, set()).add(requirement)
        return imputils.impl_ret_new_ref(context, builder, fndesc.restype, value)

    call.signature = fndesc.argtypes
    call.libs = ()
    return call


def loaded(library, required):
    """Records that `library`, loaded from the cache, calls what `required` (its
    `requirements` when it was compiled) lists."""
    _called.setdefault(library, set()).update(required)


def requirements(library):
    """The helpers `library` and the libraries linked into it call by symbol."""
    found, seen, pending = set(), set(), [library]
    while pending:
        lib = pending.pop()
        if id(lib) in seen:
            continue
        seen.add(id(lib))
        found |= _called.get(lib, set())
        pending.extend(getattr(lib, "_linking_libraries", ()))
    return tuple(sorted(found, key=repr))


def _module(name):
    """The module `name` of a requirement: one of tapeflow's own is imported; any other (a
    generated kernel's, whose functions it calls by symbol) must be loaded already, from
    the source tapeflow generated (cache.load), never looked for on sys.path, where a
    file planted in a folder on it would run. Raises LookupError otherwise."""
    if name.partition(".")[0] == __name__.partition(".")[0]:
        return importlib.import_module(name)
    module = sys.modules.get(name)
    if module is None:
        raise LookupError(f"{name} is not loaded")
    return module


def defining(requirement):
    """(symbol, code library, the name of the function in it) for one of `requirements`:
    the machine code a library calls by that symbol (native_bundle.py saves it)."""
    module_name, qualname, argtypes = requirement
    dispatcher = getattr(_module(module_name), qualname)
    provided = getattr(dispatcher, _PROVIDER, None)
    if provided:
        compiled = dispatcher()
        return provided, compiled._library, compiled.native_name
    cres = dispatcher.overloads[tuple(argtypes)]
    return symbol(dispatcher, argtypes), cres.library, cres.fndesc.mangled_name


def provide(required, helper_modules):
    """Compiles (or loads) each required helper overload, or calls each required symbol
    provider, so that every symbol is known before machine code that calls it is
    loaded. Raises ValueError for a requirement that is neither a marked helper nor a
    provider of `helper_modules` (names), or whose symbol is still unknown, and
    LookupError for one of a module not tapeflow's that is not loaded (`_module`)."""
    for module_name, qualname, argtypes in required:
        if module_name not in helper_modules:
            raise ValueError(f"not a helper module: {module_name!r}")
        dispatcher = getattr(_module(module_name), qualname, None)
        if getattr(dispatcher, _PROVIDER, False):
            dispatcher()
            continue
        if not getattr(dispatcher, _MARK, False):
            raise ValueError(f"not a helper called by symbol: {module_name}.{qualname}")
        enable(dispatcher)
        dispatcher.compile(tuple(argtypes))
        if not binding.address_of_symbol(symbol(dispatcher, argtypes)):
            raise ValueError(f"{module_name}.{qualname}{argtypes}: no machine code")
