"""`tf.nest`: flatten and rebuild nested lists, tuples, namedtuples and dicts."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict))


def composite_spec(value):
    """The type spec of a composite value (a tf.TensorArray), whose tensors nest expands
    with expand_composites=True (`_to_components` / `_from_components`); else None."""
    spec = getattr(value, "_type_spec", None)
    return spec if hasattr(spec, "_from_components") else None


def _children(structure):
    if isinstance(structure, dict):
        return [structure[k] for k in sorted(structure)]
    return list(structure)


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first; dict values in sorted-key order.

    >>> flatten({"b": [1, 2], "a": 3})
    [3, 1, 2]
    """
    if expand_composites:
        spec = composite_spec(structure)
        if spec is not None:
            return flatten(spec._to_components(structure), True)
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child, expand_composites))
    return out


def _rebuild(structure, leaves, expand_composites=False):
    if expand_composites:
        spec = composite_spec(structure)
        if spec is not None:
            return spec._from_components(
                _rebuild(spec._to_components(structure), leaves, True))
    if not is_nested(structure):
        return next(leaves)
    children = [_rebuild(c, leaves, expand_composites) for c in _children(structure)]
    if isinstance(structure, dict):
        keys = sorted(structure)
        return type(structure)((k, children[keys.index(k)]) for k in structure)
    if _is_namedtuple(structure):
        return type(structure)(*children)
    return type(structure)(children)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """Rebuilds `structure` with the leaves taken in order from `flat_sequence`."""
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure, expand_composites))
    if n != len(flat_sequence):
        raise ValueError(f"Structure had {n} elements, but flat_sequence had "
                         f"{len(flat_sequence)} elements.")
    return _rebuild(structure, iter(flat_sequence), expand_composites)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    def shape_of(s):
        if not is_nested(s):
            return None
        kind = type(s) if check_types else (dict if isinstance(s, dict) else list)
        keys = sorted(s) if isinstance(s, dict) else None
        return (kind, keys, [shape_of(c) for c in _children(s)])
    if shape_of(nest1) != shape_of(nest2):
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{nest1!r} and {nest2!r}")


def map_structure(func, *structure, **kwargs):
    """Applies `func` to matching leaves of one or more structures; keeps the structure.

    >>> map_structure(lambda x: x * 2, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
    """
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=kwargs.get("check_types", True))
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
