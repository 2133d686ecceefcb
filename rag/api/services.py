"""What the HTTP handlers share: settings, the database, the models, per-caller views of them."""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Iterable
from typing import Any

from rag import metrics
from rag.answer.engine import AnswerWriter, Engine
from rag.api.auth import Caller, OwnerDatabase, authenticate
from rag.db import Database, migrate, migrations, restart_embedded
from rag.db_health import HealthMonitor
from rag.embedders import Embedder
from rag.ingest import bulk_load
from rag.ingest.analysis_queue import AnalysisWorker
from rag.ingest.embed_queue import EmbedWorker, queue_depth
from rag.ingest.loaders import LoadedDocument, LoadFailure
from rag.ingest.writer import Ingestor, IngestSummary
from rag.language.diacritics import DICTIONARY_LANGS, dictionary_spellings
from rag.language.lemmas import SUPPORTED_LANGS, load_dictionaries
from rag.search.prewarm import prewarm_logged
from rag.search.rerank import Reranker
from rag.search.thresholds import Thresholds
from rag.settings import Settings
from rag.store import DEFAULT_OWNER, ensure_owner, ensure_vector_index

log = logging.getLogger(__name__)


def settle_collector(threshold: int, *, freeze: bool) -> None:
    """Python's cyclic collector set for a long-running search process.

    A search decodes its candidates' stored analyses into thousands of frozensets and tuples of
    keys that live until it ends and die by reference counting. At Python's first-generation
    threshold (700 new containers) the collector ran about 265 times per 200 searches at 100,000
    chunks, each time walking the live sets' keys, and its oldest generation walked everything
    the process had loaded: about 1.7 ms a search (docs/performance.md). A larger threshold lets
    a search's objects die before the collector sees them; freezing moves what start-up loaded
    (the lemma dictionaries, the model) out of every later collection.

    Args:
        threshold: new container objects between first-generation collections; 0 leaves the
            collector as Python set it.
        freeze: also freeze every object tracked now (call it once start-up has loaded).
    """
    if threshold <= 0:
        return
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(threshold, middle, oldest)
    if freeze:
        gc.freeze()


