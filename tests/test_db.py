"""Schema, migrations and the embedded server's life cycle, against a real PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
import pytest

from rag.db import MIGRATION_LOCK, migrate, migration_status, migrations
from rag.errors import DatabaseError


def test_migrate_twice_is_a_no_op(fresh_db_url: str) -> None:
    first = migrate(fresh_db_url)
    assert [m.version for m in first] == [m.version for m in migrations()]
    assert migrate(fresh_db_url) == []
    with psycopg.connect(fresh_db_url) as conn:
        n = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    assert n == (len(migrations()),)
    assert all(at is not None for _, at in migration_status(fresh_db_url))


def test_concurrent_migrators_apply_each_migration_once(fresh_db_url: str) -> None:
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append([m.version for m in migrate(fresh_db_url)])
        except BaseException as e:  # noqa: BLE001 -- surfaced below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    applied = sorted(v for r in results for v in r)
    assert applied == sorted(m.version for m in migrations())


def test_migrator_waits_for_the_advisory_lock(fresh_db_url: str) -> None:
    with psycopg.connect(fresh_db_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        done = threading.Event()
        t = threading.Thread(target=lambda: (migrate(fresh_db_url), done.set()))
        t.start()
        time.sleep(0.5)
        assert not done.is_set(), "migrate ran while another migrator held the lock"
        holder.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    t.join(60)
    assert done.is_set()


def test_edited_migration_is_refused(fresh_db_url: str, tmp_path: Path) -> None:
    sql_dir = tmp_path / "sql"
    sql_dir.mkdir()
    (sql_dir / "001_first.sql").write_text("CREATE TABLE t1 (x int);")
    migrate(fresh_db_url, sql_dir)
    (sql_dir / "001_first.sql").write_text("CREATE TABLE t1 (x bigint);")
    with pytest.raises(DatabaseError, match="forward-only"):
        migrate(fresh_db_url, sql_dir)


def test_failed_migration_leaves_nothing_behind(fresh_db_url: str, tmp_path: Path) -> None:
    sql_dir = tmp_path / "sql"
    sql_dir.mkdir()
    (sql_dir / "001_ok.sql").write_text("CREATE TABLE ok_table (x int);")
    (sql_dir / "002_bad.sql").write_text("CREATE TABLE half (x int); SELECT no_such_function();")
    with pytest.raises(DatabaseError, match="migration failed"):
        migrate(fresh_db_url, sql_dir)
    with psycopg.connect(fresh_db_url) as conn:
        assert conn.execute("SELECT to_regclass('half')").fetchone() == (None,)
        assert conn.execute("SELECT to_regclass('ok_table')").fetchone() != (None,)
        assert conn.execute("SELECT array_agg(version) FROM schema_migrations").fetchone() == ([1],)


def test_every_owner_table_keys_start_with_owner_id(pg_url: str) -> None:
    """Distributable by owner (Citus): primary and unique keys of owner data include owner_id."""
    query = """
        SELECT c.conrelid::regclass::text, c.contype,
               (SELECT array_agg(a.attname ORDER BY k.ord)
                FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum)
        FROM pg_constraint c
        JOIN pg_class r ON r.oid = c.conrelid
        JOIN pg_namespace n ON n.oid = r.relnamespace
        WHERE n.nspname = 'public' AND c.contype IN ('p', 'u')
          -- not owner data: the owners themselves, the migration log, the embedding workers'
          -- status rows and the bulk loader's record of indexes it dropped (service state)
          AND r.relname NOT IN ('owners', 'schema_migrations', 'embed_workers', 'dropped_indexes')
    """
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(query).fetchall()
    assert rows, "no keys found"
    for table, kind, cols in rows:
        assert "owner_id" in cols, f"{table} {kind}-key {cols} lacks owner_id"


def test_generated_tsvector_is_unaccented(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT to_tsvector('simple', rag_unaccent('Příliš žluťoučký kůň v Brně'))::text"
        ).fetchone()
    assert row == ("'brne':5 'kun':3 'prilis':1 'v':4 'zlutoucky':2",)


# --- the embedded server across processes ---------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))  # exit through atexit, as rag's CLI does
    from rag.db import embedded_url
    import psycopg
    url = embedded_url(Path(sys.argv[1]))
    with psycopg.connect(url) as c:
        pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
    print(url, flush=True)
    if sys.argv[2] == "hang":
        time.sleep(120)
    """
)


