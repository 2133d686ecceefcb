"""The embedding queue: chunks committed without vectors, filled later by workers, never half-way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from rag.db import Database
from rag.embedders import FakeEmbedder, Kind
from rag.embedders.lock import QueryFirstLock
from rag.errors import EmbedderError
from rag.ingest.embed_queue import EmbedWorker, drain, embedding_status, queued
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from rag.store import find_owner, owner_stats
from tests.apiserver import LiveServer, api_settings, new_database

ROOT = Path(__file__).resolve().parent.parent


def doc(source_id: str, text: str) -> LoadedDocument:
    return LoadedDocument(
        source_id=source_id, title=None, text=text, lang="cs", metadata={}, origin=source_id
    )


DOCS = [
    doc(f"zaznam-{i}", f"Záznam číslo {i} popisuje sklad {i} a jeho regály v hale {i % 7}.")
    for i in range(40)
]


class GatedEmbedder(FakeEmbedder):
    """The fake model, whose passages wait for ``open`` (questions never wait) or fail."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.open = threading.Event()
        self.failing: str | None = None
        self.passages = 0

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        if kind == "passage":
            if self.failing:
                raise EmbedderError(self.failing)
            self.open.wait(30)
            self.passages += len(texts)
        return super().embed(texts, kind=kind)


def test_an_upload_answers_before_its_vectors_and_is_found_by_words_at_once(
    server_url: str, tmp_path: Path
) -> None:
    settings = api_settings(new_database(server_url, "rag_queue"), tmp_path)
    embedder = GatedEmbedder(settings)
    server = LiveServer.start(settings, embedder=embedder)
    try:
        started = time.monotonic()
        r = server.client.post(
            "/v1/documents",
            json={"source_id": "orion", "text": "Porada vedení se koná každé úterý v Orionu."},
        )
        answered = time.monotonic() - started
        assert r.status_code == 201, r.text
        assert r.json()["unembedded"] == 1 and embedder.passages == 0
        assert answered < 5, f"the upload took {answered:.1f} s with the embedder blocked"
        words = server.client.post("/v1/search", json={"question": "porada", "mode": "fts"}).json()
        assert [h["source_id"] for h in words["hits"]] == ["orion"], words
        by_meaning = server.client.post(
            "/v1/search", json={"question": "porada vedení", "mode": "vector"}
        ).json()
        assert by_meaning["hits"] == [], by_meaning  # no vector yet
        hybrid = server.client.post("/v1/search", json={"question": "porada vedení"}).json()
        assert [h["source_id"] for h in hybrid["hits"]] == ["orion"], hybrid
        assert hybrid["hits"][0]["evidence"]["vector_pending"] is True, hybrid
        assert [d["component"] for d in hybrid["degraded"]] == ["embedding-queue"], hybrid
        waiting = server.client.get("/v1/stats").json()["embedding"]
        assert (waiting["embedded"], waiting["total"], waiting["waiting"]) == (0, 1, 1), waiting

        embedder.open.set()
        done = server.wait_embedded(timeout=20)["embedding"]
        assert (done["embedded"], done["total"], done["workers"]) == (1, 1, 1), done
        found = server.client.post(
            "/v1/search", json={"question": "porada vedení", "mode": "vector"}
        ).json()
        assert [h["source_id"] for h in found["hits"]] == ["orion"], found
        hybrid = server.client.post("/v1/search", json={"question": "porada vedení"}).json()
        assert hybrid["degraded"] == [] and "vector_pending" not in hybrid["hits"][0]["evidence"]
    finally:
        embedder.open.set()
        server.close()


def test_a_failing_embedder_leaves_chunks_queued_and_says_why_in_stats(
    server_url: str, tmp_path: Path
) -> None:
    settings = api_settings(new_database(server_url, "rag_queue"), tmp_path)
    embedder = GatedEmbedder(settings)
    embedder.open.set()
    embedder.failing = "the model server refused the connection"
    server = LiveServer.start(settings, embedder=embedder)
    try:
        r = server.client.post("/v1/documents", json={"source_id": "a", "text": "Sklad v hale B."})
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 20
        while (status := server.client.get("/v1/stats").json()["embedding"])["error"] is None:
            assert time.monotonic() < deadline, f"no error reported: {status}"
            time.sleep(0.05)
        assert status["error"] == "the model server refused the connection", status
        assert status["waiting"] == 1 and status["eta_seconds"] is None, status
        out = CliRunner().invoke(
            cli,
            ["stats", "--json"],
            env={
                "DATABASE_URL": settings.database_url or "",
                "RAG_EMBEDDER": "fake",
                "RAG_EMBED_DIM": "64",
            },
        )
        assert json.loads(out.stdout)["embedding"]["error"] == status["error"], out.output
        with psycopg.connect(settings.database_url or "") as conn:
            assert conn.execute(
                "SELECT count(*) FROM chunks WHERE embedding IS NULL"
            ).fetchone() == (1,)

        embedder.failing = None  # the backend comes back: the worker's next retry succeeds
        done = server.wait_embedded(timeout=30)["embedding"]
        # the worker clears its error just after the batch commits, in a statement of its own
        deadline = time.monotonic() + 10
        while done["error"] is not None and time.monotonic() < deadline:
            time.sleep(0.05)
            done = server.client.get("/v1/stats").json()["embedding"]
        assert done["embedded"] == 1 and done["error"] is None, done
    finally:
        server.close()


