"""compose.yaml cannot run here (no Docker), so it is kept honest against the code instead.

Every variable the service sets must be a setting's environment variable (rag.settings.env_name)
and parse as that setting; the database URL must point at the db service with its credentials;
the images, health checks, named volumes, published port and Dockerfile must agree with each other
and with the application's routes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from rag.api.app import create_app
from rag.cli.serve import check_exposure, is_loopback
from rag.embedders import BACKENDS
from rag.settings import Settings, env_name

REPO = Path(__file__).resolve().parent.parent
# pgvector's images: "pg17", or pinned like "0.8.0-pg17"
PGVECTOR_IMAGE = re.compile(r"^pgvector/pgvector:(?:\d+\.\d+\.\d+-)?pg(?P<major>\d+)(?:-\w+)?$")
# Where the official postgres image keeps its data; 18 moved it up one level.
DATA_PATH = {17: "/var/lib/postgresql/data", 18: "/var/lib/postgresql"}
_INTERPOLATION = re.compile(r"\$\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}")


def resolve(value: Any) -> str:
    """A compose value with ``${VAR:-default}`` replaced by its default (as on a clean host)."""
    return _INTERPOLATION.sub(lambda m: m.group("default") or "", str(value))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO / "compose.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def service(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]["rag"]


@pytest.fixture(scope="module")
def db(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]["db"]


@pytest.fixture(scope="module")
def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service["environment"]
    assert isinstance(env, dict), "write the service's environment as a mapping"
    return {k: resolve(v) for k, v in env.items()}


@pytest.fixture(scope="module")
def settings(environment: dict[str, str]) -> Settings:
    return Settings.from_env(environment)


def test_every_service_variable_is_a_setting(environment: dict[str, str]) -> None:
    known = {env_name(f.name) for f in fields(Settings)}
    unknown = sorted(set(environment) - known)
    assert not unknown, f"not settings of rag (see rag/settings.py): {unknown}"


def test_the_values_parse_as_their_settings(
    settings: Settings, environment: dict[str, str]
) -> None:
    # from_env raised ConfigError already if a value did not parse; check what the service gets.
    assert settings.host == "0.0.0.0" and not is_loopback(settings.host)
    assert settings.embedder in (*BACKENDS, "none")
    assert str(settings.data_dir) == environment["RAG_DATA_DIR"]


def test_the_service_may_listen_as_configured(settings: Settings, service: dict[str, Any]) -> None:
    # Without keys (a fresh volume has none) the service must be allowed to start ...
    check_exposure(settings, keys_exist=False)
    # ... and allow_open is only acceptable while the port is published on the host's loopback.
    [mapping] = service["ports"]
    parts = resolve(mapping).split(":")
    assert len(parts) == 3, "publish as ADDRESS:HOST_PORT:CONTAINER_PORT"
    host_ip, _, container_port = parts
    assert int(container_port) == settings.port
    if settings.allow_open:
        assert is_loopback(host_ip), "RAG_ALLOW_OPEN with a port published beyond loopback"


def test_database_url_points_at_the_db_service(
    compose: dict[str, Any], environment: dict[str, str], db: dict[str, Any]
) -> None:
    info = psycopg.conninfo.conninfo_to_dict(environment["DATABASE_URL"])
    db_env = {k: resolve(v) for k, v in db["environment"].items()}
    assert info["host"] in compose["services"] and info["host"] == "db"
    assert int(info.get("port", 5432)) == 5432
    assert info["user"] == db_env["POSTGRES_USER"]
    assert info["password"] == db_env["POSTGRES_PASSWORD"]
    assert info["dbname"] == db_env["POSTGRES_DB"]


def test_the_service_waits_for_a_healthy_database(
    service: dict[str, Any], db: dict[str, Any]
) -> None:
    assert service["depends_on"]["db"]["condition"] == "service_healthy"
    test = db["healthcheck"]["test"]
    command = test[1] if test[0] == "CMD-SHELL" else " ".join(test[1:])
    db_env = {k: resolve(v) for k, v in db["environment"].items()}
    assert command.startswith("pg_isready")
    assert f"-U {db_env['POSTGRES_USER']}" in command and f"-d {db_env['POSTGRES_DB']}" in command


def test_pgvector_image_and_its_data_volume(compose: dict[str, Any], db: dict[str, Any]) -> None:
    m = PGVECTOR_IMAGE.match(db["image"])
    assert m, f"use the official pgvector image with a pg17 or pg18 tag, not {db['image']}"
    major = int(m.group("major"))
    assert major in DATA_PATH
    mounts = dict(v.split(":", 1) for v in db["volumes"])
    assert DATA_PATH[major] in mounts.values(), (
        f"PostgreSQL {major} keeps its data in {DATA_PATH[major]}"
    )


def test_named_volumes_are_declared(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    used = {
        v.split(":", 1)[0]
        for s in compose["services"].values()
        for v in s.get("volumes", [])
        if not v.startswith((".", "/"))
    }
    assert used and used <= declared, (used, declared)
    assert "pgdata" in used, "the database must live in a named volume"


def test_service_health_check_calls_a_real_route(
    service: dict[str, Any], settings: Settings
) -> None:
    command = " ".join(service["healthcheck"]["test"])
    m = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", command)
    assert m, command
    app = create_app(Settings(embedder="none"), embedder=None, llm=None)
    assert int(m.group(1)) == settings.port
    assert m.group(2) in {r.path for r in app.routes}


def test_dockerfile_builds_what_compose_runs(service: dict[str, Any], settings: Settings) -> None:
    assert service["build"] == "."
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    image = re.search(r"^FROM python:(\d+)\.(\d+)", dockerfile, re.MULTILINE)
    assert image, "build from the official python image"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    minimum = tuple(int(x) for x in re.findall(r"\d+", project["requires-python"])[:2])
    assert (int(image.group(1)), int(image.group(2))) >= minimum
    assert re.search(r'^CMD \["rag", "serve"\]', dockerfile, re.MULTILINE), (
        "exec form, so rag gets SIGTERM"
    )
    assert re.search(rf"^EXPOSE {settings.port}$", dockerfile, re.MULTILINE)
    for path in ("rag", "sql", "pyproject.toml"):
        assert re.search(rf"^COPY .*\b{re.escape(path)}\b", dockerfile, re.MULTILINE), path
