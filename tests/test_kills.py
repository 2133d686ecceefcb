"""Writers that die or stall: a killed ``rag ingest`` takes its workers, its session and the
owner's write lock with it, and a write that finds the lock held answers 503 instead of waiting.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import psycopg
import pytest

from tests.apiserver import LiveServer, api_settings, assert_problem, new_database

REPO = Path(__file__).resolve().parent.parent
LOCK_CLASS = 721653  # rag.ingest.writer.LOCK_OWNER


def sessions(url: str, app: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (app,)
        ).fetchall()
    return [int(pid) for (pid,) in rows]


def lock_holders(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND granted",
            (LOCK_CLASS,),
        ).fetchall()
    return [int(pid) for (pid,) in rows]


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_a_killed_ingest_takes_its_workers_session_and_lock_with_it(
    server_url: str, tmp_path: Path
) -> None:
    url = new_database(server_url, "rag_kill")
    corpus = tmp_path / "velky.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i in range(6000):
            text = f"Záznam {i} o skladu, rampě a směně. " * 60
            f.write(json.dumps({"id": f"z-{i}", "text": text}, ensure_ascii=False) + "\n")
    app = f"rag-kill-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "DATABASE_URL": url,
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
        "RAG_INGEST_WORKERS": "2",
        "RAG_DATA_DIR": str(tmp_path),
        "PGAPPNAME": app,
    }
    command = [sys.executable, "-c", "from rag.cli.main import main; main()", "ingest", str(corpus)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        parent = psutil.Process(proc.pid)
        assert wait_until(lambda: len(parent.children()) >= 2, 60), "no worker processes started"
        workers = parent.children()
        # Kill it while it holds the owner's lock, mid-transaction, if that can be caught.
        in_lock = wait_until(lambda: bool(set(sessions(url, app)) & set(lock_holders(url))), 60)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        killed = time.monotonic()
        gone = wait_until(
            lambda: not any(w.is_running() and w.status() != "zombie" for w in workers), 3
        )
        assert gone, [w.pid for w in workers if w.is_running()]
        assert wait_until(lambda: not sessions(url, app), 3), sessions(url, app)
        assert wait_until(lambda: not lock_holders(url), 3), lock_holders(url)
        where = "inside" if in_lock else "outside"
        print(f"\nkilled {where} the write lock; released in {time.monotonic() - killed:.2f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in psutil.Process().children(recursive=True):
            if w.pid != proc.pid and "velky.jsonl" in " ".join(w.cmdline()):
                w.kill()


def test_a_write_that_finds_the_owner_locked_is_503_with_retry_after(
    server_url: str, tmp_path: Path
) -> None:
    url = new_database(server_url, "rag_lock")
    server = LiveServer.start(api_settings(url, tmp_path, write_lock_timeout=0.5))
    try:
        doc = {"source_id": "zamek", "text": "Sklad je zamčený."}
        warm = {"source_id": "prvni", "text": "První zápis načte slovníky."}
        assert server.client.post("/v1/documents", json=warm).status_code == 201
        owner_id = server.services.default_owner_id()
        with psycopg.connect(url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, owner_id))
            started = time.monotonic()
            r = server.client.post("/v1/documents", json=doc)
            seconds = time.monotonic() - started
            problem = assert_problem(r, 503, "database-unavailable")
            assert r.headers["retry-after"].isdigit(), r.headers
            assert 0.4 < seconds < 2.5, f"{seconds:.2f} s"
            assert "retry" in problem["detail"]
            assert server.client.get("/v1/documents/zamek").status_code == 404
            holder.rollback()
        assert server.client.post("/v1/documents", json=doc).status_code == 201
    finally:
        server.close()
