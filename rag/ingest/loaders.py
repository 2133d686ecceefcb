"""Files and uploads to documents: text with paragraphs separated by blank lines.

A file's format comes from its suffix, else from its first bytes; its title and text come from
:mod:`rag.ingest.formats`. A JSONL file holds one document per line: ``{"id", "text", "title"?, "lang"?,
"metadata"?}``.

Bad input never raises here. It comes back as a :class:`LoadFailure` whose error (an
:class:`~rag.errors.InputError`) has a one-line message naming the file, and the line of a JSONL
file, so one broken file does not stop the ingestion of a directory, nor a bad line its file.
"""

from __future__ import annotations

import codecs
import dataclasses
import io
import json
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rag.errors import (
    ConfigError,
    CorruptInput,
    EmptyInput,
    InputError,
    TooLarge,
)
from rag.ingest.document_fields import InvalidField, check_lang, check_metadata, check_source_id
from rag.ingest.formats import (
    DEFAULT_LIMITS,
    FORMATS,
    ExtractLimits,
    clean_text,
    detect_format,
    extract,
)

_SNIFF_BYTES = 4096


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """One document ready for chunking."""

    source_id: str
    title: str | None
    text: str
    lang: str | None
    metadata: dict[str, Any]
    origin: str


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """Input that could not be loaded, and why."""

    origin: str
    error: InputError


def iter_paths(paths: Sequence[Path]) -> Iterator[Path]:
    """The files to load: each path given, and every file under each directory given.

    Directories are walked recursively in sorted order, skipping hidden files and directories
    (names starting with ".") and office lock files ("~$name.docx"). A path that does not exist,
    or a directory that cannot be read, is yielded as it is, so that :func:`load_path` reports
    it. A file reached twice is yielded once.

    Args:
        paths: files and directories, as the user gave them.
    """
    seen: set[str] = set()
    for path in paths:
        if path.is_dir():
            found: list[Path] = []

            # An unreadable directory is passed on, for load_path to report.
            def on_error(e: OSError, found: list[Path] = found) -> None:
                found.append(Path(str(e.filename)))

            for root, dirs, files in os.walk(path, onerror=on_error):
                dirs[:] = sorted(d for d in dirs if not _hidden(d))
                found.extend(Path(root, f) for f in files if not _hidden(f))
            candidates = sorted(found)
        else:
            candidates = [path]
        for p in candidates:
            key = os.path.realpath(p)
            if key not in seen:
                seen.add(key)
                yield p


def _hidden(name: str) -> bool:
    return name.startswith((".", "~$"))


def rebased(
    items: Iterable[LoadedDocument | LoadFailure], root: Path | None
) -> Iterator[LoadedDocument | LoadFailure]:
    """``items`` with the source_id of every file under ``root`` made relative to it.

    A knowledge base loaded from a directory keeps the same source_ids wherever it is checked out
    ("prirucka/benefity.md", not "/home/.../prirucka/benefity.md"), so reloading it elsewhere
    replaces documents instead of duplicating them.
    """
    prefix = root.resolve().as_posix() + "/" if root else None
    for item in items:
        if prefix and isinstance(item, LoadedDocument) and item.source_id.startswith(prefix):
            item = dataclasses.replace(item, source_id=item.source_id[len(prefix) :])
        yield item


