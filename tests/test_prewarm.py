"""pg_prewarm at the service's start (rag.db_prewarm): what searches read is in shared buffers,
in order, within its share of them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rag.db import Database, migrate
from rag.db_prewarm import RELATIONS, prewarm
from rag.embedders import make_embedder
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.settings import Settings

# pages of a relation of this database in shared buffers
CACHED = """
SELECT count(*) FROM pg_buffercache b
WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND b.relfilenode = pg_relation_filenode(%s::regclass)
"""


@pytest.fixture
def corpus_db(fresh_db_url: str, settings: Settings) -> Iterator[Database]:
    """A database of its own (its buffers are its own) with a few embedded chunks."""
    migrate(fresh_db_url)
    own = settings.replace(database_url=fresh_db_url)
    db = Database(own, run_migrations=False)
    docs = [
        LoadedDocument(
            f"d{i}", None, f"Směrnice číslo {i} upravuje cestovní náhrady.", "cs", {}, f"d{i}"
        )
        for i in range(30)
    ]
    Ingestor(db, own, make_embedder(own), "team", embed_now=True).add_all(docs)
    with db.connection() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        conn.commit()
    yield db
    db.close()


def _evict(db: Database) -> dict[str, int]:
    """Every relation prewarm would load evicted from shared buffers; their sizes in pages."""
    with db.connection() as conn:
        rows = conn.execute(RELATIONS).fetchall()
        for regclass, _, _ in rows:
            conn.execute("SELECT pg_buffercache_evict_relation(%s::regclass)", (regclass,))
        conn.commit()
    return {regclass: size // 8192 for regclass, _, size in rows}


def _cached(db: Database, regclass: str) -> int:
    with db.connection() as conn:
        n = conn.execute(CACHED, (regclass,)).fetchone()[0]  # type: ignore[index]
        conn.commit()
    return int(n)


def test_prewarm_loads_the_vector_index_word_lists_and_analyses_first(corpus_db: Database) -> None:
    sizes = _evict(corpus_db)
    names = [regclass for regclass in sizes]
    hnsw = [n for n in names if n.startswith("chunks_hnsw_")]
    assert hnsw and names[: len(hnsw)] == hnsw  # the vector index first
    assert names.index("key_top") < names.index("chunks_word_keys") < names.index("chunk_analyses")
    assert names.index("chunk_analyses") < names.index("chunks")
    assert _cached(corpus_db, "key_top") == 0

    done = prewarm(corpus_db)

    assert done is not None and not done.skipped
    assert done.pages == sum(sizes.values())
    for regclass, pages in sizes.items():
        assert _cached(corpus_db, regclass) == pages, regclass


def test_prewarm_stays_within_its_share_of_shared_buffers(corpus_db: Database) -> None:
    sizes = _evict(corpus_db)
    with corpus_db.connection() as conn:
        buffers = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers'))"
        ).fetchone()[0]  # type: ignore[index]
        conn.commit()
    first = next(iter(sizes))
    # room for the first relation alone: it is loaded, every later one is left out
    share = (sizes[first] * 8192 + 4096) / buffers

    done = prewarm(corpus_db, share=share)

    assert done is not None
    assert done.pages == sizes[first]
    assert len(done.skipped) == len(sizes) - 1
    assert _cached(corpus_db, "key_top") == 0


def test_prewarm_without_a_database_is_none(corpus_db: Database) -> None:
    corpus_db.close()
    assert prewarm(corpus_db) is None