@pytest.fixture
def queued_owner(db: Database, settings: Settings, owner: str) -> Iterator[int]:
    """The owner with DOCS ingested and every chunk queued."""
    summary = Ingestor(db, settings, FakeEmbedder(settings), owner).add_all(DOCS)
    assert summary.unembedded == summary.chunks == len(DOCS), summary.as_dict()
    with db.connection() as conn:
        row = conn.execute("SELECT owner_id FROM owners WHERE name = %s", (owner,)).fetchone()
    assert row is not None
    yield int(row[0])


class Recording(FakeEmbedder):
    """The fake model, remembering every batch of passages it was given, in order."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        with self._lock:
            self.batches.append(list(texts))
        time.sleep(0.005)
        return super().embed(texts, kind=kind)


def run_workers(
    db: Database, embedder: FakeEmbedder, owner_id: int, n: int, *, nice: int = 0
) -> None:
    workers = [EmbedWorker(db, embedder, batch=4, idle_poll=0.05, nice=nice) for _ in range(n)]
    for w in workers:
        w.start()
    try:
        deadline = time.monotonic() + 30
        while queued(db, owner_id):
            assert time.monotonic() < deadline, "the workers did not drain the queue"
            time.sleep(0.05)
    finally:
        for w in workers:
            w.stop()


def test_a_worker_fills_the_queue_oldest_chunk_first(
    db: Database, settings: Settings, queued_owner: int
) -> None:
    embedder = Recording(settings)
    run_workers(db, embedder, queued_owner, 1)
    mine = {d.text for d in DOCS}
    order = [t for batch in embedder.batches for t in batch if t in mine]
    assert order == [d.text for d in DOCS], "not in the order the chunks arrived"


class PriorityRecording(FakeEmbedder):
    """The fake model, noting the niceness of the thread each passage batch is embedded in."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.niceness: list[int] = []

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        if kind == "passage":
            self.niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return super().embed(texts, kind=kind)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_the_worker_embeds_below_the_priority_of_the_questions(
    db: Database, settings: Settings, queued_owner: int
) -> None:
    """Passages are embedded in a thread ``nice`` steps below the process, which answers
    questions at its own priority (rag serve's RAG_EMBED_WORKER_NICE)."""
    embedder = PriorityRecording(settings)
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    run_workers(db, embedder, queued_owner, 1, nice=5)
    assert embedder.niceness, "no passage was embedded"
    assert set(embedder.niceness) == {min(19, own + 5)}, embedder.niceness
    # the process's other threads (those answering questions) keep their priority
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own


def test_workers_side_by_side_embed_each_chunk_once(
    db: Database, settings: Settings, queued_owner: int
) -> None:
    embedder = Recording(settings)
    run_workers(db, embedder, queued_owner, 3)
    mine = {d.text for d in DOCS}
    embedded = [t for batch in embedder.batches for t in batch if t in mine]
    assert sorted(embedded) == sorted(mine), "a chunk was embedded twice or never"
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT text, embedding, embed_model FROM chunks WHERE owner_id = %s", (queued_owner,)
        ).fetchall()
    fake = FakeEmbedder(settings)
    for text, vector, model in rows:
        assert model == fake.model_id
        expected = fake.embed([text], kind="passage")[0]
        assert np.allclose(vector.to_numpy(), expected, atol=1e-6), text