def _postmaster_pid(data_dir: Path) -> int | None:
    pidfile = data_dir / "pg" / "postmaster.pid"
    if not pidfile.exists():
        return None
    pid = int(pidfile.read_text().split()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def _child(data_dir: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(data_dir), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_embedded_server_is_shared_then_stopped_by_the_last_process(tmp_path: Path) -> None:
    holder = _child(tmp_path, "hang")
    assert holder.stdout is not None
    url = holder.stdout.readline().strip()
    assert url, holder.stderr.read() if holder.stderr else ""
    first_pid = _postmaster_pid(tmp_path)
    assert first_pid is not None
    try:
        second = _child(tmp_path, "exit")
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert out.strip() == url
        # the second process reused the server and, not being the last, left it running
        assert _postmaster_pid(tmp_path) == first_pid
    finally:
        holder.send_signal(signal.SIGTERM)
        holder.wait(30)
    # the holder was the last user: it stopped the server on its way out
    deadline = time.time() + 20
    while _postmaster_pid(tmp_path) is not None and time.time() < deadline:
        time.sleep(0.2)
    assert _postmaster_pid(tmp_path) is None, "the last process left the embedded server running"


@pytest.mark.slow
def test_server_left_by_a_killed_process_is_recovered(tmp_path: Path) -> None:
    victim = _child(tmp_path, "hang")
    assert victim.stdout is not None
    assert victim.stdout.readline().strip()
    server_pid = _postmaster_pid(tmp_path)
    assert server_pid is not None
    victim.kill()  # SIGKILL: no cleanup runs
    victim.wait(30)
    assert _postmaster_pid(tmp_path) == server_pid, "server should outlive a SIGKILLed owner"
    handles = json.loads((tmp_path / "pg" / ".handle_pids.json").read_text())
    assert victim.pid in handles

    survivor = _child(tmp_path, "exit")
    _, err = survivor.communicate(timeout=60)
    assert survivor.returncode == 0, err
    # the next process adopted the stale server and, as its last user, stopped it
    deadline = time.time() + 20
    while _postmaster_pid(tmp_path) is not None and time.time() < deadline:
        time.sleep(0.2)
    assert _postmaster_pid(tmp_path) is None, "stale embedded server was leaked"


def test_embedded_server_memory_is_sized_from_the_machine_or_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rag import db as dbmod
    from rag.settings import Settings

    monkeypatch.setattr(dbmod, "_memory_bytes", lambda: 16 << 30)
    assert dbmod.server_memory(Settings()) == {
        "shared_buffers": "4096MB",
        "effective_cache_size": "12288MB",
    }
    monkeypatch.setattr(dbmod, "_memory_bytes", lambda: 256 << 30)
    assert dbmod.server_memory(Settings())["shared_buffers"] == "8192MB"  # capped
    chosen = Settings(db_shared_buffers="1GB", db_effective_cache_size="3GB")
    assert dbmod.server_memory(chosen) == {
        "shared_buffers": "1GB",
        "effective_cache_size": "3GB",
    }


def test_embedded_server_runs_with_its_memory_settings(tmp_path: Path) -> None:
    from rag.db import embedded_url, stop_embedded
    from rag.settings import Settings

    wanted = Settings(db_shared_buffers="160MB", db_effective_cache_size="700MB")
    try:
        url = embedded_url(tmp_path, wanted)  # a new server: restarted once to apply it
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT current_setting('shared_buffers'), current_setting('effective_cache_size')"
            ).fetchone()
        assert row == ("160MB", "700MB")
    finally:
        stop_embedded(tmp_path)


def test_a_write_may_extend_the_statement_bound_for_its_transaction_only(
    pg_url: str, tmp_path: Path
) -> None:
    """A document of many chunks is written in one transaction (rag.ingest.writer): its
    statements get longer than RAG_STATEMENT_TIMEOUT, the next transaction has the bound again."""
    from rag.db import Database, extend_statement_timeout
    from rag.settings import Settings

    db = Database(
        Settings(database_url=pg_url, data_dir=tmp_path, statement_timeout=0.5, pool_max=1),
        run_migrations=False,
    )
    try:
        with db.connection() as conn:
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("SELECT pg_sleep(1)")
            conn.rollback()
            with conn.transaction():
                extend_statement_timeout(conn, 3.0)
                conn.execute("SELECT pg_sleep(1)")  # within the extended bound
                extend_statement_timeout(conn, 0.1)  # never shortens it
                conn.execute("SELECT pg_sleep(0.6)")
            with pytest.raises(psycopg.errors.QueryCanceled):
                conn.execute("SELECT pg_sleep(1)")
            conn.rollback()
        with db.connection() as conn:  # and a pooled connection comes back with its bound
            bound = conn.execute("SHOW statement_timeout").fetchone()
            assert bound is not None and bound[0] == "500ms", bound
    finally:
        db.close()


def test_the_service_role_merges_the_gin_pending_lists_through_its_function(pg_url: str) -> None:
    """A large ingest over the API merges the pending lists as rag_service, which owns no index."""
    with psycopg.connect(pg_url) as conn:
        conn.execute("SET ROLE rag_service")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT gin_clean_pending_list('chunks_word_keys'::regclass)")
        conn.rollback()
        conn.execute("SET ROLE rag_service")
        merged = conn.execute("SELECT rag_merge_pending_lists()").fetchone()
        assert merged is not None and merged[0] >= 0, merged
