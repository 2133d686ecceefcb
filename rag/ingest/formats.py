"""File formats to text: which format a file is in, and its title and text.

Each format goes through a well-kept library: pypdf (PDF), python-docx (DOCX), BeautifulSoup
(HTML); txt and md are decoded as UTF-8 (a BOM is stripped, UTF-16 with a BOM is accepted), a
Markdown file's title is its front matter's ``title:`` or its first heading, and a plain-text
file's title its first line when that line reads as a heading (short, on its own, not ending like
a sentence). Every extracted text
goes through :func:`clean_text`. Bad input raises an :class:`~rag.errors.InputError` whose message
is one line naming the file; :mod:`rag.ingest.loaders` turns it into a failure of that file.
"""

from __future__ import annotations

import codecs
import importlib.util
import io
import re
import time
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag.errors import (
    CorruptInput,
    EmptyInput,
    InputError,
    TooLarge,
    UnsupportedFormat,
    short_reason,
)

if TYPE_CHECKING:
    from rag.settings import Settings

FORMATS = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".jsonl": "jsonl",
}
SUPPORTED_SUFFIXES = tuple(FORMATS)
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc/.xls


def detect_format(suffix: str, head: bytes, label: str) -> str:
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


@dataclass(frozen=True, slots=True)
class ExtractLimits:
    """What one file may expand to: the upload limit counts compressed bytes only.

    A small DOCX can hold a hundred megabytes of XML, and a PDF thousands of pages; each bound
    is checked before the work it bounds where it can be (a zip's declared sizes, the page
    count), and during it otherwise (extracted characters, parse time).
    """

    max_chars: int = 20 * 1024 * 1024  # extracted text: no more than a plain-text upload
    max_expanded_bytes: int = 32 * 1024 * 1024  # a DOCX's parts, decompressed
    max_pages: int = 2000  # of a PDF
    max_html_tags: int = 500_000
    # as deep as a browser's parser builds a tree (Chromium: 512); beyond it the tree's walks
    # (BeautifulSoup's insert_after visits the subtree) turn quadratic
    max_html_depth: int = 512
    seconds: float = 20.0  # parsing one file

    @classmethod
    def of(cls, settings: Settings) -> ExtractLimits:
        return cls(
            max_chars=settings.max_document_chars,
            max_expanded_bytes=settings.max_expanded_bytes,
            max_pages=settings.max_pdf_pages,
            seconds=settings.parse_seconds,
        )


class _Budget:
    """The characters and the time left for extracting one file."""

    def __init__(self, limits: ExtractLimits, label: str) -> None:
        self.limits, self.label = limits, label
        self.chars = 0
        self.deadline = time.monotonic() + limits.seconds

    def start(self) -> None:
        """Start the clock now: a library's first import is not the file's parsing time."""
        self.deadline = time.monotonic() + self.limits.seconds

    def spend(self, text: str) -> str:
        """Count ``text`` against the character limit, and check the clock."""
        self.chars += len(text)
        if self.chars > self.limits.max_chars:
            raise TooLarge(
                f"{self.label}: more than {self.limits.max_chars} characters of text "
                f"(the limit is {self.limits.max_chars})"
            )
        self.tick()
        return text

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise TooLarge(
                f"{self.label}: parsing took longer than {self.limits.seconds:g} s; "
                "split the file or save it in a simpler format"
            )


DEFAULT_LIMITS = ExtractLimits()


def extract(
    data: bytes, fmt: str, label: str, limits: ExtractLimits = DEFAULT_LIMITS
) -> tuple[str | None, str]:
    """The title (None if there is none) and the uncleaned text of a file in format ``fmt``.

    Raises:
        TooLarge: the file expands past ``limits`` or takes longer than they allow.
        InputError: the file is unreadable, empty or not in a supported format.
    """
    budget = _Budget(limits, label)
    if fmt == "pdf":
        return _pdf(data, label, budget)
    if fmt == "docx":
        return _docx(data, label, budget)
    if fmt == "html":
        return _html(data, label, budget)
    text = budget.spend(_decode(data, label))
    # The title is in the first lines; a whole file of unclosed fences must not be scanned.
    if fmt == "md":
        return _markdown_title(text[:65536]), text
    return (_text_title(text[:65536]) if fmt == "txt" else None), text


_TITLE_MAX = 150
_SENTENCE_END = (".", ",", ";", ":", "!", "?", "…")


def _text_title(text: str) -> str | None:
    """A plain-text file's first line, when it is a heading: a later passage then still knows
    its document's subject ("SOVA T3" above the paragraph on the terminal's battery)."""
    lines = text.lstrip("\ufeff").lstrip().splitlines()
    if len(lines) < 2 or not any(line.strip() for line in lines[1:]):
        return None  # a one-line file is all text, no heading
    first = lines[0].strip()
    if not first or len(first) > _TITLE_MAX or first.endswith(_SENTENCE_END):
        return None
    return first


