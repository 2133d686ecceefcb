"""Files and uploads to documents: text with paragraphs separated by blank lines.

Each format goes through a well-kept library: pypdf (PDF), python-docx (DOCX), BeautifulSoup
(HTML); txt and md are decoded as UTF-8 (a BOM is stripped, UTF-16 with a BOM is accepted). A JSONL
file holds one document per line: ``{"id", "text", "title"?, "lang"?, "metadata"?}``.

Bad input never raises here. It comes back as a :class:`LoadFailure` whose error (an
:class:`~rag.errors.InputError`) has a one-line message naming the file, and the line of a JSONL
file, so one broken file does not stop the ingestion of a directory, nor a bad line its file.
"""

from __future__ import annotations

import codecs
import importlib.util
import io
import json
import os
import re
import stat
import unicodedata
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
    UnsupportedFormat,
)

_FORMATS = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".jsonl": "jsonl",
}
SUPPORTED_SUFFIXES = tuple(_FORMATS)
_SNIFF_BYTES = 4096
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc/.xls


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


def load_path(path: Path, *, max_bytes: int) -> Iterator[LoadedDocument | LoadFailure]:
    """Load one file: one document, or one per line of a JSONL file.

    The size limit is checked with ``stat`` before reading. A JSONL file is streamed, so the
    limit applies to each of its lines (each is a document) rather than to the whole file.

    Args:
        path: a file, as given by the user or found by :func:`iter_paths`.
        max_bytes: the largest file (or JSONL line) accepted.

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
                yield from _jsonl(_file_lines(f, max_bytes), label, max_bytes)
            return
        fmt = _FORMATS.get(suffix)
        if fmt is None:
            with path.open("rb") as f:
                fmt = _detect(suffix, f.read(_SNIFF_BYTES), label)
        if st.st_size > max_bytes:
            raise _too_large(label, st.st_size, max_bytes)
        data = path.read_bytes()
        if len(data) > max_bytes:  # it grew since stat
            raise _too_large(label, len(data), max_bytes)
        yield _document(data, fmt, label, path.resolve().as_posix())
    except InputError as e:
        yield LoadFailure(label, e)
    except FileNotFoundError:
        yield LoadFailure(label, InputError(f"{label}: no such file or directory"))
    except OSError as e:
        yield LoadFailure(label, InputError(f"{label}: cannot read ({e.strerror or e})"))


def load_bytes(
    data: bytes, filename: str, *, max_bytes: int, source_id: str | None = None
) -> list[LoadedDocument | LoadFailure]:
    """Load an upload: the format comes from ``filename``'s suffix, else from the content.

    Args:
        data: the file's bytes.
        filename: the name it was uploaded under; also the origin in error messages.
        max_bytes: the largest upload accepted.
        source_id: the document's id; default ``filename``. A JSONL upload's documents keep the
            ids of their lines.

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
        fmt = _FORMATS.get(suffix) or _detect(suffix, data[:_SNIFF_BYTES], label)
        if fmt == "jsonl":
            return list(_jsonl(_bytes_lines(data), label, max_bytes))
        return [_document(data, fmt, label, source_id or filename)]
    except InputError as e:
        return [LoadFailure(label, e)]


def _check_limit(max_bytes: int) -> None:
    if max_bytes <= 0:
        raise ConfigError(f"the upload size limit must be positive, got {max_bytes}")


def _too_large(label: str, size: int, max_bytes: int) -> TooLarge:
    return TooLarge(f"{label}: {size} bytes is over the limit of {max_bytes} bytes")


def _detect(suffix: str, head: bytes, label: str) -> str:
    """The format of a file whose suffix is not a supported one, from its first bytes."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04") and b"word/" in head:
        return "docx"
    lower = head.lstrip(codecs.BOM_UTF8 + b" \t\r\n").lower()
    if lower.startswith((b"<!doctype html", b"<html")):
        return "html"
    if head.startswith(_OLE_MAGIC):
        raise UnsupportedFormat(f"{label}: a legacy Office file; save it as .docx or .pdf")
    if suffix == "":
        return "txt"
    raise UnsupportedFormat(
        f"{label}: unsupported file type {suffix!r} (supported: {', '.join(SUPPORTED_SUFFIXES)})"
    )


def _document(data: bytes, fmt: str, label: str, source_id: str) -> LoadedDocument:
    """Parse one non-JSONL file's bytes; raises an InputError for bad input."""
    if not data:
        raise EmptyInput(f"{label}: empty file")
    if fmt == "pdf":
        title, text = _pdf(data, label)
    elif fmt == "docx":
        title, text = _docx(data, label)
    elif fmt == "html":
        title, text = _html(data, label)
    else:
        text = _decode(data, label)
        title = _markdown_title(text) if fmt == "md" else None
    text = clean_text(text)
    if not text:
        what = "only whitespace" if fmt in ("txt", "md") else "no text"
        raise EmptyInput(f"{label}: {what}")
    return LoadedDocument(source_id, _one_line(title), text, None, {"format": fmt}, label)


