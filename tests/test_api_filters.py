"""Metadata filters from the outside: the ``filter`` body field of /v1/search, /v1/ask and
/v1/chat/completions and the filter options of ``rag search`` / ``rag ask``.

A bad filter is a 422 naming ``filter``, a bad option one line and exit 1; a good one reaches both
retrievers (``retrieve(filters=...)``, tested on its own in test_filters.py), so nothing outside it
comes back, over HTTP or from the CLI, even for a small set inside a large owner.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from rag.cli.query import parse_filter
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import InputError
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.search.filters import SearchFilter
from rag.store import DEFAULT_OWNER
from tests.apiserver import LiveServer, api_settings, assert_problem, new_database

# source_id, lang, metadata, text
DOCS = [
    (
        "hr/dovolena.md",
        "cs",
        {"team": "hr", "date": "2025-02-01"},
        "Dovolenou schvaluje vedoucí oddělení nejméně týden předem v docházkovém systému.",
    ),
    (
        "hr/nemoc.md",
        "cs",
        {"team": "hr", "date": "2024-05-10"},
        "Nemocenskou hlásí zaměstnanec vedoucímu oddělení první den nemoci.",
    ),
    (
        "provoz/dovolena-skladu.md",
        "cs",
        {"team": "sklad", "date": "2023-07-01"},
        "Dovolenou skladníků v létě schvaluje vedoucí skladu podle směn.",
    ),
    (
        "en/leave.md",
        "en",
        {"team": "hr", "date": "2025-03-01"},
        "Leave is approved by the head of the department a week in advance.",
    ),
]
# the bulk that a small filtered set must not drown in
BULK = [
    (
        f"archiv/zapis-{i:04d}.md",
        "cs",
        {"team": "archiv"},
        f"Zápis z porady číslo {i}: dovolená, směny a docházka oddělení {i % 37}.",
    )
    for i in range(900)
]
QUESTION = "Kdo schvaluje dovolenou?"
BAD_FILTERS = [
    ("not an object", "Expected `object"),  # caught by the schema
    ({"folder": "hr/"}, "unknown filter field: folder"),
    ({"metadata": {"team": ["hr"]}}, "must be a string, number or boolean"),
    ({"date_from": "yesterday"}, "not a date"),
    ({"date_to": "2025-01-01garbage"}, "not a date"),
    ({"date_from": "2025-01-01T00:00:00"}, "not a date"),
    ({"date_from": "20250101"}, "not a date"),
    ({"date_from": "2025-02-01", "date_to": "2024-01-01"}, "after filter.date_to"),
    ({"source_prefix": "x" * 501}, "longer than 500"),
]


def load(url: str, data_dir: Path, docs: list[tuple[str, str, dict[str, Any], str]]) -> None:
    settings = api_settings(url, data_dir)
    items = [LoadedDocument(s, None, t, lang, meta, s) for s, lang, meta, t in docs]
    with Database(settings, run_migrations=False) as db:
        summary = Ingestor(db, settings, make_embedder(settings), DEFAULT_OWNER).add_all(items)
    assert summary.failed == 0, summary.as_dict()


@pytest.fixture(scope="module")
def url(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    url = new_database(server_url, "rag_api_filters")
    load(url, tmp_path_factory.mktemp("load"), DOCS + BULK)
    return url


@pytest.fixture(scope="module")
def service(url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # an HNSW scan, not the exact scan of small owners, so that the filter must not starve it
    settings = api_settings(url, tmp_path_factory.mktemp("filters"), exact_scan_below=100)
    server = LiveServer.start(settings)
    server.wait_embedded(timeout=120)  # the service's worker embeds what Ingestor queued
    yield server
    server.close()


def search(server: LiveServer, filter: Any, **body: Any) -> dict[str, Any]:
    r = server.client.post(
        "/v1/search", json={"question": QUESTION, "limit": 50, "filter": filter, **body}
    )
    assert r.status_code == 200, r.text
    return r.json()


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "message"), BAD_FILTERS)
@pytest.mark.parametrize("route", ["/v1/search", "/v1/ask", "/v1/chat/completions"])
def test_a_bad_filter_is_a_422_naming_the_field(
    service: LiveServer, route: str, bad: Any, message: str
) -> None:
    body: dict[str, Any] = {"filter": bad}
    if route == "/v1/chat/completions":
        body["messages"] = [{"role": "user", "content": QUESTION}]
    else:
        body["question"] = QUESTION
    problem = assert_problem(service.client.post(route, json=body), 422, "validation")
    assert problem["errors"][0]["field"] == "filter", problem
    assert message in problem["errors"][0]["message"], problem


def test_no_filter_and_an_empty_filter_change_nothing(service: LiveServer) -> None:
    plain, empty = search(service, None), search(service, {})
    assert plain["hits"], plain
    plain.pop("timings_ms"), empty.pop("timings_ms")
    assert empty == plain


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--meta", "team"], "--meta takes KEY=VALUE"),
        (["--meta", "=hr"], "--meta takes KEY=VALUE"),
        (["--date-from", "2025-13-01"], "not a date"),
        (["--date-from", "2025-02-01", "--date-to", "2024-01-01"], "after filter.date_to"),
    ],
)
@pytest.mark.parametrize("command", ["search", "ask"])
def test_a_bad_filter_option_is_one_line_and_exit_1(
    url: str, tmp_path: Path, command: str, args: list[str], message: str
) -> None:
    env = {"DATABASE_URL": url, "RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDER": "none"}
    result = CliRunner().invoke(cli, [command, QUESTION, *args], env=env)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rag: error: ") and message in lines[0], lines


def test_filter_options_parse_to_a_search_filter() -> None:
    f = parse_filter(
        "hr/", ("team=hr", "year=2024", "public=true", 'code="007"', "note=a=b"), None, None, "CS"
    )
    assert f == SearchFilter(
        source_prefix="hr/",
        metadata={"team": "hr", "year": 2024, "public": True, "code": "007", "note": "a=b"},
        lang="cs",
    )
    assert parse_filter(None, (), None, None, None) is None
    # a JSON list or object is no metadata value: it is matched as the literal string
    assert parse_filter(None, ("tags=[1]",), None, None, None).metadata == {"tags": "[1]"}
    with pytest.raises(InputError, match="longer than 500"):
        parse_filter(None, ("k" * 501 + "=v",), None, None, None)


# --- end to end ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filter", "admits"),
    [
        ({"source_prefix": "hr/"}, lambda s, lang, m: s.startswith("hr/")),
        ({"metadata": {"team": "sklad"}}, lambda s, lang, m: m.get("team") == "sklad"),
        ({"lang": "en"}, lambda s, lang, m: lang == "en"),
        (
            {"date_from": "2025-01-01", "date_to": "2025-12-31", "metadata": {"team": "hr"}},
            lambda s, lang, m: m.get("team") == "hr" and m.get("date", "")[:4] == "2025",
        ),
    ],
)
@pytest.mark.parametrize("mode", ["hybrid", "fts", "vector"])
def test_a_filtered_search_never_returns_a_chunk_outside_the_filter(
    service: LiveServer, filter: dict[str, Any], admits: Any, mode: str
) -> None:
    want = {s for s, lang, m, _ in DOCS + BULK if admits(s, lang, m)}
    assert want and len(want) <= 3, want  # a small set inside a large owner
    hits = search(service, filter, mode=mode)["hits"]
    got = {h["source_id"] for h in hits}
    assert got <= want, (filter, mode, got - want)
    assert got or mode == "fts", (filter, mode)  # the English page shares no word with the question
    if mode == "vector":  # the HNSW scan did not starve: every admitted document came back
        assert got == want, (filter, want - got)


def test_ask_and_chat_answer_from_inside_the_filter(service: LiveServer) -> None:
    narrow = {"source_prefix": "provoz/"}
    r = service.client.post("/v1/ask", json={"question": QUESTION, "filter": narrow}).json()
    assert r["status"] == "answered", r
    assert {s["source_id"] for s in r["sources"]} == {"provoz/dovolena-skladu.md"}, r["sources"]
    streamed = service.client.post(
        "/v1/ask", json={"question": QUESTION, "filter": narrow, "stream": True}
    )
    assert "provoz/dovolena-skladu.md" in streamed.text and "hr/dovolena.md" not in streamed.text
    chat = openai.OpenAI(base_url=service.url + "/v1", api_key="x", max_retries=0)
    reply = chat.chat.completions.create(
        model="rag",
        messages=[{"role": "user", "content": QUESTION}],
        extra_body={"filter": {"source_prefix": "hr/"}},
    )
    sources = {s["source_id"] for s in reply.model_extra["rag"]["sources"]}  # type: ignore[index]
    assert sources and all(s.startswith("hr/") for s in sources), sources
    # a filter that admits nothing: not in the knowledge base, not an error
    none = service.client.post(
        "/v1/ask", json={"question": QUESTION, "filter": {"source_prefix": "nikde/"}}
    ).json()
    assert none["status"] == "not_found" and none["not_found_by"] == "filter", none


def test_the_cli_filter_options_narrow_search_and_ask(url: str, tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": url,
        "RAG_DATA_DIR": str(tmp_path),
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
    }
    result = CliRunner().invoke(
        cli, ["search", QUESTION, "--meta", "team=hr", "--lang", "cs", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    got = {h["source_id"] for h in json.loads(result.output)["hits"]}
    assert got and got <= {"hr/dovolena.md", "hr/nemoc.md"}, got
    result = CliRunner().invoke(
        cli, ["ask", QUESTION, "--source-prefix", "provoz/", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert {s["source_id"] for s in answer["sources"]} <= {"provoz/dovolena-skladu.md"}, answer
