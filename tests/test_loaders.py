"""Loaders: every format to text through its library, and every kind of bad input to a failure."""

from __future__ import annotations

import io
import json
import random
import unicodedata
import zipfile
from pathlib import Path

import docx
import pytest
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from rag.errors import (
    ConfigError,
    CorruptInput,
    EmptyInput,
    InputError,
    TooLarge,
    UnsupportedFormat,
)
from rag.ingest.formats import SUPPORTED_SUFFIXES, clean_text
from rag.ingest.loaders import (
    LoadedDocument,
    LoadFailure,
    iter_paths,
    load_bytes,
    load_path,
    rebased,
)

LIMIT = 1_000_000

# --- building real files --------------------------------------------------------------------------


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A PDF whose pages show the given lines in Helvetica (WinAnsi: no "č", "ř", "ě")."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    for lines in pages:
        page = writer.add_blank_page(width=595, height=842)
        fonts = DictionaryObject({NameObject("/F1"): font})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 770 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("cp1252"))
        page.replace_contents(stream)
    if title:
        writer.add_metadata({"/Title": title})
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def make_docx(title: str | None = "Provozní řád") -> bytes:
    document = docx.Document()
    if title:
        document.core_properties.title = title
    document.add_heading("Otevírací doba", level=1)
    document.add_paragraph("Kancelář je otevřena ve všední dny od osmi do čtyř.")
    document.add_paragraph("")  # an empty paragraph leaves no trace
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Den", "Hodiny"
    table.cell(1, 0).text, table.cell(1, 1).text = "Pondělí", "8–16"
    document.add_paragraph("Ve svátek je zavřeno.")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def load_one(path: Path, max_bytes: int = LIMIT) -> LoadedDocument | LoadFailure:
    [item] = list(load_path(path, max_bytes=max_bytes))
    return item


def loaded(item: LoadedDocument | LoadFailure) -> LoadedDocument:
    assert isinstance(item, LoadedDocument), item
    return item


def failure(item: LoadedDocument | LoadFailure, kind: type[InputError], *parts: str) -> str:
    """Assert ``item`` is a failure of ``kind`` whose one-line message holds ``parts``."""
    assert isinstance(item, LoadFailure), item
    assert type(item.error) is kind, (type(item.error), item.error)
    message = str(item.error)
    assert "\n" not in message
    for part in parts:
        assert part in message, (part, message)
    return message


# --- formats --------------------------------------------------------------------------------------


def test_txt_is_decoded_and_normalized(tmp_path: Path) -> None:
    path = tmp_path / "pravidla.txt"
    nfd = unicodedata.normalize("NFD", "Přístup  do\u00a0budovy")
    raw = f"{nfd}.\r\n\r\n\r\n\r\nDruh\u00ad\u00fd odstavec.  \n"  # soft hyphen inside a word
    path.write_bytes(b"\xef\xbb\xbf" + raw.encode())
    doc = loaded(load_one(path))
    assert doc.text == "Přístup do budovy.\n\nDruhý odstavec."
    assert unicodedata.is_normalized("NFC", doc.text)
    assert doc.title is None and doc.lang is None
    assert doc.metadata == {"format": "txt"}
    assert doc.source_id == path.resolve().as_posix()
    assert doc.origin == str(path)


_RAW_PIECES = [
    "a",
    "Ž",
    "ř",
    ".",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n\n",
    "\r\n",
    "\r",
    "\x00",
    "\x07",
    "\x85",
    "\u00ad",
    "\u200b",
    "\ufeff",
    "\u00a0",
    "\u2009",
    "\u2028",
    "\f",
    "\v",
    "\ud800",
]


