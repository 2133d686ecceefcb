"""Filters on document metadata for search, ask and chat: a value object, validated once.

A filter narrows the candidates inside both retrievers, before fusion, so a filtered-out chunk
never takes a rank; the word statistics (df, chunk counts) stay the owner's whole corpus, so BM25
and the relevance filter judge a filtered question exactly as an unfiltered one. Every value
reaches SQL as a query parameter.

Fields (all optional; all given ones must hold):

* ``source_prefix``: the document's ``source_id`` starts with it (a folder: ``"policies/"``);
* ``metadata``: exact key/value pairs of the document's ``metadata`` (strings, numbers, booleans);
* ``date_from`` / ``date_to``: inclusive range on the document's date, ``metadata.date``
  (ISO ``YYYY-MM-DD``) or, when it has none, the day it was ingested;
* ``lang``: the document's language;
* ``exclude_document_ids``: documents to leave out (superseded ones); set by the service, not
  parsed from requests.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from rag.errors import InputError

MAX_METADATA_PAIRS = 20
MAX_VALUE_CHARS = 500


@dataclass(frozen=True)
class SearchFilter:
    source_prefix: str | None = None
    metadata: dict[str, str | int | float | bool] = field(default_factory=dict)
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    lang: str | None = None
    exclude_document_ids: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.source_prefix
            or self.metadata
            or self.date_from
            or self.date_to
            or self.lang
            or self.exclude_document_ids
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_prefix": self.source_prefix,
            "metadata": dict(self.metadata),
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "lang": self.lang,
        }

    @classmethod
    def from_mapping(cls, raw: Any) -> SearchFilter:
        """Parse ``{"source_prefix", "metadata", "date_from", "date_to", "lang"}``.

        Raises:
            InputError: an unknown field, a wrong type, a bad date or an inverted range.
        """
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise InputError("filter must be an object")
        unknown = sorted(set(raw) - {"source_prefix", "metadata", "date_from", "date_to", "lang"})
        if unknown:
            raise InputError(f"unknown filter field: {unknown[0]}")
        prefix = _text(raw.get("source_prefix"), "source_prefix")
        lang = _text(raw.get("lang"), "lang")
        meta = raw.get("metadata") or {}
        if not isinstance(meta, dict):
            raise InputError("filter.metadata must be an object")
        if len(meta) > MAX_METADATA_PAIRS:
            raise InputError(f"filter.metadata has {len(meta)} pairs; the limit is 20")
        pairs: dict[str, str | int | float | bool] = {}
        for key, value in meta.items():
            name = _text(key, "filter.metadata key")
            if name is None:
                raise InputError("filter.metadata keys must be non-empty")
            if isinstance(value, str):
                pairs[name] = _text(value, f"filter.metadata.{name}") or ""
            elif isinstance(value, bool | int | float):
                pairs[name] = value
            else:
                raise InputError(f"filter.metadata.{name} must be a string, number or boolean")
        start = _date(raw.get("date_from"), "date_from")
        end = _date(raw.get("date_to"), "date_to")
        if start and end and start > end:
            raise InputError("filter.date_from is after filter.date_to")
        return cls(prefix, pairs, start, end, lang.lower() if lang else None)


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string")
    if "\x00" in value:
        raise InputError(f"{name} contains a NUL character")
    if len(value) > MAX_VALUE_CHARS:
        raise InputError(f"{name} is longer than {MAX_VALUE_CHARS} characters")
    return value or None


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


def _date(value: Any, name: str) -> dt.date | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"filter.{name} must be a date (YYYY-MM-DD)")
    try:
        # exactly YYYY-MM-DD: fromisoformat also reads "20250101" and "2025-W01-1", and a
        # prefix would let "2025-01-01garbage" through
        if not _ISO_DATE.match(value):
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        raise InputError(f"filter.{name} is not a date (YYYY-MM-DD): {value[:40]!r}") from None
