"""pg_prewarm at the service's start: the pages every search reads, in shared buffers at once.

A server that has just started has empty shared buffers: the first searches after it read the
HNSW graph they walk, key_top's lists and the candidates' stored analyses page by page from the
kernel, and each question of a stream touches pages the one before did not. Loading these
relations whole, in the background as the service starts, takes a second or two per 100,000
chunks and spares the searches after it those reads.

The relations are loaded in the order of what a search reads first and most (the vector
indexes, the word lists and statistics, the GIN index of word keys, the stored analyses, the
chunks' rows) until half of shared_buffers would be used: a larger corpus keeps the rest for the
pages its searches ask for. The extension must be available and the role allowed to create it
(the embedded server's role is); elsewhere the service starts without it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import psycopg

from rag.db import Database
from rag.errors import DatabaseError, one_line

log = logging.getLogger(__name__)

CREATE_EXTENSION = "CREATE EXTENSION IF NOT EXISTS pg_prewarm"

# What searches read, in order, with each relation's size: the chunks' vector (HNSW) indexes,
# key_top and word_stats with their keys, the chunks' GIN indexes, chunk_analyses (its rows are
# TOASTed JSON), then the chunks' and documents' rows. A relation of a later rank waits for
# every one of an earlier rank.
RELATIONS = """
WITH wanted AS (
    SELECT c.oid, c.relname,
           CASE
               WHEN t.relname = 'chunks' AND am.amname = 'hnsw' THEN 0
               WHEN coalesce(t.relname, c.relname) IN ('key_top', 'word_stats') THEN 1
               WHEN t.relname = 'chunks' AND am.amname = 'gin' THEN 2
               WHEN coalesce(t.relname, c.relname) = 'chunk_analyses' THEN 3
               WHEN coalesce(t.relname, c.relname) IN ('chunks', 'documents') THEN 4
           END AS rank
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
    LEFT JOIN pg_am am ON am.oid = c.relam
    LEFT JOIN pg_index x ON x.indexrelid = c.oid
    LEFT JOIN pg_class t ON t.oid = x.indrelid
    WHERE c.relkind IN ('r', 'i')
), toasted AS (
    -- a table's TOAST rows (chunk_analyses' JSON, long texts) and their index, with the table
    SELECT w.oid, w.relname, w.rank FROM wanted w WHERE w.rank IS NOT NULL
    UNION ALL
    SELECT r, w.relname || ' (TOAST)', w.rank
    FROM wanted w JOIN pg_class c ON c.oid = w.oid AND c.relkind = 'r' AND c.reltoastrelid <> 0
    CROSS JOIN LATERAL (
        SELECT c.reltoastrelid AS r
        UNION ALL
        SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid
    ) toast
    WHERE w.rank IS NOT NULL
)
SELECT oid::regclass::text, relname, pg_relation_size(oid) AS bytes
FROM toasted
WHERE pg_relation_size(oid) > 0
ORDER BY rank, bytes DESC, relname
"""
SHARED_BUFFERS = "SELECT pg_size_bytes(current_setting('shared_buffers'))"
PREWARM = "SELECT pg_prewarm(%s::regclass)"


@dataclass(frozen=True, slots=True)
class Prewarmed:
    """What :func:`prewarm` loaded: the relations' names, their pages, and how long it took."""

    relations: tuple[str, ...]
    pages: int
    seconds: float
    skipped: tuple[str, ...] = ()  # left out: half of shared_buffers was used


def prewarm(db: Database, share: float = 0.5) -> Prewarmed | None:
    """Load the relations searches read into shared buffers (:data:`RELATIONS`' order).

    Args:
        share: the part of shared_buffers the loaded relations may take; a relation that would
            go beyond it is skipped, and so is every one after it.

    Returns:
        What was loaded, or None when pg_prewarm is unavailable or the database is (logged).
    """
    started = time.perf_counter()
    try:
        with db.connection() as conn:
            conn.execute(CREATE_EXTENSION)
            conn.commit()
            budget = int(conn.execute(SHARED_BUFFERS).fetchone()[0] * share)  # type: ignore[index]
            loaded: list[str] = []
            skipped: list[str] = []
            pages = used = 0
            for regclass, name, size in conn.execute(RELATIONS).fetchall():
                if skipped or used + size > budget:
                    skipped.append(name)
                    continue
                pages += conn.execute(PREWARM, (regclass,)).fetchone()[0]  # type: ignore[index]
                used += size
                loaded.append(name)
            conn.commit()
    except (psycopg.Error, DatabaseError) as e:  # the service runs without it
        log.warning("pg_prewarm not run: %s", one_line(e))
        return None
    done = Prewarmed(tuple(loaded), pages, time.perf_counter() - started, tuple(skipped))
    log.info(
        "pg_prewarm: %d pages (%d MB) of %d relations in %.1f s%s",
        done.pages,
        done.pages * 8192 >> 20,
        len(done.relations),
        done.seconds,
        f"; {len(done.skipped)} left out (half of shared_buffers)" if done.skipped else "",
    )
    return done
