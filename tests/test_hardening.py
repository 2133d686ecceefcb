"""Hostile input over HTTP: every field a 4xx naming it, never a 500, and never the wrong document.

Each test reproduces one way the service once failed (NULs in stored fields, deeply nested JSON,
non-ASCII digits taken for document ids, unbounded history, blank ids, unknown languages,
repeated JSONL ids) against a real service on loopback and a real PostgreSQL.
"""

from __future__ import annotations

import io
import json
import random
import socket
import time
import urllib.parse
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pypdf
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from tests.apiserver import LiveServer, api_settings, assert_problem, new_database


@pytest.fixture(scope="module")
def hard(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    url = new_database(server_url, "rag_hardening")
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("hard")))
    yield server
    server.close()


def post_raw(server: LiveServer, path: str, body: bytes) -> Any:
    return server.client.post(path, content=body, headers={"content-type": "application/json"})


# --- 1. NUL and lone surrogates in stored fields --------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"source_id": "n", "text": "ahoj", "title": "a\\u0000b"}', "title"),
        ('{"source_id": "n\\u0000", "text": "ahoj"}', "source_id"),
        ('{"source_id": "n", "text": "ahoj", "lang": "c\\u0000s"}', "lang"),
        ('{"source_id": "n", "text": "ahoj", "metadata": {"a": "\\u0000"}}', "metadata"),
        ('{"source_id": "n", "text": "ahoj", "metadata": {"a\\u0000": 1}}', "metadata"),
    ],
)
def test_unstorable_characters_in_json_fields_are_422(
    hard: LiveServer, body: str, field: str
) -> None:
    problem = assert_problem(post_raw(hard, "/v1/documents", body.encode()), 422, "validation")
    assert [e["field"] for e in problem["errors"]] == [field], problem


@pytest.mark.parametrize(
    "body",
    [
        '{"source_id": "n", "text": "ahoj", "metadata": {"a": ["\\ud800x"]}}',
        '{"source_id": "n", "text": "ahoj", "title": "\\udc00"}',
        '{"question": "\\ud800"}',
    ],
)
def test_lone_surrogates_are_not_json(hard: LiveServer, body: str) -> None:
    path = "/v1/search" if "question" in body else "/v1/documents"
    assert_problem(post_raw(hard, path, body.encode()), 400, "bad-request")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"title": "a\x00b"}, "title"),
        ({"source_id": "n\x00"}, "source_id"),
        ({"lang": "c\x00s"}, "lang"),
        ({"source_id": " \t "}, "source_id"),
    ],
)
def test_unstorable_characters_in_multipart_fields_are_422(
    hard: LiveServer, data: dict[str, str], field: str
) -> None:
    files = {"file": ("a.txt", "Kotelna je ve sklepě.".encode())}
    r = hard.client.post("/v1/documents", files=files, data=data)
    problem = assert_problem(r, 422, "validation")
    assert [e["field"] for e in problem["errors"]] == [field], problem


