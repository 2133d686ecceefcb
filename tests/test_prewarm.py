"""Shared buffers prewarmed with what searches read, most needed first, within a budget."""

from __future__ import annotations

from rag.db import Database
from rag.embedders import make_embedder
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.search.prewarm import prewarm
from rag.settings import Settings
from rag.store import ensure_vector_index


def _cached(db: Database, relation: str) -> int:
    """Pages of ``relation`` in shared buffers."""
    with db.connection() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        row = conn.execute(
            "SELECT count(*) FROM pg_buffercache b JOIN pg_class c"
            " ON b.relfilenode = pg_relation_filenode(c.oid)"
            " WHERE c.oid = %s::regclass AND b.reldatabase ="
            " (SELECT oid FROM pg_database WHERE datname = current_database())",
            (relation,),
        ).fetchone()
        conn.commit()
    return int(row[0]) if row else 0


def test_prewarm_loads_the_indexes_first_and_stops_at_its_budget(
    db: Database, settings: Settings, owner: str
) -> None:
    embedder = make_embedder(settings)
    assert embedder is not None
    docs = [
        LoadedDocument(f"p{i}.txt", None, f"Výdejní sklad číslo {i} otevírá v sedm.", "cs", {}, "t")
        for i in range(5)
    ]
    Ingestor(db, settings, embedder, owner, embed_now=True).add_all(docs)
    with db.connection() as conn:
        ensure_vector_index(conn, embedder.model_id, embedder.dim)
        conn.commit()
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        conn.execute("SELECT pg_buffercache_evict_all()")
        conn.commit()

    one = prewarm(db, budget_pages=1)
    assert one.skipped is None, one.skipped
    assert (one.relations, one.pages) == (1, 1)  # one page of the first relation, no more

    full = prewarm(db)
    assert full.skipped is None
    assert full.relations > 3 and full.pages > one.pages, full
    # what the budget of three quarters of shared_buffers holds here: every relation, the
    # chunks' GIN index and their rows among them
    assert _cached(db, "chunks_word_keys") > 0
    assert _cached(db, "chunks") > 0
