"""Chunks whose embedding fails while the embedder works: backed off, then set aside (sql/008).

A batch the embedder refuses is tried again one chunk at a time, so the chunks that do embed are
written and only the ones that fail are counted. Before a failure counts against a chunk the
embedder must prove it works (another chunk of the batch embedded, or a short probe text does):
when it is the embedder that is down, nothing is counted and the worker backs off as a whole
(rag.ingest.embed_queue), so an outage never sets the queue aside.

A failed chunk waits ``RETRY_FIRST`` seconds, then twice as long after each further failure;
after ``max_attempts`` it is set aside (``retry_at`` NULL): still without a vector, counted in
``rag stats`` and ``/v1/stats`` with its error, and skipped by every worker until
:func:`forget` (``rag embed --retry-failed``) makes it an ordinary queued chunk again.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from rag.embedders import Embedder

RETRY_FIRST = 5.0
RETRY_MAX = 3600.0
PROBE_TEXT = "kontrola"

RECORD = """
INSERT INTO embed_failures AS f (owner_id, chunk_id, model, attempts, error, retry_at)
SELECT u.owner_id, u.chunk_id, %(model)s, 1, u.error,
       CASE WHEN %(max)s <= 1 THEN NULL ELSE now() + make_interval(secs => %(first)s) END
FROM unnest(%(owners)s::bigint[], %(chunks)s::bigint[], %(errors)s::text[])
     AS u(owner_id, chunk_id, error)
ON CONFLICT (owner_id, chunk_id) DO UPDATE
SET model = EXCLUDED.model, attempts = f.attempts + 1, error = EXCLUDED.error, failed_at = now(),
    retry_at = CASE WHEN f.attempts + 1 >= %(max)s THEN NULL
                    ELSE now() + make_interval(
                        secs => least(%(first)s * power(2, f.attempts), %(cap)s)) END
"""
# Once a chunk has its vector, its failures are history.
FORGET_EMBEDDED = """
DELETE FROM embed_failures f USING vector_queue_load v
WHERE f.owner_id = v.owner_id AND f.chunk_id = v.chunk_id
"""
FORGET_OWNER = "DELETE FROM embed_failures WHERE owner_id = %(owner_id)s"
# Only chunks still without a vector count (`rag reindex` may have embedded one meanwhile).
SET_ASIDE_OWNER = """
SELECT count(*) FROM embed_failures f JOIN chunks c USING (owner_id, chunk_id)
WHERE f.owner_id = %(owner_id)s AND f.retry_at IS NULL AND c.embedding IS NULL
"""
# The owner's failing chunks (set aside, or waiting to be tried again) and the latest error.
SUMMARY = """
SELECT count(*) FILTER (WHERE f.retry_at IS NULL), count(*) FILTER (WHERE f.retry_at IS NOT NULL),
       (array_agg(f.error ORDER BY f.failed_at DESC, f.chunk_id DESC))[1]
FROM embed_failures f JOIN chunks c USING (owner_id, chunk_id)
WHERE f.owner_id = %(owner_id)s AND c.embedding IS NULL
"""


def embed_one_by_one(
    embedder: Embedder, texts: Sequence[str]
) -> tuple[dict[int, object], dict[int, str]]:
    """Each text alone: the vectors by position, and the errors by position."""
    vectors: dict[int, object] = {}
    errors: dict[int, str] = {}
    for i, text in enumerate(texts):
        try:
            vectors[i] = embedder.embed([text], kind="passage")[0]
        except Exception as e:  # noqa: BLE001 -- whatever the backend raises is this chunk's error
            errors[i] = describe(e)
    return vectors, errors


def embedder_works(embedder: Embedder) -> bool:
    """Whether the embedder embeds a short, ordinary text: a failure of a chunk counts only then."""
    try:
        embedder.embed([PROBE_TEXT], kind="passage")
    except Exception:  # noqa: BLE001 -- any failure means the embedder, not the chunk
        return False
    return True


def describe(e: BaseException) -> str:
    from rag.errors import EmbedderError

    return str(e) if isinstance(e, EmbedderError) else f"{type(e).__name__}: {e}"


def record(
    conn: psycopg.Connection,
    failed: Sequence[tuple[int, int, str]],
    *,
    model: str,
    max_attempts: int,
) -> None:
    """Count one failed attempt for each (owner_id, chunk_id, error)."""
    if not failed:
        return
    conn.execute(
        RECORD,
        {
            "owners": [f[0] for f in failed],
            "chunks": [f[1] for f in failed],
            "errors": [f[2][:2000] for f in failed],
            "model": model,
            "max": max(1, max_attempts),
            "first": RETRY_FIRST,
            "cap": RETRY_MAX,
        },
    )


def forget(conn: psycopg.Connection, owner_id: int) -> int:
    """Make the owner's failed chunks ordinary queued chunks again; how many there were."""
    return conn.execute(FORGET_OWNER, {"owner_id": owner_id}).rowcount


def set_aside(conn: psycopg.Connection, owner_id: int) -> int:
    """The owner's chunks set aside after their last allowed attempt."""
    row = conn.execute(SET_ASIDE_OWNER, {"owner_id": owner_id}).fetchone()
    return int(row[0]) if row else 0


def summary(conn: psycopg.Connection, owner_id: int) -> tuple[int, int, str | None]:
    """(set aside, waiting to be tried again, the latest error) for the owner."""
    row = conn.execute(SUMMARY, {"owner_id": owner_id}).fetchone()
    if row is None:
        return 0, 0, None
    return int(row[0]), int(row[1]), row[2]