@pytest.mark.parametrize("seed", range(5))
def test_clean_text_invariants(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        raw = "".join(rng.choice(_RAW_PIECES) for _ in range(rng.randint(0, 20)))
        out = clean_text(raw)
        assert clean_text(out) == out, repr(raw)
        assert out == out.strip() and out.replace("\n", "").isprintable(), repr(raw)
        for bad in ("  ", "\n\n\n", " \n", "\n "):
            assert bad not in out, (repr(raw), repr(out))
        # Letters and punctuation survive in order; only whitespace and invisibles change.
        assert [c for c in raw if c in "aŽř."] == [c for c in out if c in "aŽř."]
        assert out.count("\ufffd") == raw.count("\ud800")


def test_utf16_text_with_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    path.write_bytes("Žluťoučký kůň.".encode("utf-16"))
    assert loaded(load_one(path)).text == "Žluťoučký kůň."


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "NÁVOD K TERMINÁLU SOVA T3\nVerze 2.1\n\nAkumulátor vydrží deset hodin.",
            "NÁVOD K TERMINÁLU SOVA T3",
        ),
        (
            "\n\nProvozní řád jídelny\n\nObědy se vydávají od 11 do 14 hodin.",
            "Provozní řád jídelny",
        ),
        ("Přístup do budovy je možný s kartou.\n\nDruhý odstavec.", None),  # a sentence
        ("Kontakty:\nrecepce 111", None),
        ("Jediný řádek bez konce", None),
        ("x" * 151 + "\n\nText.", None),
    ],
)
def test_plain_text_title_is_its_first_line_when_that_is_a_heading(
    tmp_path: Path, text: str, title: str | None
) -> None:
    path = tmp_path / "navod.txt"
    path.write_text(text, encoding="utf-8")
    assert loaded(load_one(path)).title == title


@pytest.mark.parametrize(
    ("markdown", "title"),
    [
        ("Úvodní text.\n\n## Postup při nehodě ##\n\nVolejte 155.", "Postup při nehodě"),
        ("```\n# komentář v kódu\n```\n\n# Skutečný nadpis\n", "Skutečný nadpis"),
        ("Hlavní nadpis\n=============\n\nText.", "Hlavní nadpis"),
        ('---\ntitle: "Z hlavičky"\nauthor: x\n---\n# Nadpis\n', "Z hlavičky"),
        ("Bez nadpisu, jen text.", None),
    ],
)
def test_markdown_title_is_the_first_heading(
    tmp_path: Path, markdown: str, title: str | None
) -> None:
    path = tmp_path / "navod.md"
    path.write_text(markdown, encoding="utf-8")
    doc = loaded(load_one(path))
    assert doc.title == title
    assert doc.metadata == {"format": "md"}


HTML = """<!DOCTYPE html>
<html><head><meta charset="windows-1250"><title>Směrnice o cestování</title>
<style>p { color: red }</style><script>var tajne = "nezobrazovat";</script></head>
<body><nav>Domů | Kontakt</nav>
<h1>Cestovní náhrady</h1>
<p>Náhrady se vyplácí
   do deseti dnů.</p><p>Jízdenky<br>přikládejte k vyúčtování.</p>
<ul><li>vlak</li><li>autobus</li></ul>
<table><tr><td>Stravné</td><td>150 Kč</td></tr></table>
<!-- poznámka pro redakci --><noscript>zapněte skripty</noscript>
</body></html>"""


def test_html_drops_markup_and_keeps_paragraphs(tmp_path: Path) -> None:
    path = tmp_path / "smernice.html"
    path.write_bytes(HTML.encode("cp1250"))  # the declared charset, not UTF-8
    doc = loaded(load_one(path))
    assert doc.title == "Směrnice o cestování"
    assert doc.text == (
        "Cestovní náhrady\n\nNáhrady se vyplácí do deseti dnů.\n\n"
        "Jízdenky\npřikládejte k vyúčtování.\n\nvlak\nautobus\n\nStravné 150 Kč"
    )
    for hidden in ("tajne", "color", "Domů", "redakci", "zapněte"):
        assert hidden not in doc.text
    assert doc.metadata == {"format": "html"}


@pytest.mark.parametrize("parser", ["lxml", "html.parser"])
@pytest.mark.parametrize(
    "page",
    [
        b"<p>Viditelne.</p><!-- neuzavreny <p>Skryte.</p>",
        b"<p>Viditelne.</p><!-- --><p>Take.</p><!-- neuzavreny Skryte.",
        b"<p>Viditelne.</p><!--x<div><p>Skryte.</p></div>",
    ],
)
def test_nothing_after_an_unclosed_comment_is_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parser: str, page: bytes
) -> None:
    import importlib.util

    if parser == "html.parser":  # the parser used where lxml is not installed
        find_spec = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *a: None if name == "lxml" else find_spec(name, *a),
        )
    path = tmp_path / "komentar.html"
    path.write_bytes(page)
    doc = loaded(load_one(path))
    assert "Viditelne." in doc.text and "Skryte" not in doc.text, doc.text


