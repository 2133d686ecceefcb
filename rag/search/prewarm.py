"""Shared buffers loaded at the service's start with what searches read, most needed first.

A server that has just started has empty shared buffers, and its first searches copy every page
they touch from the kernel (or the disk). At 100,000 chunks, hybrid searches in a fresh process
took p50 36.8 ms on empty buffers and 25.7 ms after ``pg_prewarm``, and in each of the eight runs
measured since the analyses were stored the prewarmed median was the lower one
(docs/performance.md). So ``rag serve`` loads, in the background and in this order:

1. the HNSW indexes, which every vector list walks;
2. ``key_top`` and ``word_stats``, the full-text list's postings and statistics;
3. the GIN indexes over the chunks' keys and text;
4. ``chunk_analyses`` with its TOAST, which judging reads for the windows;
5. the chunks' and documents' rows and their TOAST (texts, keys, vectors).

It stops at a budget, three quarters of shared_buffers by default, so that it never evicts
what it loaded first: a database larger than the buffers gets its indexes and lists, not a
random tail of its heap. A server without the ``pg_prewarm`` extension (it is in contrib), or a
role that may not create it, is left as it is; the search works either way.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import psycopg

from rag.db import Database

log = logging.getLogger(__name__)

# the share of shared_buffers that prewarming may fill
BUDGET_SHARE = 0.75

# Every relation a search reads, with its TOAST table and index, ranked as the module says; the
# largest first within a rank.
_RELATIONS = """
WITH wanted AS (
    SELECT c.oid,
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
    SELECT w.oid, w.rank FROM wanted w WHERE w.rank IS NOT NULL
    UNION ALL
    SELECT toast.r, w.rank
    FROM wanted w JOIN pg_class c ON c.oid = w.oid AND c.relkind = 'r' AND c.reltoastrelid <> 0
    CROSS JOIN LATERAL (
        SELECT c.reltoastrelid AS r
        UNION ALL
        SELECT indexrelid FROM pg_index WHERE indrelid = c.reltoastrelid
    ) toast
    WHERE w.rank IS NOT NULL
)
SELECT oid::regclass::text, pg_relation_size(oid) / current_setting('block_size')::bigint
FROM toasted WHERE pg_relation_size(oid) > 0
ORDER BY rank, pg_relation_size(oid) DESC
"""


@dataclass(frozen=True)
class Prewarmed:
    """What :func:`prewarm` loaded: relations (wholly or in part), pages of ``block_size``
    bytes, seconds; ``skipped`` says why nothing was loaded."""

    relations: int
    pages: int
    seconds: float
    skipped: str | None = None
    block_size: int = 8192

    @property
    def megabytes(self) -> int:
        return self.pages * self.block_size >> 20


def prewarm(db: Database, budget_pages: int | None = None) -> Prewarmed:
    """Load what searches read into shared buffers, most needed first, up to ``budget_pages``
    (default: :data:`BUDGET_SHARE` of shared_buffers)."""
    started = time.perf_counter()
    with db.connection() as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            conn.commit()
        except psycopg.Error as e:
            conn.rollback()
            return Prewarmed(0, 0, time.perf_counter() - started, f"no pg_prewarm: {e}")
        row = conn.execute(
            "SELECT current_setting('block_size')::int,"
            " pg_size_bytes(current_setting('shared_buffers'))"
        ).fetchone()
        block_size, shared = (int(row[0]), int(row[1])) if row else (8192, 0)
        if budget_pages is None:
            budget_pages = int(shared // block_size * BUDGET_SHARE)
        relations = conn.execute(_RELATIONS).fetchall()
        conn.commit()
    loaded = touched = 0
    for name, size in relations:
        room = budget_pages - loaded
        if room <= 0:
            break
        last = min(int(size), room) - 1
        # one statement per relation, each on a connection of its own from the pool: a long
        # prewarm never holds one connection that searches wait for
        with db.connection() as conn:
            row = conn.execute(
                "SELECT pg_prewarm(%s::regclass, 'buffer', 'main', 0, %s)", (name, last)
            ).fetchone()
            conn.commit()
        loaded += int(row[0]) if row else 0
        touched += 1
    return Prewarmed(touched, loaded, time.perf_counter() - started, block_size=block_size)


def prewarm_logged(db: Database) -> None:
    """:func:`prewarm`, its outcome logged; a failure is logged and searches go on cold."""
    try:
        done = prewarm(db)
    except Exception as e:  # noqa: BLE001 - searches work on cold buffers too
        log.warning("shared buffers not prewarmed: %s", e)
        return
    if done.skipped:
        log.info("shared buffers not prewarmed (%s)", done.skipped)
        return
    log.info(
        "shared buffers prewarmed: %d MB of %d relations in %.1f s",
        done.megabytes,
        done.relations,
        done.seconds,
    )