class Services:
    """The service's shared state; built by create_app, opened on startup.

    A plain class, not a dataclass: Litestar would try to validate a dataclass dependency field
    by field.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: Embedder | None,
        llm: AnswerWriter | None,
        reranker: Reranker | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.llm = llm
        self.reranker = reranker
        self.db: Database | None = None
        self.monitor: HealthMonitor | None = None
        self.params: Thresholds | None = None
        self.owns_db = False
        # "none" (no embedder), "loading", "ready" or "failed: <why>"
        self.embedder_state = "loading"
        self._default_owner_id: int | None = None
        self._lock = threading.Lock()
        self.workers: list[EmbedWorker] = []
        self.analysis_worker: AnalysisWorker | None = None

    def open(self, db: Database | None) -> None:
        """Connect (migrating on the way), make the vector index, pick the filter thresholds.

        Runs once at startup, in a worker thread.
        """
        if db is None:
            self.db, self.owns_db = Database(self.settings), True  # migrates
        else:
            self.db = db
            migrate(db.url)  # quick when nothing is pending
        embedded = self.settings.database_url is None
        data_dir = self.settings.data_dir
        self.monitor = HealthMonitor(
            self.db.url,
            restart=(lambda: restart_embedded(data_dir)) if embedded else None,
            on_recovery=self.db.recover,
        ).start()
        self.db.health = self.monitor
        # rag_service may not create indexes (that takes the table's owner), so the model's
        # index is made now, before any request ingests under that role.
        with self.db.connection() as conn:
            if self.embedder is not None:
                ensure_vector_index(conn, self.embedder.model_id, self.embedder.dim)
            # an interrupted bulk load's indexes (rag.ingest.bulk_load)
            bulk_load.rebuild(conn)
            conn.commit()
        self.params = Engine(
            self.db, self.settings, self.embedder, reranker=self.reranker
        ).thresholds
        metrics.watch_pool(id(self), self._pool_stats)
        metrics.watch_queue(id(self), self._queue_depth)
        if self.settings.prewarm_buffers:
            threading.Thread(
                target=prewarm_logged, args=(self.db,), name="rag-prewarm", daemon=True
            ).start()
        if self.settings.warm_dictionaries:
            threading.Thread(
                target=self._warm_dictionaries, name="rag-warm-dictionaries", daemon=True
            ).start()
        else:
            settle_collector(self.settings.gc_threshold, freeze=True)
        if self.settings.analysis_worker:
            # chunks ingested without their sentence analysis, or analysed by older rules
            self.analysis_worker = AnalysisWorker(
                self.db,
                batch=self.settings.analysis_worker_batch,
                nice=self.settings.embed_worker_nice,
            )
            self.analysis_worker.start()
        if self.embedder is None:
            self.embedder_state = "none"
        else:
            threading.Thread(target=self._warm_up, name="rag-warm-up", daemon=True).start()
            if self.settings.embed_worker:
                for _ in range(max(1, self.settings.embed_workers)):
                    worker = EmbedWorker(
                        self.db,
                        self.embedder,
                        batch=self.settings.embed_worker_batch,
                        max_attempts=self.settings.embed_max_attempts,
                        nice=self.settings.embed_worker_nice,
                    )
                    worker.start()
                    self.workers.append(worker)

    def _warm_dictionaries(self) -> None:
        # Questions of a Czech owner name German, Polish or English things ("Bühler", "Challenger
        # i Columbie"), and telling their language apart may need that language's dictionary:
        # loaded on demand it stalls the question that needs it for seconds. Loaded now, the
        # stall is the start's; the memory is what a service holds after a few hundred
        # questions anyway.
        try:
            load_dictionaries(SUPPORTED_LANGS)
            for lang in DICTIONARY_LANGS:  # the spellings of questions typed without diacritics
                dictionary_spellings(lang)
        except Exception as e:  # noqa: BLE001 - they load on demand instead
            log.warning("lemma dictionaries not loaded at start: %s", e)
        # what start-up loaded stays for the process's life: out of the collector's way
        settle_collector(self.settings.gc_threshold, freeze=True)

    def _warm_up(self) -> None:
        # The first embedding loads the model; doing it now keeps it out of the first request.
        assert self.embedder is not None
        try:
            self.embedder.embed(["warm-up"], kind="query")
            self.embedder_state = "ready"
        except Exception as e:  # noqa: BLE001 - any failure is reported by /readyz
            log.error("embedder failed to load: %s", e)
            self.embedder_state = f"failed: {' '.join(str(e).split())[:200]}"

    def _pool_stats(self) -> dict[str, int] | None:
        # read through self.db at each scrape: the database may have been reopened meanwhile
        return self.db.pool.get_stats() if self.db is not None else None

    def _queue_depth(self) -> int | None:
        # a scrape must not fail, nor wait long, because the database is down
        if self.db is None or (self.db.health is not None and not self.db.health.up):
            return None
        try:
            return queue_depth(self.db)
        except Exception:  # noqa: BLE001 - the gauge is left out of this scrape
            return None

    def close(self) -> None:
        metrics.unwatch_pool(id(self))
        for worker in self.workers:
            worker.stop()
        if self.analysis_worker is not None:
            self.analysis_worker.stop()
        if self.monitor is not None:
            self.monitor.stop()
            if self.db is not None:
                self.db.health = None
        if self.owns_db and self.db is not None:
            self.db.close()

    @property
    def database(self) -> Database:
        if self.db is None:
            raise RuntimeError("the service has not started")
        return self.db

    def authenticate(self, token: str | None) -> Caller:
        """The caller of a request bearing ``token`` (None: no Authorization header)."""
        return authenticate(self.database, token, self.default_owner_id)

    def default_owner_id(self) -> int:
        """The single owner of a service without keys; created on first use."""
        with self._lock:
            if self._default_owner_id is None:
                with self.database.connection() as conn:
                    self._default_owner_id = ensure_owner(conn, DEFAULT_OWNER)
                    conn.commit()
            return self._default_owner_id

    def scoped(self, caller: Caller) -> OwnerDatabase:
        """The database as the caller's owner sees it under row-level security."""
        return OwnerDatabase(self.database, caller.owner_id)

    def engine(self, caller: Caller) -> Engine:
        """The answering pipeline, confined to the caller's owner."""
        return Engine(
            self.scoped(caller),
            self.settings,
            self.embedder,
            self.llm,
            params=self.params,
            reranker=self.reranker,
        )

    def ingest(
        self, caller: Caller, items: Iterable[LoadedDocument | LoadFailure]
    ) -> IngestSummary:
        """Ingest documents for the caller, under row-level security."""
        # rag_service creates no owners and no indexes: the caller's owner exists already and
        # the model's index was made in open().
        ingestor = Ingestor(
            self.scoped(caller),
            self.settings,
            self.embedder,
            caller.owner,
            owner_id=caller.owner_id,
            ensure_index=False,
        )
        summary = ingestor.add_all(items)
        if summary.unembedded:
            for worker in self.workers:
                worker.wake()
        return summary

    def readiness(self) -> dict[str, Any]:
        """The checks of /readyz: database reachable, migrations applied, embedder loaded.

        Read from the health monitor's last probe: it never waits for the database or the pool.
        A busy pool is load, not unreadiness (those requests get a 503 with Retry-After).
        """
        checks: dict[str, Any] = {}
        if self.monitor is None:
            checks["database"], checks["migrations"] = "unavailable: starting", "unknown"
        else:
            checks["database"] = self.monitor.database_check()
            applied = self.monitor.health.applied
            missing = [
                f"{m.version:03d}_{m.name}" for m in migrations() if m.version not in applied
            ]
            if checks["database"] != "ok":
                checks["migrations"] = "unknown"
            else:
                checks["migrations"] = "ok" if not missing else "pending: " + ", ".join(missing)
        checks["embedder"] = (
            "ok" if self.embedder_state in ("ready", "none") else self.embedder_state
        )
        return checks
