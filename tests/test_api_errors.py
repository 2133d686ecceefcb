"""Problem details and limits over HTTP: every error kind, validation naming the field, 413/422
for each limit, 404/405, 503 with Retry-After on an exhausted pool, 500 without internals.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar, get
from litestar.testing import TestClient

from rag.answer.engine import Source
from rag.api.auth import Unauthorized
from rag.api.problems import EXCEPTION_HANDLERS
from rag.errors import (
    ConfigError,
    CorruptInput,
    DatabaseError,
    DatabaseUnavailable,
    EmbedderError,
    EmptyInput,
    InputError,
    LLMError,
    NotFound,
    RagError,
    RetrievalError,
    TooLarge,
    UnsupportedFormat,
)
from tests.apiserver import LiveServer, api_settings, assert_problem, new_database


@pytest.fixture(scope="module")
def strict(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Small limits, and a pool of one connection that gives up after 0.3 s."""
    url = new_database(server_url, "rag_api_strict")
    settings = api_settings(
        url,
        tmp_path_factory.mktemp("strict"),
        max_upload_bytes=4096,
        max_question_chars=100,
        max_history=2,
        pool_max=1,
        pool_timeout=0.3,
    )
    server = LiveServer.start(settings)
    yield server
    server.close()


# --- problem details and limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/search", {}, "question"),
        ("/v1/search", {"question": 5}, "question"),
        ("/v1/search", {"question": "Kde?", "limit": 0}, "limit"),
        ("/v1/search", {"question": "Kde?", "mode": "magic"}, "mode"),
        (
            "/v1/ask",
            {"question": "Kde?", "history": [{"role": "robot", "content": "x"}]},
            "history[0].role",
        ),
        ("/v1/ask", {"question": "Kde?", "stream": "yes"}, "stream"),
        ("/v1/ask", {"question": "   "}, "question"),
        ("/v1/documents", {"text": "bez id"}, "source_id"),
        ("/v1/documents", {"source_id": "", "text": "x"}, "source_id"),
        ("/v1/documents", {"source_id": "a", "text": "x", "metadata": []}, "metadata"),
        ("/v1/chat/completions", {"messages": []}, "messages"),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "assistant", "content": "Dobrý den."}]},
            "messages",
        ),
    ],
)
def test_validation_errors_name_the_field(
    strict: LiveServer, path: str, body: dict[str, Any], field: str
) -> None:
    problem = assert_problem(strict.client.post(path, json=body), 422, "validation")
    assert field in [e["field"] for e in problem["errors"]], problem


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/search", {"question": "proč " * 30}, "question"),
        ("/v1/ask", {"question": "proč " * 30}, "question"),
        (
            "/v1/ask",
            {"question": "Kde?", "history": [{"role": "user", "content": "a"}] * 3},
            "history",
        ),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "proč " * 30}]},
            "messages",
        ),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "a"}] * 4}, "messages"),
    ],
)
def test_question_and_history_limits_are_422(
    strict: LiveServer, path: str, body: dict[str, Any], field: str
) -> None:
    problem = assert_problem(strict.client.post(path, json=body), 422, "validation")
    assert problem["errors"][0]["field"] == field
    assert "limit" in problem["errors"][0]["message"]


def test_size_limits_are_413(strict: LiveServer) -> None:
    big_text = "slovo " * 1000  # 6000 bytes; the limit is 4096
    assert_problem(
        strict.client.post("/v1/documents", json={"source_id": "velky", "text": big_text}),
        413,
        "too-large",
    )
    assert_problem(
        strict.client.post("/v1/documents", files={"file": ("velky.txt", big_text.encode())}),
        413,
        "too-large",
    )
    # A body over the request limit is refused before it is read.
    huge = b"{" + b" " * (200 * 1024) + b"}"
    assert_problem(
        strict.client.post(
            "/v1/search", content=huge, headers={"content-type": "application/json"}
        ),
        413,
        "too-large",
    )
    assert strict.client.get("/v1/documents/velky").status_code == 404


@pytest.mark.parametrize(
    ("files", "status", "kind"),
    [
        ({"file": ("program.exe", b"MZ\x90\x00")}, 415, "unsupported-format"),
        ({"file": ("prazdny.txt", b"  \n ")}, 422, "empty-input"),
        ({"file": ("rozbity.pdf", b"%PDF-1.4\n1 0 obj <<")}, 422, "corrupt-input"),
        ({"file": ("spatny.jsonl", b"{not json}\n")}, 422, "corrupt-input"),
        ({"soubor": ("a.txt", b"text")}, 422, "validation"),
    ],
)
def test_bad_uploads(strict: LiveServer, files: dict[str, Any], status: int, kind: str) -> None:
    assert_problem(strict.client.post("/v1/documents", files=files), status, kind)


