"""A chunk whose embedding always fails is backed off, then set aside; the queue goes on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from rag.db import Database
from rag.embedders import FakeEmbedder, Kind
from rag.errors import EmbedderError
from rag.ingest import embed_failures
from rag.ingest.embed_queue import (
    EmbedWorker,
    claimable,
    drain,
    embed_batch,
    embedding_status,
    queued,
)
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from rag.store import owner_stats
from tests.apiserver import LiveServer, api_settings, new_database
from tests.test_embed_queue import DOCS, cli_env, doc

POISON = "Tento záznam model nikdy nezpracuje: jed v textu."


class Poisoned(FakeEmbedder):
    """The fake model, refusing every batch that holds the poison text (alone or not)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.poison_calls = 0
        self.down = False

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        if self.down:
            raise EmbedderError("the model server is down")
        if kind == "passage" and any("jed v textu" in t for t in texts):
            self.poison_calls += 1
            raise ValueError("tensor of shape (0, 384) cannot be normalised")
        return super().embed(texts, kind=kind)


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed_failures, "RETRY_FIRST", 0.05)


@pytest.fixture
def poisoned_owner(db: Database, settings: Settings, owner: str) -> Iterator[int]:
    """The poison chunk first in the queue, DOCS after it, nothing embedded."""
    items = [doc("jed", POISON), *DOCS]
    summary = Ingestor(db, settings, FakeEmbedder(settings), owner).add_all(items)
    assert summary.unembedded == len(items), summary.as_dict()
    with db.connection() as conn:
        row = conn.execute("SELECT owner_id FROM owners WHERE name = %s", (owner,)).fetchone()
    assert row is not None
    yield int(row[0])


def failure_rows(db: Database, owner_id: int) -> list[tuple[int, str, bool]]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT f.attempts, f.error, f.retry_at IS NULL FROM embed_failures f"
            " JOIN chunks c USING (owner_id, chunk_id) WHERE f.owner_id = %s",
            (owner_id,),
        ).fetchall()
        conn.commit()
    return [(int(a), e, bool(aside)) for a, e, aside in rows]


def test_a_batch_with_a_poison_chunk_writes_the_others_and_counts_one_attempt(
    db: Database, settings: Settings, poisoned_owner: int
) -> None:
    failures: list[str] = []
    n = embed_batch(db, Poisoned(settings), limit=8, owner_id=poisoned_owner, failures=failures)
    assert n == 7, "the seven good chunks of the batch were not written"
    assert failures == ["ValueError: tensor of shape (0, 384) cannot be normalised"]
    [(attempts, error, aside)] = failure_rows(db, poisoned_owner)
    assert (attempts, aside) == (1, False) and error == failures[0]
    # backing off: the next batch does not take it again
    n = embed_batch(db, Poisoned(settings), limit=8, owner_id=poisoned_owner)
    assert n == 8 and failure_rows(db, poisoned_owner)[0][0] == 1


def test_a_poison_chunk_is_set_aside_after_its_attempts_and_the_drain_finishes(
    db: Database, settings: Settings, poisoned_owner: int, fast_retries: None
) -> None:
    embedder = Poisoned(settings)
    result = drain(db, embedder, poisoned_owner, batch=4, poll=0.02, max_attempts=3)
    assert result.embedded == len(DOCS)
    assert result.error == "ValueError: tensor of shape (0, 384) cannot be normalised"
    assert failure_rows(db, poisoned_owner) == [(3, result.error, True)]
    assert queued(db, poisoned_owner) == 1 and claimable(db, poisoned_owner) == 0
    # set aside means nobody tries it again: another drain returns at once
    calls = embedder.poison_calls
    assert drain(db, embedder, poisoned_owner, batch=4, max_attempts=3).embedded == 0
    assert embedder.poison_calls == calls
    with db.connection() as conn:
        s = owner_stats(conn, poisoned_owner)
        status = embedding_status(conn, embedder.model_id, s.chunks, s.models, poisoned_owner)
    assert (status.waiting, status.set_aside, status.retrying) == (1, 1, 0), status
    assert status.chunk_error == result.error and status.eta_seconds is None


def test_an_embedder_that_is_down_counts_against_no_chunk(
    db: Database, settings: Settings, poisoned_owner: int
) -> None:
    embedder = Poisoned(settings)
    embedder.down = True
    with pytest.raises(EmbedderError, match="the model server is down"):
        embed_batch(db, embedder, limit=8, owner_id=poisoned_owner)
    assert failure_rows(db, poisoned_owner) == []
    # only the poison chunk alone, with the embedder otherwise up, is counted
    embedder.down = False
    assert embed_batch(db, embedder, limit=1, owner_id=poisoned_owner) == 0
    assert [r[0] for r in failure_rows(db, poisoned_owner)] == [1]


