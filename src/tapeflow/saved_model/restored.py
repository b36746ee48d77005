"""What tf.saved_model.load returns: plain objects holding Variables, the functions that
run the saved traces (RestoredFunction), and the signatures (SignatureFunction)."""

import inspect
from collections.abc import Mapping

from .. import nest
from ..errors import InvalidArgumentError
from ..graph.signature import TensorSpec, trace_key_of
from ..tensor import Tensor, TensorShape, _Operators, convert_to_tensor


class _UserObject:
    """A loaded module: its saved attributes (Variables, submodules, lists, dicts and
    functions), as TensorFlow's loaded objects; callable when the module was."""

    def __call__(self, *args, **kwargs):
        call = self.__dict__.get("__call__")
        if call is None:
            raise TypeError("'_UserObject' object is not callable")
        return call(*args, **kwargs)


class RestoredFunction:
    """A loaded tf.function: calls the saved trace whose input signature matches the
    arguments (TypeError or ValueError, as TensorFlow, when none does).

    concretes: [(ConcreteFunction, [(parameter, structure of TensorSpecs and Python
    values)])]; signature: the Python function's inspect.Signature; input_signature: the
    function's input_signature (a list of TensorSpecs) or None.
    """

    def __init__(self, name, signature, input_signature, concretes):
        self.__name__ = name
        self._signature = signature
        self._input_signature = input_signature
        self._concretes = concretes

    @property
    def concrete_functions(self):
        return [c for c, _ in self._concretes]

    @property
    def input_signature(self):
        return None if self._input_signature is None else tuple(self._input_signature)

    def __call__(self, *args, **kwargs):
        arguments = self._bind(args, kwargs)
        for concrete, params in self._concretes:
            flat = _matching_tensors(params, arguments, self._input_signature is not None)
            if flat is not None:
                return concrete._structured(concrete._call_flat(flat))
        if self._input_signature is not None:
            raise TypeError(self._binding_error(args, kwargs, self._cast_failure(arguments)))
        raise ValueError(self._no_match(args, kwargs))

    def _bind(self, args, kwargs):
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(self._binding_error(args, kwargs, str(e))) from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        # As the trace names them: *xs as xs_0, xs_1, ...; **kwargs by their keywords.
        for p in self._signature.parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                arguments.update((f"{p.name}_{i}", v)
                                 for i, v in enumerate(arguments.pop(p.name, ())))
            elif p.kind is p.VAR_KEYWORD:
                arguments.update(arguments.pop(p.name, {}))
        return arguments

    def _describe_signature(self):
        specs = iter(self._input_signature or ())
        return "(" + ", ".join(
            f"{p.name}: {next(specs)!r}" if self._input_signature is not None else p.name
            for p in self._signature.parameters.values()) + ")"

    def _binding_error(self, args, kwargs, reason):
        return (f"Binding inputs to tf.function failed due to `{reason}`. Received args: "
                f"{args!r} and kwargs: {kwargs!r} for signature: "
                f"{self._describe_signature()}.")

    def _cast_failure(self, arguments):
        values = nest.flatten([arguments.get(p) for p in self._signature.parameters])
        for value, spec in zip(values, self._input_signature):
            got = _spec_of(value)
            if got is None or got.dtype is not spec.dtype or not spec._accepts_shape(
                    got.shape):
                return f"Can not cast {got!r} to {spec!r}"
        return "no saved trace matches"

    def _no_match(self, args, kwargs):
        def listing(positional, keywords):
            lines = [f"  Positional arguments ({len(positional)} total):"]
            lines += [f"    * {v!r}" for v in positional]
            lines.append(f"  Keyword arguments: {keywords!r}")
            return "\n".join(lines)
        options = []
        for k, (concrete, params) in enumerate(self._concretes, 1):
            positional = [structure for _, structure in params]
            options.append(f"Option {k}:\n{listing(positional, {})}")
        return ("Could not find matching concrete function to call loaded from the "
                f"SavedModel. Got:\n{listing(args, kwargs)}\n\n Expected these arguments to "
                f"match one of the following {len(options)} option(s):\n\n"
                + "\n\n".join(options))

    def __repr__(self):
        return f"<RestoredFunction {self.__name__}>"


def _spec_of(value):
    if isinstance(value, (Tensor, _Operators)):
        return TensorSpec(TensorShape(value._shape), value.dtype)
    try:
        t = convert_to_tensor(value)
    except (TypeError, ValueError):
        return None
    return TensorSpec(TensorShape(t._shape), t.dtype)


