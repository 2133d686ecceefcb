"""The analysis queue: chunks whose stored sentence analysis is missing or of older rules.

Every chunk gets a row in ``chunk_analyses`` when it is inserted (migration 009's trigger),
version 0 unless ingestion analysed it in the same transaction (``RAG_ANALYZE_AT_INGEST``). The
rows below this code's :data:`~rag.search.answerability.ANALYSIS_VERSION` are the queue, in the
order of their index: oldest version, then owner and chunk. A search never uses such a row (it
analyses the chunk itself, as before there were stored analyses); a worker takes one batch per
transaction:

1. ``SELECT ... FOR UPDATE SKIP LOCKED`` claims rows no other worker holds;
2. each chunk is analysed by :func:`~rag.search.answerability.sentences`, the search's code;
3. one ``UPDATE`` writes the batch's analyses with their version and language, and it commits.

Rows of a newer version than this code's are left alone (a newer process wrote them; an older
one distrusts them and analyses at search time), so two versions running side by side never
rewrite each other's rows back and forth. Bumping ANALYSIS_VERSION queues every chunk again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from rag.db import Database
from rag.errors import DatabaseError
from rag.ingest.embed_queue import Connections, OwnConnection
from rag.ingest.prepare import PreparedDocument
from rag.ingest.worker_processes import lower_thread_priority
from rag.search.answerability import ANALYSIS_VERSION, analysis_json

log = logging.getLogger(__name__)

_CLAIM = """
SELECT a.owner_id, a.chunk_id, c.text, d.lang
FROM chunk_analyses a
JOIN chunks c ON c.owner_id = a.owner_id AND c.chunk_id = a.chunk_id
JOIN documents d ON d.owner_id = c.owner_id AND d.document_id = c.document_id
WHERE a.version < %(version)s{owner}
ORDER BY a.version, a.owner_id, a.chunk_id
LIMIT %(limit)s
FOR UPDATE OF a SKIP LOCKED
"""
CLAIM_ANY = _CLAIM.format(owner="")
CLAIM_OWNER = _CLAIM.format(owner=" AND a.owner_id = %(owner_id)s")
STORE = """
UPDATE chunk_analyses a SET version = %(version)s, lang = u.lang, analysis = u.analysis
FROM unnest(%(owners)s::bigint[], %(chunks)s::bigint[], %(langs)s::text[], %(analyses)s::json[])
    AS u(owner_id, chunk_id, lang, analysis)
WHERE a.owner_id = u.owner_id AND a.chunk_id = u.chunk_id
"""
# Chunks written by an ingestion that analysed them (RAG_ANALYZE_AT_INGEST), found by their
# document and ordinal since COPY returns no ids; the same transaction as their insert.
STORE_INGESTED = """
UPDATE chunk_analyses a SET version = %(version)s, lang = u.lang, analysis = u.analysis
FROM unnest(%(documents)s::bigint[], %(ordinals)s::int[], %(langs)s::text[], %(analyses)s::json[])
    AS u(document_id, ordinal, lang, analysis)
JOIN chunks c ON c.owner_id = %(owner_id)s AND c.document_id = u.document_id
     AND c.ordinal = u.ordinal
WHERE a.owner_id = c.owner_id AND a.chunk_id = c.chunk_id
"""
WAITING_ANY = "SELECT count(*) FROM chunk_analyses WHERE version < %(version)s"
WAITING_OWNER = (
    "SELECT count(*) FROM chunk_analyses WHERE version < %(version)s AND owner_id = %(owner_id)s"
)


def store_ingested(
    conn: psycopg.Connection, owner_id: int, docs: list[PreparedDocument], ids: dict[str, int]
) -> int:
    """Store the analyses that :func:`~rag.ingest.prepare.prepare` computed for the chunks just
    written (``ids``: their documents' ids), in the caller's transaction; the number stored."""
    rows = [
        (ids[p.doc.source_id], c.ordinal, p.lang, c.analysis)
        for p in docs
        for c in p.chunks
        if c.analysis is not None
    ]
    if not rows:
        return 0
    documents, ordinals, langs, analyses = (list(col) for col in zip(*rows, strict=True))
    conn.execute(
        STORE_INGESTED,
        {
            "version": ANALYSIS_VERSION,
            "owner_id": owner_id,
            "documents": documents,
            "ordinals": ordinals,
            "langs": langs,
            "analyses": analyses,
        },
    )
    return len(rows)


IDLE_POLL = 5.0  # an idle worker looks for queued chunks this often
RETRY = 10.0  # after a database error


def analyze_batch(db: Connections, *, limit: int, owner_id: int | None = None) -> int:
    """Analyse and store one batch of queued chunks; the number stored (0: none queued)."""
    with db.connection() as conn:
        with conn.transaction():
            params = {"version": ANALYSIS_VERSION, "limit": limit, "owner_id": owner_id}
            rows = conn.execute(CLAIM_ANY if owner_id is None else CLAIM_OWNER, params).fetchall()
            if not rows:
                return 0
            conn.execute(
                STORE,
                {
                    "version": ANALYSIS_VERSION,
                    "owners": [r[0] for r in rows],
                    "chunks": [r[1] for r in rows],
                    "langs": [r[3] for r in rows],
                    "analyses": [analysis_json(r[2], r[3]) for r in rows],
                },
            )
        return len(rows)


def waiting(db: Database, owner_id: int | None = None) -> int:
    """Chunks whose stored analysis is missing or older than this code's."""
    with db.connection() as conn:
        params = {"version": ANALYSIS_VERSION, "owner_id": owner_id}
        row = conn.execute(WAITING_ANY if owner_id is None else WAITING_OWNER, params).fetchone()
        conn.commit()
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class Analysed:
    analysed: int
    seconds: float


def drain(
    db: Database,
    owner_id: int | None,
    *,
    batch: int,
    progress: Callable[[int], None] | None = None,
) -> Analysed:
    """Analyse every queued chunk (of one owner, or all) now: ``rag reindex --analyses``."""
    started = time.perf_counter()
    done = 0
    while n := analyze_batch(db, limit=batch, owner_id=owner_id):
        done += n
        if progress is not None:
            progress(n)
    return Analysed(done, time.perf_counter() - started)


class AnalysisWorker:
    """A thread of ``rag serve`` that empties the queue, a batch per transaction.

    It runs Python in the serving process, so it takes turns with searches for the interpreter:
    batches are small and the thread runs at a lower priority (``nice``, Linux).
    """

    def __init__(
        self, db: Database, *, batch: int, idle_poll: float = IDLE_POLL, nice: int = 0
    ) -> None:
        self.batch = max(1, batch)
        self.idle_poll = idle_poll
        self.nice = nice
        self.analysed = 0
        self._own = OwnConnection(db)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rag-analysis", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the batch in hand and stop."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        lower_thread_priority(self.nice)  # a no-op at 0 and off Linux
        try:
            while not self._stop.is_set():
                try:
                    n = analyze_batch(self._own, limit=self.batch)
                except (psycopg.Error, DatabaseError) as e:  # a restart, a busy pool
                    log.warning("analysis worker: database error, retry in %.0f s: %s", RETRY, e)
                    self._stop.wait(RETRY)
                    continue
                self.analysed += n
                if not n:
                    self._stop.wait(self.idle_poll)
        finally:
            self._own.close()
