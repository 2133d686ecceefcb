"""One real PostgreSQL (+ pgvector) per test session: embedded by default, DATABASE_URL if set.

Tests isolate themselves by owner (each test gets its own owner name) or, when they need an empty
schema, by a fresh database on the same server.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from rag.db import Database, embedded_url, migrate, stop_embedded
from rag.settings import Settings

# The live-server fixtures (plain, smart, fake_llm) for the HTTP test modules.
pytest_plugins = ["tests.apifixtures"]


def _with_dbname(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of the server the suite runs against (its maintenance database)."""
    external = os.environ.get("DATABASE_URL")
    if external:
        yield external
        return
    data_dir = tmp_path_factory.mktemp("embedded")
    yield embedded_url(data_dir)
    stop_embedded()


def create_database(server_url: str, prefix: str = "rag_test") -> str:
    """A new, empty database on the suite's server; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return _with_dbname(server_url, name)


@pytest.fixture(scope="session")
def pg_url(server_url: str) -> str:
    """A migrated database shared by the session; tests keep apart by owner."""
    url = create_database(server_url)
    migrate(url)
    return url


@pytest.fixture
def fresh_db_url(server_url: str) -> str:
    """An empty, unmigrated database of this test's own."""
    return create_database(server_url, "rag_fresh")


@pytest.fixture
def settings(pg_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=pg_url,
        data_dir=tmp_path,
        embedder="fake",
        embed_dim=64,
        pool_min=1,
        pool_max=4,
    )


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    database = Database(settings, run_migrations=False)
    yield database
    database.close()


@pytest.fixture
def owner(request: pytest.FixtureRequest) -> str:
    """An owner name of this test's own."""
    return f"t-{request.node.name[:40]}-{uuid.uuid4().hex[:8]}"