KILLED_WORKER = """
import sys, time
from pathlib import Path
from rag.db import Database
from rag.ingest.embed_queue import drain
from rag.embedders import FakeEmbedder
from rag.settings import Settings

settings = Settings(database_url=sys.argv[1], data_dir=Path(sys.argv[2]), embedder="fake",
                    embed_dim=64, pool_min=1, pool_max=2)
marker = Path(sys.argv[2]) / "second-batch"

class Stalling(FakeEmbedder):
    calls = 0
    def embed(self, texts, *, kind):
        vectors = super().embed(texts, kind=kind)
        self.calls += 1
        if self.calls == 2:  # the second batch: embedded, never written
            marker.write_text("in hand")
            time.sleep(600)
        return vectors

db = Database(settings, run_migrations=False)
drain(db, Stalling(settings), int(sys.argv[3]), batch=5)
"""


def test_a_worker_killed_mid_batch_leaves_nothing_half_embedded_and_the_next_resumes(
    db: Database, settings: Settings, queued_owner: int, tmp_path: Path
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(KILLED_WORKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            str(script),
            settings.database_url or "",
            str(tmp_path),
            str(queued_owner),
        ],
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "second-batch").exists():
            assert proc.poll() is None, "the worker died before its second batch"
            assert time.monotonic() < deadline, "the worker never reached its second batch"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # the first batch committed; the second, claimed and embedded, left no trace
    assert queued(db, queued_owner) == len(DOCS) - 5
    with db.connection() as conn:
        by_state = dict(
            conn.execute(
                "SELECT embedding IS NULL, count(*) FROM chunks WHERE owner_id = %s GROUP BY 1",
                (queued_owner,),
            ).fetchall()
        )
    assert by_state == {False: 5, True: len(DOCS) - 5}, by_state
    # the killed session's row locks are gone: the next worker takes the rest
    result = drain(db, FakeEmbedder(settings), queued_owner, batch=7)
    assert result.error is None and result.embedded == len(DOCS) - 5
    assert queued(db, queued_owner) == 0


def test_drain_stops_on_an_embedder_failure_and_keeps_the_chunks_queued(
    db: Database, settings: Settings, queued_owner: int
) -> None:
    embedder = GatedEmbedder(settings)
    embedder.failing = "out of memory"
    result = drain(db, embedder, queued_owner, batch=8)
    assert result.error == "out of memory" and result.embedded == 0
    assert queued(db, queued_owner) == len(DOCS)
    with db.connection() as conn:
        s = owner_stats(conn, queued_owner)
        status = embedding_status(conn, embedder.model_id, s.chunks, s.models)
    assert status.waiting == len(DOCS) and status.embedded == 0


def cli_env(settings: Settings) -> dict[str, str]:
    return {
        "DATABASE_URL": settings.database_url or "",
        "RAG_DATA_DIR": str(settings.data_dir),
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
        "RAG_PROFILE": "",
    }


def test_cli_ingest_returns_with_chunks_queued_and_wait_or_embed_fills_them(
    settings: Settings, owner: str, tmp_path: Path
) -> None:
    for i in range(3):
        (tmp_path / f"d{i}.txt").write_text(f"Dokument {i} o skladu a paletách.", encoding="utf-8")
    runner, env = CliRunner(), cli_env(settings)
    r = runner.invoke(cli, ["ingest", str(tmp_path), "--owner", owner, "--json"], env=env)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["waiting"] == 3
    s = json.loads(runner.invoke(cli, ["stats", "--owner", owner, "--json"], env=env).stdout)
    assert (s["embedding"]["embedded"], s["embedding"]["waiting"]) == (0, 3), s
    r = runner.invoke(cli, ["embed", "--owner", owner, "--json"], env=env)
    assert r.exit_code == 0 and json.loads(r.stdout)["waiting"] == 0, r.output

    (tmp_path / "d3.txt").write_text("Dokument 3 o regálech.", encoding="utf-8")
    r = runner.invoke(cli, ["ingest", str(tmp_path), "--owner", owner, "--wait", "--json"], env=env)
    summary = json.loads(r.stdout)
    assert r.exit_code == 0 and summary["added"] == 1 and summary["waiting"] == 0, r.output
    s = json.loads(runner.invoke(cli, ["stats", "--owner", owner, "--json"], env=env).stdout)
    assert s["embedding"]["embedded"] == s["embedding"]["total"] == 4, s