def multipart_body(parts: list[tuple[str, str | None, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body of (name, filename or None, raw bytes) parts; and its type."""
    boundary = "rag-hardening-boundary"
    out = b""
    for name, filename, raw in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += (
            f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + raw + b"\r\n"
        )
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.mark.parametrize("field", ["source_id", "title", "lang"])
@pytest.mark.parametrize("raw", [b"\xff", b"ab\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80cs"])
def test_invalid_utf8_in_a_multipart_text_part_is_422_naming_it(
    hard: LiveServer, field: str, raw: bytes
) -> None:
    body, content_type = multipart_body(
        [("file", "a.txt", "Kotelna je ve sklepě.".encode()), (field, None, raw)]
    )
    r = hard.client.post("/v1/documents", content=body, headers={"content-type": content_type})
    problem = assert_problem(r, 422, "validation")
    assert [e["field"] for e in problem["errors"]] == [field], problem


def test_a_nul_in_a_jsonl_upload_names_the_line(hard: LiveServer) -> None:
    lines = [
        {"id": "j-1", "text": "První řádek."},
        {"id": "j-2", "text": "Druhý řádek.", "metadata": {"k": "a\x00"}},
    ]
    body = "\n".join(json.dumps(x) for x in lines).encode()
    r = hard.client.post("/v1/documents", files={"file": ("nul.jsonl", body)})
    assert r.status_code == 201, r.text
    summary = r.json()
    assert summary["added"] == 1 and summary["failed"] == 1, summary
    assert summary["failures"][0]["error"].startswith("nul.jsonl:2: "), summary


# --- 2. JSON nested too deeply ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/ask", "/v1/search", "/v1/documents", "/v1/chat/completions"])
def test_deeply_nested_json_is_400(hard: LiveServer, path: str) -> None:
    for depth in (1000, 100_000):
        body = '{"question": ' + "[" * depth + "]" * depth + "}"
        started = time.monotonic()
        problem = assert_problem(post_raw(hard, path, body.encode()), 400, "bad-request")
        assert time.monotonic() - started < 2
        assert "nested too deeply" in problem["detail"], problem


def test_deep_metadata_is_422_not_a_failed_write(hard: LiveServer) -> None:
    depth = 900  # under the decoder's limit, over what is worth storing
    body = '{"source_id": "hluboky", "text": "Hluboká metadata.", "metadata": '
    body += '{"a": ' * depth + "1" + "}" * depth + "}"
    problem = assert_problem(post_raw(hard, "/v1/documents", body.encode()), 422, "validation")
    assert problem["errors"][0]["field"] == "metadata"
    assert hard.client.get("/v1/documents/hluboky").status_code == 404


# --- 3 and 4. document refs: only ASCII digits make an id ---------------------------------------


@pytest.mark.parametrize("ref", ["%C2%B2", "①", "%00", "%ED%A0%80", "99999999999999999999999"])
def test_odd_document_refs_are_404(hard: LiveServer, ref: str) -> None:
    assert_problem(hard.client.get(f"/v1/documents/{ref}"), 404, "not-found")
    assert_problem(hard.client.delete(f"/v1/documents/{ref}"), 404, "not-found")


def test_a_non_ascii_digit_is_a_source_id_not_a_document_id(hard: LiveServer) -> None:
    ids = {}
    for sid in ("cislice-a", "cislice-b", "cislice-c", "٣"):
        r = hard.client.post("/v1/documents", json={"source_id": sid, "text": f"Dokument {sid}."})
        assert r.status_code == 201, r.text
        ids[sid] = r.json()["documents"][0]["document_id"]
    small = next(did for did in ids.values() if did < 10)
    arabic = chr(0x0660 + small)  # the Arabic-Indic digit of that id
    if arabic != "٣":
        assert_problem(hard.client.delete(f"/v1/documents/{arabic}"), 404, "not-found")
    assert hard.client.get(f"/v1/documents/{small}").status_code == 200  # still there
    deleted = hard.client.delete("/v1/documents/%D9%A3")  # the document whose source_id is ٣
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["deleted"]["document_id"] == ids["٣"]
    assert all(
        hard.client.get(f"/v1/documents/{ids[s]}").status_code == 200 for s in ids if s != "٣"
    )


# --- 6. history is bounded by characters --------------------------------------------------------


def test_a_huge_history_is_refused_fast(hard: LiveServer) -> None:
    turn = {"role": "assistant", "content": "slovo " * 500_000}  # 3 MB
    body = {"question": "A kde je kotelna?", "history": [turn] * 5}
    for path, payload in [
        ("/v1/ask", body),
        ("/v1/chat/completions", {"messages": [turn, {"role": "user", "content": "Kde?"}]}),
    ]:
        started = time.monotonic()
        problem = assert_problem(hard.client.post(path, json=payload), 413, "too-large")
        seconds = time.monotonic() - started
        assert seconds < 2, f"{path}: {seconds:.2f} s"
        assert "limit" in problem["detail"], problem


def test_history_over_the_character_limit_is_422(hard: LiveServer) -> None:
    turn = {"role": "assistant", "content": "slovo " * 5_000}  # 30,000 characters
    body = {"question": "A kde je kotelna?", "history": [turn] * 4}  # over 100,000 in all
    problem = assert_problem(hard.client.post("/v1/ask", json=body), 422, "validation")
    assert problem["errors"][0]["field"] == "history"
    assert "120000 characters; the limit is 100000" in problem["errors"][0]["message"], problem
    messages = [turn] * 4 + [{"role": "user", "content": "Kde?"}]
    problem = assert_problem(
        hard.client.post("/v1/chat/completions", json={"messages": messages}), 422, "validation"
    )
    assert problem["errors"][0]["field"] == "messages"


def test_a_long_history_within_the_limit_is_answered(hard: LiveServer) -> None:
    hard.client.post(
        "/v1/documents", json={"source_id": "kotelna", "text": "Kotelna je ve sklepě u skladu."}
    )
    turns = [
        {"role": "user", "content": "Kde je kotelna?"},
        {"role": "assistant", "content": "Kotelna je ve sklepě. " * 900},  # ~20,000 characters
    ]
    r = hard.client.post("/v1/ask", json={"question": "A kde přesně?", "history": turns})
    assert r.status_code == 200, r.text


# --- 11. blank ids, unknown languages, repeated JSONL ids ---------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source_id": "   ", "text": "ahoj"}, "source_id"),
        ({"source_id": "\t\n", "text": "ahoj"}, "source_id"),
        ({"source_id": "x", "text": "ahoj", "lang": "zz"}, "lang"),
        ({"source_id": "x", "text": "ahoj", "lang": "klingon"}, "lang"),
    ],
)
def test_blank_ids_and_unknown_languages_are_422(
    hard: LiveServer, body: dict[str, Any], field: str
) -> None:
    problem = assert_problem(hard.client.post("/v1/documents", json=body), 422, "validation")
    assert problem["errors"][0]["field"] == field, problem


def test_a_known_language_is_accepted_in_any_case(hard: LiveServer) -> None:
    r = hard.client.post("/v1/documents", json={"source_id": "de", "text": "Haus.", "lang": "DE"})
    assert r.status_code == 201, r.text
    assert hard.client.get("/v1/documents/de").json()["lang"] == "de"


def test_a_repeated_id_in_a_jsonl_file_fails_its_later_line(hard: LiveServer) -> None:
    lines = [
        {"id": "opak-1", "text": "Sklad je u brány."},
        {"id": "opak-2", "text": "Kantýna je v patře."},
        {"id": "opak-1", "text": "Sklad se přestěhoval."},
        {"id": "   ", "text": "Prázdné id."},
        {"id": "opak-3", "text": "Ahoj.", "lang": "xx"},
    ]
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()
    r = hard.client.post("/v1/documents", files={"file": ("opak.jsonl", body)})
    assert r.status_code == 201, r.text
    summary = r.json()
    assert summary["added"] == 2 and summary["failed"] == 3, summary
    errors = [f["error"] for f in summary["failures"]]
    assert errors[0].startswith("opak.jsonl:3: ") and "repeats line 1" in errors[0], errors
    assert errors[1].startswith("opak.jsonl:4: "), errors
    assert errors[2].startswith("opak.jsonl:5: ") and "lang" in errors[2], errors
    kept = hard.client.get("/v1/documents/opak-1").json()
    assert kept["char_count"] == len("Sklad je u brány.")  # the first line, not the repeat


# --- 5. what a file may expand to ---------------------------------------------------------------


def docx_with(paragraphs: int, text: str = "slovo slovo slovo") -> bytes:
    """A real DOCX whose body holds ``paragraphs`` copies of one paragraph (it deflates well)."""
    document = docx.Document()
    document.add_paragraph("Úvod.")
    buf = io.BytesIO()
    document.save(buf)
    body = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" * paragraphs
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":
                xml = data.decode()
                at = xml.index("<w:body>") + len("<w:body>")
                data = (xml[:at] + body + xml[at:]).encode()
            dst.writestr(info.filename, data)
    return out.getvalue()


def blank_pdf(pages: int) -> bytes:
    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=100, height=100)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def tight(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Parsing may take half a second, and a file may hold 5,000 characters of text."""
    url = new_database(server_url, "rag_hardening_tight")
    settings = api_settings(
        url, tmp_path_factory.mktemp("tight"), parse_seconds=0.5, max_document_chars=5000
    )
    server = LiveServer.start(settings)
    yield server
    server.close()


@pytest.fixture(scope="module")
def narrow(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A file may hold 5,000 characters of text, and parsing takes the default time: a busy
    machine's slow parse must not turn the character limit's refusal into the clock's."""
    url = new_database(server_url, "rag_hardening_narrow")
    settings = api_settings(url, tmp_path_factory.mktemp("narrow"), max_document_chars=5000)
    server = LiveServer.start(settings)
    yield server
    server.close()


def upload_seconds(server: LiveServer, name: str, data: bytes) -> tuple[Any, float]:
    started = time.monotonic()
    r = server.client.post("/v1/documents", files={"file": (name, data)})
    return r, time.monotonic() - started


def test_a_docx_bomb_is_413_in_well_under_a_second(hard: LiveServer) -> None:
    bomb = docx_with(1_900_000)  # ~100 MB of XML in a few hundred KB
    assert len(bomb) < 1_000_000
    r, seconds = upload_seconds(hard, "bomba.docx", bomb)
    problem = assert_problem(r, 413, "too-large")
    assert "decompressed" in problem["detail"], problem
    assert seconds < 0.8, f"{seconds:.2f} s"
    assert hard.client.get("/healthz").status_code == 200


def test_an_html_tag_bomb_is_413_fast(hard: LiveServer) -> None:
    r, seconds = upload_seconds(hard, "tagy.html", b"<html><body>" + b"<b>" * 600_000)
    problem = assert_problem(r, 413, "too-large")
    assert "HTML tags" in problem["detail"] and seconds < 0.8, (problem, seconds)


@pytest.mark.parametrize(
    "data",
    [b"<div>" * 100_000 + b"x" + b"</div>" * 100_000, b"<div><span>" * 100_000],
    ids=["closed", "unclosed"],
)
def test_deeply_nested_html_is_413_before_it_is_parsed(hard: LiveServer, data: bytes) -> None:
    r, seconds = upload_seconds(hard, "hnizdo.html", data)
    problem = assert_problem(r, 413, "too-large")
    assert "nested more than 512" in problem["detail"] and seconds < 5, (problem, seconds)
    assert hard.client.get("/healthz").status_code == 200


def test_html_nested_within_the_limit_and_a_page_of_many_blocks_are_read(
    hard: LiveServer,
) -> None:
    nested = b"<div>" * 500 + "Kotelna je ve sklepě.".encode() + b"</div>" * 500
    r, _ = upload_seconds(hard, "hluboke.html", nested)
    assert r.status_code == 201, r.text
    # 40,000 sibling blocks: a mark inserted beside each one took longer than the parse budget
    page = "".join(f"<p>Odstavec číslo {i}.</p>" for i in range(40_000)).encode()
    r, _ = upload_seconds(hard, "odstavce.html", page)
    assert r.status_code == 201, r.text
    stored = hard.client.get("/v1/documents/odstavce.html").json()
    assert stored["chunks"] > 10, stored


def test_a_pdf_over_the_page_limit_is_413(hard: LiveServer) -> None:
    r, seconds = upload_seconds(hard, "stranky.pdf", blank_pdf(2001))
    problem = assert_problem(r, 413, "too-large")
    assert "2001 pages" in problem["detail"], problem


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("dlouhy.txt", ("slovo " * 1000).encode()),
        ("dlouhy.docx", docx_with(400)),
        ("dlouhy.html", ("<p>slovo slovo</p>" * 600).encode()),
        ("dlouhy.jsonl", json.dumps({"id": "a", "text": "slovo " * 1000}).encode()),
    ],
)
def test_text_over_the_character_limit_is_413(narrow: LiveServer, name: str, data: bytes) -> None:
    r, _ = upload_seconds(narrow, name, data)
    problem = assert_problem(r, 413, "too-large")
    assert "characters" in problem["detail"], problem


def test_parsing_that_takes_too_long_is_413_within_the_limit(tight: LiveServer) -> None:
    # 60,000 empty paragraphs: no text to reach the character limit, however fast the machine,
    # but seconds of python-docx work
    r, seconds = upload_seconds(tight, "pomaly.docx", docx_with(60_000, ""))
    problem = assert_problem(r, 413, "too-large")
    assert "longer than 0.5 s" in problem["detail"], problem
    assert seconds < 2.5, f"{seconds:.2f} s"


# --- 9. ids of ingested files and the API agree -------------------------------------------------


def test_files_ingested_by_absolute_path_are_reachable_by_source_id(
    hard: LiveServer, tmp_path: Path
) -> None:
    kb = tmp_path / "kb"
    (kb / "prirucka").mkdir(parents=True)
    (kb / "prirucka" / "benefity.md").write_text("# Benefity\n\nStravenky.", encoding="utf-8")
    (tmp_path / "jinde").mkdir()
    (tmp_path / "jinde" / "vratnice.txt").write_text("Vrátnice je u brány.", encoding="utf-8")
    (tmp_path / "dalsi").mkdir()
    (tmp_path / "dalsi" / "vratnice.txt").write_text("Jiná vrátnice.", encoding="utf-8")
    env = {
        "DATABASE_URL": hard.services.settings.database_url or "",
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
        "RAG_DATA_DIR": str(tmp_path),
    }
    args = [str(kb.resolve()), str((tmp_path / "jinde" / "vratnice.txt").resolve())]
    args.append(str((tmp_path / "dalsi" / "vratnice.txt").resolve()))  # the same id again
    result = CliRunner().invoke(cli, ["ingest", *args, "--json"], env=env)
    summary = json.loads(result.stdout)
    assert result.exit_code == 1 and summary["added"] == 2, result.output
    [failure] = summary["failures"]
    assert "dalsi/vratnice.txt: source_id 'vratnice.txt' is also" in failure["error"], failure
    assert {d["source_id"] for d in summary["documents"]} == {
        "prirucka/benefity.md",
        "vratnice.txt",
    }
    shown = hard.client.get("/v1/documents/prirucka/benefity.md")
    assert shown.status_code == 200 and shown.json()["title"] == "Benefity", shown.text
    assert hard.client.get("/v1/documents/vratnice.txt").status_code == 200
    assert hard.client.delete("/v1/documents/prirucka/benefity.md").status_code == 200


def test_a_source_id_with_a_leading_slash_stays_reachable(hard: LiveServer) -> None:
    sid = "/srv/kb/stary.md"  # as an older `rag ingest` stored absolute paths
    r = hard.client.post("/v1/documents", json={"source_id": sid, "text": "Starý dokument."})
    assert r.status_code == 201, r.text
    assert hard.client.get("/v1/documents/srv/kb/stary.md").json()["source_id"] == sid
    assert hard.client.get("/v1/documents//srv/kb/stary.md").json()["source_id"] == sid
    r = hard.client.post("/v1/documents", json={"source_id": "srv/kb/stary.md", "text": "Nový."})
    assert r.status_code == 201, r.text  # an exact id wins over the one with the slash
    assert hard.client.get("/v1/documents/srv/kb/stary.md").json()["source_id"] != sid
    assert hard.client.delete("/v1/documents/srv/kb/stary.md").status_code == 200
    assert hard.client.delete("/v1/documents/srv/kb/stary.md").json()["deleted"]["source_id"] == sid
    assert_problem(hard.client.get("/v1/documents/srv/kb/stary.md"), 404, "not-found")


# --- 10. the schema and OPTIONS describe what the service does ----------------------------------


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/v1/documents", "GET, OPTIONS, POST"),
        ("/v1/documents/neco.md", "DELETE, GET, OPTIONS"),
        ("/v1/search", "OPTIONS, POST"),
    ],
)
def test_options_names_every_method(hard: LiveServer, path: str, allow: str) -> None:
    r = hard.client.options(path)
    assert r.status_code == 204 and r.headers["allow"] == allow, r.headers


