"""A frozen dataclass's values as JSON and back, by its fields' type hints, for stored analyses.

The answerability stage's sentences (:class:`rag.search.answerability.Sentence`) are stored per
chunk at ingestion and read back with the search's candidates. The encoding follows the class's
fields, whatever they are, so a field added to the class is stored and read without a change
here: each object is a JSON array of its fields' values in declaration order, a frozenset a
sorted array, a tuple an array. Decoding rebuilds the same values (``==`` to the originals),
parsed by msgspec into the types the class's hints give.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

import msgspec.json


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


def decoder(cls: type, namespace: dict[str, Any]) -> Callable[[str | bytes], tuple[Any, ...]]:
    """A function from the JSON text of :func:`encode`'s arrays back to a tuple of ``cls`` objects.

    msgspec parses the text straight into each row's typed values (frozensets, tuples) in C,
    which takes 50 against 70 us per stored chunk for ``json.loads`` and a conversion in Python
    (3,000 chunks at 100,000 stored, docs/performance.md).

    Args:
        cls: a dataclass whose fields are str, int, float, bool, None, frozensets and tuples of
            them (or ``X | None``).
        namespace: where the class's string annotations are resolved (its module's globals).

    Raises:
        TypeError: a field of a type that has no JSON form here.
    """
    hints = typing.get_type_hints(cls, globalns=namespace)
    for f in dataclasses.fields(cls):
        _check(hints[f.name])
    # each object is an array of its fields' types in order: tuple[int, int, frozenset[str], ...]
    row: Any = tuple.__class_getitem__(tuple(hints[f.name] for f in dataclasses.fields(cls)))
    parse = msgspec.json.Decoder(list[row]).decode
    make = cls

    def decode(stored: str | bytes) -> tuple[Any, ...]:
        """Raises ``msgspec.DecodeError`` (a ValueError) for text that is not such arrays."""
        return tuple(make(*values) for values in parse(stored))

    return decode


def _check(hint: Any) -> None:
    """Raise TypeError unless ``hint`` is one of the types :func:`encode` writes."""
    if hint in (str, int, float, bool, type(None)):
        return
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        args = args[:1]  # tuple[X, ...]: its items are X
    elif not (
        origin in (typing.Union, types.UnionType, tuple) or (origin is frozenset and len(args) == 1)
    ):
        raise TypeError(f"no stored form for {hint!r}")
    for a in args:
        _check(a)
