"""A frozen dataclass's values as JSON and back, by its fields' type hints, for stored analyses.

The answerability stage's sentences (:class:`rag.search.answerability.Sentence`) are stored per
chunk at ingestion and read back with the search's candidates. The encoding follows the class's
fields, whatever they are, so a field added to the class is stored and read without a change
here: each object is a JSON array of its fields' values in declaration order, a frozenset a
sorted array, a tuple an array. Decoding rebuilds the same values (``==`` to the originals);
the converters are built once per class from its type hints, so a row costs a few C-level
constructor calls per field.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

Convert = Callable[[Any], Any] | None  # None: the JSON value is the value


def encode(objects: tuple[Any, ...]) -> list[list[Any]]:
    """Each dataclass object as the array of its fields' JSON values."""
    if not objects:
        return []
    names = [f.name for f in dataclasses.fields(objects[0])]
    return [[_plain(getattr(o, name)) for name in names] for o in objects]


def _plain(value: Any) -> Any:
    if isinstance(value, frozenset | set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot store a {type(value).__name__}")


def decoder(cls: type, namespace: dict[str, Any]) -> Callable[[list[list[Any]]], tuple[Any, ...]]:
    """A function from :func:`encode`'s arrays back to a tuple of ``cls`` objects.

    Args:
        cls: a dataclass whose fields are str, int, float, bool, None, frozensets and tuples of
            them (or ``X | None``).
        namespace: where the class's string annotations are resolved (its module's globals).

    Raises:
        TypeError: a field of a type that has no JSON form here.
    """
    hints = typing.get_type_hints(cls, globalns=namespace)
    convert = [
        (i, c) for i, f in enumerate(dataclasses.fields(cls)) if (c := _converter(hints[f.name]))
    ]
    make = cls

    def decode(stored: list[list[Any]]) -> tuple[Any, ...]:
        out = []
        for row in stored:
            for i, c in convert:
                row[i] = c(row[i])
            out.append(make(*row))
        return tuple(out)

    return decode


def _converter(hint: Any) -> Convert:
    if hint in (str, int, float, bool, type(None), Any):
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        inner = [_converter(a) for a in args if a is not type(None)]
        if len(inner) == 1:
            one = inner[0]
            return None if one is None else (lambda v: None if v is None else one(v))
    elif origin is frozenset and len(args) == 1:
        item = _converter(args[0])
        if item is None:
            return frozenset
        each_item = item
        return lambda v: frozenset(map(each_item, v))
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _converter(args[0])
        if item is None:
            return tuple
        each = item
        return lambda v: tuple(map(each, v))
    elif origin is tuple:
        return _fixed_tuple([_converter(a) for a in args])
    raise TypeError(f"no stored form for {hint!r}")


def _fixed_tuple(parts: list[Convert]) -> Convert:
    """A converter of a JSON array to a tuple of ``len(parts)`` values; the array is converted
    in place (it was just parsed), which costs a third of a generator per value."""
    convert = [(i, c) for i, c in enumerate(parts) if c is not None]
    if not convert:
        return tuple

    def fixed(v: list[Any]) -> tuple[Any, ...]:
        for i, c in convert:
            v[i] = c(v[i])
        return tuple(v)

    return fixed
