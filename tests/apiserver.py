"""The service for tests: create_app under uvicorn on a free loopback port, in a thread.

It runs exactly as ``rag serve`` runs it (lifespan, worker threads, real sockets), so streaming,
timeouts and client disconnects behave as in production. Also: a database of a test module's own
with the sample corpus, and a parser for server-sent events.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from rag.api.app import create_app
from rag.api.http_protocol import head_timeout_protocol
from rag.api.observability import H11_HEAD_BYTES
from rag.api.problems import PROBLEM_BASE
from rag.api.services import Services
from rag.db import Database, migrate
from rag.embedders import make_embedder
from rag.ingest.loaders import iter_paths, load_path, rebased
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from rag.store import DEFAULT_OWNER
from tests.conftest import create_database

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "rag" / "sample"


def api_settings(url: str, data_dir: Path, **changes: Any) -> Settings:
    """Settings of a test service: the fake embedder, a small pool, no prewarming (its thread
    would hold one of the pool's connections while a test counts them), and Python's collector
    left as it is (its settings are the whole test process's)."""
    base = Settings(
        database_url=url,
        data_dir=data_dir,
        embedder="fake",
        embed_dim=64,
        pool_min=1,
        pool_max=4,
        prewarm_buffers=False,
        gc_threshold=0,
    )
    return base.replace(**changes)


class LiveServer:
    """An app served by uvicorn on 127.0.0.1 with a random port."""

    def __init__(self, app: Any, header_timeout: float = 10.0) -> None:
        self.app = app
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            h11_max_incomplete_event_size=H11_HEAD_BYTES,  # as rag serve has it
            http=head_timeout_protocol(header_timeout),
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="test-uvicorn", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        # uvicorn closes a connection idle for 5 s, and httpx keeps one for 5 s by default: a
        # request sent on a pooled connection just as the server closes it is reset. The client
        # lets its idle connections go first.
        self.client = httpx.Client(
            base_url=self.url, timeout=30, limits=httpx.Limits(keepalive_expiry=2.0)
        )
        self.wait_ready()

    @classmethod
    def start(cls, settings: Settings, **kwargs: Any) -> LiveServer:
        return cls(create_app(settings, **kwargs), header_timeout=settings.header_timeout)

    @property
    def services(self) -> Services:
        return self.app.state.rag  # type: ignore[no-any-return]

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while self.client.get("/readyz").status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError(self.client.get("/readyz").text)
            time.sleep(0.05)

    def wait_embedded(self, timeout: float = 30) -> dict[str, Any]:
        """/v1/stats once the embedding worker has left none of the owner's chunks waiting."""
        deadline = time.monotonic() + timeout
        while True:
            stats: dict[str, Any] = self.client.get("/v1/stats").json()
            if stats["embedding"]["waiting"] == 0:
                return stats
            if time.monotonic() > deadline:
                raise AssertionError(f"chunks still wait for vectors after {timeout} s: {stats}")
            time.sleep(0.05)

    def close(self) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=30)


def assert_problem(r: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    """The response is an RFC 9457 problem of ``kind``; returns its body."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body = r.json()
    assert body["type"] == PROBLEM_BASE + kind and body["kind"] == kind, body
    assert body["status"] == status and body["title"] and body["detail"]
    assert "Traceback" not in r.text
    return body


def new_database(server_url: str, prefix: str) -> str:
    url = create_database(server_url, prefix)
    migrate(url)
    return url


def sample_database(server_url: str, prefix: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A new migrated database holding the shipped sample corpus; its URL."""
    url = new_database(server_url, prefix)
    load_sample(url, tmp_path_factory.mktemp("sample"))
    return url


def load_sample(url: str, data_dir: Path, owner: str = DEFAULT_OWNER) -> None:
    """The shipped sample corpus, ingested as ``rag sample`` does (source ids relative)."""
    settings = api_settings(url, data_dir)
    items = (
        item
        for path in iter_paths([SAMPLE_DIR])
        for item in load_path(path, max_bytes=settings.max_upload_bytes)
    )
    with Database(settings, run_migrations=False) as db:
        summary = Ingestor(db, settings, make_embedder(settings), owner, embed_now=True).add_all(
            rebased(items, SAMPLE_DIR)
        )
    assert summary.failed == 0 and summary.added > 20, summary.as_dict()


def sse_events(response: httpx.Response) -> Iterator[tuple[str, Any, float]]:
    """(event, decoded data, seconds since the call) of a text/event-stream response."""
    started = time.monotonic()
    event, data = "message", []
    for line in response.iter_lines():
        if not line:
            if data:
                text = "\n".join(data)
                yield (
                    event,
                    (text if text == "[DONE]" else json.loads(text)),
                    time.monotonic() - started,
                )
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