def test_pdf_text_and_title(tmp_path: Path) -> None:
    path = tmp_path / "smlouva.pdf"
    path.write_bytes(
        make_pdf(
            [["Smlouva o dílo (verze 2).", "Cena je 500 korun."], ["Strana 2: záruka."]],
            title="Smlouva o dílo",
        )
    )
    doc = loaded(load_one(path))
    assert doc.title == "Smlouva o dílo"
    assert doc.text == "Smlouva o dílo (verze 2).\nCena je 500 korun.\n\nStrana 2: záruka."
    assert doc.metadata == {"format": "pdf"}


def test_docx_paragraphs_tables_and_title(tmp_path: Path) -> None:
    path = tmp_path / "rad.docx"
    path.write_bytes(make_docx())
    doc = loaded(load_one(path))
    assert doc.title == "Provozní řád"
    assert doc.text == (
        "Otevírací doba\n\nKancelář je otevřena ve všední dny od osmi do čtyř.\n\n"
        "Den | Hodiny\nPondělí | 8–16\n\nVe svátek je zavřeno."
    )
    assert doc.metadata == {"format": "docx"}


def test_docx_title_falls_back_to_the_title_style(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Bezpečnost práce", level=0)  # level 0 is the "Title" style
    document.add_paragraph("Helma je povinná.")
    buf = io.BytesIO()
    document.save(buf)
    path = tmp_path / "bozp.docx"
    path.write_bytes(buf.getvalue())
    assert loaded(load_one(path)).title == "Bezpečnost práce"


# --- JSONL ----------------------------------------------------------------------------------------


def test_jsonl_records_load_with_their_fields(tmp_path: Path) -> None:
    path = tmp_path / "faq.jsonl"
    lines = [
        {
            "id": "faq-1",
            "text": "Parkování je zdarma.",
            "title": " Parkování ",
            "lang": "CS",
            "metadata": {"team": "recepce", "tags": ["auto"]},
        },
        {"id": "faq-2", "text": "Wi-Fi heslo je na recepci."},
    ]
    path.write_text("\ufeff" + "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n")
    first, second = (loaded(x) for x in load_path(path, max_bytes=LIMIT))
    assert (first.source_id, first.title, first.text, first.lang) == (
        "faq-1",
        "Parkování",
        "Parkování je zdarma.",
        "cs",
    )
    assert first.metadata == {"team": "recepce", "tags": ["auto"], "format": "jsonl"}
    assert first.origin == f"{path}:1"
    assert (second.source_id, second.title, second.lang, second.origin) == (
        "faq-2",
        None,
        None,
        f"{path}:2",
    )


BAD_LINES = [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "expected a JSON object, got an array"),
    ('"text"', "expected a JSON object, got a string"),
    ('{"text": "bez id"}', '"id" must be a non-empty string'),
    ('{"id": 7, "text": "číselné id"}', '"id" must be a non-empty string'),
    ('{"id": "  ", "text": "prázdné id"}', '"id" must be a non-empty string'),
    ('{"id": "a"}', '"text" must be a non-empty string'),
    ('{"id": "a", "text": ""}', '"text" must be a non-empty string'),
    ('{"id": "a", "text": ["seznam"]}', '"text" must be a non-empty string'),
    ('{"id": "a", "text": "\\u200b"}', '"text" has no visible characters'),
    ('{"id": "a", "text": "x", "metadata": [1]}', '"metadata" must be a JSON object, got an array'),
    ('{"id": "a", "text": "x", "metadata": "k"}', '"metadata" must be a JSON object, got a string'),
    ('{"id": "a", "text": "x", "metadata": {"k": "a\\u0000b"}}', '"metadata" contains a NUL'),
    ('{"id": "a", "text": "x", "title": 5}', '"title" must be a string, got a number'),
    ('{"id": "a", "text": "x", "lang": true}', '"lang" must be a string, got a boolean'),
    ('{"id": "a", "text": "x", "lang": "xx"}', '"lang" xx is not a supported language code'),
    ('{"id": "a\\nb", "text": "x"}', '"id" contains a control character'),
    ('{"id": "ok-1", "text": "x"}', "\"id\" 'ok-1' repeats line 1 of this file"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_jsonl_bad_line_is_named_and_good_lines_still_load(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "data.jsonl"
    good = [json.dumps({"id": f"ok-{n}", "text": "Dobrý záznam."}) for n in (1, 3)]
    path.write_text(f"{good[0]}\n{line}\n{good[1]}\n", encoding="utf-8")
    first, bad, last = load_path(path, max_bytes=LIMIT)
    assert loaded(first).origin == f"{path}:1" and loaded(last).origin == f"{path}:3"
    failure(bad, CorruptInput, f"{path}:2: ", message)
    assert bad.origin == f"{path}:2"


def test_jsonl_invalid_utf8_names_line_and_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    first = b'{"id": "a", "text": "ok"}\n'
    path.write_bytes(first + b'{"id": "b", "text": "\xff"}\n')
    ok, bad = load_path(path, max_bytes=LIMIT)
    assert loaded(ok).source_id == "a"
    failure(bad, CorruptInput, f"{path}:2", f"byte offset {len(first) + 21}")


def test_jsonl_line_over_the_limit_is_skipped_alone(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    big = json.dumps({"id": "big", "text": "x" * 500})
    small = json.dumps({"id": "small", "text": "malý"})
    path.write_text(f"{big}\n{small}\n", encoding="utf-8")
    bad, ok = load_path(path, max_bytes=200)
    failure(bad, TooLarge, f"{path}:1", "200 bytes")
    assert loaded(ok).source_id == "small"


def test_jsonl_without_records_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n  \n", encoding="utf-8")
    failure(load_one(path), EmptyInput, str(path))


# --- bad files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "kind", "part"),
    [
        ("obrazek.png", b"\x89PNG\r\n\x1a\n", UnsupportedFormat, "file type '.png'"),
        ("prazdny.txt", b"", EmptyInput, "empty file"),
        ("mezery.md", b" \n\t\r\n  ", EmptyInput, "only whitespace"),
        ("binarni.txt", b"text\x00\x01\x02", UnsupportedFormat, "NUL byte at offset 4"),
        ("latin2.txt", "Příliš".encode("cp1250"), CorruptInput, "invalid UTF-8 at byte offset 1"),
        ("rozbity.pdf", b"%PDF-1.4\n1 0 obj <<", CorruptInput, "not a readable PDF"),
        ("rozbity.docx", b"PK\x03\x04 not really a zip", CorruptInput, "not a readable DOCX"),
        ("stary.docx", bytes.fromhex("d0cf11e0a1b11ae1") + bytes(50), UnsupportedFormat, ".doc"),
        ("prazdna.html", b"<html><body><script>x()</script></body></html>", EmptyInput, "no text"),
    ],
)
def test_bad_file_gives_a_failure_naming_it(
    tmp_path: Path, name: str, content: bytes, kind: type[InputError], part: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    item = load_one(path)
    failure(item, kind, f"{path}: ", part)
    assert item.origin == str(path)


def test_docx_zip_without_a_document_is_corrupt(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "not a word document")
    path = tmp_path / "zip.docx"
    path.write_bytes(buf.getvalue())
    failure(load_one(path), CorruptInput, str(path), "DOCX")


def test_pdf_without_text_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "sken.pdf"
    path.write_bytes(make_pdf([[]]))
    failure(load_one(path), EmptyInput, str(path), "no extractable text")


def test_too_large_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "velky.txt"
    path.write_text("a" * 101, encoding="utf-8")

    def no_reading(self: Path) -> bytes:
        raise AssertionError("read a file that is over the limit")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    failure(load_one(path, max_bytes=100), TooLarge, str(path), "101 bytes", "limit of 100 bytes")


def test_missing_path_and_directory(tmp_path: Path) -> None:
    missing = tmp_path / "neni.txt"
    failure(load_one(missing), InputError, str(missing), "no such file")
    failure(load_one(tmp_path), InputError, str(tmp_path), "is a directory")


def test_size_limit_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        list(load_path(tmp_path / "a.txt", max_bytes=0))
    with pytest.raises(ConfigError):
        load_bytes(b"x", "a.txt", max_bytes=-1)


# --- directories ----------------------------------------------------------------------------------


def test_directories_are_walked_recursively_in_order(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for rel in ["b.txt", "a/z.md", "a/c/d.html", "a/.skryty/x.txt", ".env", "~$otevreny.docx"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("Obsah.", encoding="utf-8")
    single = tmp_path / "samotny.txt"
    single.write_text("Samostatný soubor.", encoding="utf-8")
    missing = tmp_path / "chybi.pdf"
    paths = list(iter_paths([root, single, missing, root / "b.txt"]))
    assert paths == [root / "a/c/d.html", root / "a/z.md", root / "b.txt", single, missing]
    items = [item for p in paths for item in load_path(p, max_bytes=LIMIT)]
    assert [type(i).__name__ for i in items] == ["LoadedDocument"] * 4 + ["LoadFailure"]


# --- uploads --------------------------------------------------------------------------------------


def test_upload_format_from_suffix_and_source_id() -> None:
    [doc] = load_bytes(b"Obsah.", "poznamky.TXT", max_bytes=LIMIT)
    assert loaded(doc).source_id == "poznamky.TXT" and doc.origin == "poznamky.TXT"
    [doc] = load_bytes(b"Obsah.", "poznamky.txt", max_bytes=LIMIT, source_id="kb/poznamky")
    assert loaded(doc).source_id == "kb/poznamky"


@pytest.mark.parametrize(
    ("content", "fmt"),
    [
        (make_pdf([["Bez pripony."]]), "pdf"),
        (make_docx(), "docx"),
        (b"  <!doctype html><html><body><p>Bez koncovky.</p></body></html>", "html"),
        ("Prostý text bez koncovky.".encode(), "txt"),
    ],
)
def test_upload_without_suffix_is_sniffed(content: bytes, fmt: str) -> None:
    [doc] = load_bytes(content, "upload", max_bytes=LIMIT)
    assert loaded(doc).metadata == {"format": fmt}


def test_upload_with_unknown_suffix_and_binary_content() -> None:
    [item] = load_bytes(b"\x00\x01\x02", "data.bin", max_bytes=LIMIT)
    failure(item, UnsupportedFormat, "data.bin: ", ".bin")


def test_upload_over_the_limit() -> None:
    [item] = load_bytes(b"x" * 11, "a.txt", max_bytes=10)
    failure(item, TooLarge, "a.txt: ", "11 bytes")


def test_jsonl_upload_keeps_record_ids() -> None:
    data = b'{"id": "r1", "text": "Jedna."}\r\n{"id": "r2"}\r\n'
    ok, bad = load_bytes(data, "batch.jsonl", max_bytes=LIMIT, source_id="ignored")
    assert loaded(ok).source_id == "r1" and ok.origin == "batch.jsonl:1"
    failure(bad, CorruptInput, "batch.jsonl:2: ")


def test_supported_suffixes_all_load(tmp_path: Path) -> None:
    content = {
        ".txt": b"Text.",
        ".md": b"# Nadpis\n\nText.",
        ".markdown": b"Text.",
        ".html": b"<p>Text.</p>",
        ".htm": b"<p>Text.</p>",
        ".pdf": make_pdf([["Text."]]),
        ".docx": make_docx(),
        ".jsonl": b'{"id": "1", "text": "Text."}',
    }
    expected = {".docx": "Ve svátek je zavřeno.", ".md": "# Nadpis\n\nText."}
    assert set(content) == set(SUPPORTED_SUFFIXES)
    for suffix, data in content.items():
        path = tmp_path / f"soubor{suffix}"
        path.write_bytes(data)
        assert loaded(load_one(path)).text.endswith(expected.get(suffix, "Text.")), suffix


def test_rebased_source_ids_are_relative_to_the_root_only_under_it(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "prirucka").mkdir(parents=True)
    (root / "prirucka" / "benefity.md").write_text("# Benefity\n\nStravenky.", encoding="utf-8")
    (tmp_path / "jinde.txt").write_text("Mimo kořen.", encoding="utf-8")
    (root / "prazdny.txt").write_text("", encoding="utf-8")
    items = [
        i
        for p in iter_paths([root, tmp_path / "jinde.txt"])
        for i in load_path(p, max_bytes=10_000)
    ]
    out = list(rebased(items, root))
    docs = sorted(i.source_id for i in out if isinstance(i, LoadedDocument))
    assert docs == [(tmp_path / "jinde.txt").resolve().as_posix(), "prirucka/benefity.md"]
    [failure] = [i for i in out if isinstance(i, LoadFailure)]
    assert "prazdny.txt" in failure.origin  # failures pass through untouched
    assert list(rebased(items, None)) == items
