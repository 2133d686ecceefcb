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
from tests.test_key_top import STORED, check_invariant

GIN = {"chunks_text_tsv", "chunks_word_keys"}


def doc(i: int) -> LoadedDocument:
    text = f"Zápis {i}: kontrola regálu {i % 9} v hale {i % 4} proběhla bez závad, palety sedí."
    return LoadedDocument(f"z{i}", None, text, "cs", {}, f"z{i}")


def lists(conn: psycopg.Connection, owner_id: int) -> dict[str, tuple[list[int], float | None]]:
    return {k: (sorted(ids), cut) for k, ids, _, cut in conn.execute(STORED, (owner_id,))}


def deferred(conn: psycopg.Connection) -> set[int]:
    return {r[0] for r in conn.execute("SELECT owner_id FROM key_top_deferred").fetchall()}


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
    seen_during: list[tuple[set[str], set[int]]] = []
    monkeypatch.setattr(bulk_load, "KEY_TOP_SLICE", 16)  # the rebuild merges across slices

    def items() -> Iterator[LoadedDocument]:
        for i in range(300):
            if i == 200:
                with empty_db.connection() as conn:
                    seen_during.append((gin_indexes(conn), deferred(conn)))
            yield doc(i)

    ing = Ingestor(empty_db, empty_db.settings, None, "velky", bulk_after=10)
    summary = ing.add_all(items())
    assert summary.added == 300 and summary.chunks == 300
    assert seen_during == [(set(), {ing.owner_id})], "GIN kept or key_top not deferred mid-load"
    # the same documents loaded the ordinary way, with the key_top triggers at every batch
    plain = Ingestor(empty_db, empty_db.settings, None, "obycejny")
    plain.add_all([doc(i) for i in range(300)])
    with empty_db.connection() as conn:
        assert gin_indexes(conn) == GIN
        assert conn.execute("SELECT count(*) FROM dropped_indexes").fetchone() == (0,)
        assert deferred(conn) == set()
        assert stats(conn, ing.owner_id) == recount(conn, ing.owner_id)
        assert any(cut is not None for _, cut in check_invariant(conn, ing.owner_id).values())
        bulk_lists, plain_lists = lists(conn, ing.owner_id), lists(conn, plain.owner_id)
        offset = (
            conn.execute(
                "SELECT min(chunk_id) FROM chunks WHERE owner_id = %s", (plain.owner_id,)
            ).fetchone()[0]
            - conn.execute(
                "SELECT min(chunk_id) FROM chunks WHERE owner_id = %s", (ing.owner_id,)
            ).fetchone()[0]
        )
        assert bulk_lists == {
            k: (sorted(i - offset for i in ids), cut) for k, (ids, cut) in plain_lists.items()
        }, "the lists rebuilt after the bulk load differ from those the triggers keep"
        found = conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = %s AND text_tsv @@ 'regalu'::tsquery",
            (ing.owner_id,),
        ).fetchone()
    assert found == (300,)


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
    a = Ingestor(empty_db, empty_db.settings, None, "a")
    a.add_all([doc(i) for i in range(5)])
    with psycopg.connect(empty_db.url) as killed:
        killed_pid = killed.info.backend_pid
        assert set(bulk_load.drop(killed, a.owner_id)) == GIN | {"key_top"}
        with empty_db.connection() as conn:
            assert gin_indexes(conn) == set()
            assert deferred(conn) == {a.owner_id}
            # the killed load had written chunks that no key_top list holds
            conn.execute("DELETE FROM key_top WHERE owner_id = %s", (a.owner_id,))
            conn.commit()
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
        assert deferred(conn) == set()
        assert check_invariant(conn, a.owner_id), "the deferred owner's lists were not rebuilt"
