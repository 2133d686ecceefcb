"""The embedded PostgreSQL stopped (SIGSTOP), not killed: it keeps its sockets and answers nothing.

While the health probe finds it down, requests are refused at once with a 503 and Retry-After
instead of waiting on the pool; those already waiting on the server give up within the
statement bound; after SIGCONT the service answers again without a restart.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
import pytest

from rag.db import STATEMENT_GRACE, stop_embedded
from rag.settings import Settings
from tests.apiserver import LiveServer, assert_problem
from tests.test_outage import postmaster_pid

QUESTION = {"question": "Kdo převzal zásilku na rampě?", "mode": "fts"}
STATEMENT_TIMEOUT = 3.0


@contextmanager
def stopped(data_dir: Path) -> Iterator[float]:
    """Every process of the embedded server stopped; continued on the way out, whatever
    happens. Yields when they were stopped."""
    postmaster = psutil.Process(postmaster_pid(data_dir))
    processes = [postmaster, *postmaster.children(recursive=True)]
    for p in processes:
        os.kill(p.pid, signal.SIGSTOP)
    try:
        yield time.monotonic()
    finally:
        for p in processes:
            try:
                os.kill(p.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


def timed_search(url: str) -> tuple[httpx.Response | None, float]:
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=60) as client:
        try:
            r: httpx.Response | None = client.post("/v1/search", json=QUESTION)
        except httpx.HTTPError:
            r = None
    return r, time.monotonic() - started


@pytest.mark.slow
def test_a_stopped_database_is_503_at_once_and_nothing_waits_past_the_statement_bound(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(
        database_url=None,  # the embedded default, in a directory of this test's own
        data_dir=data_dir,
        embedder="fake",
        embed_dim=64,
        pool_min=2,
        pool_max=4,
        pool_timeout=5.0,
        statement_timeout=STATEMENT_TIMEOUT,
        connect_timeout=2.0,
        embed_worker=False,
    )
    server = LiveServer.start(settings)
    try:
        text = "Zásilku na rampě převzal směnový mistr Novák."
        r = server.client.post("/v1/documents", json={"source_id": "rampa.md", "text": text})
        assert r.status_code == 201, r.text
        assert server.client.post("/v1/search", json=QUESTION).status_code == 200
        with stopped(data_dir) as since, ThreadPoolExecutor(8) as pool:
            # in flight as the server stops: they wait on it, but not past the bound
            in_flight = [pool.submit(timed_search, server.url) for _ in range(4)]
            deadline = since + 30
            while server.client.get("/readyz").status_code != 503:
                assert time.monotonic() < deadline, "/readyz never saw the stopped server"
                time.sleep(0.1)
            noticed = time.monotonic() - since
            # once the probe finds it down: 503 at once, never a wait for the pool
            refused = [timed_search(server.url) for _ in range(5)]
            waited = [f.result() for f in in_flight]
        for r, seconds in refused:
            assert r is not None, seconds
            assert_problem(r, 503, "database-unavailable")
            assert r.headers.get("retry-after", "").isdigit(), r.headers
            assert seconds < 2.0, [round(s, 2) for _, s in refused]
        bound = 2 * (STATEMENT_TIMEOUT + STATEMENT_GRACE + settings.connect_timeout) + 10
        for r, seconds in waited:
            assert r is not None and r.status_code in (200, 503), (r and r.text, seconds)
            assert seconds < bound, [round(s, 2) for _, s in waited]
        print(
            f"\nstopped PostgreSQL: /readyz 503 after {noticed:.1f} s; refused in "
            f"{max(s for _, s in refused) * 1000:.0f} ms at most; in-flight searches "
            f"{[round(s, 1) for _, s in waited]} s ({[r and r.status_code for r, _ in waited]})"
        )
        server.wait_ready(timeout=30)
        again = server.client.post("/v1/search", json=QUESTION)
        assert again.status_code == 200, again.text
    finally:
        server.close()
        stop_embedded(data_dir)
