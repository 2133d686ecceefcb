"""What a stored document's fields may hold: checked once, before anything reaches PostgreSQL.

PostgreSQL refuses a NUL in ``text`` and ``jsonb`` and a lone surrogate cannot be encoded as
UTF-8, so a field holding either would fail its whole batch deep inside a transaction. Every
entry point (the JSON API, a multipart upload's parts, a JSONL line) checks its fields here and
gets an :class:`InvalidField` naming the field; the HTTP layer turns it into a 422 listing it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rag.errors import InputError
from rag.language.lemmas import LEMMA_LANGS, SUPPORTED_LANGS

MAX_SOURCE_ID_CHARS = 2000
MAX_TITLE_CHARS = 2000
MAX_METADATA_BYTES = 64 * 1024
MAX_METADATA_DEPTH = 16
# Languages whose words rag can key: the tuned ones and every one simplemma has lemmas for.
LANGS: frozenset[str] = frozenset(SUPPORTED_LANGS) | LEMMA_LANGS
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f]")


class InvalidField(InputError):
    """One field of a document cannot be stored; ``field`` names it."""

    def __init__(self, field: str, message: str, origin: str | None = None) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{origin}: {field}: {message}" if origin else f"{field}: {message}")


def check_source_id(value: str, origin: str | None = None) -> str:
    """A usable ``source_id``: not blank, one line, storable, at most 2000 characters."""
    if not value.strip():
        raise InvalidField("source_id", "must not be empty or only whitespace", origin)
    if len(value) > MAX_SOURCE_ID_CHARS:
        raise InvalidField(
            "source_id", f"is {len(value)} characters; the limit is {MAX_SOURCE_ID_CHARS}", origin
        )
    if _UNSTORABLE.search(value) or _CONTROL.search(value):
        raise InvalidField(
            "source_id", "contains a control character or an unpaired surrogate", origin
        )
    return value


def check_title(value: str | None, origin: str | None = None) -> str | None:
    """A storable title of at most 2000 characters (None stays None)."""
    if value is None:
        return None
    if len(value) > MAX_TITLE_CHARS:
        raise InvalidField(
            "title", f"is {len(value)} characters; the limit is {MAX_TITLE_CHARS}", origin
        )
    if _UNSTORABLE.search(value):
        raise InvalidField("title", "contains a NUL or an unpaired surrogate", origin)
    return value


def check_lang(value: str | None, origin: str | None = None) -> str | None:
    """A language code rag can key words for, lower-cased; None or blank: detect it."""
    if value is None or not value.strip():
        return None
    code = value.strip().lower()
    if code not in LANGS:
        shown = code if code.isprintable() and len(code) <= 20 else repr(code[:20])
        raise InvalidField(
            "lang",
            f"{shown} is not a supported language code (e.g. {', '.join(SUPPORTED_LANGS)})",
            origin,
        )
    return code


def check_metadata(value: Any, origin: str | None = None) -> dict[str, Any]:
    """A JSON object that jsonb can store: no NUL or lone surrogate, bounded depth and size."""
    if not isinstance(value, dict):
        raise InvalidField("metadata", "must be a JSON object", origin)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if _UNSTORABLE.search(v):
                raise InvalidField("metadata", "contains a NUL or an unpaired surrogate", origin)
        elif isinstance(v, dict | list):
            if depth > MAX_METADATA_DEPTH:
                raise InvalidField(
                    "metadata", f"is nested deeper than {MAX_METADATA_DEPTH} levels", origin
                )
            if isinstance(v, dict):
                stack.extend((k, depth) for k in v)
                stack.extend((x, depth + 1) for x in v.values())
            else:
                stack.extend((x, depth + 1) for x in v)
    size = len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise InvalidField(
            "metadata", f"is {size} bytes of JSON; the limit is {MAX_METADATA_BYTES}", origin
        )
    return value