# --- text --------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
# NUL, soft hyphen and zero-width characters: invisible, and they split words for search.
_INVISIBLE = re.compile("[\x00\u00ad\u200b-\u200d\u2060\ufeff]")
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1f\x7f-\x9f]")
_HSPACE = re.compile(r"[^\S\n]+")
_SPACES = re.compile(r"  +")
_LINE_EDGE = re.compile(r" ?\n ?")
_BLANK_LINES = re.compile(r"\n{3,}")


def clean_text(text: str) -> str:
    """Extracted text in NFC with ``\\n`` line ends, spaces collapsed, one blank line at most."""
    # Each step runs only if a cheap check finds work for it: a JSONL corpus goes through here
    # record by record. isprintable() is False for controls, invisible characters, lone
    # surrogates and every whitespace character but the space.
    if not text.replace("\n", "").isprintable():
        text = _SURROGATE.sub("\ufffd", text)  # lone surrogates cannot be stored as UTF-8
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = text.replace("\f", "\n\n").replace("\v", "\n")
        text = _CONTROL.sub(" ", _INVISIBLE.sub("", text))
        text = _HSPACE.sub(" ", text)
    elif "  " in text:
        text = _SPACES.sub(" ", text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if " \n" in text or "\n " in text:
        text = _LINE_EDGE.sub("\n", text)
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def _one_line(text: str | None) -> str | None:
    if text is None:
        return None
    return " ".join(clean_text(str(text)).split()) or None


def _decode(data: bytes, label: str) -> str:
    """Bytes of a text file to str: UTF-8 (BOM stripped), or UTF-16 with its BOM."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise CorruptInput(f"{label}: invalid UTF-16 at byte offset {e.start}") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UnsupportedFormat(f"{label}: binary content (NUL byte at offset {nul}), not text")
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorruptInput(
            f"{label}: invalid UTF-8 at byte offset {e.start + bom}; save the file as UTF-8"
        ) from None


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*$", re.MULTILINE | re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.*\S)", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1|\Z)", re.MULTILINE | re.DOTALL)
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
_SETEXT = re.compile(r"^ {0,3}(\S.*)\n {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)


def _markdown_title(text: str) -> str | None:
    """The front matter's ``title:``, else the first heading (``# Title`` or underlined)."""
    body = text.replace("\r\n", "\n")
    if front := _FRONT_MATTER.match(body):
        if title := _FRONT_TITLE.search(front.group(1)):
            return title.group(1).strip("\"'")
        body = body[front.end() :]
    body = _FENCE.sub("", body)
    found = [m for m in (_ATX.search(body), _SETEXT.search(body)) if m]
    return min(found, key=lambda m: m.start()).group(1) if found else None


def _reason(e: BaseException) -> str:
    """A library exception as a short single line."""
    return " ".join(str(e).split())[:160] or type(e).__name__


# --- formats through their libraries -----------------------------------------------------------
# Each library is imported where it is used: only the formats being loaded pay for the import.

_DROP_TAGS = ["script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "head"]
_BLOCK_TAGS = [
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "details",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
]
_LINE_TAGS = ["br", "caption", "dd", "dt", "li", "tr"]
# Private-use characters stand for breaks while the markup's own whitespace is collapsed.
_PARA_MARK, _LINE_MARK = "\ue000", "\ue001"


def _html(data: bytes, label: str) -> tuple[str | None, str]:
    from bs4 import BeautifulSoup, NavigableString

    # lxml is faster and python-docx depends on it, so it is normally there.
    parser = "lxml" if importlib.util.find_spec("lxml") else "html.parser"
    try:
        # Bytes, so that BeautifulSoup honours the page's declared encoding.
        soup = BeautifulSoup(data, parser)
        heading = soup.title or soup.find("h1")
        title = heading.get_text(" ") if heading else None
        for tag in soup.find_all(_DROP_TAGS):
            if not tag.decomposed:
                tag.decompose()
        for pre in soup.find_all("pre"):
            for s in pre.find_all(string=True):
                if type(s) is NavigableString:  # not a comment, which must stay invisible
                    s.replace_with(s.replace("\n", _LINE_MARK))
        for tag in soup.find_all(_LINE_TAGS):
            tag.insert_before(_LINE_MARK)
        for tag in soup.find_all(["td", "th"]):
            tag.insert_after(" ")
        for tag in soup.find_all(_BLOCK_TAGS):
            tag.insert_before(_PARA_MARK)
            tag.insert_after(_PARA_MARK)
        raw = soup.get_text()
    except Exception as e:  # noqa: BLE001  # the parser's failures share no base class
        raise CorruptInput(f"{label}: not readable HTML ({_reason(e)})") from None
    flat = " ".join(raw.split()).replace(_LINE_MARK, "\n")
    paragraphs = (p.strip() for p in flat.split(_PARA_MARK))
    return title, "\n\n".join(p for p in paragraphs if p)


def _pdf(data: bytes, label: str) -> tuple[str | None, str]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                # Many PDFs are encrypted with an empty password only to restrict printing.
                opened = bool(reader.decrypt(""))
            except Exception:  # noqa: BLE001  # e.g. AES without the cryptography package
                opened = False
            if not opened:
                raise UnsupportedFormat(f"{label}: password-protected PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001  # pypdf raises many unrelated types on damage
        raise CorruptInput(f"{label}: not a readable PDF ({_reason(e)})") from None
    text = "\n\n".join(pages)
    if not clean_text(text):
        raise EmptyInput(f"{label}: PDF has no extractable text (a scan needs OCR first)")
    return (str(title) if title else None), text


def _docx(data: bytes, label: str) -> tuple[str | None, str]:
    if data.startswith(_OLE_MAGIC):
        raise UnsupportedFormat(f"{label}: a legacy Word .doc file; save it as .docx")
    from docx import Document
    from docx.table import Table

    try:
        doc = Document(io.BytesIO(data))
        title = doc.core_properties.title or None
        blocks: list[str] = []
        for block in doc.iter_inner_content():
            if isinstance(block, Table):
                blocks.append(_docx_table(block))
                continue
            if title is None and block.style is not None and block.style.name == "Title":
                title = block.text
            blocks.append(block.text)
    except Exception as e:  # noqa: BLE001  # zip, XML and package errors share no base
        raise CorruptInput(f"{label}: not a readable DOCX ({_reason(e)})") from None
    return title, "\n\n".join(b for b in blocks if b.strip())


def _docx_table(table: Any) -> str:
    """A table as one paragraph, a line per row, cells separated by " | "."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if text and (not cells or cells[-1] != text):  # a merged cell repeats
                cells.append(text)
        if cells:
            lines.append(" | ".join(cells))
    return "\n".join(lines)


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
    lines: Iterable[tuple[int, bytes | None]], label: str, max_bytes: int
) -> Iterator[LoadedDocument | LoadFailure]:
    """One document per non-blank line; a bad line is a failure naming ``label:LINE``."""
    any_line = False
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
            yield _record(raw, origin, offset)
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
    if _unstorable(doc_id):
        raise CorruptInput(f'{origin}: "id" contains a NUL or an unpaired surrogate')
    if not isinstance(text, str) or not text.strip():
        raise CorruptInput(f'{origin}: "text" must be a non-empty string')
    for key in ("title", "lang"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            raise CorruptInput(f'{origin}: "{key}" must be a string, got {_json_type(rec[key])}')
    metadata = {} if rec.get("metadata") is None else rec["metadata"]
    if not isinstance(metadata, dict):
        got = _json_type(metadata)
        raise CorruptInput(f'{origin}: "metadata" must be a JSON object, got {got}')
    if _unstorable(metadata):
        # PostgreSQL's jsonb rejects both, and would fail the whole batch later.
        raise CorruptInput(f'{origin}: "metadata" contains a NUL or an unpaired surrogate')
    body = clean_text(text)
    if not body:
        raise CorruptInput(f'{origin}: "text" has no visible characters')
    lang = (rec.get("lang") or "").strip().lower() or None
    meta = {**metadata, "format": "jsonl"}  # the loader's key wins over the record's
    return LoadedDocument(doc_id, _one_line(rec.get("title")), body, lang, meta, origin)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")


def _unstorable(value: Any) -> bool:
    """Whether a JSON value holds a NUL or a lone surrogate anywhere (keys included)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if "\x00" in v or _SURROGATE.search(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False
