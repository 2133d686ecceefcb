"""The embedding queue: chunks whose ``embedding IS NULL``, filled oldest first by workers.

There is no queue table: a chunk is queued from the moment ingestion commits it without a
vector until a worker writes one, and the partial indexes of sql/001 and sql/005 are the queue's
order. A worker takes one batch per transaction:

1. ``SELECT ... FOR UPDATE SKIP LOCKED`` claims the oldest chunks no other worker holds, so any
   number of workers, in any number of processes, never embed the same chunk twice;
2. the texts are embedded while the rows stay locked (a replacement of their document waits at
   most this one batch);
3. one ``UPDATE`` writes every vector of the batch and the transaction commits.

A worker killed anywhere before the commit leaves its batch exactly as it was, queued, and the
next worker takes it again. When the embedder is down the batch is rolled back too; the worker
records the error in ``embed_workers`` (``rag stats``, ``/v1/stats``) and retries after a growing
pause. A chunk that fails while the embedder works is backed off and, after a bounded number of
attempts, set aside (rag.ingest.embed_failures), so it cannot hold up the chunks behind it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from rag.db import Database
from rag.embedders import Embedder
from rag.errors import DatabaseError, DatabaseUnavailable, EmbedderError
from rag.ingest import embed_failures
from rag.ingest.worker_processes import lower_thread_priority
from rag.store import ensure_vector_index

log = logging.getLogger(__name__)

# Chunks that failed wait for their retry time, or for `rag embed --retry-failed` once set aside.
NOT_FAILING = """
NOT EXISTS (SELECT 1 FROM embed_failures f
            WHERE f.owner_id = chunks.owner_id AND f.chunk_id = chunks.chunk_id
              AND (f.retry_at IS NULL OR f.retry_at > now()))"""
CLAIM_OLDEST = f"""
SELECT owner_id, chunk_id, text FROM chunks
WHERE embedding IS NULL AND {NOT_FAILING}
ORDER BY chunk_id
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
"""
CLAIM_OWNER = f"""
SELECT owner_id, chunk_id, text FROM chunks
WHERE owner_id = %(owner_id)s AND embedding IS NULL AND {NOT_FAILING}
ORDER BY chunk_id
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED
"""
CREATE_STAGING = """
CREATE TEMP TABLE IF NOT EXISTS vector_queue_load (owner_id bigint, chunk_id bigint, embedding vector)
ON COMMIT DELETE ROWS
"""
COPY_STAGING = "COPY vector_queue_load (owner_id, chunk_id, embedding) FROM STDIN (FORMAT BINARY)"
APPLY = """
UPDATE chunks c SET embedding = v.embedding, embed_model = %(model)s
FROM vector_queue_load v
WHERE c.owner_id = v.owner_id AND c.chunk_id = v.chunk_id AND c.embedding IS NULL
"""
QUEUED_OWNER = "SELECT count(*) FROM chunks WHERE owner_id = %(owner_id)s AND embedding IS NULL"
RECORD_BATCH = """
INSERT INTO embed_workers AS w (worker, model, embedded, rate, seen_at)
VALUES (%(worker)s, %(model)s, %(n)s, %(rate)s, now())
ON CONFLICT (worker) DO UPDATE
SET model = EXCLUDED.model, embedded = w.embedded + EXCLUDED.embedded, seen_at = now(),
    rate = CASE WHEN w.rate IS NULL THEN EXCLUDED.rate
                ELSE 0.7 * w.rate + 0.3 * EXCLUDED.rate END,
    error = NULL, error_at = NULL
"""
RECORD_ALIVE = """
INSERT INTO embed_workers AS w (worker, model) VALUES (%(worker)s, %(model)s)
ON CONFLICT (worker) DO UPDATE SET model = EXCLUDED.model, seen_at = now()
"""
RECORD_ERROR = """
INSERT INTO embed_workers AS w (worker, model, error, error_at)
VALUES (%(worker)s, %(model)s, %(error)s, now())
ON CONFLICT (worker) DO UPDATE
SET model = EXCLUDED.model, seen_at = now(), error = EXCLUDED.error, error_at = now()
"""
RECORD_START = """
INSERT INTO embed_workers AS w (worker, model) VALUES (%(worker)s, %(model)s)
ON CONFLICT (worker) DO UPDATE
SET model = EXCLUDED.model, started_at = now(), seen_at = now(), embedded = 0, rate = NULL,
    error = NULL, error_at = NULL