def load_path(
    path: Path, *, max_bytes: int, limits: ExtractLimits = DEFAULT_LIMITS
) -> Iterator[LoadedDocument | LoadFailure]:
    """Load one file: one document, or one per line of a JSONL file.

    The size limit is checked with ``stat`` before reading. A JSONL file is streamed, so the
    limit applies to each of its lines (each is a document) rather than to the whole file.

    Args:
        path: a file, as given by the user or found by :func:`iter_paths`.
        max_bytes: the largest file (or JSONL line) accepted.
        limits: what one file may expand to when it is parsed.

    Yields:
        Documents, and a :class:`LoadFailure` for each one that could not be loaded.

    Raises:
        ConfigError: ``max_bytes`` is not positive.
    """
    _check_limit(max_bytes)
    label = str(path)
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            os.scandir(path).close()  # tells an unreadable directory from a readable one
            raise InputError(f"{label}: is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{label}: not a regular file")
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            with path.open("rb") as f:
                yield from _jsonl(_file_lines(f, max_bytes), label, max_bytes, limits)
            return
        fmt = FORMATS.get(suffix)
        if fmt is None:
            with path.open("rb") as f:
                fmt = detect_format(suffix, f.read(_SNIFF_BYTES), label)
        if st.st_size > max_bytes:
            raise _too_large(label, st.st_size, max_bytes)
        data = path.read_bytes()
        if len(data) > max_bytes:  # it grew since stat
            raise _too_large(label, len(data), max_bytes)
        yield _document(data, fmt, label, path.resolve().as_posix(), limits)
    except InputError as e:
        yield LoadFailure(label, e)
    except FileNotFoundError:
        yield LoadFailure(label, InputError(f"{label}: no such file or directory"))
    except OSError as e:
        yield LoadFailure(label, InputError(f"{label}: cannot read ({e.strerror or e})"))


def load_bytes(
    data: bytes,
    filename: str,
    *,
    max_bytes: int,
    source_id: str | None = None,
    limits: ExtractLimits = DEFAULT_LIMITS,
) -> list[LoadedDocument | LoadFailure]:
    """Load an upload: the format comes from ``filename``'s suffix, else from the content.

    Args:
        data: the file's bytes.
        filename: the name it was uploaded under; also the origin in error messages.
        max_bytes: the largest upload accepted.
        source_id: the document's id; default ``filename``. A JSONL upload's documents keep the
            ids of their lines.
        limits: what the file may expand to when it is parsed.

    Returns:
        Documents, and a :class:`LoadFailure` for each one that could not be loaded.

    Raises:
        ConfigError: ``max_bytes`` is not positive.
    """
    _check_limit(max_bytes)
    label = filename
    try:
        if len(data) > max_bytes:
            raise _too_large(label, len(data), max_bytes)
        suffix = PurePath(filename).suffix.lower()
        fmt = FORMATS.get(suffix) or detect_format(suffix, data[:_SNIFF_BYTES], label)
        if fmt == "jsonl":
            return list(_jsonl(_bytes_lines(data), label, max_bytes, limits))
        return [_document(data, fmt, label, source_id or filename, limits)]
    except InputError as e:
        return [LoadFailure(label, e)]


def _check_limit(max_bytes: int) -> None:
    if max_bytes <= 0:
        raise ConfigError(f"the upload size limit must be positive, got {max_bytes}")


def _too_large(label: str, size: int, max_bytes: int) -> TooLarge:
    return TooLarge(f"{label}: {size} bytes is over the limit of {max_bytes} bytes")


def _document(
    data: bytes, fmt: str, label: str, source_id: str, limits: ExtractLimits
) -> LoadedDocument:
    """Parse one non-JSONL file's bytes; raises an InputError for bad input."""
    if not data:
        raise EmptyInput(f"{label}: empty file")
    title, text = extract(data, fmt, label, limits)
    text = clean_text(text)
    if not text:
        what = "only whitespace" if fmt in ("txt", "md") else "no text"
        raise EmptyInput(f"{label}: {what}")
    return LoadedDocument(source_id, _title_line(title), text, None, {"format": fmt}, label)


def _title_line(text: str | None) -> str | None:
    """A title on one line, control characters gone; None when nothing is left."""
    if text is None:
        return None
    return " ".join(clean_text(str(text)).split()) or None


# --- JSONL -------------------------------------------------------------------------------------