def test_bad_bodies(strict: LiveServer) -> None:
    assert_problem(
        strict.client.post(
            "/v1/documents", content=b"{nope", headers={"content-type": "application/json"}
        ),
        400,
        "bad-request",
    )
    assert_problem(
        strict.client.post(
            "/v1/documents", content=b"text", headers={"content-type": "text/plain"}
        ),
        415,
        "unsupported-format",
    )
    assert_problem(
        strict.client.post("/v1/documents", json={"source_id": "a", "text": "\u200b \n"}),
        422,
        "empty-input",
    )


def test_vector_search_without_an_embedder_is_503(server_url: str, tmp_path: Path) -> None:
    url = new_database(server_url, "rag_api_noemb")
    server = LiveServer.start(api_settings(url, tmp_path, embedder="none"), embedder=None)
    try:
        server.client.post(
            "/v1/documents", json={"source_id": "a", "text": "Kotelna je ve sklepě."}
        )
        r = server.client.post("/v1/search", json={"question": "Kde je kotelna?", "mode": "vector"})
        assert_problem(r, 503, "retrieval")
        assert r.headers["retry-after"].isdigit()
        fts = server.client.post("/v1/search", json={"question": "Kde je kotelna?"}).json()
        assert fts["hits"] and fts["degraded"][0]["reason"] == "no_embedder"
    finally:
        server.close()


@pytest.mark.parametrize(
    ("error", "status", "kind"),
    [
        (InputError, 422, "invalid-input"),
        (EmptyInput, 422, "empty-input"),
        (CorruptInput, 422, "corrupt-input"),
        (UnsupportedFormat, 415, "unsupported-format"),
        (TooLarge, 413, "too-large"),
        (NotFound, 404, "not-found"),
        (Unauthorized, 401, "unauthorized"),
        (DatabaseUnavailable, 503, "database-unavailable"),
        (RetrievalError, 503, "retrieval"),
        (EmbedderError, 503, "embedder"),
        (LLMError, 502, "llm"),
        (DatabaseError, 500, "database"),
        (ConfigError, 500, "config"),
        (RagError, 500, "internal"),
    ],
)
def test_every_error_kind_has_its_problem(error: type[RagError], status: int, kind: str) -> None:
    @get("/boom", sync_to_thread=False)
    def boom() -> None:
        raise error("secret detail at /srv/rag")

    with TestClient(Litestar([boom], exception_handlers=EXCEPTION_HANDLERS)) as client:
        r = client.get("/boom")
    problem = assert_problem(r, status, kind)
    if status < 500:
        assert problem["detail"] == "secret detail at /srv/rag"  # the caller's own input: said
    else:
        assert "secret" not in r.text  # a server-side fault: only in the log
    assert ("retry-after" in r.headers) == (status == 503)
    assert ("www-authenticate" in r.headers) == (status == 401)


def test_unknown_routes_and_methods(strict: LiveServer) -> None:
    assert_problem(strict.client.get("/v2/nothing"), 404, "not-found")
    assert_problem(strict.client.put("/v1/search", json={}), 405, "method-not-allowed")
    assert_problem(strict.client.get("/v1/documents/neni-tu"), 404, "not-found")


def test_exhausted_pool_is_503_with_retry_after_then_recovers(strict: LiveServer) -> None:
    pool = strict.services.database.pool
    held = pool.getconn()  # the only connection
    try:
        started = time.monotonic()
        r = strict.client.post("/v1/search", json={"question": "Kde je sklad?"})
        problem = assert_problem(r, 503, "database-unavailable")
        assert time.monotonic() - started < 3  # pool_timeout is 0.3 s: it fails fast
        assert r.headers["retry-after"].isdigit()
        assert "retry" in problem["detail"]
        # A busy pool is load, not an outage: /readyz answers at once from the health probe,
        # which has a connection of its own.
        started = time.monotonic()
        ready = strict.client.get("/readyz")
        assert time.monotonic() - started < 1.0
        assert ready.status_code == 200 and ready.json()["checks"]["database"] == "ok", ready.text
        assert strict.client.get("/healthz").status_code == 200
    finally:
        pool.putconn(held)
    assert strict.client.post("/v1/search", json={"question": "Kde je sklad?"}).status_code == 200


class BrokenWriter:
    """An answer writer with a bug (not an LLMError): the service must not leak its details."""

    model = "broken"

    def answer(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> str:
        raise RuntimeError("secret internals at /srv/rag/conf")

    def answer_stream(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> Iterator[str]:
        raise RuntimeError("secret internals at /srv/rag/conf")

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
        raise RuntimeError("secret internals at /srv/rag/conf")


def test_unexpected_errors_are_500_without_details(server_url: str, tmp_path: Path) -> None:
    url = new_database(server_url, "rag_api_broken")
    server = LiveServer.start(api_settings(url, tmp_path), llm=BrokenWriter())
    try:
        server.client.post(
            "/v1/documents", json={"source_id": "a", "text": "Vrátnice je u brány číslo dvě."}
        )
        r = server.client.post("/v1/ask", json={"question": "Kde je vrátnice?"})
        problem = assert_problem(r, 500, "internal")
        assert "secret" not in r.text and "/srv" not in r.text
        assert problem["instance"] == "/v1/ask"
    finally:
        server.close()