"""
FORGET = "DELETE FROM embed_workers WHERE worker = %(worker)s"
# Workers heard from recently; one killed without saying goodbye drops out after WORKER_GONE.
LIVE_WORKERS = """
SELECT worker, model, embedded, rate, error, error_at
FROM embed_workers WHERE seen_at > now() - make_interval(secs => %(gone)s)
ORDER BY worker
"""
WORKER_GONE = 120.0

# Pauses after consecutive embedder failures: 1, 2, 4 ... seconds, at most a minute.
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 60.0
# An idle worker looks for new chunks this often (an ingestion in this process wakes it at once)
# and tells the others it is alive every HEARTBEAT seconds.
IDLE_POLL = 2.0
HEARTBEAT = 10.0


def worker_name(role: str) -> str:
    """``role@host:pid:thread``: unique per live worker, recognisable in ``rag stats``."""
    return f"{role}@{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


# Every owner's waiting chunks, counted up to a cap so that a scrape during a huge load stays cheap.
QUEUE_DEPTH = """
SELECT count(*) FROM (SELECT 1 FROM chunks WHERE embedding IS NULL LIMIT %(cap)s) AS waiting
"""


def queue_depth(db: Database, cap: int = 1_000_000) -> int:
    """Chunks waiting for a vector, in all owners (at most ``cap``): the /metrics gauge."""
    with db.connection() as conn:
        row = conn.execute(QUEUE_DEPTH, {"cap": cap}).fetchone()
        conn.commit()
    return int(row[0]) if row else 0


def queued(db: Database, owner_id: int) -> int:
    """The owner's chunks waiting for a vector (set aside ones too)."""
    with db.connection() as conn:
        row = conn.execute(QUEUED_OWNER, {"owner_id": owner_id}).fetchone()
        conn.commit()
    return int(row[0]) if row else 0


def claimable(db: Database, owner_id: int) -> int:
    """The owner's chunks waiting for a vector that a worker will still try."""
    with db.connection() as conn:
        row = conn.execute(QUEUED_OWNER, {"owner_id": owner_id}).fetchone()
        aside = embed_failures.set_aside(conn, owner_id)
        conn.commit()
    return max(int(row[0]) - aside, 0) if row else 0


class Connections(Protocol):
    """Where a batch gets its connection: the pool (``rag embed``) or the worker's own."""

    def connection(self) -> AbstractContextManager[psycopg.Connection]: ...


