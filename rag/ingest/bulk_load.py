"""Bulk mode: a load big enough to pay for it writes without the GIN indexes, then builds them.

Every chunk put into a GIN index costs hundreds of index entries inserted one by one; building
the index afterwards sorts them all at once (docs/performance.md has the figures). A build covers
the whole table, not only the new rows, so bulk mode is worth it only when the load is most of
the table: :func:`worth_it` decides. While the indexes are gone, searches still work (by
sequential scan, slower) and stay correct.

The load's owner is also recorded in ``key_top_deferred`` (sql/008): the key_top triggers skip
its chunks, and the end of the load builds its lists once with ``rag_key_top_rebuild``. Until
then full-text search of that owner reads the lists as they were before the load.

The dropped indexes' definitions are recorded in ``dropped_indexes`` in the same transaction as
the DROP, and :func:`rebuild` creates whatever is recorded there and rebuilds the deferred
owners' lists: at the end of the load, or, if the load was killed, at the next ingestion or
service start.
"""

from __future__ import annotations

import logging

import psycopg
from psycopg import sql

from rag.db import without_statement_timeout

log = logging.getLogger(__name__)

# The table's chunks are counted by the statistics triggers, so this is exact and cheap.
TABLE_CHUNKS = "SELECT coalesce(sum(chunk_count), 0) FROM owners"
GIN_INDEXES = """
SELECT c.relname, pg_get_indexdef(i.indexrelid)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am a ON a.oid = c.relam
WHERE i.indrelid = 'chunks'::regclass AND a.amname = 'gin'
ORDER BY c.relname
"""
RECORD = """
INSERT INTO dropped_indexes (name, definition) VALUES (%(name)s, %(definition)s)
ON CONFLICT (name) DO NOTHING
"""
PENDING = "SELECT name, definition FROM dropped_indexes ORDER BY name"
DEFER_KEY_TOP = (
    "INSERT INTO key_top_deferred (owner_id) VALUES (%(owner_id)s) ON CONFLICT DO NOTHING"
)
DEFERRED = "SELECT owner_id FROM key_top_deferred ORDER BY owner_id"
ANY_PENDING = """
SELECT EXISTS (SELECT 1 FROM dropped_indexes) OR EXISTS (SELECT 1 FROM key_top_deferred)
"""
# One pass over the owner's chunks, in slices of chunk ids (sql/004); the row goes in the same
# transaction, so an interrupted rebuild is repeated whole.
REBUILD_KEY_TOP = "SELECT rag_key_top_rebuild(%(owner_id)s, %(slice)s)"
UNDEFER_KEY_TOP = "DELETE FROM key_top_deferred WHERE owner_id = %(owner_id)s"
KEY_TOP_SLICE = 50_000
# Held, on a session of its own, by the load in bulk mode from the DROP to the end of the build:
# while it is held nobody else builds the indexes back (that would undo the point of the load);
# once its session ends, however it ended, the next rebuild() may.
BULK_LOCK = 721_654
TRY_LOCK = "SELECT pg_try_advisory_lock(%(key)s)"
UNLOCK = "SELECT pg_advisory_unlock(%(key)s)"
FORGET = "DELETE FROM dropped_indexes WHERE name = %(name)s"
# Only the tables' owner may drop and build indexes; the service's role may not.
MAY_INDEX = """
SELECT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'chunks'::regclass),
                   'USAGE')
"""

# The load must have written this share of what the table then holds: the build after it
# re-reads the whole table.
MIN_SHARE_OF_TABLE = 0.5
BUILD_MEMORY = "512MB"


def worth_it(conn: psycopg.Connection, written: int) -> bool:
    """Whether a load that has written ``written`` chunks so far should go on in bulk mode."""
    may = conn.execute(MAY_INDEX).fetchone()
    if not (may and may[0]):
        return False
    row = conn.execute(TABLE_CHUNKS).fetchone()
    table = int(row[0]) if row else 0
    return written >= MIN_SHARE_OF_TABLE * max(table, 1)


def drop(conn: psycopg.Connection, owner_id: int | None = None) -> list[str]:
    """Drop the GIN indexes of chunks, recording their definitions, and defer ``owner_id``'s
    key_top lists; the names dropped (``key_top`` among them when deferred).

    ``conn`` keeps the bulk lock until :func:`finish` on it; nothing is dropped (and the load
    goes on as an ordinary one) while another bulk load holds the lock.
    """
    if not _try_lock(conn):
        return []
    dropped = []
    with conn.transaction():
        for name, definition in conn.execute(GIN_INDEXES).fetchall():
            conn.execute(RECORD, {"name": name, "definition": definition})
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
            dropped.append(name)
        if owner_id is not None:
            conn.execute(DEFER_KEY_TOP, {"owner_id": owner_id})
            dropped.append("key_top")
    return dropped


def finish(conn: psycopg.Connection, *, parallel_workers: int = 1) -> list[str]:
    """The end of a bulk load on the connection that dropped: build, then let go of the lock."""
    try:
        return rebuild(conn, parallel_workers=parallel_workers)
    finally:
        conn.execute(UNLOCK, {"key": BULK_LOCK})
        conn.commit()


def _try_lock(conn: psycopg.Connection) -> bool:
    row = conn.execute(TRY_LOCK, {"key": BULK_LOCK}).fetchone()
    conn.commit()
    return bool(row and row[0])


def rebuild(conn: psycopg.Connection, *, parallel_workers: int = 1) -> list[str]:
    """Build every index a bulk load dropped and has not built again, and the key_top lists of
    every deferred owner; the names built (``key_top:<owner_id>`` for lists).

    Does nothing while a bulk load is under way on another session. Each index is built and
    forgotten in its own transaction, so an interruption loses at most the build in progress,
    which the next call repeats.
    """
    if conn.execute(ANY_PENDING).fetchone() != (True,):
        return []
    may = conn.execute(MAY_INDEX).fetchone()
    if not (may and may[0]):
        log.warning(
            "indexes of an interrupted bulk load are missing (table dropped_indexes): run "
            "rag ingest or rag serve as the owner of table chunks to build them"
        )
        return []
    if not _try_lock(conn):
        return []
    try:
        return _build(conn, parallel_workers)
    finally:
        conn.execute(UNLOCK, {"key": BULK_LOCK})
        conn.commit()


def _build(conn: psycopg.Connection, parallel_workers: int) -> list[str]:
    built = []
    for name, definition in conn.execute(PENDING).fetchall():
        with conn.transaction():
            without_statement_timeout(conn)
            conn.execute(
                sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(BUILD_MEMORY))
            )
            conn.execute(
                sql.SQL("SET LOCAL max_parallel_maintenance_workers = {}").format(
                    sql.Literal(max(0, parallel_workers))
                )
            )
            # the recorded definition is pg_get_indexdef's own output, not user input
            conn.execute(
                sql.SQL(definition.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1))
            )  # type: ignore[arg-type]
            conn.execute(FORGET, {"name": name})
        built.append(name)
        log.info("built index %s after a bulk load", name)
    for (owner_id,) in conn.execute(DEFERRED).fetchall():
        with conn.transaction():
            without_statement_timeout(conn)
            conn.execute(sql.SQL("SET LOCAL work_mem = {}").format(sql.Literal(BUILD_MEMORY)))
            conn.execute(REBUILD_KEY_TOP, {"owner_id": owner_id, "slice": KEY_TOP_SLICE})
            conn.execute(UNDEFER_KEY_TOP, {"owner_id": owner_id})
        built.append(f"key_top:{owner_id}")
        log.info("rebuilt the key_top lists of owner %s after a bulk load", owner_id)
    return built