def test_evaluation_refuses_a_half_embedded_owner(
    settings: Settings, owner: str, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("Porada vedení je v úterý.", encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"id": "c1", "question": "Kdy je porada?", "expect": ["a.txt"]}) + "\n",
        encoding="utf-8",
    )
    runner, env = CliRunner(), cli_env(settings)
    assert (
        runner.invoke(cli, ["ingest", str(tmp_path / "a.txt"), "--owner", owner], env=env).exit_code
        == 0
    )
    r = runner.invoke(cli, ["eval", "--set", str(cases), "--owner", owner], env=env)
    assert r.exit_code == 1, r.output
    assert "1 chunks still waiting for a vector" in r.stderr and "rag embed" in r.stderr, r.stderr
    assert runner.invoke(cli, ["embed", "--owner", owner], env=env).exit_code == 0
    r = runner.invoke(cli, ["eval", "--set", str(cases), "--owner", owner, "--json"], env=env)
    assert r.exit_code == 0, r.output


def test_a_waiting_question_goes_before_waiting_passages() -> None:
    lock = QueryFirstLock()
    order: list[str] = []
    holding = threading.Event()

    def call(kind: str) -> None:
        with lock.hold(kind):
            order.append(kind)
            time.sleep(0.02)

    def first() -> None:
        with lock.hold("passage"):
            holding.set()
            time.sleep(0.2)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    holding.wait(5)
    for kind in ("passage", "passage", "query"):
        t = threading.Thread(target=call, args=(kind,))
        t.start()
        threads.append(t)
        time.sleep(0.03)  # the passages queue up before the question arrives
    for t in threads:
        t.join(5)
    assert order == ["query", "passage", "passage"], order


def test_passages_still_get_a_turn_under_a_constant_stream_of_questions() -> None:
    lock = QueryFirstLock(passage_max_wait=0.2)
    stop = threading.Event()

    def questions() -> None:
        while not stop.is_set():
            with lock.hold("query"):
                time.sleep(0.01)

    askers = [threading.Thread(target=questions) for _ in range(4)]
    for t in askers:
        t.start()
    try:
        time.sleep(0.05)
        started = time.monotonic()
        with lock.hold("passage"):
            waited = time.monotonic() - started
    finally:
        stop.set()
        for t in askers:
            t.join(5)
    assert 0.15 < waited < 1.0, f"the passage slice waited {waited:.2f} s (bound 0.2 s)"


def paragraphs(*texts: str) -> str:
    return "\n\n".join(texts)


EDITED = [
    "Sklad v Třebíči má otevřeno od šesti do čtrnácti hodin a příjem zboží se hlásí den předem.",
    "Vozíky se nabíjejí v hale C u zadní brány; klíče od nabíječek má mistr směny.",
    "Inventura skladu probíhá dvakrát ročně a během ní se zboží nevydává ani nepřijímá.",
]


@pytest.mark.parametrize("embed_now", [False, True])
def test_an_edited_document_re_embeds_only_its_changed_chunks(
    db: Database, settings: Settings, owner: str, embed_now: bool
) -> None:
    """A replaced document's chunks whose text did not change keep their vectors (the model
    embeds a chunk's text alone); only the changed chunk is queued, or embedded with embed_now."""
    small = settings.replace(chunk_size=120, chunk_overlap=0)
    embedder = Recording(small)
    first = Ingestor(db, small, embedder, owner, embed_now=embed_now).add_all(
        [doc("sklad.md", paragraphs(*EDITED))]
    )
    assert first.chunks == 3 and first.vectors_kept == 0, first.as_dict()
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    if not embed_now:
        drain(db, embedder, oid, batch=8)
    assert queued(db, oid) == 0
    with db.connection() as conn:
        before = dict(
            conn.execute("SELECT text, embedding FROM chunks WHERE owner_id = %s", (oid,))
        )
    embedder.batches.clear()
    changed = "Vozíky se nabíjejí v hale D u boční brány; klíče od nabíječek má vrátný."
    second = Ingestor(db, small, embedder, owner, embed_now=embed_now).add_all(
        [doc("sklad.md", paragraphs(EDITED[0], changed, EDITED[2]))]
    )
    assert second.replaced == 1 and second.vectors_kept == 2, second.as_dict()
    if embed_now:
        assert second.unembedded == 0
    else:
        assert second.unembedded == 1 and queued(db, oid) == 1
        drain(db, embedder, oid, batch=8)
    assert [t for b in embedder.batches for t in b] == [changed]
    with db.connection() as conn:
        after = dict(conn.execute("SELECT text, embedding FROM chunks WHERE owner_id = %s", (oid,)))
    assert set(after) == {EDITED[0], changed, EDITED[2]}
    for text in (EDITED[0], EDITED[2]):
        assert np.array_equal(after[text].to_numpy(), before[text].to_numpy())
    fresh = FakeEmbedder(small).embed([changed], kind="passage")[0]
    assert np.allclose(after[changed].to_numpy(), fresh, atol=1e-6)
