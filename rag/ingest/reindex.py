"""Backfill vectors: embed chunks that lack one for the configured model (or all, with force)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rag.db import Database
from rag.embedders import Embedder
from rag.store import ensure_vector_index

log = logging.getLogger(__name__)

PENDING = """
SELECT chunk_id, text FROM chunks
WHERE owner_id = %(owner_id)s AND chunk_id > %(after)s
  AND (%(force)s OR embed_model IS DISTINCT FROM %(model)s)
ORDER BY chunk_id
LIMIT %(limit)s
"""
COUNT_PENDING = """
SELECT count(*) FROM chunks
WHERE owner_id = %(owner_id)s AND (%(force)s OR embed_model IS DISTINCT FROM %(model)s)
"""
CREATE_STAGING = """
CREATE TEMP TABLE IF NOT EXISTS vector_load (chunk_id bigint, embedding vector)
ON COMMIT DELETE ROWS
"""
COPY_STAGING = "COPY vector_load (chunk_id, embedding) FROM STDIN (FORMAT BINARY)"
APPLY = """
UPDATE chunks c SET embedding = v.embedding, embed_model = %(model)s
FROM vector_load v
WHERE c.owner_id = %(owner_id)s AND c.chunk_id = v.chunk_id
"""


@dataclass
class ReindexSummary:
    embedded: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {"embedded": self.embedded, "failed": self.failed, "errors": self.errors}


def count_pending(db: Database, owner_id: int, model_id: str, *, force: bool = False) -> int:
    with db.connection() as conn:
        row = conn.execute(
            COUNT_PENDING, {"owner_id": owner_id, "model": model_id, "force": force}
        ).fetchone()
    return int(row[0]) if row else 0


def reindex(
    db: Database,
    embedder: Embedder,
    owner_id: int,
    *,
    force: bool = False,
    batch: int = 64,
    progress: Callable[[int], None] | None = None,
) -> ReindexSummary:
    """Embed the owner's chunks that have no vector of ``embedder.model_id`` (all with ``force``).

    Each batch commits on its own, so an interrupted reindex keeps what it finished and the next
    run resumes where it stopped. An embedder failure stops the run and is reported.
    """
    summary = ReindexSummary()
    with db.connection() as conn:
        ensure_vector_index(conn, embedder.model_id, embedder.dim)
        conn.commit()
    after = 0
    while True:
        with db.connection() as conn:
            rows = conn.execute(
                PENDING,
                {
                    "owner_id": owner_id,
                    "after": after,
                    "force": force,
                    "model": embedder.model_id,
                    "limit": batch,
                },
            ).fetchall()
            conn.commit()
        if not rows:
            return summary
        after = int(rows[-1][0])
        try:
            vectors = embedder.embed([t for _, t in rows], kind="passage")
        except Exception as e:  # noqa: BLE001 -- any failure: report, keep what is done
            summary.failed += len(rows)
            summary.errors.append(str(e))
            log.warning("reindex stopped: %s", e)
            return summary
        with db.connection() as conn, conn.transaction():
            conn.execute(CREATE_STAGING)
            with conn.cursor() as cur, cur.copy(COPY_STAGING) as copy:
                copy.set_types(["bigint", "vector"])
                for (chunk_id, _), v in zip(rows, vectors, strict=True):
                    copy.write_row((chunk_id, np.asarray(v, dtype=np.float32)))
            conn.execute(APPLY, {"owner_id": owner_id, "model": embedder.model_id})
        summary.embedded += len(rows)
        if progress:
            progress(len(rows))