class OwnConnection:
    """One connection of the worker's own, outside the pool: a batch holds its connection while
    the model computes (seconds), which would take that connection from the requests."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._conn: psycopg.Connection | None = None

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        health = self.db.health
        if health is not None and not health.up:
            raise DatabaseUnavailable(f"the health probe finds {health.database_check()}")
        try:
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(
                    self.db.url, connect_timeout=5, application_name="rag-embed-worker"
                )
                register_vector(self._conn)
                self._conn.commit()
            yield self._conn
        except psycopg.OperationalError as e:
            self.close()
            raise DatabaseUnavailable(f"database unavailable: {' '.join(str(e).split())}") from e
        except BaseException:
            if self._conn is not None and not self._conn.closed:
                self._conn.rollback()  # the next batch starts clean
            raise

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None


# Attempts before a chunk whose embedding keeps failing is set aside (RAG_EMBED_MAX_ATTEMPTS).
MAX_ATTEMPTS = 5


def embed_batch(
    db: Connections,
    embedder: Embedder,
    *,
    limit: int,
    owner_id: int | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    failures: list[str] | None = None,
) -> int:
    """Claim, embed and write one batch in one transaction; the number of chunks embedded.

    When the embedder refuses the batch, its chunks are tried one at a time: those that embed
    are written, and each that fails has the attempt counted (rag.ingest.embed_failures) and its error
    appended to ``failures``, provided the embedder works otherwise.

    Raises:
        EmbedderError: the embedder itself failed; the batch stays queued, nothing counted.
    """
    with db.connection() as conn, conn.transaction():
        if owner_id is None:
            rows = conn.execute(CLAIM_OLDEST, {"limit": limit}).fetchall()
        else:
            rows = conn.execute(CLAIM_OWNER, {"owner_id": owner_id, "limit": limit}).fetchall()
        if not rows:
            return 0
        texts = [r[2] for r in rows]
        failed: dict[int, str] = {}
        try:
            vectors = dict(enumerate(embedder.embed(texts, kind="passage")))
        except Exception as e:  # a backend bug must not stop the worker for good
            error = embed_failures.describe(e)
            if len(rows) > 1:
                vectors, failed = embed_failures.embed_one_by_one(embedder, texts)
            else:
                vectors, failed = {}, {0: error}
            if not vectors and not embed_failures.embedder_works(embedder):
                raise EmbedderError(error) from e
            embed_failures.record(
                conn,
                [(rows[i][0], rows[i][1], why) for i, why in failed.items()],
                model=embedder.model_id,
                max_attempts=max_attempts,
            )
            if failures is not None:
                failures.extend(failed.values())
        if vectors:
            conn.execute(CREATE_STAGING)
            with conn.cursor() as cur, cur.copy(COPY_STAGING) as copy:
                copy.set_types(["bigint", "bigint", "vector"])
                for i, v in vectors.items():
                    copy.write_row((rows[i][0], rows[i][1], np.asarray(v, dtype=np.float32)))
            conn.execute(APPLY, {"model": embedder.model_id})
            conn.execute(embed_failures.FORGET_EMBEDDED)
    return len(vectors)


@dataclass
class DrainResult:
    embedded: int = 0
    error: str | None = None


def drain(
    db: Database,
    embedder: Embedder,
    owner_id: int,
    *,
    batch: int,
    progress: Callable[[int, int], None] | None = None,
    poll: float = 0.5,
    max_attempts: int = MAX_ATTEMPTS,
) -> DrainResult:
    """Embed the owner's queue until it is empty, alongside any other workers.

    Args:
        progress: called with (done, remaining) after every batch, counting chunks other
            workers embedded too.
        poll: how long to wait when every remaining chunk is held by another worker, or
            waits to be tried again after a failure.

    An embedder failure stops the drain: the result carries the error, the chunks stay queued.
    Chunks set aside (rag.ingest.embed_failures) do not count as remaining; the result names the
    latest of their errors.
    """
    result = DrainResult()
    name = worker_name("embed")
    _record(db, RECORD_START, name, embedder.model_id)
    with db.connection() as conn:
        ensure_vector_index(conn, embedder.model_id, embedder.dim)
        conn.commit()
    start = claimable(db, owner_id)
    try:
        while True:
            started = time.perf_counter()
            failures: list[str] = []
            try:
                n = embed_batch(
                    db,
                    embedder,
                    limit=batch,
                    owner_id=owner_id,
                    max_attempts=max_attempts,
                    failures=failures,
                )
            except EmbedderError as e:
                result.error = str(e)
                _record(db, RECORD_ERROR, name, embedder.model_id, error=result.error)
                return result
            result.embedded += n
            if failures:
                result.error = failures[-1]
            if n:
                rate = n / max(time.perf_counter() - started, 1e-6)
                _record(db, RECORD_BATCH, name, embedder.model_id, n=n, rate=rate)
            remaining = claimable(db, owner_id)
            if progress:
                progress(max(start - remaining, 0), remaining)
            if remaining == 0:
                return result
            if n == 0 and not failures:  # held by another worker, or waiting for a retry
                time.sleep(poll)
    finally:
        _record(db, FORGET, name, embedder.model_id)


class EmbedWorker:
    """A thread that keeps filling the queue, oldest chunk first, for every owner."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        *,
        batch: int,
        role: str = "serve",
        idle_poll: float = IDLE_POLL,
        first_backoff: float = FIRST_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        max_attempts: int = MAX_ATTEMPTS,
        nice: int = 0,
    ) -> None:
        self.db = db
        self.nice = nice  # niceness of the worker thread above the process's (Linux)
        self.max_attempts = max_attempts
        self.embedder = embedder
        self.batch = max(1, batch)
        self.role = role
        self.idle_poll = idle_poll
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.embedded = 0
        self.last_error: str | None = None
        self.name = ""
        self._own = OwnConnection(db)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"rag-{self.role}-embed", daemon=True
        )
        self._thread.start()

    def wake(self) -> None:
        """New chunks are queued: look now instead of at the next poll."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the batch in hand (or drop it, queued, if the process dies first) and stop."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        if self.nice:
            lower_thread_priority(self.nice)
        try:
            self._loop()
        finally:
            self._own.close()

    def _loop(self) -> None:
        self.name = worker_name(self.role)
        backoff = self.first_backoff
        last_seen = 0.0
        self._record_quietly(RECORD_START)
        while not self._stop.is_set():
            started = time.perf_counter()
            failures: list[str] = []
            try:
                n = embed_batch(
                    self._own,
                    self.embedder,
                    limit=self.batch,
                    max_attempts=self.max_attempts,
                    failures=failures,
                )
            except EmbedderError as e:
                self.last_error = str(e)
                log.warning("embedding failed, chunks stay queued; retry in %.0f s: %s", backoff, e)
                self._record_quietly(RECORD_ERROR, error=self.last_error)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff)
                continue
            except (psycopg.Error, DatabaseError) as e:  # a restart, a busy pool: try later
                log.warning("embedding worker: database error, retry in %.0f s: %s", backoff, e)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff)
                continue
            backoff = self.first_backoff
            if failures:  # the embedder works; these chunks wait apart, the queue goes on
                log.warning(
                    "%d chunks failed to embed, tried again later: %s", len(failures), failures[-1]
                )
                continue
            if n:
                self.embedded += n
                self.last_error = None
                rate = n / max(time.perf_counter() - started, 1e-6)
                self._record_quietly(RECORD_BATCH, n=n, rate=rate)
                last_seen = time.monotonic()
                continue
            if time.monotonic() - last_seen > HEARTBEAT:
                self._record_quietly(RECORD_ALIVE)
                last_seen = time.monotonic()
            self._wake.wait(self.idle_poll)
            self._wake.clear()
        self._record_quietly(FORGET)

    def _record_quietly(self, statement: str, **params: object) -> None:
        try:
            _record(self._own, statement, self.name, self.embedder.model_id, **params)
        except (psycopg.Error, DatabaseError) as e:  # informative only; never stop for it
            log.info("embedding worker state not recorded: %s", e)


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """An owner's chunks by meaning: how many have a vector of the model, how fast the rest come."""

    model: str | None
    embedded: int
    total: int
    waiting: int
    workers: int
    rate: float | None
    eta_seconds: int | None
    error: str | None
    # chunks whose embedding kept failing, no longer tried (rag embed --retry-failed)
    set_aside: int = 0
    # chunks that failed and wait to be tried again
    retrying: int = 0
    # the latest error of a chunk of the owner that failed to embed
    chunk_error: str | None = None


