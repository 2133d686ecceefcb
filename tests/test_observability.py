"""Operating the service: /metrics (parsed by prometheus-client's own parser), request ids in
headers, problem bodies and log lines, JSON logs, and no question text in the logs by default.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rag.logs import make_handler, private, sane_request_id
from rag.settings import Settings
from tests.apiserver import LiveServer, api_settings, assert_problem, new_database

REPO = Path(__file__).resolve().parent.parent
DOC = {
    "source_id": "provoz/kotelna",
    "title": "Kotelna",
    "text": "Kotelna v suterénu se kontroluje každé úterý. Klíč od kotelny má správce budovy.",
}
QUESTION = "Kdy se kontroluje kotelna?"


@pytest.fixture(scope="module")
def url(server_url: str) -> str:
    return new_database(server_url, "rag_observability")


@pytest.fixture(scope="module")
def service(url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("obs")))
    r = server.client.post("/v1/documents", json=DOC)
    assert r.status_code in (200, 201), r.text
    server.wait_embedded()
    yield server
    server.close()


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """rag's JSON log lines of this test, through the real handler (filter and formatter)."""
    stream = io.StringIO()
    handler = make_handler(stream, "json")
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def wait_for_access_line(stream: io.StringIO, request_id: str, timeout: float = 10.0) -> None:
    """The server writes its access line after the response has gone: wait until it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("rag.access" in x and request_id in x for x in stream.getvalue().splitlines()):
            return
        time.sleep(0.02)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text exposition, by name and sorted labels."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def scrape(server: LiveServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = server.client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain"), r.headers
    return samples(r.text)


def value(found: dict[Any, float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


# --- metrics -------------------------------------------------------------------------------------


def test_metrics_count_requests_by_route_template_and_status(service: LiveServer) -> None:
    route = dict(method="POST", route="/v1/search", status="200")
    before = scrape(service)
    for _ in range(3):
        assert service.client.post("/v1/search", json={"question": QUESTION}).status_code == 200
    assert service.client.get("/v1/documents/no-such-doc").status_code == 404
    assert service.client.get("/no/such/route").status_code == 404
    after = scrape(service)
    got = value(after, "rag_http_requests_total", **route) - value(
        before, "rag_http_requests_total", **route
    )
    assert got == 3, got
    count = "rag_http_request_duration_seconds_count"
    assert value(after, count, **route) - value(before, count, **route) == 3
    # a path with an id counts under its template; a path no route matches under "unmatched"
    documents = [
        k for k in after if k[0] == "rag_http_requests_total" and ("status", "404") in k[1]
    ]
    routes = {dict(labels)["route"] for _, labels in documents}
    assert "unmatched" in routes and any(r.startswith("/v1/documents/{") for r in routes), routes
    assert not any("no-such-doc" in r for r in routes), routes


def test_metrics_count_answers_retrieval_time_and_the_pool(service: LiveServer) -> None:
    before = scrape(service)
    answered = service.client.post("/v1/ask", json={"question": QUESTION}).json()
    assert answered["status"] == "answered", answered
    rule = answered["sources"][0]["evidence"]["rule"]
    missing = service.client.post("/v1/ask", json={"question": "Jaká je cena zlaté rybky?"})
    assert missing.json()["status"] == "not_found", missing.json()
    after = scrape(service)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("rag_answers_total", status="answered", not_found_by="", rule=rule) == 1
    assert delta("rag_answers_total", status="not_found", not_found_by="filter", rule="none") == 1
    assert delta("rag_retrieval_stage_seconds_count", stage="sql") >= 2
    assert delta("rag_retrieval_stage_seconds_count", stage="embed") >= 2
    assert value(after, "rag_db_pool_max") >= 4, "the service's pool (pool_max=4) is reported"
    assert value(after, "rag_db_pool_requests_total") > value(before, "rag_db_pool_requests_total")


def test_metrics_are_not_behind_the_key_and_can_be_switched_off(
    url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    off = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("off"), metrics=False))
    try:
        assert_problem(off.client.get("/metrics"), 404, "not-found")
        # the rest of the service works, and still stamps request ids
        r = off.client.get("/healthz")
        assert r.status_code == 200 and sane_request_id(r.headers["x-request-id"])
    finally:
        off.close()


# --- request ids and logs ------------------------------------------------------------------------


def test_a_clients_request_id_comes_back_and_is_in_the_log_line(
    service: LiveServer, log_lines: io.StringIO
) -> None:
    rid = "client-42.abc"
    r = service.client.post("/v1/ask", json={"question": QUESTION}, headers={"X-Request-ID": rid})
    assert r.status_code == 200 and r.headers["x-request-id"] == rid
    wait_for_access_line(log_lines, rid)
    lines = [json.loads(line) for line in log_lines.getvalue().splitlines()]
    access = [x for x in lines if x["logger"] == "rag.access" and x["request_id"] == rid]
    assert len(access) == 1, lines
    assert access[0]["route"] == "/v1/ask" and access[0]["status"] == 200
    assert access[0]["duration_ms"] > 0
    # nothing rag logged during the request carries the question
    assert not [x for x in lines if "kotelna" in json.dumps(x, ensure_ascii=False).lower()]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_path_cannot_forge_a_log_line_nor_drive_a_terminal(service: LiveServer, fmt: str) -> None:
    forged = "2026-01-01 00:00:00,000 INFO rag.access [-]: GET /v1/admin 200 1.0 ms"
    stream = io.StringIO()
    handler = make_handler(stream, fmt)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        path = "/v1/x%0A" + forged.replace(" ", "%20") + "%0D%1B%5B2J%C2%9B%7F%E2%80%A8"
        assert service.client.get(path, headers={"X-Request-ID": "forge-1"}).status_code == 404
        wait_for_access_line(stream, "forge-1")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    lines = [line for line in stream.getvalue().splitlines() if "forge-1" in line]
    assert len(lines) == 1 and "rag.access" in lines[0], stream.getvalue()
    assert not [line for line in stream.getvalue().splitlines() if line.startswith(forged)]
    assert not any(c in stream.getvalue() for c in "\r\x1b\x9b\x7f\u2028"), repr(lines[0])
    if fmt == "text":
        assert "GET /v1/x\\n2026-01-01" in lines[0] and "\\r\\x1b[2J\\x9b\\x7f\\u2028" in lines[0]
    else:
        record = json.loads(lines[0])  # the escapes read back to what the client sent
        assert record["message"].startswith("GET /v1/x\n" + forged + "\r\x1b[2J\x9b\x7f\u2028")


def test_a_traceback_keeps_a_forged_line_indented() -> None:
    stream = io.StringIO()
    log = logging.getLogger("rag.test_observability.traceback")
    handler = make_handler(stream, "text")
    log.addHandler(handler)
    try:
        try:
            raise ValueError("bad name\n2026-01-01 00:00:00,000 INFO rag.access [-]: forged\x1b[2J")
        except ValueError:
            log.exception("upload failed for a\nb")
    finally:
        log.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("upload failed for a\\nb"), lines
    assert all(line.startswith("  ") for line in lines[1:]) and len(lines) > 2, lines
    assert "\x1b" not in stream.getvalue() and "forged\\x1b[2J" in lines[-1], lines


@pytest.mark.parametrize(
    "given",
    ["", "x" * 129, "a b", "id\r\nX-Evil: 1", "ü-not-ascii", "<script>"],
)
def test_an_unusable_request_id_is_replaced(service: LiveServer, given: str) -> None:
    try:
        r = service.client.get("/healthz", headers={"X-Request-ID": given.encode("utf-8")})
    except (httpx.LocalProtocolError, UnicodeEncodeError):
        pytest.skip("the client itself refuses to send this header")
    rid = r.headers["x-request-id"]
    assert rid != given and len(rid) == 32 and sane_request_id(rid), rid


def test_every_response_has_a_fresh_id_without_a_client_one(service: LiveServer) -> None:
    ids = {service.client.get("/healthz").headers["x-request-id"] for _ in range(5)}
    assert len(ids) == 5, ids


def test_problem_details_carry_the_request_id(service: LiveServer) -> None:
    for r in (
        service.client.post("/v1/ask", json={"question": ""}, headers={"X-Request-ID": "p-1"}),
        service.client.get("/v1/documents/nothing-here", headers={"X-Request-ID": "p-1"}),
        service.client.get("/no/route", headers={"X-Request-ID": "p-1"}),
        service.client.put("/v1/ask", json={}, headers={"X-Request-ID": "p-1"}),
    ):
        body = r.json()
        assert r.status_code >= 400 and body["request_id"] == "p-1", (r.status_code, body)
        assert r.headers["x-request-id"] == "p-1"


def test_text_logs_name_the_request_and_json_logs_parse() -> None:
    text, as_json = io.StringIO(), io.StringIO()
    log = logging.getLogger("rag.test_observability")
    handlers = [make_handler(text, "text"), make_handler(as_json, "json")]
    for h in handlers:
        log.addHandler(h)
    log.setLevel(logging.INFO)
    try:
        log.info("outside a request")
    finally:
        for h in handlers:
            log.removeHandler(h)
    assert "[-]: outside a request" in text.getvalue(), text.getvalue()
    record = json.loads(as_json.getvalue())
    assert record["message"] == "outside a request" and record["request_id"] == "-"
    assert record["level"] == "INFO" and record["time"].endswith("+00:00")


def test_question_text_is_logged_only_when_asked_for() -> None:
    assert private("Kdy se kontroluje kotelna?") == "<26 chars>"


def test_log_format_is_checked() -> None:
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="Unsupported log_format: xml"):
        Settings(log_format="xml")
    assert Settings.from_env({"RAG_LOG_FORMAT": "json"}).log_format == "json"


def test_rag_serve_writes_json_log_lines_with_the_request_id(url: str, tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAG_") and k != "DATABASE_URL"},
        "DATABASE_URL": url,
        "RAG_DATA_DIR": str(tmp_path),
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
        "RAG_LOG_FORMAT": "json",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from rag.cli.main import main; main()",
            "-v",
            "serve",
            "--port",
            "0",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = None
        deadline = time.monotonic() + 60
        while base is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if m := re.search(r"serving on (http://\S+)", line):
                base = m.group(1)
        assert base, "rag serve printed no URL"
        r = httpx.post(
            base + "/v1/ask",
            json={"question": QUESTION},
            headers={"X-Request-ID": "serve-check-1"},
            timeout=30,
        )
        assert r.status_code == 200 and r.headers["x-request-id"] == "serve-check-1"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    records = [json.loads(line) for line in err.splitlines() if line.strip()]  # all are JSON
    access = [x for x in records if x["logger"] == "rag.access"]
    assert [x["request_id"] for x in access if x["route"] == "/v1/ask"] == ["serve-check-1"], access
    assert any(x["logger"].startswith("uvicorn") for x in records), records  # uvicorn's too
    assert QUESTION not in err


def test_metrics_report_the_embedding_queue(server_url: str, tmp_path: Path) -> None:
    # a database of its own and no background worker: the queue holds what an upload leaves
    url = new_database(server_url, "rag_observability_queue")
    idle = LiveServer.start(api_settings(url, tmp_path, embed_worker=False))
    try:
        assert value(scrape(idle), "rag_embed_queue_chunks") == 0
        doc = {"source_id": "provoz/fronta", "text": "Fronta vektorů čeká na pracovníka."}
        assert idle.client.post("/v1/documents", json=doc).status_code in (200, 201)
        waiting = idle.client.get("/v1/stats").json()["embedding"]["waiting"]
        assert waiting >= 1 and value(scrape(idle), "rag_embed_queue_chunks") == waiting
    finally:
        idle.close()