def test_the_cli_shows_the_chunk_set_aside_and_retry_failed_embeds_it(
    db: Database,
    settings: Settings,
    poisoned_owner: int,
    owner: str,
    fast_retries: None,
    tmp_path: Path,
) -> None:
    drain(db, Poisoned(settings), poisoned_owner, batch=8, poll=0.02, max_attempts=2)
    env = cli_env(settings)
    out = CliRunner().invoke(cli, ["stats", "--owner", owner, "--json"], env=env)
    embedding = json.loads(out.stdout)["embedding"]
    assert embedding["set_aside"] == 1 and "cannot be normalised" in embedding["chunk_error"]
    out = CliRunner().invoke(cli, ["stats", "--owner", owner], env=env)
    assert "failed to embed: 1 set aside" in out.stdout, out.output
    # a plain `rag embed` leaves it aside and says so
    out = CliRunner().invoke(cli, ["embed", "--owner", owner, "--json"], env=env)
    assert out.exit_code == 1 and json.loads(out.stdout)["set_aside"] == 1, out.output
    # evaluation refuses the owner and names the command that takes the chunk back
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "question": "Kdy?", "expect": "not_found"}) + "\n")
    out = CliRunner().invoke(cli, ["eval", "--set", str(cases), "--owner", owner], env=env)
    assert out.exit_code == 1 and "1 chunks whose embedding kept failing" in out.stderr, out.output
    assert f"rag embed --owner {owner} --retry-failed" in out.stderr, out.stderr
    # the cause is fixed (the CLI's fake model embeds anything): --retry-failed tries it again
    out = CliRunner().invoke(cli, ["embed", "--owner", owner, "--retry-failed", "--json"], env=env)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert (report["retried"], report["set_aside"], report["waiting"]) == (1, 0, 0), report
    assert queued(db, poisoned_owner) == 0 and failure_rows(db, poisoned_owner) == []


def test_the_service_worker_goes_past_a_poison_chunk_and_stats_show_it(
    server_url: str, tmp_path: Path, fast_retries: None
) -> None:
    settings = api_settings(new_database(server_url, "rag_poison"), tmp_path, embed_max_attempts=2)
    embedder = Poisoned(settings)
    server = LiveServer.start(settings, embedder=embedder)
    try:
        for source_id, text in [("jed", POISON), ("a", "Sklad v hale B."), ("b", "Hala C.")]:
            r = server.client.post("/v1/documents", json={"source_id": source_id, "text": text})
            assert r.status_code == 201, r.text
        # the poison chunk can be set aside before the last document is embedded: wait for both
        deadline = time.monotonic() + 30
        while True:
            status = server.client.get("/v1/stats").json()["embedding"]
            if status["set_aside"] >= 1 and status["embedded"] + status["set_aside"] >= 3:
                break
            assert time.monotonic() < deadline, f"the poison chunk was never set aside: {status}"
            time.sleep(0.05)
        assert status["embedded"] == 2 and status["waiting"] == 1, status
        assert status["chunk_error"].startswith("ValueError: tensor of shape"), status
        assert status["error"] is None, "the worker as a whole was reported failing"
        calls = embedder.poison_calls
        time.sleep(0.5)
        assert embedder.poison_calls == calls, "a set-aside chunk was tried again"
    finally:
        server.close()


def test_a_worker_thread_is_not_stalled_by_a_poison_chunk_at_the_head_of_the_queue(
    db: Database, settings: Settings, poisoned_owner: int, fast_retries: None
) -> None:
    worker = EmbedWorker(db, Poisoned(settings), batch=1, idle_poll=0.02, max_attempts=2)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while claimable(db, poisoned_owner):
            assert time.monotonic() < deadline, "the worker stalled behind the poison chunk"
            time.sleep(0.05)
    finally:
        worker.stop()
    assert queued(db, poisoned_owner) == 1 and worker.embedded >= len(DOCS)
    assert [(a, aside) for a, _, aside in failure_rows(db, poisoned_owner)] == [(2, True)]


def test_max_attempts_below_one_is_refused() -> None:
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="embed_max_attempts must be at least 1, not 0"):
        Settings(embed_max_attempts=0)
