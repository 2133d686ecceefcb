"""Bulk mode: a big load writes without the GIN indexes and builds them after, with the same data."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from rag.db import Database, migrate
from rag.ingest import bulk_load
from rag.ingest import writer as ingest
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from tests.test_ingest import recount, stats

GIN = {"chunks_text_tsv", "chunks_word_keys"}


def doc(i: int) -> LoadedDocument:
    text = f"Zápis {i}: kontrola regálu {i % 9} v hale {i % 4} proběhla bez závad, palety sedí."
    return LoadedDocument(f"z{i}", None, text, "cs", {}, f"z{i}")


def gin_indexes(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'chunks' AND indexdef LIKE '%gin%'"
    ).fetchall()
    return {r[0] for r in rows}


@pytest.fixture
def empty_db(fresh_db_url: str, tmp_path: Path) -> Iterator[Database]:
    migrate(fresh_db_url)
    settings = Settings(database_url=fresh_db_url, data_dir=tmp_path, embedder="none")
    with Database(settings, run_migrations=False) as db:
        yield db


def test_a_big_load_goes_on_without_gin_and_ends_with_them_and_exact_statistics(
    empty_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "BATCH_CHUNKS", 10)  # a flush every ten chunks
    seen_during: list[set[str]] = []

    def items() -> Iterator[LoadedDocument]:
        for i in range(60):
            if i == 40:
                with empty_db.connection() as conn:
                    seen_during.append(gin_indexes(conn))
            yield doc(i)

    ing = Ingestor(empty_db, empty_db.settings, None, "velky", bulk_after=10)
    summary = ing.add_all(items())
    assert summary.added == 60 and summary.chunks == 60
    assert seen_during == [set()], "the GIN indexes were still there in the middle of the load"
    with empty_db.connection() as conn:
        assert gin_indexes(conn) == GIN
        assert conn.execute("SELECT count(*) FROM dropped_indexes").fetchone() == (0,)
        assert stats(conn, ing.owner_id) == recount(conn, ing.owner_id)
        found = conn.execute(
            "SELECT count(*) FROM chunks WHERE text_tsv @@ 'regalu'::tsquery"
        ).fetchone()
    assert found == (60,)


def test_a_load_into_a_much_bigger_table_stays_ordinary(
    empty_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    Ingestor(empty_db, empty_db.settings, None, "others").add_all([doc(i) for i in range(100)])
    monkeypatch.setattr(ingest, "BATCH_CHUNKS", 10)
    ing = Ingestor(empty_db, empty_db.settings, None, "small", bulk_after=10)
    ing.add_all([doc(i) for i in range(20)])
    assert not ing.bulk
    with empty_db.connection() as conn:
        assert gin_indexes(conn) == GIN


def test_indexes_a_killed_bulk_load_dropped_come_back_at_the_next_ingestion(
    empty_db: Database,
) -> None:
    Ingestor(empty_db, empty_db.settings, None, "a").add_all([doc(i) for i in range(5)])
    with psycopg.connect(empty_db.url) as killed:
        killed_pid = killed.info.backend_pid
        assert set(bulk_load.drop(killed)) == GIN
        with empty_db.connection() as conn:
            assert gin_indexes(conn) == set()
            # while the load's session lives, nobody builds them back under it
            assert bulk_load.rebuild(conn) == []
    # its session is gone (the process died): once the server has let go of it, the next
    # ingestion repairs
    deadline = time.monotonic() + 10
    with empty_db.connection() as conn:
        while conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (killed_pid,)
        ).fetchone() != (0,):
            assert time.monotonic() < deadline, "the closed session never ended"
            conn.commit()
            time.sleep(0.05)
        conn.commit()
    Ingestor(empty_db, empty_db.settings, None, "b")
    with empty_db.connection() as conn:
        assert gin_indexes(conn) == GIN
        assert conn.execute("SELECT count(*) FROM dropped_indexes").fetchone() == (0,)