def test_the_schema_lists_problem_responses_and_minimum_lengths(hard: LiveServer) -> None:
    schema = hard.client.get("/schema/openapi.json").json()
    paths = schema["paths"]
    expected = {
        ("/v1/search", "post"): {"400", "401", "413", "422", "503"},
        ("/v1/ask", "post"): {"400", "401", "413", "422", "502", "503"},
        ("/v1/documents", "post"): {"200", "201", "400", "401", "413", "415", "422", "503"},
        ("/v1/documents/{ref}", "get"): {"401", "404", "503"},
        ("/v1/documents/{ref}", "delete"): {"401", "404", "503"},
        ("/readyz", "get"): {"503"},
    }
    for (path, method), statuses in expected.items():
        responses = paths[path][method]["responses"]
        assert statuses <= set(responses), (path, method, sorted(responses))
        for status in statuses - {"200", "201"}:
            assert list(responses[status]["content"]) == ["application/problem+json"], status
    assert "text/event-stream" in paths["/v1/ask"]["post"]["responses"]["200"]["content"]
    components = schema["components"]["schemas"]
    assert components["SearchIn"]["properties"]["question"]["minLength"] == 1
    assert components["AskIn"]["properties"]["question"]["minLength"] == 1
    assert "enum" in components["ChatMessage"]["properties"]["role"], components["ChatMessage"]
    body = paths["/v1/documents"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["source_id"]["minLength"] == 1


# --- fuzz: multipart parts and paths ------------------------------------------------------------

FUZZ_BYTES = [b"", b"\x00", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\r\n", b"\x1b[2J", b'"', b";"]


def fuzz_bytes(rng: random.Random, longest: int = 24) -> bytes:
    """Random bytes, often with a piece that once broke something."""
    out = bytes(rng.randrange(256) for _ in range(rng.randrange(longest)))
    if rng.random() < 0.7:
        at = rng.randrange(len(out) + 1)
        out = out[:at] + rng.choice(FUZZ_BYTES) + out[at:]
    return out


def fuzz_multipart(rng: random.Random) -> tuple[bytes, str]:
    boundary = "fuzz" + "".join(rng.choice("abcXYZ019-_") for _ in range(rng.randrange(1, 30)))
    body = b""
    for _ in range(rng.randrange(1, 5)):
        name = rng.choice([b"file", b"source_id", b"title", b"lang", fuzz_bytes(rng, 8)])
        disposition = b'Content-Disposition: form-data; name="' + name + b'"'
        if rng.random() < 0.5:
            disposition += (
                b'; filename="' + rng.choice([b"a.txt", b"b.html", fuzz_bytes(rng)]) + b'"'
            )
        headers = [disposition]
        if rng.random() < 0.3:
            charset = rng.choice([b"utf-8", b"utf-16", b"latin-1", b"bogus", fuzz_bytes(rng, 6)])
            headers.append(b"Content-Type: text/plain; charset=" + charset)
        value = rng.choice(
            [fuzz_bytes(rng, 64), "Kotelna je ve sklepě.".encode(), b"<div>" * 600 + b"x"]
        )
        body += b"--" + boundary.encode() + b"\r\n" + b"\r\n".join(headers) + b"\r\n\r\n"
        body += value + b"\r\n"
    if rng.random() < 0.8:
        body += b"--" + boundary.encode() + b"--\r\n"
    else:  # cut short
        body = body[: rng.randrange(len(body) + 1)]
    return body, f"multipart/form-data; boundary={boundary}"


def fuzz_path(rng: random.Random) -> str:
    piece = urllib.parse.quote(fuzz_bytes(rng, 32), safe="")
    return rng.choice(
        [
            f"/v1/documents/{piece}",
            f"/v1/documents/{piece}/{piece}",
            f"/v1/{piece}",
            f"/{piece}",
            f"/v1/documents/..%2F{piece}",
            f"/static/{piece}",
        ]
    )


def test_fuzzed_multipart_parts_and_paths_are_never_a_5xx(hard: LiveServer) -> None:
    rng = random.Random(26)
    statuses: Counter[int] = Counter()
    failed = []
    for _ in range(100):
        body, content_type = fuzz_multipart(rng)
        r = hard.client.post("/v1/documents", content=body, headers={"content-type": content_type})
        statuses[r.status_code] += 1
        if r.status_code >= 500:
            failed.append((r.status_code, r.text[:200], body[:200]))
    for _ in range(100):
        method, path = rng.choice(["GET", "DELETE", "POST", "OPTIONS"]), fuzz_path(rng)
        r = hard.client.request(method, path)
        statuses[r.status_code] += 1
        if r.status_code >= 500:
            failed.append((r.status_code, method, path))
    print(f"\n200 fuzzed requests: {dict(sorted(statuses.items()))}")
    assert not failed, failed


def test_64_kib_of_headers_is_431(hard: LiveServer) -> None:
    r = hard.client.get("/healthz", headers={"X-Padding": "a" * 65536})
    problem = assert_problem(r, 431, "headers-too-large")
    assert "the limit is 16384" in problem["detail"], problem
    assert hard.client.get("/healthz", headers={"Cookie": "a" * 8192}).status_code == 200


def _read_all(sock: socket.socket, limit: float) -> bytes:
    """What the server sends until it closes the connection or ``limit`` seconds pass."""
    sock.settimeout(limit)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        pass
    return got


def test_a_head_sent_a_byte_at_a_time_is_cut_with_408(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    url = new_database(server_url, "rag_head_timeout")
    settings = api_settings(url, tmp_path_factory.mktemp("slow"), header_timeout=1.0)
    server = LiveServer.start(settings)
    try:
        host, port = server.url.removeprefix("http://").split(":")
        # a slow client: the request line, then one header byte every 0.2 s, never the blank line
        with socket.create_connection((host, int(port))) as sock:
            started = time.monotonic()
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            closed = False
            for byte in b"X-Slow: " + b"a" * 40:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                time.sleep(0.2)
            got = _read_all(sock, 5.0)
            waited = time.monotonic() - started
        assert got.startswith(b"HTTP/1.1 408 "), (got[:200], closed)
        body = json.loads(got.split(b"\r\n\r\n", 1)[1])
        assert body["kind"] == "request-timeout", body
        assert waited < 5, f"cut after {waited:.1f} s, the limit is 1 s"
        # a connection that sends nothing at all is cut too
        with socket.create_connection((host, int(port))) as sock:
            assert _read_all(sock, 5.0).startswith(b"HTTP/1.1 408 ")
        # a keep-alive connection: the deadline runs for each head afresh, not since the connect
        with socket.create_connection((host, int(port))) as sock:
            for _ in range(3):
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                sock.settimeout(5)
                got = b""
                while not got.endswith(b'{"status":"ok"}'):
                    chunk = sock.recv(65536)
                    assert chunk, f"closed after {got!r}"
                    got += chunk
                assert got.startswith(b"HTTP/1.1 200 "), got
                time.sleep(0.6)
        # and a request whose head came in time is served, however slowly it is answered
        assert server.client.get("/healthz").status_code == 200
    finally:
        server.close()