def _file_lines(f: io.BufferedIOBase, max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(byte offset, line) of each line; None for a line over ``max_bytes`` (not kept in memory)."""
    offset = 0
    while line := f.readline(max_bytes + 1):
        start = offset
        offset += len(line)
        if len(line) > max_bytes and not line.endswith(b"\n"):
            while rest := f.readline(1 << 20):
                offset += len(rest)
                if rest.endswith(b"\n"):
                    break
            yield start, None
        else:
            yield start, line


def _bytes_lines(data: bytes) -> Iterator[tuple[int, bytes | None]]:
    offset = 0
    for line in data.split(b"\n"):
        yield offset, line
        offset += len(line) + 1


def _jsonl(
    lines: Iterable[tuple[int, bytes | None]],
    label: str,
    max_bytes: int,
    limits: ExtractLimits = DEFAULT_LIMITS,
) -> Iterator[LoadedDocument | LoadFailure]:
    """One document per non-blank line; a bad line is a failure naming ``label:LINE``.

    An id that an earlier line of the file already used is a failure of the later line: the file
    holds two documents under one id, and silently keeping either would lose the other.
    """
    any_line = False
    first_line: dict[str, int] = {}
    for lineno, (offset, raw) in enumerate(lines, start=1):
        origin = f"{label}:{lineno}"
        try:
            if raw is None:
                raise TooLarge(f"{origin}: line is over the limit of {max_bytes} bytes")
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, offset = raw[len(codecs.BOM_UTF8) :], offset + len(codecs.BOM_UTF8)
            if not raw.strip():
                continue
            any_line = True
            doc = _record(raw, origin, offset)
            if len(doc.text) > limits.max_chars:
                raise TooLarge(
                    f"{origin}: {len(doc.text)} characters of text; the limit is {limits.max_chars}"
                )
            if (earlier := first_line.setdefault(doc.source_id, lineno)) != lineno:
                raise CorruptInput(
                    f'{origin}: "id" {doc.source_id!r} repeats line {earlier} of this file'
                )
            yield doc
        except InputError as e:
            any_line = True
            yield LoadFailure(origin, e)
    if not any_line:
        yield LoadFailure(label, EmptyInput(f"{label}: no JSONL records"))


def _record(raw: bytes, origin: str, offset: int) -> LoadedDocument:
    """One JSONL line to a document; raises CorruptInput naming ``origin``."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorruptInput(f"{origin}: invalid UTF-8 at byte offset {offset + e.start}") from None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise CorruptInput(f"{origin}: invalid JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise CorruptInput(f"{origin}: invalid JSON (nested too deeply)") from None
    if not isinstance(rec, dict):
        raise CorruptInput(f"{origin}: expected a JSON object, got {_json_type(rec)}")
    doc_id, text = rec.get("id"), rec.get("text")
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise CorruptInput(f'{origin}: "id" must be a non-empty string')
    if not isinstance(text, str) or not text.strip():
        raise CorruptInput(f'{origin}: "text" must be a non-empty string')
    for key in ("title", "lang"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            raise CorruptInput(f'{origin}: "{key}" must be a string, got {_json_type(rec[key])}')
    metadata = {} if rec.get("metadata") is None else rec["metadata"]
    if not isinstance(metadata, dict):
        got = _json_type(metadata)
        raise CorruptInput(f'{origin}: "metadata" must be a JSON object, got {got}')
    try:
        check_source_id(doc_id)
        lang = check_lang(rec.get("lang"))
        # PostgreSQL's jsonb rejects NULs and lone surrogates, and would fail the whole batch.
        check_metadata(metadata)
    except InvalidField as e:
        name = "id" if e.field == "source_id" else e.field
        raise CorruptInput(f'{origin}: "{name}" {e.message}') from None
    body = clean_text(text)
    if not body:
        raise CorruptInput(f'{origin}: "text" has no visible characters')
    meta = {**metadata, "format": "jsonl"}  # the loader's key wins over the record's
    return LoadedDocument(doc_id, _title_line(rec.get("title")), body, lang, meta, origin)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")
