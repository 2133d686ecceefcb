"""The database's health as the service sees it: probed in the background, read without waiting.

A :class:`HealthMonitor` thread probes PostgreSQL once a second (four times a second while it
is down) on a connection of its own (never
a pooled one, so an exhausted pool cannot hide the server's state, nor a dead server stall the
probe's readers). ``/readyz`` reads the last result, so it answers at once whatever the database
does, and :class:`~rag.db.Database` refuses connections at once while the server is known to be
down instead of letting every request wait out the pool timeout.

With the embedded server the monitor also heals: when the postmaster is gone it starts it again,
with backoff (1, 2, 4 ... 30 s between attempts), logging each attempt. When the server answers
again, broken pooled connections are replaced, so requests succeed without a restart of the
service; with DATABASE_URL the same happens as soon as that server is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from rag.db import BoundedConnection, applied_versions

log = logging.getLogger(__name__)

PROBE_INTERVAL = 1.0
CONNECT_TIMEOUT = 2  # libpq's minimum
PROBE_WAIT = 2.0  # seconds the probe's query waits for an answer
# A probe result older than this is no longer believed: the probe itself is stuck.
STALE_AFTER = 5.0
RESTART_BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# Down this long although the monitor has been restarting it: the service cannot heal itself.
GIVE_UP_AFTER = 120.0


@dataclass
class Health:
    """One probe's outcome."""

    database: str = "unknown"  # "ok" or "unavailable: <why>"
    applied: frozenset[int] = frozenset()
    checked_at: float = 0.0  # time.monotonic()
    down_since: float | None = None
    restarts: int = 0
    notes: list[str] = field(default_factory=list)


class HealthMonitor:
    """Probes one database URL in a daemon thread; optionally restarts the embedded server."""

    def __init__(
        self,
        url: str,
        *,
        restart: Callable[[], bool] | None = None,
        on_recovery: Callable[[], None] | None = None,
        interval: float = PROBE_INTERVAL,
    ) -> None:
        """Args:
        url: the database to probe.
        restart: starts the embedded server when it is not running; returns whether it
            started anything (None: an external server, which the service cannot start).
        on_recovery: called once the database answers again after an outage.
        """
        self.url = url
        self.restart = restart
        self.on_recovery = on_recovery
        self.interval = interval
        self.health = Health()
        self._stop = threading.Event()
        self._conn: psycopg.Connection | None = None
        self._next_restart = 0.0
        self._attempt = 0
        self._thread = threading.Thread(target=self._run, name="rag-db-health", daemon=True)

    def start(self) -> HealthMonitor:
        self.probe()  # the first result before anyone asks
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._close()

    # --- what readers see ----------------------------------------------------------------------

    @property
    def up(self) -> bool:
        """Whether connections are worth trying: the last probe succeeded, or nothing is known.

        A probe that has not come back for ``STALE_AFTER`` is a server that does not answer (each
        probe gives up after ``PROBE_WAIT``): as /readyz says, it is down.
        """
        h = self.health
        fresh = not h.checked_at or time.monotonic() - h.checked_at <= STALE_AFTER
        return h.database in ("ok", "unknown") and fresh

    def database_check(self) -> str:
        """The ``database`` check of /readyz."""
        h = self.health
        age = time.monotonic() - h.checked_at
        if h.checked_at and age > STALE_AFTER:
            return f"unavailable: no answer to the health probe for {age:.0f} s"
        return h.database

    @property
    def gave_up(self) -> bool:
        """Down for longer than self-healing should take: /healthz reports the process unwell."""
        since = self.health.down_since
        return since is not None and time.monotonic() - since > GIVE_UP_AFTER

    # --- the probe -----------------------------------------------------------------------------

    def _run(self) -> None:
        # While the server is down it is probed four times as often, so that requests are let
        # through again within a quarter of a second of it answering.
        while not self._stop.wait(self.interval if self.up else self.interval / 4):
            try:
                self.probe()
            except Exception:  # the monitor must outlive any one failure
                log.exception("database health probe failed unexpectedly")

    def probe(self) -> Health:
        """Probe once; restart the embedded server or recover the pool as the result calls for."""
        previous = self.health
        try:
            applied = self._query()
        except (psycopg.Error, OSError) as e:
            self._close()
            why = " ".join(str(e).split())[:200] or type(e).__name__
            down_since = previous.down_since or time.monotonic()
            if previous.database != f"unavailable: {why}":
                log.warning("database unavailable: %s", why)
            self.health = Health(
                f"unavailable: {why}",
                previous.applied,
                time.monotonic(),
                down_since,
                previous.restarts,
            )
            self._maybe_restart()
            return self.health
        was_down = previous.down_since is not None
        self.health = Health("ok", applied, time.monotonic(), None, previous.restarts)
        self._attempt, self._next_restart = 0, 0.0
        if was_down:
            outage = time.monotonic() - (previous.down_since or time.monotonic())
            log.warning("database available again after %.1f s", outage)
            if self.on_recovery is not None:
                self.on_recovery()
        return self.health

    def _query(self) -> frozenset[int]:
        if self._conn is None or self._conn.closed:
            self._conn = BoundedConnection.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT,
                options="-c statement_timeout=1000",
                application_name="rag-health",
            )
            # A stopped server answers neither the statement nor its timeout.
            self._conn.wait_limit = PROBE_WAIT
        return applied_versions(self._conn)

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None

    def _maybe_restart(self) -> None:
        if self.restart is None or time.monotonic() < self._next_restart:
            return
        delay = RESTART_BACKOFF[min(self._attempt, len(RESTART_BACKOFF) - 1)]
        self._attempt += 1
        self._next_restart = time.monotonic() + delay
        try:
            started = self.restart()
        except Exception as e:  # noqa: BLE001 - logged, and tried again after the backoff
            log.error(
                "embedded PostgreSQL did not start (attempt %d, next in %.0f s): %s",
                self._attempt,
                delay,
                " ".join(str(e).split())[:300],
            )
            return
        if started:
            self.health.restarts += 1
            log.warning("embedded PostgreSQL restarted (attempt %d)", self._attempt)