def embedding_status(
    conn: psycopg.Connection,
    model: str | None,
    chunks: int,
    models: dict[str, int],
    owner_id: int | None = None,
) -> EmbeddingStatus:
    """The owner's progress by meaning, for ``rag stats`` and ``/v1/stats``.

    Args:
        model: the configured embedding model (None: full text only).
        chunks: the owner's chunks; models: the owner's chunks per embedding model.
        owner_id: the owner, for its chunks that failed to embed (None: not counted).

    ``rate`` is the chunks per second of the live workers of ``model`` together, and
    ``eta_seconds`` the owner's queue at that rate (other owners' older chunks go first).
    """
    embedded = models.get(model, 0) if model else 0
    rows = conn.execute(LIVE_WORKERS, {"gone": WORKER_GONE}).fetchall()
    live = [r for r in rows if r[1] == model]
    rate = sum(float(r[3]) for r in live if r[3] is not None)
    failing = [r for r in live if r[4]]
    waiting = chunks - embedded
    aside, retrying, chunk_error = (
        embed_failures.summary(conn, owner_id) if owner_id is not None else (0, 0, None)
    )
    left = waiting - aside
    return EmbeddingStatus(
        model=model,
        embedded=embedded,
        total=chunks,
        waiting=waiting,
        workers=len(live),
        rate=round(rate, 2) if live else None,
        eta_seconds=round(left / rate) if left > 0 and rate > 0 and not failing else None,
        error=failing[0][4] if failing else None,
        set_aside=aside,
        retrying=retrying,
        chunk_error=chunk_error,
    )


def _record(db: Connections, statement: str, worker: str, model: str, **params: object) -> None:
    with db.connection() as conn:
        conn.execute(statement, {"worker": worker, "model": model, **params})
        conn.commit()