def _matching_tensors(params, arguments, convert):
    """The flat tensors for a saved trace, or None when the arguments do not match it.
    convert: Python values become tensors of the spec's dtype (an input_signature)."""
    flat = []
    for name, structure in params:
        if name not in arguments:
            return None
        pairs = _leaf_pairs(structure, arguments[name])
        if pairs is None:
            return None
        for spec, v in pairs:
            if isinstance(spec, TensorSpec):
                t = _as_tensor(v, spec, convert)
                if t is None:
                    return None
                flat.append(t)
            elif trace_key_of(v) != trace_key_of(spec):
                return None
    return flat


def _leaf_pairs(structure, value):
    """(saved leaf, the part of `value` at its place), in nest.flatten's order; None when
    `value` does not have the saved structure. A TensorSpec's part may be a nest itself
    (a list a signature converts to a tensor)."""
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            return None
        parts = [(structure[k], value[k]) for k in sorted(structure)]
    elif isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            return None
        parts = list(zip(structure, value))
    else:
        return [(structure, value)]
    pairs = []
    for s, v in parts:
        inner = _leaf_pairs(s, v)
        if inner is None:
            return None
        pairs.extend(inner)
    return pairs


def _as_tensor(value, spec, convert):
    if isinstance(value, (Tensor, _Operators)) or not convert and hasattr(value, "dtype"):
        t = convert_to_tensor(value)
    elif convert:
        try:
            t = convert_to_tensor(value, dtype_hint=spec.dtype)
        except (TypeError, ValueError):
            return None
    else:
        return None
    if t.dtype is not spec.dtype or not spec._accepts_shape(TensorShape(t._shape)):
        return None
    return t


class SignatureFunction:
    """A loaded signature: keyword tensors in, a dict of named outputs out."""

    def __init__(self, function, input_specs, outputs):
        self._function = function  # the RestoredFunction whose traces it calls
        self._input_specs = input_specs  # TensorSpecs named after the inputs
        self._outputs = outputs  # {output name: index among the graph's outputs}

    @property
    def structured_input_signature(self):
        return (), {s.name: s for s in self._input_specs}

    @property
    def structured_outputs(self):
        graph = self._function.concrete_functions[0].graph
        return {name: TensorSpec(TensorShape(graph.outputs[k]._shape),
                                 graph.outputs[k].dtype, name)
                for name, k in self._outputs.items()}

    def __call__(self, *args, **kwargs):
        names = [s.name for s in self._input_specs]
        values = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in names or name in values:
                raise TypeError(f"signature got an unexpected or repeated argument {name!r}"
                                f" (its inputs: {names})")
            values[name] = value
        missing = [n for n in names if n not in values]
        if missing or len(args) > len(names):
            raise TypeError(f"Binding inputs to tf.function failed due to `missing a "
                            f"required argument: {missing[0]!r}`." if missing else
                            f"signature takes {len(names)} tensors, got {len(args)}")
        flat = [convert_to_tensor(values[n]) for n in names]
        for concrete in self._function.concrete_functions:
            placeholders = concrete.graph.inputs
            if all(x.dtype is p.dtype and len(x._shape) == len(p._shape) and all(
                    a is None or a == b for a, b in zip(p._shape, x._shape))
                   for x, p in zip(flat, placeholders)):
                outputs = concrete._call_flat(flat)
                return {name: outputs[k] for name, k in self._outputs.items()}
        for i, (x, spec) in enumerate(zip(flat, self._input_specs)):
            if x.dtype is not spec.dtype:
                raise InvalidArgumentError(
                    f"cannot compute the signature as input #{i}(zero-based) was expected to "
                    f"be a {spec.dtype.name} tensor but is a {x.dtype.name} tensor")
        raise InvalidArgumentError(
            f"the signature's inputs {[s for s in self._input_specs]} do not accept shapes "
            f"{[list(x._shape) for x in flat]}")

    def __repr__(self):
        inputs = ", ".join(f"{s.name}: {s!r}" for s in self._input_specs)
        outputs = ", ".join(f"[{n!r}, {s!r}]" for n, s in self.structured_outputs.items())
        return f"<ConcreteFunction (*, {inputs}) -> Dict[{outputs}]>"


class SignatureMap(Mapping):
    """loaded.signatures: signature name -> SignatureFunction."""

    def __init__(self, signatures):
        self._signatures = dict(signatures)

    def __getitem__(self, key):
        return self._signatures[key]

    def __iter__(self):
        return iter(self._signatures)

    def __len__(self):
        return len(self._signatures)

    def __repr__(self):
        return f"_SignatureMap({self._signatures!r})"


def signature_of(parameters):
    """An inspect.Signature from saved parameters [(name, kind, default or absent)]."""
    return inspect.Signature([
        inspect.Parameter(name, getattr(inspect.Parameter, kind), **(
            {"default": default} if has_default else {}))
        for name, kind, has_default, default in parameters])