# --- text --------------------------------------------------------------------------------------

SURROGATE = re.compile("[\ud800-\udfff]")
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
        text = SURROGATE.sub("\ufffd", text)  # lone surrogates cannot be stored as UTF-8
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


# --- formats through their libraries -----------------------------------------------------------
# Each library is imported where it is used: only the formats being loaded pay for the import.

_DROP_TAGS = {"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "head"}
_BLOCK_TAGS = {
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
}
_LINE_TAGS = {"br", "caption", "dd", "dt", "li", "tr"}
# Private-use characters stand for breaks while the markup's own whitespace is collapsed.
_PARA_MARK, _LINE_MARK = "\ue000", "\ue001"


# Elements that never hold others (void), hold only text (raw text: their content is not
# markup), or close themselves when a sibling starts (optional end tags): none of them nests.
_VOID_TAGS = frozenset(
    b"area base br col embed hr img input link meta param source track wbr basefont bgsound "
    b"frame keygen".split()
)
_RAW_TEXT_TAGS = frozenset(b"script style textarea title xmp iframe noembed noframes".split())
_SIBLING_TAGS = frozenset(
    b"p li dt dd tr td th option optgroup rb rt rp rtc thead tbody tfoot colgroup caption "
    b"html head body".split()
)
_MARKUP = re.compile(rb"<(?:!--|(/?)([A-Za-z][^\s/>]*)([^>]*)>)")
_COMMENT_END = re.compile(rb"--!?>")


def _html_nesting(data: bytes, label: str, max_depth: int) -> int | None:
    """Refuse markup nested deeper than ``max_depth``, before a tree of it is built.

    One pass over the tags, keeping the open elements as a parser would: an end tag closes the
    innermost open element of its name and every element opened inside it, and one with no
    open element of its name is ignored; comments and the content of raw-text elements are
    skipped.

    Returns:
        Where an unclosed comment starts (all the rest is comment), else None.
    """
    stack: list[bytes] = []
    open_count: dict[bytes, int] = {}
    pos = 0
    # A tag runs to the next ">": past the last one nothing is a tag, and a search there
    # would scan to the end of the data again from every "<".
    end_of_tags = data.rfind(b">") + 1
    while m := _MARKUP.search(data, pos, end_of_tags):
        pos = m.end()
        if m.group(2) is None:  # <!--, which "<!-->" and "<!--->" also close
            end = _COMMENT_END.search(data, m.start() + 2)
            if end is None:
                return m.start()
            pos = end.end()
            continue
        name = m.group(2).lower()
        if m.group(1):  # an end tag
            if open_count.get(name):
                while (top := stack.pop()) != name:
                    open_count[top] -= 1
                open_count[name] -= 1
            continue
        if name in _RAW_TEXT_TAGS:
            close = re.compile(rb"</" + re.escape(name) + rb"[\s/>]", re.IGNORECASE)
            end = close.search(data, pos)
            pos = end.start() if end else len(data)
            continue
        if name in _VOID_TAGS or name in _SIBLING_TAGS or m.group(3).endswith(b"/"):
            continue
        stack.append(name)
        open_count[name] = open_count.get(name, 0) + 1
        if len(stack) > max_depth:
            raise TooLarge(
                f"{label}: HTML nested more than {max_depth} elements deep "
                f"(at byte offset {m.start()}); the limit is {max_depth}"
            )
    # a comment opened after the last ">" cannot be closed
    tail = data.find(b"<!--", pos)
    return tail if tail >= 0 else None


def _html(data: bytes, label: str, budget: _Budget) -> tuple[str | None, str]:
    # Every tag becomes a Python object: count them before BeautifulSoup builds any.
    tags = data.count(b"<")
    if tags > budget.limits.max_html_tags:
        raise TooLarge(
            f"{label}: about {tags} HTML tags; the limit is {budget.limits.max_html_tags}"
        )
    unclosed_comment = _html_nesting(data, label, budget.limits.max_html_depth)
    if unclosed_comment is not None:
        # A browser shows nothing after it; parsers differ (html.parser keeps it as text).
        data = data[:unclosed_comment]
    from bs4 import BeautifulSoup

    budget.start()

    # lxml is faster and python-docx depends on it, so it is normally there.
    parser = "lxml" if importlib.util.find_spec("lxml") else "html.parser"
    try:
        # Bytes, so that BeautifulSoup honours the page's declared encoding.
        soup = BeautifulSoup(data, parser)
        heading = soup.title or soup.find("h1")
        title = heading.get_text(" ") if heading else None
        raw = budget.spend(_marked_text(soup, budget))
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001  # the parser's failures share no base class
        raise CorruptInput(f"{label}: not readable HTML ({short_reason(e, 160)})") from None
    flat = " ".join(raw.split()).replace(_LINE_MARK, "\n")
    paragraphs = (p.strip() for p in flat.split(_PARA_MARK))
    return title, "\n\n".join(p for p in paragraphs if p)


def _marked_text(soup: Any, budget: _Budget) -> str:
    """The page's text with a mark for each break its blocks, lines and cells make.

    One walk in document order, with a stack instead of recursion: editing the tree instead
    (a mark inserted beside every block) costs a scan of the parent's children and of the
    tag's subtree per edit, quadratic in a page of many blocks.
    """
    from bs4 import CData, NavigableString, Tag

    parts: list[str] = []
    stack: list[tuple[Iterator[Any], str, bool]] = [(iter(soup.contents), "", False)]
    while stack:
        children, after, in_pre = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
            parts.append(after)
            continue
        if not isinstance(node, Tag):
            # comments, doctypes and processing instructions stay invisible
            if type(node) in (NavigableString, CData):
                parts.append(node.replace("\n", _LINE_MARK) if in_pre else str(node))
            continue
        budget.tick()
        name = node.name
        if name in _DROP_TAGS:
            continue
        if name in _BLOCK_TAGS:
            parts.append(_PARA_MARK)
            after = _PARA_MARK
        elif name in _LINE_TAGS:
            parts.append(_LINE_MARK)
            after = ""
        else:
            after = " " if name in ("td", "th") else ""
        stack.append((iter(node.contents), after, in_pre or name == "pre"))
    return "".join(parts)


def _pdf(data: bytes, label: str, budget: _Budget) -> tuple[str | None, str]:
    from pypdf import PdfReader

    budget.start()

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
        count = len(reader.pages)
        if count > budget.limits.max_pages:
            raise TooLarge(f"{label}: {count} pages; the limit is {budget.limits.max_pages}")
        pages = [budget.spend(page.extract_text() or "") for page in reader.pages]
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001  # pypdf raises many unrelated types on damage
        raise CorruptInput(f"{label}: not a readable PDF ({short_reason(e, 160)})") from None
    text = "\n\n".join(pages)
    if not clean_text(text):
        raise EmptyInput(f"{label}: PDF has no extractable text (a scan needs OCR first)")
    return (str(title) if title else None), text


def _check_zip(data: bytes, label: str, limits: ExtractLimits) -> None:
    """Refuse a zip whose members would inflate past the limit, before inflating any.

    zipfile never reads more than a member's declared size (a member that inflates further
    fails its CRC check), so the declared sizes bound what the parser can be handed.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise CorruptInput(f"{label}: not a readable DOCX ({short_reason(e, 160)})") from None
    if len(members) > 10_000:
        raise TooLarge(f"{label}: {len(members)} parts in the zip; the limit is 10000")
    expanded = sum(m.file_size for m in members)
    if expanded > limits.max_expanded_bytes:
        raise TooLarge(
            f"{label}: {expanded} bytes when decompressed; the limit is {limits.max_expanded_bytes}"
        )


def _docx(data: bytes, label: str, budget: _Budget) -> tuple[str | None, str]:
    if data.startswith(_OLE_MAGIC):
        raise UnsupportedFormat(f"{label}: a legacy Word .doc file; save it as .docx")
    _check_zip(data, label, budget.limits)
    from docx import Document
    from docx.table import Table

    budget.start()

    try:
        doc = Document(io.BytesIO(data))
        title = doc.core_properties.title or None
        blocks: list[str] = []
        for block in doc.iter_inner_content():
            if isinstance(block, Table):
                blocks.append(budget.spend(_docx_table(block, budget)))
                continue
            # Resolving a style searches the styles part: only for paragraphs that name one
            # (one without is in the default style, never "Title").
            if (
                title is None
                and block._p.style is not None
                and block.style is not None
                and block.style.name == "Title"
            ):
                title = block.text
            blocks.append(budget.spend(block.text))
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001  # zip, XML and package errors share no base
        raise CorruptInput(f"{label}: not a readable DOCX ({short_reason(e, 160)})") from None
    return title, "\n\n".join(b for b in blocks if b.strip())


def _docx_table(table: Any, budget: _Budget) -> str:
    """A table as one paragraph, a line per row, cells separated by " | "."""
    lines = []
    for row in table.rows:
        budget.tick()
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if text and (not cells or cells[-1] != text):  # a merged cell repeats
                cells.append(text)
        if cells:
            lines.append(" | ".join(cells))
    return "\n".join(lines)
