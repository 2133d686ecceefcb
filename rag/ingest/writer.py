"""Documents → chunks → word keys + vectors → PostgreSQL, one atomic transaction per batch.

A document whose content hash is unchanged is skipped before any chunking or embedding. A changed
one has its chunks deleted and the new ones inserted in the same transaction, so a reader sees
either the old version or the new one, never both or neither. Chunks reach the table through
one ``COPY`` per batch; the statement triggers of sql/001 keep the word statistics exact in that
same transaction.

By default (``embed_now=False``, what ``rag ingest`` and ``POST /v1/documents`` do) nothing is
embedded here: the chunks are committed without vectors, searchable by words at once, and wait in
the embedding queue (rag.ingest.embed_queue) for ``rag serve``'s worker or ``rag embed``. With
``embed_now`` the vectors are computed before the transaction opens, so a slow model never holds
locks; when the embedder fails, the document is stored anyway with its chunks queued.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import psycopg

from rag.db import Database, extend_statement_timeout
from rag.embedders import Embedder
from rag.errors import CorruptInput, DatabaseUnavailable, RagError
from rag.ingest import bulk_load
from rag.ingest.analysis_queue import store_ingested
from rag.ingest.chunk_copy import copy_chunks
from rag.ingest.loaders import LoadedDocument, LoadFailure
from rag.ingest.prepare import (
    PreparedDocument,
    embed_chunks,
    prepare_or_error,
)
from rag.ingest.supersedes import supersede_rings, supersedes_of
from rag.ingest.worker_processes import worker_start
from rag.settings import Settings
from rag.store import ensure_owner, ensure_vector_index

log = logging.getLogger(__name__)

# Chunks per transaction: large enough for COPY to pay, small enough to stay short.
BATCH_CHUNKS = 4000
# One document's chunks are written at once, however many: a write's statements may run this long
# per chunk beyond RAG_STATEMENT_TIMEOUT (a 13 MB text of 14,600 chunks took 35 s under
# checkpoints, 2.4 ms a chunk, and hit the 30 s bound with a 503)
WRITE_SECONDS_PER_CHUNK = 0.01
MAX_DOCUMENTS_PER_BATCH = 500
# Documents handed to worker processes ahead of the writer: enough text that the workers keep
# chunking while this process writes a whole batch, bounded so a folder of large files cannot
# hold them all in memory at once.
IN_FLIGHT_CHARS = 32_000_000
IN_FLIGHT_DOCUMENTS = 2 * MAX_DOCUMENTS_PER_BATCH

LOCK_OWNER = "SELECT pg_advisory_xact_lock(721653, (%(owner_id)s::bigint %% 2147483647)::int)"
# A writer waits this long for another writer of the same owner, then gives up (a 503 over
# HTTP) instead of holding a pooled connection while it waits. A session whose client stops
# talking mid-transaction is ended by the server, so a lost client cannot keep the lock.
WRITE_TIMEOUTS = """
SELECT set_config('lock_timeout', %(lock_ms)s, true),
       set_config('idle_in_transaction_session_timeout', '60s', true)
"""
EXISTING = """
SELECT source_id, document_id, content_hash FROM documents
WHERE owner_id = %(owner_id)s AND source_id = ANY(%(source_ids)s)
"""
EXISTING_FOR_UPDATE = EXISTING + " FOR UPDATE"
# The vectors of a changed document's stored chunks, by text: a chunk whose text did not change
# keeps its vector (the model embeds the chunk's text alone, so it is the same vector).
STORED_VECTORS = """
SELECT c.document_id, c.text, c.embedding FROM chunks c
WHERE c.owner_id = %(owner_id)s AND c.document_id = ANY(%(ids)s)
  AND c.embed_model = %(model)s AND c.embedding IS NOT NULL
"""
DELETE_CHUNKS = "DELETE FROM chunks WHERE owner_id = %(owner_id)s AND document_id = ANY(%(ids)s)"
UPDATE_DOCUMENT = """
UPDATE documents SET title = %(title)s, lang = %(lang)s, content_hash = %(hash)s,
       metadata = %(metadata)s, char_count = %(char_count)s, updated_at = now()
WHERE owner_id = %(owner_id)s AND document_id = %(document_id)s
"""
INSERT_DOCUMENTS = """
INSERT INTO documents (owner_id, source_id, title, lang, content_hash, metadata, char_count)
SELECT %(owner_id)s, s, t, l, h, m::jsonb, c
FROM unnest(%(source_ids)s::text[], %(titles)s::text[], %(langs)s::text[], %(hashes)s::bytea[],
            %(metadata)s::text[], %(char_counts)s::integer[]) AS u(s, t, l, h, m, c)
RETURNING source_id, document_id
"""


@dataclass
class IngestSummary:
    """What one ingestion did; ``--json`` prints it."""

    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    unembedded: int = 0
    vectors_kept: int = 0  # new chunks given the vector of a stored chunk of the same text
    seconds: float = 0.0
    failures: list[dict[str, str]] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    documents: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "failed": self.failed,
            "chunks": self.chunks,
            "unembedded": self.unembedded,
            "vectors_kept": self.vectors_kept,
            "seconds": round(self.seconds, 3),
            "failures": self.failures,
            "degraded": self.degraded,
            "documents": self.documents,
        }


class Ingestor:
    """Feeds documents to the database in batches; collects an :class:`IngestSummary`."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        embedder: Embedder | None,
        owner: str,
        *,
        owner_id: int | None = None,
        ensure_index: bool = True,
        on_document: Callable[[], None] | None = None,
        embed_now: bool = False,
        bulk_after: int = 0,
    ) -> None:
        """Args:
        embedder: the model whose HNSW index the chunks will need (and, with ``embed_now``,
            the one that embeds them here); None: full text only.
        owner_id: the owner's id when the caller already knows it (the service, which
            writes under row-level security as a role that may not create owners).
        ensure_index: create the embedding model's HNSW index if missing; the service
            creates it once at start, as a role that may.
        embed_now: embed before writing instead of leaving the chunks queued.
        bulk_after: once this run has written this many chunks (0: never), go on in bulk mode
            if the run is most of the table (rag.ingest.bulk_load): the GIN indexes are dropped and
            built again when the run ends.
        """
        self.db = db
        self.settings = settings
        self.embedder = embedder
        self.embed_now = embed_now
        self.bulk_after = bulk_after
        self.bulk = False
        self.bulk_used = False  # whether this run went on in bulk mode at some point
        self._bulk_session = ExitStack()
        self._bulk_conn: psycopg.Connection | None = None
        self.owner = owner
        self.summary = IngestSummary()
        self._pending: list[PreparedDocument] = []
        self._pending_chunks = 0
        self._on_document = on_document
        self._index_ready = not ensure_index
        if owner_id is not None:
            self.owner_id = owner_id
        else:
            with db.connection() as conn:
                self.owner_id = ensure_owner(conn, owner)
                conn.commit()
                # an earlier bulk load that was killed left indexes to build
                bulk_load.rebuild(conn)
                conn.commit()

    def add(self, item: LoadedDocument | LoadFailure) -> None:
        """Queue one loaded document (or record a load failure); flushes full batches."""
        if isinstance(item, LoadFailure):
            self._fail(item.origin, item.error)
            return
        self._enqueue(prepare_or_error(item, self.settings))

    def _enqueue(self, prepared: PreparedDocument | tuple[str, RagError]) -> None:
        if isinstance(prepared, tuple):
            self._fail(*prepared)
            return
        self._pending.append(prepared)
        self._pending_chunks += len(prepared.chunks)
        if self._pending_chunks >= BATCH_CHUNKS or len(self._pending) >= MAX_DOCUMENTS_PER_BATCH:
            self.flush()

    def add_all(
        self, items: Iterable[LoadedDocument | LoadFailure], *, workers: int = 1
    ) -> IngestSummary:
        """Ingest every item; with ``workers`` > 1, chunking and keys run in worker processes
        while this process writes the previous batch."""
        started = time.perf_counter()
        try:
            if workers > 1:
                self._add_parallel(items, workers)
            else:
                for item in items:
                    self.add(item)
            self.flush()
        finally:
            if self.bulk:
                self._end_bulk(workers)
        if self.summary.chunks >= 1000:
            self._merge_pending_lists()
        self.summary.seconds += time.perf_counter() - started
        return self.summary

    def _maybe_start_bulk(self) -> None:
        if self.bulk or not self.bulk_after or self.summary.chunks < self.bulk_after:
            return
        self.bulk_after = 0  # decided once per run
        # one session from the DROP to the end of the build: it holds the bulk lock
        conn = self._bulk_session.enter_context(self.db.connection())
        if bulk_load.worth_it(conn, self.summary.chunks) and (
            dropped := bulk_load.drop(conn, self.owner_id)
        ):
            log.info("bulk mode: %s dropped until the load ends", ", ".join(dropped))
            self.bulk, self.bulk_used, self._bulk_conn = True, True, conn
        else:
            conn.commit()
            self._bulk_session.close()

    def _end_bulk(self, workers: int) -> None:
        assert self._bulk_conn is not None
        try:
            bulk_load.finish(self._bulk_conn, parallel_workers=max(0, workers - 1))
        finally:
            self.bulk, self._bulk_conn = False, None
            self._bulk_session.close()

    def _merge_pending_lists(self) -> None:
        """Merge the GIN pending lists now, so the first searches after a bulk load stay fast."""
        try:
            with self.db.connection() as conn:
                conn.execute("SELECT rag_merge_pending_lists()")  # sql/010: also as rag_service
                conn.commit()
        except psycopg.Error as e:  # autovacuum merges them later anyway
            log.info("could not merge GIN pending lists: %s", e)

    def _add_parallel(self, items: Iterable[LoadedDocument | LoadFailure], workers: int) -> None:
        in_flight: deque[tuple[int, Future[PreparedDocument | tuple[str, RagError]]]] = deque()
        chars = 0
        # fork: workers inherit the loaded dictionaries and caches instead of reloading them
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=worker_start, initargs=(os.getpid(),)
        ) as pool:
            for item in items:
                if isinstance(item, LoadFailure):
                    self._fail(item.origin, item.error)
                    continue
                in_flight.append(
                    (len(item.text), pool.submit(prepare_or_error, item, self.settings))
                )
                chars += len(item.text)
                while in_flight and (
                    chars > IN_FLIGHT_CHARS or len(in_flight) > IN_FLIGHT_DOCUMENTS
                ):
                    size, future = in_flight.popleft()
                    chars -= size
                    self._enqueue(future.result())
            while in_flight:
                self._enqueue(in_flight.popleft()[1].result())

    def _fail(self, origin: str, error: Exception) -> None:
        self._record_failure(origin, error)
        if self._on_document:
            self._on_document()

    def _record_failure(self, origin: str, error: Exception) -> None:
        self.summary.failed += 1
        message = str(error)
        if not message.startswith(origin):
            message = f"{origin}: {message}"
        self.summary.failures.append({"origin": origin, "error": message})

    def _without_rings(
        self, conn: psycopg.Connection, docs: list[PreparedDocument]
    ) -> list[PreparedDocument]:
        """``docs`` less those whose ``supersedes`` would close a ring, each refused by name.

        A refused document keeps its stored version, whose own ``supersedes`` may close a ring
        with the rest: asked again until none does.
        """
        while rings := supersede_rings(
            conn,
            self.owner_id,
            {p.doc.source_id: supersedes_of(p.doc.metadata) for p in docs},
        ):
            for p in docs:
                if (ring := rings.get(p.doc.source_id)) is not None:
                    names = " -> ".join(repr(s) for s in [*ring, ring[0]])
                    self._record_failure(
                        p.doc.origin,
                        CorruptInput(
                            f"metadata.supersedes would make a cycle ({names}) that hides "
                            "every document in it"
                        ),
                    )
            docs = [p for p in docs if p.doc.source_id not in rings]
        return docs

    def flush(self) -> None:
        """Write the queued documents in one transaction."""
        if not self._pending:
            return
        batch, self._pending, self._pending_chunks = self._pending, [], 0
        with self.db.connection() as conn:
            rows = conn.execute(
                EXISTING,
                {"owner_id": self.owner_id, "source_ids": [p.doc.source_id for p in batch]},
            ).fetchall()
            known = {sid: bytes(h) for sid, _, h in rows}
            # Later duplicates of a source_id in one batch win, as they would across batches.
            latest: dict[str, PreparedDocument] = {p.doc.source_id: p for p in batch}
            changed = [p for p in latest.values() if known.get(p.doc.source_id) != p.content_hash]
            self._carry_vectors(conn, changed, {sid: int(did) for sid, did, _ in rows})
            conn.commit()
        unchanged = len(latest) - len(changed)
        todo = [c for p in changed for c in p.chunks if c.embedding is None]
        if self.embedder is not None and self.embed_now and todo:
            reason = embed_chunks(todo, self.embedder, self.settings.embed_batch)
            if reason and reason not in self.summary.degraded:
                log.warning("embedding failed, chunks stay unembedded: %s", reason)
                self.summary.degraded.append(f"embedder: {reason}")
        with self.db.connection() as conn:
            self._write(conn, changed)
        self.summary.unchanged += unchanged
        self._maybe_start_bulk()
        if self._on_document:
            for _ in batch:
                self._on_document()

    def _carry_vectors(
        self, conn: psycopg.Connection, changed: list[PreparedDocument], ids: dict[str, int]
    ) -> None:
        """Give a changed document's new chunks the vectors of its stored chunks of the same
        text (the embedder's model), so an edit or a re-chunking re-embeds only what changed.

        Read before the write's lock: a vector belongs to a text, whatever version of the
        document the text came from, so a concurrent writer cannot make it wrong.
        """
        if self.embedder is None:
            return
        stored = [ids[p.doc.source_id] for p in changed if p.doc.source_id in ids]
        if not stored:
            return
        vectors: dict[tuple[int, str], np.ndarray] = {}
        for did, text, embedding in conn.execute(
            STORED_VECTORS,
            {"owner_id": self.owner_id, "ids": stored, "model": self.embedder.model_id},
        ):
            # the column is untyped (several models' vectors), so pgvector hands back a Vector
            found = embedding.to_numpy() if hasattr(embedding, "to_numpy") else embedding
            vector = np.asarray(found, dtype=np.float32)
            if vector.shape == (self.embedder.dim,):
                vectors[(int(did), text)] = vector
        for p in changed:
            did = ids.get(p.doc.source_id)
            for c in p.chunks:
                kept = vectors.get((did, c.text)) if did is not None else None
                if kept is not None and c.embedding is None:
                    c.embedding = kept
                    self.summary.vectors_kept += 1

    @contextmanager
    def _owner_lock(self, conn: psycopg.Connection) -> Iterator[None]:
        """A transaction holding the owner's write lock, waited for ``write_lock_timeout`` at most.

        Raises:
            DatabaseUnavailable: another writer of the owner held the lock all that time.
        """
        with conn.transaction():
            lock_ms = str(max(1, int(self.settings.write_lock_timeout * 1000)))
            try:
                conn.execute(WRITE_TIMEOUTS, {"lock_ms": lock_ms})
                conn.execute(LOCK_OWNER, {"owner_id": self.owner_id})
            except psycopg.errors.LockNotAvailable:
                raise DatabaseUnavailable(
                    f"another write to owner {self.owner!r} held its lock for over "
                    f"{self.settings.write_lock_timeout:g} s; retry shortly"
                ) from None
            yield

    def _write(self, conn: psycopg.Connection, docs: list[PreparedDocument]) -> None:
        if not docs:
            return
        model = self.embedder.model_id if self.embedder else None
        with self._owner_lock(conn):
            chunks = sum(len(p.chunks) for p in docs)
            extend_statement_timeout(
                conn, self.settings.statement_timeout + chunks * WRITE_SECONDS_PER_CHUNK
            )
            # Let the GIN indexes collect a whole batch in their pending lists and merge it in
            # one sorted pass, instead of flushing every few hundred chunks.
            conn.execute("SET LOCAL gin_pending_list_limit = '64MB'")
            if self.embedder is not None and not self._index_ready:
                ensure_vector_index(conn, self.embedder.model_id, self.embedder.dim)
                self._index_ready = True
            rows = conn.execute(
                EXISTING_FOR_UPDATE,
                {"owner_id": self.owner_id, "source_ids": [p.doc.source_id for p in docs]},
            ).fetchall()
            existing = {sid: (int(did), bytes(h)) for sid, did, h in rows}
            changed = [
                p for p in docs if existing.get(p.doc.source_id, (0, b""))[1] != p.content_hash
            ]
            fresh = self._without_rings(conn, changed)
            replaced = [p for p in fresh if p.doc.source_id in existing]
            added = [p for p in fresh if p.doc.source_id not in existing]
            ids: dict[str, int] = {}
            if replaced:
                conn.execute(
                    DELETE_CHUNKS,
                    {
                        "owner_id": self.owner_id,
                        "ids": [existing[p.doc.source_id][0] for p in replaced],
                    },
                )
                for p in replaced:
                    did = existing[p.doc.source_id][0]
                    ids[p.doc.source_id] = did
                    conn.execute(
                        UPDATE_DOCUMENT,
                        {
                            "owner_id": self.owner_id,
                            "document_id": did,
                            "title": p.doc.title,
                            "lang": p.lang,
                            "hash": p.content_hash,
                            "metadata": json.dumps(p.doc.metadata, ensure_ascii=False, default=str),
                            "char_count": len(p.doc.text),
                        },
                    )
            if added:
                cur = conn.execute(
                    INSERT_DOCUMENTS,
                    {
                        "owner_id": self.owner_id,
                        "source_ids": [p.doc.source_id for p in added],
                        "titles": [p.doc.title for p in added],
                        "langs": [p.lang for p in added],
                        "hashes": [p.content_hash for p in added],
                        "metadata": [
                            json.dumps(p.doc.metadata, ensure_ascii=False, default=str)
                            for p in added
                        ],
                        "char_counts": [len(p.doc.text) for p in added],
                    },
                )
                ids.update({sid: int(did) for sid, did in cur.fetchall()})
            unembedded = copy_chunks(conn, self.owner_id, fresh, ids, model)
            store_ingested(conn, self.owner_id, fresh, ids)
        self.summary.added += len(added)
        self.summary.replaced += len(replaced)
        self.summary.unchanged += len(docs) - len(changed)
        self.summary.chunks += sum(len(p.chunks) for p in fresh)
        self.summary.unembedded += unembedded
        for p in fresh:
            self.summary.documents.append(
                {
                    "source_id": p.doc.source_id,
                    "document_id": ids[p.doc.source_id],
                    "chunks": len(p.chunks),
                    "status": "replaced" if p in replaced else "added",
                }
            )
